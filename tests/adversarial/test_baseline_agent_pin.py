"""Attack (rt4 F3): the agent's change regresses the suite, so it re-pins the baseline to
its own run with one ordinary command (`meridian baseline pin main latest`, then
`meridian sync`): every later comparison (pre-push, `eval compare baseline:main`, the CI
workflow) took the agent's run for the baseline and said "No regressions".

Layer: state derivation (the `baseline.pinned` event carries `agent_session`, as
`harness.changed` does) and CI (the workflow fails on such a pin,
tests/packaging/test_ci_template.py). A pin made in an agent session is never the
baseline: the checks compare with the latest pin made outside one, and say so.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.evals import store
from meridian.ledger import EVENTS, Ledger
from tests.adversarial.conftest import Proc
from tests.conftest import git
from tests.hooks.conftest import run_git

SUITE = str(Path(__file__).resolve().parents[2] / "suites" / "reference.yaml")


def _eval(cli: Callable[..., Proc], agent: str) -> str:
    result = cli("eval", "run", SUITE, "--agent", agent, "--offline", "--limit", "5",
                 "--no-isolation")
    assert result.code == 0, result
    return store.index(Ledger.open("."))[-1].run_id


@pytest.fixture
def human(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_ENTRYPOINT", raising=False)


def test_the_agents_re_pin_is_not_the_baseline_until_a_human_pins(
        project: Path, remote: Path, cli: Callable[..., Proc], human: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("hooks", "install").code == 0
    good = _eval(cli, "reference-v2")
    assert cli("baseline", "pin", "main").code == 0
    bad = _eval(cli, "reference-v1")  # three tasks pass there and fail now
    refused = run_git(project, "push", "-q", "origin", "main")
    assert refused.code == 1 and "regresses against baseline main" in refused.err

    monkeypatch.setenv("CLAUDECODE", "1")  # the agent's own session
    pinned = cli("baseline", "pin", "main", "latest")
    assert pinned.code == 0 and "pinned in an agent session" in pinned.err, pinned
    ledger = Ledger.open(project)
    event = [r for r in ledger.records(EVENTS) if r.kind == "baseline.pinned"][-1]
    assert event.data["agent_session"] is True and event.data["run_id"] == bad

    # the regression still does not leave the clone, and the reason is said
    result = run_git(project, "push", "-q", "origin", "main")
    assert result.code == 1, result
    assert "regresses against baseline main" in result.err
    assert f"re-pinned in an agent session (run {bad}" in result.err, result.err
    assert not git(remote, "for-each-ref", "refs/heads/main").strip()
    # the CI gate's own command compares with the human's pin
    compare = cli("eval", "compare", "latest", "baseline:main", "--fail-on-regression")
    assert compare.code == 1 and f"B: {good}" in compare.out, compare
    listed = cli("baseline", "list")
    assert good in listed.out and "re-pinned in an agent session" in listed.out, listed
    # syncing it changes nothing of that: the event travels with its mark
    assert cli("sync").code == 0
    assert [b.run_id for b in store.baselines(Ledger.open(project))] == [good]

    # a human pins it outside an agent session: that is the baseline now
    monkeypatch.delenv("CLAUDECODE")
    assert cli("baseline", "pin", "main", bad).code == 0
    assert [b.run_id for b in store.baselines(Ledger.open(project))] == [bad]
    assert run_git(project, "push", "-q", "origin", "main").code == 0


def test_a_baseline_only_an_agent_pinned_compares_with_nothing(
        project: Path, cli: Callable[..., Proc], human: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    bad = _eval(cli, "reference-v1")
    monkeypatch.setenv("CLAUDE_CODE_ENTRYPOINT", "cli")
    assert cli("baseline", "pin", "main").code == 0
    compare = cli("eval", "compare", "latest", "baseline:main", "--fail-on-regression")
    assert compare.code == 2, compare
    assert "re-pinned in an agent session" in compare.err and bad in compare.err
    assert "no pin made outside an agent session" in compare.err
