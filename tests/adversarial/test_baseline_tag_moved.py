"""Attack: an agent whose change regresses the suite (the push is refused against the
pinned baseline) deletes the baseline's tag, or points it at the regressing run, with
plain `git tag` (which the Claude hook does not refuse: tags are the user's). The
pre-push check and `eval compare ... baseline:NAME` read the tags: with the tag gone
there was nothing to compare and the push went through; with it moved the regression
was its own baseline. Nothing recorded that the baseline had changed.

Layer: state derivation. A baseline is the latest ``baseline.pinned`` event on the
state branch (append-only and verified); the tag is its export, put back by `meridian
sync`. A new baseline is pinned with `meridian baseline pin`, which records it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.evals import store
from meridian.ledger import Ledger
from tests.adversarial.conftest import Proc
from tests.conftest import git
from tests.hooks.conftest import run_git

SUITE = str(Path(__file__).resolve().parents[2] / "suites" / "reference.yaml")
TAG = "meridian/baseline/main"


def _eval(cli: Callable[..., Proc], agent: str) -> None:
    result = cli("eval", "run", SUITE, "--agent", agent, "--offline", "--limit", "5",
                 "--no-isolation")
    assert result.code == 0, result


@pytest.fixture
def regressed(project: Path, remote: Path, cli: Callable[..., Proc]) -> Path:
    assert cli("hooks", "install").code == 0
    _eval(cli, "reference-v2")
    assert cli("baseline", "pin", "main").code == 0
    _eval(cli, "reference-v1")  # three tasks pass there and fail now
    refused = run_git(project, "push", "-q", "origin", "main")
    assert refused.code == 1 and "regresses against baseline main" in refused.err, refused.err
    return project


def _latest_run_commit(project: Path) -> str:
    ledger = Ledger.open(project)
    return store.commit_of_run(ledger, store.index(ledger)[-1].run_id)


@pytest.mark.parametrize("how", ["deleted", "moved", "moved-by-update-ref"])
def test_a_baseline_tag_changed_with_git_does_not_let_the_regression_through(
        regressed: Path, remote: Path, cli: Callable[..., Proc], how: str) -> None:
    project = regressed
    if how == "deleted":
        git(project, "tag", "-d", TAG)
    elif how == "moved":
        git(project, "tag", "-f", TAG, _latest_run_commit(project))
    else:
        git(project, "update-ref", f"refs/tags/{TAG}", _latest_run_commit(project))

    result = run_git(project, "push", "-q", "origin", "main")
    assert result.code == 1, result
    assert "regresses against baseline main" in result.err, result.err
    assert f"tag {TAG} " in result.err and "outside Meridian" in result.err
    assert not git(remote, "for-each-ref", "refs/heads/main").strip()

    # the CI gate's own command resolves the baseline from the record too
    compare = cli("eval", "compare", "latest", "baseline:main", "--fail-on-regression")
    assert compare.code == 1, compare
    listed = cli("baseline", "list")
    assert "outside Meridian" in listed.out, listed.out


def test_a_re_pin_is_the_way_and_is_recorded(regressed: Path, cli: Callable[..., Proc]) -> None:
    """The sanctioned way to accept the change is a pin, and it is on the record."""
    project = regressed
    assert cli("baseline", "pin", "main").code == 0
    assert run_git(project, "push", "-q", "origin", "main").code == 0
    pins = [r for r in Ledger.open(project).records() if r.kind == "baseline.pinned"]
    assert len(pins) == 2


def test_sync_puts_a_moved_tag_back(regressed: Path, cli: Callable[..., Proc]) -> None:
    project = regressed
    pinned_commit = git(project, "rev-parse", TAG).strip()
    git(project, "tag", "-f", TAG, _latest_run_commit(project))
    assert cli("sync").code == 0
    assert git(project, "rev-parse", TAG).strip() == pinned_commit


def test_a_hand_written_pin_of_a_foreign_object_is_left_out(regressed: Path,
                                                             cli: Callable[..., Proc]) -> None:
    """A `baseline.pinned` event appended with the library, naming a blob or a commit
    that is not on the branch, unpins nothing and crashes nothing."""
    project = regressed
    ledger = Ledger.open(project)
    blob = git(project, "rev-parse", "meridian/state:").strip()  # a tree, not a commit
    foreign = git(project, "rev-parse", "HEAD").strip()  # the user's branch
    for commit in (blob, foreign, "0" * 40, "not-hex"):
        ledger.emit("baseline.pinned", {"name": "main", "run_id": "x", "commit": commit})
    result = run_git(project, "push", "-q", "origin", "main")
    assert result.code == 1 and "regresses against baseline main" in result.err, result.err
