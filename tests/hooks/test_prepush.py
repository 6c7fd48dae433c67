"""``meridian hook pre-push`` through real ``git push`` to a local bare remote."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.hooks.prepush import PushedRef, parse_refs, relevant
from meridian.ledger import EVENTS, Ledger, Write
from tests.conftest import git
from tests.hooks.conftest import CLEAN_MODULE, Proc, blocked_events, head, run_git, write

SUITE = str(Path(__file__).resolve().parents[2] / "suites" / "reference.yaml")
ZERO = "0" * 40


@pytest.fixture
def remote(hooked: Path, tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(hooked, "remote", "add", "origin", str(bare))
    return bare


def _remote_main(bare: Path) -> str | None:
    out = git(bare, "for-each-ref", "--format=%(objectname)", "refs/heads/main").strip()
    return out or None


def _eval(cli: Callable[..., Proc], agent: str) -> None:
    result = cli("eval", "run", SUITE, "--agent", agent, "--offline", "--limit", "5",
                 "--no-isolation")
    assert result.code == 0, result


def _latest_runs(root: Path) -> list[str]:
    from meridian.evals import store

    return [entry.run_id for entry in store.index(Ledger.open(root))]


def test_a_push_with_nothing_wrong_is_allowed(hooked: Path, remote: Path) -> None:
    result = run_git(hooked, "push", "-q", "origin", "main")
    assert result.code == 0, result
    assert result.err == ""
    assert _remote_main(remote) == head(hooked)


def test_a_regression_against_the_pinned_baseline_refuses_the_push(
        hooked: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    _eval(cli, "reference-v2")
    assert cli("baseline", "pin", "main").code == 0
    _eval(cli, "reference-v1")
    baseline, latest = _latest_runs(hooked)
    result = run_git(hooked, "push", "-q", "origin", "main")
    assert result.code == 1
    lines = result.err.splitlines()
    assert lines[:5] == [
        "meridian pre-push: push to origin refused (1 problem)",
        (f"- suite reference: the latest run {latest} regresses against baseline main "
        f"(run {baseline}): 3 task(s) passed there and fail now"),
        "    multiply",
        "    average_two_numbers",
        "    power_of_two",
    ]
    assert lines[5] == (
        f"  next: see `meridian eval compare {latest} baseline:main`; fix the agent and run the "
        "suite again, or, if the change is intended, a human pins a new baseline outside an "
        "agent session (a pin made in one is never the baseline): "
        f"meridian baseline pin main {latest}")
    assert _remote_main(remote) is None
    [event] = blocked_events(hooked, "pre-push")
    assert event.data["rule"] == "prepush:regression_gate" and "gate" not in event.data

    # The state branch and its tags are Meridian's own: pushing them is never checked.
    assert run_git(hooked, "push", "-q", "origin", "meridian/state").code == 0
    assert run_git(hooked, "push", "-q", "origin", "refs/tags/meridian/baseline/main").code == 0

    # An intended change: pin the new run as the baseline, and the push goes through.
    assert cli("baseline", "pin", "main", latest).code == 0
    assert run_git(hooked, "push", "-q", "origin", "main").code == 0
    assert _remote_main(remote) == head(hooked)


def test_retiring_the_regression_rule_allows_the_push(hooked: Path, remote: Path,
                                                      cli: Callable[..., Proc]) -> None:
    _eval(cli, "reference-v2")
    cli("baseline", "pin", "main")
    _eval(cli, "reference-v1")
    assert run_git(hooked, "push", "-q", "origin", "main").code == 1
    cli("rules", "retire", "no-regression-on-push", "--reason", "rewriting the suite")
    assert run_git(hooked, "push", "-q", "origin", "main").code == 0


def test_an_improvement_is_no_regression(hooked: Path, remote: Path,
                                         cli: Callable[..., Proc]) -> None:
    _eval(cli, "reference-v1")
    cli("baseline", "pin", "main")
    _eval(cli, "reference-v2")
    assert run_git(hooked, "push", "-q", "origin", "main").code == 0


def _pass_schema(root: Path, cli: Callable[..., Proc]) -> None:
    assert cli("gate", "start", "schema").code == 0
    write(root, "schema/shapes.py", CLEAN_MODULE)
    git(root, "add", "schema/shapes.py")
    git(root, "commit", "-q", "-m", "schema")
    assert cli("gate", "submit", "schema").code == 0


def test_a_stale_gate_refuses_the_push_when_the_config_asks(hooked: Path, remote: Path,
                                                            cli: Callable[..., Proc]) -> None:
    _pass_schema(hooked, cli)
    assert run_git(hooked, "push", "-q", "origin", "main").code == 0
    write(hooked, "schema/shapes.py", CLEAN_MODULE + "\n\nUNIT = 1.0\n")
    git(hooked, "commit", "-q", "-a", "-m", "schema: unit")
    result = run_git(hooked, "push", "-q", "origin", "main")
    assert result.code == 1
    assert result.err.splitlines()[:4] == [
        "meridian pre-push: push to origin refused (1 problem)",
        "- gate schema passed, but is stale: artifacts changed since the verdict (schema/shapes.py)",
        "    schema/shapes.py",
        ("  next: have the change judged: meridian gate submit schema (or set "
        "hooks.block_stale_on_push: false in .meridian/config.yaml)"),
    ]
    assert result.err.splitlines()[4].startswith("error: failed to push some refs")
    [event] = blocked_events(hooked, "pre-push")
    assert (event.data["gate"], event.data["files"]) == ("schema", ["schema/shapes.py"])

    config = hooked / ".meridian" / "config.yaml"
    config.write_text(config.read_text().replace("block_stale_on_push: true",
                                                 "block_stale_on_push: false"))
    assert run_git(hooked, "push", "-q", "origin", "main").code == 0


def test_corrupt_memory_refuses_the_push(hooked: Path, remote: Path) -> None:
    ledger = Ledger.open(hooked)
    # Valid on its own (so the ledger accepts the line), but it amends a correction that
    # does not exist: something bypassed the memory store.
    orphan = ledger.record("memory.correction", {"gate": "schema", "amends": "f" * 32,
                                                 "root_cause": "unclear spec"})
    ledger.commit(Write(summary="hand-written memory").add("memory/corrections", orphan))
    result = run_git(hooked, "push", "-q", "origin", "main")
    assert result.code == 1
    lines = result.err.splitlines()
    assert lines[1].startswith("- stored memory is corrupt (1 bad line(s)): meridian/state:memory/"
                               "corrections/")
    assert lines[1].endswith(f"corrections.amends: no earlier correction has id {'f' * 32}")
    assert lines[2] == (
        "  next: run `meridian memory verify` to list them; push again once memory is intact")
    assert _remote_main(remote) is None


def test_ref_lines_from_git_and_from_the_pre_commit_framework(
        monkeypatch: pytest.MonkeyPatch) -> None:
    sha = "a" * 40
    stdin = (f"refs/heads/main {sha} refs/heads/main {ZERO}\n"
             f"refs/heads/meridian/state {sha} refs/heads/meridian/state {ZERO}\n"
             f"refs/tags/meridian/baseline/main {sha} refs/tags/meridian/baseline/main {ZERO}\n"
             f"(delete) {ZERO} refs/heads/old {sha}\n"
             "garbage line\n")
    pushed = parse_refs(stdin)
    assert len(pushed) == 4
    assert relevant(pushed, "meridian/state") == [
        PushedRef("refs/heads/main", sha, "refs/heads/main", ZERO)]
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/feature")
    monkeypatch.setenv("PRE_COMMIT_REMOTE_BRANCH", "refs/heads/feature")
    monkeypatch.setenv("PRE_COMMIT_TO_REF", sha)
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", ZERO)
    assert parse_refs("") == [PushedRef("refs/heads/feature", sha, "refs/heads/feature", ZERO)]


def test_an_edited_suite_is_still_checked_and_uncovered_tasks_are_reported(
        hooked: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    import yaml

    suite = hooked / "suite.yaml"
    document = yaml.safe_load(Path(SUITE).read_text())
    suite.write_text(yaml.safe_dump(document, sort_keys=False))
    assert cli("eval", "run", str(suite), "--agent", "reference-v2", "--offline", "--limit", "5",
               "--no-isolation").code == 0
    assert cli("baseline", "pin", "main").code == 0
    tasks = document["tasks"]
    tasks[2]["expected"] = "1,024"  # power_of_two edited
    tasks.insert(1, {"id": "brand_new", "input": "What is 1 + 1?", "expected": 2,
                     "grader": "numeric_tolerance"})
    suite.write_text(yaml.safe_dump(document, sort_keys=False))
    assert cli("eval", "run", str(suite), "--agent", "reference-v1", "--offline", "--limit", "6",
               "--no-isolation").code == 0
    baseline, latest = _latest_runs(hooked)
    result = run_git(hooked, "push", "-q", "origin", "main")
    assert result.code == 1, result
    # The suite hash changed, and the unchanged tasks still gate the push.
    assert (f"- suite reference: the latest run {latest} regresses against baseline main (run "
            f"{baseline}): 2 task(s) passed there and fail now") in result.err
    assert "    multiply\n    average_two_numbers\n" in result.err
    assert ("baseline main no longer covers 2 task(s) of suite reference (brand_new, "
            "power_of_two)") in result.err


def test_a_trial_run_is_passed_over_with_a_warning_and_the_full_run_before_it_checked(
        hooked: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    _eval(cli, "reference-v2")
    assert cli("baseline", "pin", "main").code == 0
    assert cli("eval", "run", SUITE, "--agent", "reference-v1", "--offline", "--limit", "1",
               "--no-isolation").code == 0
    _baseline, trial = _latest_runs(hooked)
    result = run_git(hooked, "push", "-q", "origin", "main")
    assert result.code == 0, result
    assert (f"suite reference: partial run(s) {trial} (--limit, --tag, a shard or interrupted) "
            "not checked against baseline main; no full run since the baseline") in result.err
    _eval(cli, "reference-v1")  # a full regressing run, then another trial on top of it
    assert cli("eval", "run", SUITE, "--agent", "reference-v2", "--offline", "--limit", "1",
               "--no-isolation").code == 0
    _, _, full, _ = _latest_runs(hooked)
    result = run_git(hooked, "push", "-q", "origin", "main")
    assert result.code == 1, result
    assert f"the latest run {full} regresses against baseline main" in result.err


def test_the_push_folds_the_gates_from_the_root_once(hooked: Path, remote: Path,
                                                     cli: Callable[..., Proc],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """pre-push derives the gate fold from the root (never from the cache file), and
    asks for it twice (locked gates, stale gates): the second is this process's fold."""
    from meridian.gates import snapshot
    from meridian.hooks import prepush

    _pass_schema(hooked, cli)
    write(hooked, "schema/shapes.py", CLEAN_MODULE + "\n\nUNIT = 1.0\n")
    git(hooked, "commit", "-q", "-a", "--no-verify", "-m", "schema: unit")
    folds: list[str] = []
    real = snapshot._recompute

    def counted(ledger: Ledger, tip: object) -> snapshot.Snapshot:
        folds.append(str(tip))
        return real(ledger, tip)  # type: ignore[arg-type]

    monkeypatch.setattr(snapshot, "_recompute", counted)
    snapshot._FOLDED_HERE.clear()
    local = head(hooked)
    result = prepush.check(str(hooked), f"refs/heads/main {local} refs/heads/main {'0' * 40}\n")
    assert [r.reason for r in result.refusals if "stale" in r.reason], result.refusals
    assert len(folds) == 1, folds
    # a later push at a new tip folds again: the memory is per tip
    ledger = Ledger.open(hooked)
    ledger.commit(Write(summary="a block").add(
        EVENTS, ledger.record("gate.blocked", {"source": "gate", "reason": "elsewhere"})))
    prepush.check(str(hooked), f"refs/heads/main {local} refs/heads/main {'0' * 40}\n")
    assert len(folds) == 2 and folds[0] != folds[1], folds
