"""The state branch's ref moved in process (``gitio.swap_ref``): git's lock protocol,
compare-and-swap, reflog in git's format, kills and full disks."""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pygit2
import pytest

from meridian import gitio
from meridian import ledger as ledger_module
from meridian.errors import LedgerConflict, MeridianError
from meridian.ledger import Ledger
from meridian.verify import verify
from tests.conftest import git

REF = "refs/heads/meridian/state"


def _ref_file(repo: Path) -> Path:
    return repo / ".git" / "refs" / "heads" / "meridian" / "state"


def _log(repo: Path) -> Path:
    return repo / ".git" / "logs" / "refs" / "heads" / "meridian" / "state"


def _lock(repo: Path) -> Path:
    return repo / ".git" / "refs" / "heads" / "meridian" / "state.lock"


def _commit_on(repo: pygit2.Repository, parent: pygit2.Oid | None, text: str) -> pygit2.Oid:
    """A commit object (no ref moved) on ``parent``."""
    sig = pygit2.Signature("t", "t@example.com")
    builder = repo.TreeBuilder()
    builder.insert("f", repo.create_blob(text.encode()), pygit2.enums.FileMode.BLOB)
    return repo.create_commit(None, sig, sig, text + "\n", builder.write(),
                              [] if parent is None else [parent])


def _fsck(repo: Path) -> None:
    proc = subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=repo,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_reflog_is_what_git_and_libgit2_read(repo: Path) -> None:
    git(repo, "config", "user.name", "Ada Writer")
    git(repo, "config", "user.email", "ada@example.com")
    ledger = Ledger.open(repo)
    for n in range(3):
        ledger.emit("test.append", {"n": n})
    tips = git(repo, "rev-list", "meridian/state").split()
    assert len(tips) == 3
    # git reads every line: newest first, old -> new chained, our summary as the message
    shown = git(repo, "reflog", "show", "--format=%H %gs", "meridian/state").splitlines()
    assert [line.split(" ", 1)[0] for line in shown] == tips
    assert shown[-1].split(" ", 1)[1].startswith("commit (initial): ")
    assert all(line.split(" ", 1)[1].startswith("commit: test.append") for line in shown[:-1])
    # libgit2 too, with the committer it was written as
    entries = list(pygit2.Repository(str(repo)).references[REF].log())
    assert [str(entry.oid_new) for entry in entries] == tips
    assert [str(entry.oid_old) for entry in entries] == tips[1:] + ["0" * 40]
    assert {(entry.committer.name, entry.committer.email) for entry in entries} == {
        ("Ada Writer", "ada@example.com")}
    # every line is git's format exactly: "<old> <new> <name> <<email>> <time> <tz>\t<msg>\n"
    lines = _log(repo).read_bytes().split(b"\n")
    assert lines[-1] == b""
    for line in lines[:-1]:
        head, message = line.split(b"\t")
        old, new, rest = head.split(b" ", 2)
        assert len(old) == len(new) == 40
        assert rest.startswith(b"Ada Writer <ada@example.com> ")
        stamp, zone = rest.rsplit(b" ", 2)[1:]
        assert stamp.isdigit() and zone[:1] in b"+-" and zone[1:].isdigit() and len(zone) == 5
        assert b"\n" not in message
    assert not _lock(repo).exists()
    assert _ref_file(repo).read_text() == tips[0] + "\n"
    _fsck(repo)
    assert verify(Ledger.open(repo), full=True).ok


def test_a_multiline_summary_is_one_reflog_line(repo: Path) -> None:
    assert gitio.reflog_message("first\nsecond  line\n\nTrailer: x\n", []) == \
        "commit (initial): first second line"
    repo_ = pygit2.Repository(str(repo))
    first = _commit_on(repo_, None, "a")
    sig = pygit2.Signature("t", "t@example.com")
    assert gitio.swap_ref(repo_, REF, first, expected=None, sig=sig,
                          message=gitio.reflog_message("a\r\nb\tc\n", [first]))
    assert _log(repo).read_bytes().count(b"\n") == 1
    assert git(repo, "reflog", "show", "--format=%gs", "meridian/state").strip() == "commit: a b c"


def test_two_writers_never_both_win(repo: Path) -> None:
    """Many threads swap from the same tip at once: exactly one moves the ref, every
    other one is told it lost (LedgerConflict), and the ref names the winner's commit."""
    handle = pygit2.Repository(str(repo))
    base = _commit_on(handle, None, "base")
    sig = pygit2.Signature("t", "t@example.com")
    assert gitio.swap_ref(handle, REF, base, expected=None, sig=sig, message="base")
    for round_ in range(5):
        tip = handle.references[REF].target
        candidates = [_commit_on(handle, tip, f"r{round_}w{n}") for n in range(16)]
        start = threading.Barrier(len(candidates))
        won: list[pygit2.Oid] = []
        lost: list[str] = []

        def write(oid: pygit2.Oid, tip: pygit2.Oid = tip, start: threading.Barrier = start,
                  won: list[pygit2.Oid] = won, lost: list[str] = lost) -> None:
            start.wait()
            try:
                if gitio.swap_ref(pygit2.Repository(str(repo)), REF, oid, expected=tip,
                                  sig=sig, message="race"):
                    won.append(oid)
            except LedgerConflict as exc:
                lost.append(str(exc))

        threads = [threading.Thread(target=write, args=(oid,)) for oid in candidates]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(won) == 1 and len(lost) == len(candidates) - 1, (won, lost)
        assert pygit2.Repository(str(repo)).references[REF].target == won[0]
        assert not _lock(repo).exists()
    # the reflog holds the winners only, chained
    entries = list(pygit2.Repository(str(repo)).references[REF].log())
    assert len(entries) == 6
    assert all(str(a.oid_old) == str(b.oid_new) for a, b in itertools.pairwise(entries))


def test_writers_racing_for_the_first_commit_conflict_and_one_wins(repo: Path) -> None:
    """No ref and no refs/heads/meridian/ yet: every writer creates the directory at the
    same time; exactly one creates the ref, the others lose the swap (never an error)."""
    sig = pygit2.Signature("t", "t@example.com")
    for round_ in range(5):
        handle = pygit2.Repository(str(repo))
        candidates = [_commit_on(handle, None, f"r{round_}w{n}") for n in range(12)]
        start = threading.Barrier(len(candidates))
        outcomes: list[object] = []

        def write(oid: pygit2.Oid, start: threading.Barrier = start,
                  outcomes: list[object] = outcomes) -> None:
            start.wait()
            try:
                outcomes.append(gitio.swap_ref(pygit2.Repository(str(repo)), REF, oid,
                                               expected=None, sig=sig, message="first"))
            except LedgerConflict:
                outcomes.append("lost")
            except MeridianError as exc:
                outcomes.append(exc)

        threads = [threading.Thread(target=write, args=(oid,)) for oid in candidates]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(map(str, outcomes)) == ["True"] + ["lost"] * (len(candidates) - 1)
        assert pygit2.Repository(str(repo)).references[REF].target in candidates
        git(repo, "update-ref", "-d", REF)
        shutil.rmtree(repo / ".git" / "refs" / "heads" / "meridian", ignore_errors=True)
        shutil.rmtree(repo / ".git" / "logs", ignore_errors=True)


def test_the_first_commit_is_created_by_one_writer_only(repo: Path) -> None:
    handle = pygit2.Repository(str(repo))
    sig = pygit2.Signature("t", "t@example.com")
    first, second = _commit_on(handle, None, "one"), _commit_on(handle, None, "two")
    assert gitio.swap_ref(handle, REF, first, expected=None, sig=sig, message="one")
    with pytest.raises(LedgerConflict, match="expected 0{40}"):
        gitio.swap_ref(handle, REF, second, expected=None, sig=sig, message="two")
    assert handle.references[REF].target == first


def test_a_ref_only_in_packed_refs_is_compared_and_moved(repo: Path) -> None:
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    ledger.emit("test.append", {"n": 1})
    git(repo, "pack-refs", "--all", "--prune")
    assert not _ref_file(repo).exists()
    packed_tip = git(repo, "rev-parse", "meridian/state").strip()
    assert packed_tip in (repo / ".git" / "packed-refs").read_text()
    handle = pygit2.Repository(str(repo))
    sig = pygit2.Signature("t", "t@example.com")
    stale = handle[handle.references[REF].target].parents[0].id
    with pytest.raises(LedgerConflict):  # the packed value is the current one
        gitio.swap_ref(handle, REF, _commit_on(handle, stale, "x"), expected=stale,
                       sig=sig, message="x")
    assert not _ref_file(repo).exists()
    Ledger.open(repo).emit("test.append", {"n": 2})
    assert _ref_file(repo).exists()  # a loose ref now, over the packed one
    assert [r.data["n"] for r in Ledger.open(repo).records()] == [0, 1, 2]
    assert git(repo, "rev-parse", "meridian/state^").strip() == packed_tip
    _fsck(repo)
    assert verify(Ledger.open(repo), full=True).ok


def test_a_lock_held_by_another_writer_is_a_conflict_and_left_alone(repo: Path) -> None:
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    _lock(repo).write_text("another writer's\n")
    handle = pygit2.Repository(str(repo))
    tip = handle.references[REF].target
    with pytest.raises(LedgerConflict, match="lock"):
        gitio.swap_ref(handle, REF, _commit_on(handle, tip, "x"), expected=tip,
                       sig=pygit2.Signature("t", "t@example.com"), message="x")
    assert _lock(repo).read_text() == "another writer's\n"
    assert handle.references[REF].target == tip


def test_a_lock_taken_over_while_held_does_not_install_the_other_writers_value(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Our lock expired as stale and another writer took the ref's lock: renaming that
    lock would install its value under our compare-and-swap. The swap is lost instead."""
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    handle = pygit2.Repository(str(repo))
    tip = handle.references[REF].target
    real = gitio._append_reflog

    def then_taken_over(*args, **kwargs):  # type: ignore[no-untyped-def]
        real(*args, **kwargs)
        os.rename(_lock(repo), _lock(repo).with_name("expired"))
        _lock(repo).write_text("0" * 40 + "\n")  # a newer writer's lock

    monkeypatch.setattr(gitio, "_append_reflog", then_taken_over)
    with pytest.raises(LedgerConflict, match="taken over"):
        gitio.swap_ref(handle, REF, _commit_on(handle, tip, "x"), expected=tip,
                       sig=pygit2.Signature("t", "t@example.com"), message="x")
    assert _lock(repo).read_text() == "0" * 40 + "\n"  # theirs, not removed by us
    assert _ref_file(repo).read_text() == f"{tip}\n"


KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from meridian import gitio
    from meridian.ledger import Ledger

    def killed(src, dst):  # after the lock's value and the reflog line, before the rename
        os.kill(os.getpid(), signal.SIGKILL)

    gitio._os_rename = killed
    Ledger.open(sys.argv[1]).emit("test.append", {"n": "killed"})
    """
)


def test_a_writer_killed_mid_ref_update_loses_nothing_and_its_lock_expires(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    tip = ledger.tip()
    lines_before = _log(repo).read_bytes().count(b"\n")
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(repo)], check=False)
    assert proc.returncode == -signal.SIGKILL
    # the ref never moved; the lock holds the value it would have; the log line is there
    assert _ref_file(repo).read_text() == f"{tip}\n"
    assert _lock(repo).exists()
    logged = _log(repo).read_bytes().splitlines()
    assert len(logged) == lines_before + 1
    never = logged[-1].split(b" ")[1].decode()
    assert logged[-1].startswith(str(tip).encode() + b" ")
    assert _lock(repo).read_text() == never + "\n"
    # git and verify read it as a move that never took effect
    assert git(repo, "rev-parse", "meridian/state").strip() == str(tip)
    report = verify(Ledger.open(repo), full=True)
    assert report.ok, [str(p) for p in report.problems]
    # the next writer waits for the lock to go stale, expires it and writes
    old = time.time() - 60
    os.utime(_lock(repo), (old, old))
    monkeypatch.setattr(ledger_module, "STALE_LOCK_SECONDS", 5.0)
    Ledger.open(repo).emit("test.append", {"n": 1})
    assert not _lock(repo).exists()
    assert [r.data["n"] for r in Ledger.open(repo).records()] == [0, 1]
    assert git(repo, "rev-parse", "meridian/state^").strip() == str(tip)
    assert len(git(repo, "reflog", "show", "meridian/state").splitlines()) == lines_before + 2
    _fsck(repo)
    report = verify(Ledger.open(repo), full=True)
    assert report.ok, [str(p) for p in report.problems]


@pytest.mark.parametrize("where", ["lock", "reflog", "reflog cut short"])
def test_a_full_disk_during_the_ref_update_moves_nothing_and_acknowledges_nothing(
        repo: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    tip = ledger.tip()
    log_before = _log(repo).read_bytes()
    real = os.write
    calls = []

    def full(fd: int, data: bytes) -> int:
        calls.append(len(data))
        target = 1 if where == "lock" else 2
        if len(calls) == target:
            if where == "reflog cut short":
                return real(fd, bytes(data)[:len(data) // 2])  # a short write
            raise OSError(28, os.strerror(28))
        return real(fd, data)

    monkeypatch.setattr(gitio, "_ref_write", full)
    with pytest.raises(MeridianError, match="No space left on device"):
        Ledger.open(repo).emit("test.append", {"n": 1})
    monkeypatch.undo()
    assert _ref_file(repo).read_text() == f"{tip}\n"
    assert not _lock(repo).exists()
    assert _log(repo).read_bytes() == log_before  # no line, not half of one
    Ledger.open(repo).emit("test.append", {"n": 2})
    assert [r.data["n"] for r in Ledger.open(repo).records()] == [0, 2]
    assert len(git(repo, "reflog", "show", "meridian/state").splitlines()) == 2
    _fsck(repo)
    assert verify(Ledger.open(repo), full=True).ok


def test_the_reflog_is_created_where_git_would_create_it(tmp_path: Path) -> None:
    sig = pygit2.Signature("t", "t@example.com")
    bare = pygit2.init_repository(str(tmp_path / "bare.git"), bare=True)
    first = _commit_on(bare, None, "a")
    assert gitio.swap_ref(bare, REF, first, expected=None, sig=sig, message="a")
    assert not (tmp_path / "bare.git" / "logs" / "refs" / "heads" / "meridian").exists()
    git(tmp_path / "bare.git", "config", "core.logAllRefUpdates", "true")
    second = _commit_on(bare, first, "b")
    assert gitio.swap_ref(bare, REF, second, expected=first, sig=sig, message="b")
    assert len(git(tmp_path / "bare.git", "reflog", "show", "meridian/state").splitlines()) == 1
    plain = tmp_path / "plain"
    git(tmp_path, "init", "-q", str(plain))
    git(plain, "config", "core.logAllRefUpdates", "false")
    handle = pygit2.Repository(str(plain))
    assert gitio.swap_ref(handle, REF, _commit_on(handle, None, "c"), expected=None, sig=sig,
                          message="c")
    assert not _log(plain).exists()
    assert git(plain, "rev-parse", "meridian/state").strip()


@pytest.mark.parametrize(("setting", "synced"), [
    (None, False), ("reference", True), ("committed", True), ("all,-reference", False),
    ("pack", False)])
def test_the_ref_and_its_log_are_fsynced_only_as_core_fsync_asks(
        repo: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None, synced: bool) -> None:
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    if setting is not None:
        git(repo, "config", "core.fsync", setting)
    events: list[str] = []
    real_fsync, real_rename = os.fsync, gitio._os_rename

    def fsync(fd: int) -> None:
        events.append(os.readlink(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd")
                      else "fd")
        real_fsync(fd)

    def rename(src: str, dst: str) -> None:
        if src.endswith("state.lock"):
            events.append("rename")
        real_rename(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(gitio, "_os_rename", rename)
    Ledger.open(repo).emit("test.append", {"n": 1})
    ref_syncs = [e for e in events if e.endswith(("state.lock", "logs/refs/heads/meridian/state"))]
    assert "rename" in events
    if synced:
        assert len(ref_syncs) == 2  # the lock's value and the reflog, both before the rename
        assert events.index("rename") > max(events.index(e) for e in ref_syncs)
    else:
        assert ref_syncs == []


def test_head_naming_the_ref_is_left_to_libgit2(repo: Path) -> None:
    """HEAD (a checkout of the branch) gets a reflog line too when the branch moves, which
    libgit2 writes: the in-process swap declines and touches nothing."""
    handle = pygit2.Repository(str(repo))
    sig = pygit2.Signature("t", "t@example.com")
    first = _commit_on(handle, None, "a")
    (repo / ".git" / "HEAD").write_text(f"ref: {REF}\n")
    assert not gitio.swap_ref(handle, REF, first, expected=None, sig=sig, message="a")
    assert not _ref_file(repo).exists() and not _lock(repo).exists()
    assert not _log(repo).exists()
    # through create_commit the ref moves all the same (libgit2), HEAD's log included
    second_tree = handle[first].tree_id
    made = gitio.create_commit(handle, REF, second_tree, [], "a\n", expected=None, sig=sig)
    assert handle.references[REF].target == made


def test_refs_in_a_reftable_are_never_written_as_loose_files(repo: Path) -> None:
    """A repository whose refs live in a reftable (``<gitdir>/reftable``) has no loose
    refs git reads: the in-process swap declines, writing no ref, lock or reflog file
    (the caller leaves the ref to libgit2). Here the reftable directory is made by hand
    in a files-backend repository, so the ref the test then moves shows nothing leaked."""
    handle = pygit2.Repository(str(repo))
    sig = pygit2.Signature("t", "t@example.com")
    first = _commit_on(handle, None, "a")
    (repo / ".git" / "reftable").mkdir()
    assert not gitio.swap_ref(handle, REF, first, expected=None, sig=sig, message="a")
    assert not _ref_file(repo).exists() and not _lock(repo).exists()
    assert not _log(repo).exists()
    (repo / ".git" / "reftable").rmdir()
    assert gitio.swap_ref(handle, REF, first, expected=None, sig=sig, message="a")
    second = _commit_on(handle, first, "b")
    (repo / ".git" / "reftable").mkdir()
    assert not gitio.swap_ref(handle, REF, second, expected=first, sig=sig, message="b")
    assert _ref_file(repo).read_text() == f"{first}\n"  # untouched
    assert not _lock(repo).exists()


def _git_supports_reftable(tmp_path: Path) -> bool:
    probe = subprocess.run(["git", "init", "-q", "--ref-format=reftable", str(tmp_path / "p")],
                           capture_output=True, text=True, check=False)
    return probe.returncode == 0


def test_an_append_to_a_real_reftable_repository_writes_no_loose_ref(tmp_path: Path) -> None:
    if not _git_supports_reftable(tmp_path):
        pytest.skip(f"this git ({git(tmp_path, '--version').strip()}) has no reftable "
                    "backend (git init --ref-format=reftable needs git 2.45)")
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", "--ref-format=reftable", str(repo)], check=True)
    git(repo, "config", "user.name", "t")
    git(repo, "config", "user.email", "t@example.com")
    try:
        handle = pygit2.Repository(str(repo))
    except pygit2.GitError as exc:
        pytest.skip(f"this libgit2 cannot open a reftable repository: {exc}")
    sig = pygit2.Signature("t", "t@example.com")
    first = _commit_on(handle, None, "a")
    assert not gitio.swap_ref(handle, REF, first, expected=None, sig=sig, message="a")
    assert not _ref_file(repo).exists() and not _lock(repo).exists()
    assert not _log(repo).exists()


def test_a_damaged_ref_file_is_an_error_not_a_conflict(repo: Path) -> None:
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    _ref_file(repo).write_text("garbage\n")
    handle = pygit2.Repository(str(repo))
    with pytest.raises(MeridianError, match="damaged"):
        gitio.swap_ref(handle, REF, _commit_on(handle, None, "x"), expected=None,
                       sig=pygit2.Signature("t", "t@example.com"), message="x")
    assert not _lock(repo).exists()


# --- the packs an append wrote, recalled from memory by the packer ------------------------


def test_a_pack_recalled_from_memory_is_what_is_on_disk(repo: Path) -> None:
    """The packer merges the small packs this process wrote from memory: what it recalls
    must be exactly what the files hold, and a file that is not what was written (its
    size differs) is read from disk instead."""
    from meridian import packfile

    ledger = Ledger.open(repo)
    for n in range(5):
        ledger.emit("test.append", {"n": n})
    directory = repo / ".git" / "objects" / "pack"
    names = [idx.stem for idx in directory.glob("pack-*.idx")]
    recalled = {name: packfile._recalled(directory, name) for name in names}
    assert all(entries is not None for entries in recalled.values())
    packfile._WRITTEN.clear()
    for name, entries in recalled.items():
        on_disk = packfile.read(directory, name)
        assert on_disk is not None and entries is not None
        assert [(e.oid, e.offset, e.kind, e.raw, e.body, e.size) for e in entries] == \
            [(e.oid, e.offset, e.kind, e.raw, e.body, e.size) for e in on_disk]
        assert [packfile.inflate(e) for e in entries] == [packfile.inflate(e) for e in on_disk]
    # a pack replaced on disk (cut short) is not recalled: read() looks at the files
    ledger.emit("test.append", {"n": 5})
    newest = max(directory.glob("pack-*.pack"), key=lambda p: p.stat().st_mtime_ns)
    assert packfile._recalled(directory, newest.stem) is not None
    data = newest.read_bytes()
    newest.chmod(0o644)
    newest.write_bytes(data[: len(data) // 2])
    assert packfile._recalled(directory, newest.stem) is None
    assert packfile.read(directory, newest.stem) is None  # a pack cut short is unreadable


def test_a_symbolic_state_ref_is_appended_through_and_acknowledged(repo: Path) -> None:
    """The state branch a symbolic ref to another branch: libgit2 moves the target, and
    the write is acknowledged (not called lost, its pack removed and both reflogs left
    naming a missing commit)."""
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    tip = git(repo, "rev-parse", "meridian/state").strip()
    git(repo, "update-ref", "refs/heads/other", tip)
    git(repo, "symbolic-ref", REF, "refs/heads/other")
    Ledger.open(repo).emit("test.append", {"n": 1})
    assert _ref_file(repo).read_text() == "ref: refs/heads/other\n"
    assert git(repo, "rev-parse", "other^").strip() == tip
    assert [r.data["n"] for r in Ledger.open(repo).records()] == [0, 1]
    _fsck(repo)
    report = verify(Ledger.open(repo), full=True)
    assert report.ok, [str(p) for p in report.problems]


def test_an_empty_directory_where_the_reflog_goes_is_removed_as_git_does(repo: Path) -> None:
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    _log(repo).unlink()
    _log(repo).mkdir()  # what the logs of a deleted meridian/state/x could leave
    ledger.emit("test.append", {"n": 1})
    assert _log(repo).is_file()
    assert len(git(repo, "reflog", "show", "meridian/state").splitlines()) == 1
    # a directory holding another ref's log is left, and the append refused, as git does
    _log(repo).unlink()
    (_log(repo) / "x").mkdir(parents=True)
    (_log(repo) / "x" / "y").write_text("")
    with pytest.raises(MeridianError, match="Is a directory"):
        Ledger.open(repo).emit("test.append", {"n": 2})
    assert (_log(repo) / "x" / "y").exists()
    assert not _lock(repo).exists()
    assert [r.data["n"] for r in Ledger.open(repo).records()] == [0, 1]
