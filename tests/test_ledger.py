"""The state branch: appends are commits that never touch the user's work tree."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from meridian import ledger as ledger_module
from meridian.ledger import Ledger, Write
from meridian.verify import verify
from tests.conftest import git

WRITER_SCRIPT = textwrap.dedent(
    """
    import sys
    from meridian.ledger import Ledger
    ledger = Ledger.open(sys.argv[1])
    for i in range(int(sys.argv[3])):
        ledger.emit("test.append", {"writer": sys.argv[2], "n": i})
    """
)


def _run_writers(repo: Path, processes: int, per_process: int) -> None:
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER_SCRIPT, str(repo), f"w{p}", str(per_process)])
        for p in range(processes)
    ]
    for proc in procs:
        assert proc.wait(timeout=120) == 0


def test_concurrent_processes_lose_and_duplicate_nothing(repo: Path) -> None:
    _run_writers(repo, processes=6, per_process=20)
    records = list(Ledger.open(repo).records())
    pairs = [(r.data["writer"], r.data["n"]) for r in records]
    assert sorted(pairs) == sorted((f"w{p}", i) for p in range(6) for i in range(20))
    assert len({r.id for r in records}) == 120
    # one logical write, one commit
    assert git(repo, "rev-list", "--count", "meridian/state").strip() == "120"
    assert verify(Ledger.open(repo)).ok


def test_concurrent_threads_lose_nothing(repo: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def write(n: int) -> None:
        Ledger.open(repo).emit("test.append", {"n": n})

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(write, range(80)))
    assert sorted(r.data["n"] for r in Ledger.open(repo).records()) == list(range(80))


def test_writer_killed_mid_append_leaves_a_branch_that_verifies(repo: Path) -> None:
    script = WRITER_SCRIPT.replace('int(sys.argv[3])', '10**9')
    for delay in (0.3, 0.45, 0.6):
        proc = subprocess.Popen([sys.executable, "-c", script, str(repo), "victim", "0"])
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    ledger = Ledger.open(repo)
    written = list(ledger.records())
    assert written, "the writer was killed before it appended anything"
    report = verify(ledger, full=True)
    assert report.ok, [str(p) for p in report.problems]
    # A lock left by the killed writer must not wedge later writers.
    ledger_module.STALE_LOCK_SECONDS = 0.0
    try:
        ledger.emit("test.after_kill", {"ok": True})
    finally:
        ledger_module.STALE_LOCK_SECONDS = 10.0
    assert next(ledger.records(newest_first=True)).kind == "test.after_kill"


def test_appends_leave_work_tree_index_and_head_alone(repo_with_commit: Path) -> None:
    repo = repo_with_commit
    (repo / "README.md").write_text("# changed, unstaged\n")
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    (repo / "untracked.txt").write_text("untracked\n")
    status_before = git(repo, "status", "--porcelain=v1", "--untracked-files=all")
    index_before = (repo / ".git" / "index").read_bytes()
    head_before = (repo / ".git" / "HEAD").read_text()
    branch_before = git(repo, "rev-parse", "HEAD")

    ledger = Ledger.open(repo)
    for n in range(5):
        ledger.emit("test.append", {"n": n})
    ledger.commit(Write(summary="doc", blobs={"runs/x.json": b"{}"}))

    assert git(repo, "status", "--porcelain=v1", "--untracked-files=all") == status_before
    assert (repo / ".git" / "index").read_bytes() == index_before
    assert (repo / ".git" / "HEAD").read_text() == head_before
    assert git(repo, "rev-parse", "HEAD") == branch_before
    assert not (repo / "runs").exists()


def test_commit_message_has_summary_and_trailers(repo: Path) -> None:
    Ledger.open(repo).emit("test.reviewed", {"gate": "backend"}, summary="backend failed review")
    message = git(repo, "log", "-1", "--format=%B", "meridian/state")
    assert message.splitlines()[0] == "backend failed review"
    assert "Meridian-Event: test.reviewed" in message
    assert "Meridian-Gate: backend" in message
    found = git(repo, "log", "meridian/state", "--format=%s", "--grep", "Meridian-Gate: backend")
    assert found.strip() == "backend failed review"


def test_shards_roll_over_so_no_blob_grows_without_bound(repo: Path) -> None:
    ledger = Ledger.open(repo)
    filler = "x" * 2000
    for n in range(70):
        ledger.emit("test.append", {"n": n, "filler": filler})
    shards = ledger.shards("events")
    assert len(shards) >= 2
    for path in shards:
        assert len(ledger.read(path) or b"") <= ledger_module.SHARD_BYTES
    assert [r.data["n"] for r in ledger.records()] == list(range(70))


def test_documents_are_immutable(repo: Path) -> None:
    from meridian.errors import MeridianError

    ledger = Ledger.open(repo)
    ledger.commit(Write(summary="first", blobs={"runs/a.json": b'{"a": 1}'}))
    result = ledger.commit(Write(summary="same again", blobs={"runs/a.json": b'{"a": 1}'}))
    assert result.commit is None
    with pytest.raises(MeridianError, match="immutable"):
        ledger.commit(Write(summary="overwrite", blobs={"runs/a.json": b'{"a": 2}'}))


def test_dedupe_skips_known_ids(repo: Path) -> None:
    ledger = Ledger.open(repo)
    record = ledger.record("memory.note", {"text": "same"})
    first = ledger.commit(Write(summary="a", dedupe=True).add("memory/notes", record))
    again = ledger.record("memory.note", {"text": "same"})
    second = ledger.commit(Write(summary="b", dedupe=True).add("memory/notes", again))
    assert first.written and not second.written and second.commit is None
    assert len(list(ledger.records("memory/notes"))) == 1


def test_works_in_detached_head_worktree_and_packed_refs(repo_with_commit: Path, tmp_path: Path) -> None:
    repo = repo_with_commit
    Ledger.open(repo).emit("test.append", {"n": 0})
    git(repo, "checkout", "-q", "--detach")
    Ledger.open(repo).emit("test.append", {"n": 1})
    worktree = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(worktree), "-b", "feature")
    Ledger.open(worktree).emit("test.append", {"n": 2})
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "meridian" / "state").exists()
    Ledger.open(repo).emit("test.append", {"n": 3})
    assert [r.data["n"] for r in Ledger.open(worktree).records()] == [0, 1, 2, 3]
    assert verify(Ledger.open(repo), full=True).ok


def test_new_records_reads_only_what_was_appended(repo: Path) -> None:
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    since = ledger.tip()
    assert since is not None
    filler = "y" * 3000
    for n in range(1, 40):  # crosses a shard boundary
        ledger.emit("test.append", {"n": n, "filler": filler})
    new = ledger.new_records("events", since)
    assert new is not None and [r.data["n"] for r in new] == list(range(1, 40))
    assert ledger.new_records("events", ledger.tip()) == []  # type: ignore[arg-type]
    # a commit that is not an ancestor means "recompute from scratch"
    git(repo, "update-ref", "refs/heads/side", str(since))
    other = Ledger(ledger.repo, "side")
    other.emit("test.append", {"n": "side"})
    assert ledger.new_records("events", other.tip()) is None  # type: ignore[arg-type]


def test_a_hand_corrupted_line_is_a_located_error_not_a_crash(repo: Path, tmp_path: Path) -> None:
    from meridian.errors import MeridianError

    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    checkout = tmp_path / "edit"
    git(repo, "worktree", "add", "-q", str(checkout), "meridian/state")
    shard = next(checkout.glob("events/*/0000.jsonl"))
    shard.write_text(shard.read_text() + '{"id": "x"}\n')
    git(checkout, "commit", "-q", "-am", "hand edit")
    with pytest.raises(MeridianError) as caught:
        list(Ledger.open(repo).records())
    assert str(caught.value) == (
        f"meridian/state:{shard.relative_to(checkout)}:2: corrupt record (expected an object "
        "with id, ts, kind, writer and data); run `meridian verify`")
