"""Runs on the state branch: one commit per run, the index, references, baselines, prune."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from meridian import gitio
from meridian.errors import MeridianError
from meridian.evals import run as runfile
from meridian.evals import store
from meridian.ledger import Ledger
from tests.evals.agents_for_tests import PLANTED_KEY
from tests.evals.runs_support import all_git_objects, make_run


@pytest.fixture
def ledger(repo_with_commit: Path) -> Ledger:
    return Ledger.open(repo_with_commit)


def save(ledger: Ledger, run_id: str, **outcomes: str) -> store.SavedRun:
    return store.save_run(ledger, make_run(outcomes or {"a": "pass"}, run_id=run_id))


def test_a_run_is_one_commit_with_its_document_and_index_record(ledger: Ledger) -> None:
    before = ledger.tip()
    saved = save(ledger, "abc123456789", a="pass", b="fail")
    tip = ledger.tip()
    assert str(tip) == saved.commit
    info = gitio.commit_info(ledger.repo, tip)
    assert info.parents == ((before,) if before else ())
    assert info.summary == "eval run abc123456789: golden demo-agent@v1 1/2 passed"
    assert info.trailers["Meridian-Event"] == "eval.run"
    assert info.trailers["Meridian-Run"] == "abc123456789"
    stored = ledger.read("runs/abc123456789.json")
    assert stored == runfile.dumps(saved.run)
    [record] = list(ledger.records(store.INDEX_STREAM))
    assert record.kind == "eval.run" and record.id == info.trailers["Meridian-Record"]
    assert record.data["passed"] == 1 and record.data["failed"] == 1
    assert record.data["path"] == "runs/abc123456789.json"
    assert store.load_run(ledger, "abc123456789") == saved.run


def test_the_work_tree_index_and_head_are_untouched(ledger: Ledger, repo_with_commit: Path) -> None:
    head = gitio.head_commit(ledger.repo)
    save(ledger, "abc123456789")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo_with_commit,
                            capture_output=True, text=True, check=True).stdout
    assert status == ""
    assert gitio.head_commit(ledger.repo) == head


def test_listing_reads_only_the_index(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(3):
        save(ledger, f"{n:012d}")

    def no_documents(path: str, at: object = None) -> bytes | None:
        raise AssertionError(f"listing read {path}")

    monkeypatch.setattr(ledger, "read", no_documents)
    assert [e.run_id for e in store.index(ledger)] == ["000000000000", "000000000001", "000000000002"]
    assert store.resolve(ledger, "latest~1") == "000000000001"


def test_a_planted_api_key_never_reaches_git_history(ledger: Ledger,
                                                     repo_with_commit: Path) -> None:
    run = make_run({"a": "pass"}, run_id="5ec2e7000000")
    entry = run.results[0]
    trajectory = entry.trials[0].trajectory
    assert trajectory is not None
    leaky = trajectory.model_copy(update={
        "final_output": f"the key is {PLANTED_KEY}",
        "steps": [trajectory.steps[0].model_copy(update={
            "input": {"headers": {"Authorization": f"Bearer {PLANTED_KEY}"}},
            "output": f"api_key={PLANTED_KEY}"})],
    })
    task = entry.task.model_copy(update={"metadata": {"note": PLANTED_KEY}})
    run = run.model_copy(update={"results": [entry.model_copy(update={
        "task": task, "trials": [entry.trials[0].model_copy(update={"trajectory": leaky})]})]})
    saved = store.save_run(ledger, run)
    assert saved.redactions.total >= 4
    history = subprocess.run(["git", "log", "-p", "--all"], cwd=repo_with_commit,
                             capture_output=True, text=True, check=True).stdout
    assert "[REDACTED:anthropic-key]" in history  # the run is there, redacted
    assert PLANTED_KEY not in history
    assert PLANTED_KEY not in all_git_objects(repo_with_commit)
    grep = subprocess.run(["git", "grep", "-e", PLANTED_KEY[:24], "meridian/state"],
                          cwd=repo_with_commit, capture_output=True, text=True, check=False)
    assert grep.returncode == 1 and grep.stdout == ""


def test_null_and_empty_secret_named_fields_do_not_block_saving(ledger: Ledger) -> None:
    """An agent calling a tool with ``api_key: null`` (an unset option) must not make the
    final scan refuse the run after every task has run."""
    run = make_run({"a": "pass"}, run_id="0e11000000aa")
    entry = run.results[0]
    trajectory = entry.trials[0].trajectory
    assert trajectory is not None
    step = trajectory.steps[0].model_copy(update={
        "input": {"api_key": None, "token": {}, "X-Auth-Token": "abc123"}})
    trials = [entry.trials[0].model_copy(update={
        "trajectory": trajectory.model_copy(update={"steps": [step]})})]
    run = run.model_copy(update={"results": [entry.model_copy(update={"trials": trials})]})
    saved = store.save_run(ledger, run)
    stored = saved.run.results[0].trials[0].trajectory
    assert stored is not None and stored.steps[0].input == {
        "api_key": None, "token": {}, "X-Auth-Token": "[REDACTED:secret-value]"}


def test_references(ledger: Ledger) -> None:
    for run_id in ("aa1111111111", "aa2222222222", "bb3333333333"):
        save(ledger, run_id)
    assert store.resolve(ledger, "latest") == "bb3333333333"
    assert store.resolve(ledger, "latest~2") == "aa1111111111"
    assert store.resolve(ledger, "aa2") == "aa2222222222"
    assert store.resolve(ledger, "bb3333333333") == "bb3333333333"
    with pytest.raises(MeridianError, match="run prefix 'aa' is ambiguous: aa1111111111, aa2222222222"):
        store.resolve(ledger, "aa")
    with pytest.raises(MeridianError, match=r"latest~3: only 3 run\(s\) on meridian/state"):
        store.resolve(ledger, "latest~3")
    with pytest.raises(MeridianError, match="no run matches 'zz'"):
        store.resolve(ledger, "zz")


def test_no_runs_yet_says_how_to_make_one(ledger: Ledger) -> None:
    with pytest.raises(MeridianError, match=r"no evaluation runs on meridian/state yet"):
        store.resolve(ledger, "latest")


def test_baselines_tag_the_commit_that_wrote_the_run(ledger: Ledger) -> None:
    first = save(ledger, "aa1111111111")
    save(ledger, "bb2222222222")
    baseline = store.pin_baseline(ledger, "main", "aa1111111111")
    assert baseline.commit == first.commit
    assert str(ledger.tags(store.BASELINE_PREFIX)["main"]) == first.commit
    assert store.resolve(ledger, "baseline:main") == "aa1111111111"
    assert store.resolve(ledger, "main") == "aa1111111111"
    [event] = [r for r in ledger.records() if r.kind == "baseline.pinned"]
    assert event.data == {"name": "main", "run_id": "aa1111111111", "commit": first.commit,
                          "agent_session": False}
    # Re-pinning moves the tag and says what it pointed at before.
    store.pin_baseline(ledger, "main", "bb2222222222")
    assert store.resolve(ledger, "baseline:main") == "bb2222222222"
    last = [r for r in ledger.records() if r.kind == "baseline.pinned"][-1]
    assert last.data["previous_run_id"] == "aa1111111111"
    assert [(b.name, b.run_id) for b in store.baselines(ledger)] == [("main", "bb2222222222")]
    with pytest.raises(MeridianError, match="no baseline named 'nope' \\(baselines: main;"):
        store.resolve(ledger, "baseline:nope")
    with pytest.raises(MeridianError, match="baseline name 'bad name'"):
        store.pin_baseline(ledger, "bad name", "bb2222222222")


def test_prune_hides_old_runs_but_keeps_baselines_and_history(ledger: Ledger) -> None:
    ids = [f"{n:012d}" for n in range(5)]
    for run_id in ids:
        save(ledger, run_id)
    store.pin_baseline(ledger, "keep-me", ids[0])
    retired = store.prune(ledger, keep=2)
    assert retired == ids[1:3]
    assert [e.run_id for e in store.index(ledger)] == [ids[0], ids[3], ids[4]]
    assert [e.run_id for e in store.index(ledger, include_pruned=True) if e.pruned] == ids[1:3]
    assert store.resolve(ledger, "latest~1") == ids[3]
    assert store.resolve(ledger, ids[1]) == ids[1]  # still readable by id
    assert store.load_run(ledger, ids[1]).run_id == ids[1]
    assert store.prune(ledger, keep=2) == []  # nothing more to do: no new commit
