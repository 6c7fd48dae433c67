"""The state branch: appends are commits that never touch the user's work tree."""

from __future__ import annotations

import contextlib
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


def _wait_for_records(repo: Path, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # The writer may be mid-way through creating the branch: try again.
        with contextlib.suppress(Exception):
            if sum(1 for _ in Ledger.open(repo).records()) >= count:
                return
        time.sleep(0.01)
    raise AssertionError(f"the writer did not append {count} records in {timeout}s")


def test_writer_killed_mid_append_leaves_a_branch_that_verifies(repo: Path) -> None:
    script = WRITER_SCRIPT.replace('int(sys.argv[3])', '10**9')
    written = 0
    for round_ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", script, str(repo), f"victim{round_}", "0"])
        _wait_for_records(repo, written + 5)
        os.kill(proc.pid, signal.SIGKILL)  # while it is appending in a tight loop
        proc.wait()
        written = sum(1 for _ in Ledger.open(repo).records())
    ledger = Ledger.open(repo)
    report = verify(ledger, full=True)
    assert report.ok, [str(p) for p in report.problems]
    ledger.emit("test.after_kill", {"ok": True})
    assert next(ledger.records(newest_first=True)).kind == "test.after_kill"


def test_a_lock_left_by_a_killed_writer_expires(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    lock = repo / ".git" / "refs" / "heads" / "meridian" / "state.lock"
    lock.write_text("held by a writer that was SIGKILLed\n")
    old = time.time() - 60
    os.utime(lock, (old, old))
    monkeypatch.setattr(ledger_module, "STALE_LOCK_SECONDS", 5.0)
    ledger.emit("test.append", {"n": 1})
    assert not lock.exists()
    assert [r.data["n"] for r in ledger.records()] == [0, 1]


def test_a_fresh_lock_is_waited_for_not_stolen(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from meridian.errors import MeridianError

    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    lock = repo / ".git" / "refs" / "heads" / "meridian" / "state.lock"
    lock.write_text("held right now\n")
    monkeypatch.setattr(ledger_module, "RETRY_DEADLINE_SECONDS", 0.3)
    with pytest.raises(MeridianError, match="another writer held it"):
        ledger.emit("test.append", {"n": 1})
    assert lock.exists()


def test_a_lock_replaced_by_a_fresh_one_while_expiring_is_kept(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Another process expires the stale lock and a live writer takes a fresh one (often
    # with the freed inode number) between our stat and our rename: it must survive.
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    lock = repo / ".git" / "refs" / "heads" / "meridian" / "state.lock"
    lock.write_text("stale\n")
    old = time.time() - 60
    os.utime(lock, (old, old))
    real_rename = os.rename

    def racing_rename(src: os.PathLike[str], dst: os.PathLike[str]) -> None:
        if Path(src) == lock:
            lock.unlink()
            lock.write_text("live\n")
        real_rename(src, dst)

    monkeypatch.setattr(ledger_module.os, "rename", racing_rename)
    ledger._clear_stale_lock()
    assert lock.read_text() == "live\n"
    assert sorted(p.name for p in lock.parent.iterdir()) == ["state", "state.lock"]
    monkeypatch.setattr(ledger_module.os, "rename", real_rename)
    lock.unlink()
    ledger._clear_stale_lock()  # nothing to expire: no error


@pytest.mark.parametrize("message", [
    ("fatal: Unable to create '/home/u/modified/.git/refs/heads/meridian/state.lock': "
     "Permission denied"),
    "failed to create locked file '/srv/already exists/.git/refs/heads/x.lock': No space left",
])
def test_a_real_ref_error_is_not_retried_as_a_conflict(
        repo: Path, monkeypatch: pytest.MonkeyPatch, message: str) -> None:
    from meridian import gitio
    from meridian.errors import MeridianError

    assert not gitio.is_conflict(message)
    assert gitio.is_conflict("fatal: Unable to create '/home/u/modified/x.lock': File exists.")
    assert gitio.is_conflict("fatal: cannot lock ref 'refs/heads/x': is at 1 but expected 2")

    def failing_git(args: list[str], cwd: object, **_: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(["git", *args], 128, "", message + "\n")

    monkeypatch.setattr(gitio, "git", failing_git)
    ledger = Ledger.open(repo)
    with pytest.raises(MeridianError, match="cannot update refs/heads/meridian/state: "):
        gitio.set_ref(ledger.repo, ledger.refname, gitio.Oid(hex="1" * 40), expected=None)


@pytest.mark.parametrize("code", [13, 28, 30])  # EACCES, ENOSPC, EROFS
def test_a_lock_that_cannot_be_created_is_an_error_not_retried(
        repo: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """The ref's lock cannot be created for a reason other than another writer holding
    it: one clear error at once, first commit or later, nothing moved."""
    from meridian import gitio
    from meridian.errors import MeridianError

    Ledger.open(repo).emit("test.append", {"n": 0})
    tip = Ledger.open(repo).tip()
    real_open = os.open

    def refusing_open(path, flags, *args):  # type: ignore[no-untyped-def]
        if str(path).endswith("state.lock"):
            raise OSError(code, os.strerror(code), str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(gitio.os, "open", refusing_open)
    monkeypatch.setattr(ledger_module, "RETRY_DEADLINE_SECONDS", 30.0)
    started = time.monotonic()
    with pytest.raises(MeridianError, match=f"cannot write refs/heads/meridian/state: "
                                            f"{os.strerror(code)}"):
        Ledger.open(repo).emit("test.append", {"n": 1})
    assert time.monotonic() - started < 10, "a real error must not be retried until the deadline"
    monkeypatch.undo()
    assert Ledger.open(repo).tip() == tip
    assert not (repo / ".git" / "refs" / "heads" / "meridian" / "state.lock").exists()


@pytest.mark.parametrize(("branch", "message"), [
    ("main", "state branch 'main' is the branch checked out here"),
    ("a..b", "state branch 'a..b' is not a valid git branch name"),
])
def test_unusable_state_branch_names_are_refused(repo: Path, branch: str, message: str) -> None:
    from meridian.errors import MeridianError

    (repo / ".meridian").mkdir()
    (repo / ".meridian" / "config.yaml").write_text(f"branch: {branch}\n")
    with pytest.raises(MeridianError, match=message.replace(".", "[.]")):
        Ledger.open(repo)


def test_a_branch_in_the_way_is_an_error_not_a_hang(repo_with_commit: Path) -> None:
    from meridian.errors import MeridianError

    git(repo_with_commit, "branch", "meridian")
    with pytest.raises(MeridianError, match="cannot write refs/heads/meridian/state: a file is "
                                            "in the way"):
        Ledger.open(repo_with_commit).emit("test.append", {"n": 0})


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


def test_object_size_reads_loose_and_packed_blobs_on_every_allowed_pygit2(tmp_path):
    # Odb.read_header is missing from the oldest pygit2 allowed: the size must still come out
    # right there (the lowest-versions CI run takes the fallback), loose and packed alike.
    import pygit2

    from meridian import gitio

    path = tmp_path / "r"
    repo = pygit2.init_repository(str(path), bare=True)
    data = b'{"kind":"gate.started"}\n' * 1000
    oid = repo.create_blob(data)
    assert gitio.object_size(repo, oid) == len(data)
    builder = repo.TreeBuilder()
    builder.insert("a", oid, pygit2.GIT_FILEMODE_BLOB)
    who = pygit2.Signature("t", "t@example.com")
    repo.create_commit("refs/heads/x", who, who, "m", builder.write(), [])
    git(path, "gc", "-q", "--prune=now")
    assert not (path / "objects" / str(oid)[:2]).exists()  # packed now
    assert gitio.object_size(pygit2.Repository(str(path)), oid) == len(data)


# --- the acknowledgement tells the truth both ways -------------------------------------


def _reflog_to_dev_full(repo: Path) -> None:
    """The branch's reflog replaced by /dev/full: every append to it fails (ENOSPC)."""
    log = repo / ".git" / "logs" / "refs" / "heads" / "meridian" / "state"
    log.unlink()
    log.symlink_to("/dev/full")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_reflog_that_cannot_be_written_fails_the_write_and_moves_nothing(repo: Path) -> None:
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    tip = ledger.tip()
    _reflog_to_dev_full(repo)
    with pytest.raises(ledger_module.MeridianError, match="No space left on device"):
        Ledger.open(repo).emit("test.append", {"n": 1})
    assert Ledger.open(repo).tip() == tip  # git and libgit2 write the log before the ref
    assert [r.data["n"] for r in Ledger.open(repo).records()] == [0]


def test_an_error_after_the_ref_moved_is_acknowledged_as_stored(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """libgit2 moved the ref, then reported an error (a reflog line, say): the commit is
    on the branch, so the write is stored, once, and says so."""
    import pygit2

    from meridian import gitio

    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    real = pygit2.Repository.create_commit

    def moved_then_failed(self, refname, *args):  # type: ignore[no-untyped-def]
        oid = real(self, refname, *args)
        if refname is not None:
            raise pygit2.GitError(f"could not write to '{self.path}logs/{refname}': "
                                  "No space left on device")
        return oid

    monkeypatch.setattr(pygit2.Repository, "create_commit", moved_then_failed)
    # where libgit2 moves the ref (HEAD names it, a symbolic ref: gitio.swap_ref declines)
    monkeypatch.setattr(gitio, "swap_ref", lambda *args, **kwargs: False)
    record = Ledger.open(repo).emit("test.append", {"n": 1})
    monkeypatch.undo()
    stored = list(Ledger.open(repo).records())
    assert [r.id for r in stored][-1] == record.id
    assert [r.data["n"] for r in stored] == [0, 1]  # stored once, not retried
    assert git(repo, "rev-list", "--count", "meridian/state").strip() == "2"
    assert verify(Ledger.open(repo)).ok


def test_an_error_when_another_writer_moved_the_ref_is_not_taken_for_ours(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ref moved, but not to this write's commit: the failure stays a failure."""
    import pygit2

    from meridian import gitio

    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    real = pygit2.Repository.create_commit

    def raced_then_failed(self, refname, *args):  # type: ignore[no-untyped-def]
        if refname is not None:
            monkeypatch.setattr(pygit2.Repository, "create_commit", real)
            Ledger.open(repo).emit("test.append", {"n": "other"})
            raise pygit2.GitError("could not write the ref: Input/output error")
        return real(self, refname, *args)

    monkeypatch.setattr(pygit2.Repository, "create_commit", raced_then_failed)
    # where libgit2 moves the ref (HEAD names it, a symbolic ref: gitio.swap_ref declines)
    monkeypatch.setattr(gitio, "swap_ref", lambda *args, **kwargs: False)
    with pytest.raises(ledger_module.MeridianError, match="Input/output error"):
        Ledger.open(repo).emit("test.append", {"n": 1})
    assert [r.data["n"] for r in Ledger.open(repo).records()] == [0, "other"]


def test_the_first_commit_stored_despite_a_failing_update_ref_is_acknowledged(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``git update-ref`` (the branch's first commit) exiting non-zero after it moved the
    ref: the ref names the commit, so it is stored."""
    from meridian import gitio

    real = gitio.git

    def update_ref_then_fail(args, cwd, **kwargs):  # type: ignore[no-untyped-def]
        proc = real(args, cwd, **kwargs)
        if args[0] == "update-ref":
            return subprocess.CompletedProcess(proc.args, 1, proc.stdout,
                                               "error: unable to append to reflog\n")
        return proc

    monkeypatch.setattr(gitio, "git", update_ref_then_fail)
    record = Ledger.open(repo).emit("test.append", {"n": 0})
    monkeypatch.undo()
    assert [r.id for r in Ledger.open(repo).records()] == [record.id]


def test_the_configured_branch_is_cached_by_the_bytes_of_a_config_that_validated(
        repo: Path) -> None:
    """``Ledger.open`` reads the branch without yaml or pydantic once the config's exact
    bytes validated; other bytes are validated again, and a bad file is refused even
    with a cache from a good one."""
    from meridian.errors import MeridianError

    config = repo / ".meridian" / "config.yaml"
    cache = repo / ".git" / "meridian" / ledger_module.BRANCH_CACHE
    assert Ledger.open(repo).branch == "meridian/state"  # no file: the default
    assert not cache.exists()
    config.parent.mkdir()
    config.write_text("branch: team/state\n")
    assert Ledger.open(repo).branch == "team/state"
    assert cache.is_file()
    assert Ledger.open(repo).branch == "team/state"  # from the cache
    config.write_text("branch: other/state\n")
    assert Ledger.open(repo).branch == "other/state"
    cache.write_text("{not json")
    assert Ledger.open(repo).branch == "other/state"
    config.write_text("branch: other/state\nbogus: 1\n")
    with pytest.raises(MeridianError, match="config.yaml"):
        Ledger.open(repo)
    config.write_text("branch: other/state\n")  # the validated bytes again
    assert Ledger.open(repo).branch == "other/state"


def _log_a_move_that_never_landed(repo: Path) -> str:
    """What a writer killed between its reflog line and its ref rename leaves: a commit
    on the tip, a reflog line ``tip -> commit``, and the ref still at the tip."""
    import pygit2

    handle = pygit2.Repository(str(repo))
    tip = handle.references["refs/heads/meridian/state"].target
    sig = pygit2.Signature("Writer", "w@example.com")
    lost = handle.create_commit(None, sig, sig, "lost\n", handle[tip].tree_id, [tip])
    log = repo / ".git" / "logs" / "refs" / "heads" / "meridian" / "state"
    with log.open("a") as out:
        out.write(f"{tip} {lost} Writer <w@example.com> 1700000000 +0000\tcommit: lost\n")
    assert git(repo, "rev-parse", "meridian/state").strip() == str(tip)
    return str(lost)


@pytest.mark.parametrize("marker", ["kept", "deleted"])
def test_a_reflog_line_whose_ref_never_moved_is_not_a_rewrite(repo: Path, marker: str) -> None:
    from meridian.verify import cache_path

    ledger = Ledger.open(repo)
    for n in range(3):
        ledger.emit("test.append", {"n": n})
    assert verify(ledger).ok
    lost = _log_a_move_that_never_landed(repo)
    if marker == "deleted":
        cache_path(ledger).unlink()
    # newest line of the log, the ref still where it was
    report = verify(Ledger.open(repo), full=True)
    assert report.ok, [str(p) for p in report.problems]
    # the next writer moves the ref from the same tip again
    Ledger.open(repo).emit("test.append", {"n": 3})
    _log_a_move_that_never_landed(repo)  # and a second killed writer after it
    Ledger.open(repo).emit("test.append", {"n": 4})
    report = verify(Ledger.open(repo), full=True)
    assert report.ok, [str(p) for p in report.problems]
    assert lost not in git(repo, "rev-list", "meridian/state")
    assert [r.data["n"] for r in Ledger.open(repo).records()] == [0, 1, 2, 3, 4]
