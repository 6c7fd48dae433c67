"""Attack surface: a write reported as stored that never reached the disk.

Layer: the ledger's write acknowledgement (``Ledger._acknowledge``: the ref re-read from
disk through a fresh repository must name the new commit and its tree) and the CLI's
error edge (a full disk is one line and exit 2, never a traceback).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from meridian import gitio
from meridian.ledger import Ledger
from tests.adversarial.conftest import Proc

NOTE = json.dumps({"session": "s1", "event": "note", "notes": "a lesson"})


def _pack_holding(repo: pygit2.Repository, oid: pygit2.Oid) -> Path:
    """The pack file (of the ones an append writes) holding object ``oid``."""
    from meridian import packfile

    directory = gitio.pack_dir(repo)
    for idx in directory.glob("pack-*.idx"):
        entries = packfile.read(directory, idx.stem)
        if entries is not None and any(e.oid == oid.raw for e in entries):
            return directory / f"{idx.stem}.pack"
    raise AssertionError(f"no pack holds {oid}")


def _damage(pack: Path, how: str) -> None:
    """What a full disk leaves of a pack libgit2 or the kernel said was written."""
    if how == "pack cut short":
        data = pack.read_bytes()
        pack.chmod(0o644)
        pack.write_bytes(data[: len(data) // 2])
    else:  # its index lost
        pack.with_suffix(".idx").unlink()


@pytest.mark.parametrize("how", ["pack cut short", "index lost"])
def test_a_commit_lost_on_a_full_disk_after_the_ref_moved_is_never_acknowledged(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch,
        how: str) -> None:
    """The ref moved to the new commit, but the pack holding it (and the write's blob and
    trees) is not whole on disk: the write is not stored, and the branch is put back."""
    tip = Ledger.open(project).tip()
    real = gitio.create_commit

    def lossy(repo, refname, tree, parents, message, **options):  # type: ignore[no-untyped-def]
        oid = real(repo, refname, tree, parents, message, **options)
        _damage(_pack_holding(repo, oid), how)
        return oid

    with monkeypatch.context() as patched:
        patched.setattr(gitio, "create_commit", lossy)
        result = cli("memory", "add", "episodic", "--json", NOTE)
    assert result.code == 2, result
    assert "stored" not in result.out
    assert result.err.count("\n") == 1 and "was not stored" in result.err
    assert "Traceback" not in result.err
    assert Ledger.open(project).tip() == tip  # the branch still names an intact commit
    assert cli("verify").code == 0


def test_a_loose_commit_object_lost_on_a_full_disk_is_never_acknowledged(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch) -> None:
    """libgit2 made its own commit object (loose: not the bytes the append packed),
    returned its id and moved the ref, but the object write failed (ENOSPC)."""
    tip = Ledger.open(project).tip()
    real = gitio.create_commit

    def lossy(repo, refname, tree, parents, message, **options):  # type: ignore[no-untyped-def]
        oid = real(repo, refname, tree, parents, message + "(libgit2's own)\n", **options)
        loose = Path(repo.path) / "objects" / str(oid)[:2] / str(oid)[2:]
        loose.unlink()  # what a full disk leaves: the id without the object
        return oid

    with monkeypatch.context() as patched:
        patched.setattr(gitio, "create_commit", lossy)
        # where libgit2 moves the ref (HEAD names it, a symbolic ref: swap_ref declines)
        patched.setattr(gitio, "swap_ref", lambda *args, **kwargs: False)
        result = cli("memory", "add", "episodic", "--json", NOTE)
    assert result.code == 2, result
    assert result.err.count("\n") == 1 and "was not stored" in result.err
    assert Ledger.open(project).tip() == tip
    assert cli("verify").code == 0


def test_enospc_from_the_object_database_is_one_line_and_exit_2(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills while the append's pack is written: half of it reaches the file."""
    from meridian import packfile

    tip = Ledger.open(project).tip()
    calls = []

    def full(fd, data):  # type: ignore[no-untyped-def]
        if bytes(data).startswith(packfile.KEEP_MARKER):
            return os.write(fd, data)  # the pack's .keep: the disk fills on the pack
        calls.append(len(data))
        if len(calls) == 1:
            return os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(packfile, "_os_write", full)
        result = cli("memory", "add", "episodic", "--json", NOTE)
    assert result.code == 2, result
    assert result.err == ("meridian: cannot write to the object database: No space left on "
                          "device\n")
    assert Ledger.open(project).tip() == tip
    assert len(calls) == 2  # half the pack was written, then the disk was full
    # nothing of the pack is left (a partial pack file is removed, not left as garbage)
    directory = gitio.pack_dir(Ledger.open(project).repo)
    assert not [p.name for p in directory.iterdir() if p.name.startswith("tmp_")]
    assert all(p.with_suffix(".idx").exists() for p in directory.glob("*.pack"))
    assert not list(directory.glob("*.keep"))  # nor the .keep that guarded it
    assert cli("verify").code == 0


def test_a_full_disk_under_the_error_handler_is_not_a_traceback(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch) -> None:
    """An unexpected error while the log file itself cannot be written."""
    from meridian.commands import status

    def boom(args):  # type: ignore[no-untyped-def]
        raise RuntimeError("unexpected")

    monkeypatch.setattr(status, "run", boom)
    real_open = open

    def no_space(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path).endswith("error.log"):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", no_space)
    result = cli("status")
    assert result.code == 3
    assert result.err.count("\n") == 1 and "could not be written: No space left" in result.err
    # And an OSError for a full disk anywhere else is the user's to fix: exit 2, one line.
    monkeypatch.setattr(status, "run", lambda args: (_ for _ in ()).throw(
        OSError(errno.ENOSPC, "No space left on device", "/x")))
    result = cli("status")
    assert result.code == 2
    assert result.err == "meridian: No space left on device (/x); nothing was written\n"


@pytest.mark.parametrize("how", ["pack cut short", "index lost"])
def test_a_lost_blob_or_subtree_is_never_acknowledged(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch,
        how: str) -> None:
    """The append's pack (its shard blob and the trees on its path) was said to be
    written but is not whole on disk before the ref is asked to move: libgit2 refuses a
    commit whose tree it cannot find, the write is lost, never said to be stored, and is
    one line."""
    from meridian import packfile

    tip = Ledger.open(project).tip()
    real = packfile.write

    def lossy(directory, objects, **options):  # type: ignore[no-untyped-def]
        written = real(directory, objects, **options)
        _damage(directory / f"{written.name}.pack", how)
        return written

    with monkeypatch.context() as patched:
        patched.setattr(packfile, "write", lossy)
        result = cli("memory", "add", "episodic", "--json", NOTE)
    assert result.code == 2, result  # refused where the commit is made (libgit2 checks
    assert result.err.count("\n") == 1 and "Traceback" not in result.err  # its tree)
    assert "stored" not in result.out
    assert Ledger.open(project).tip() == tip
    assert cli("verify").code == 0


@pytest.mark.parametrize("setting", [("core.fsyncObjectFiles", "true"),
                                     ("core.fsync", "committed"),
                                     ("core.fsync", "objects,reference")])
def test_pack_is_fsynced_before_the_ref_names_it_when_git_config_asks(
        repo: Path, monkeypatch: pytest.MonkeyPatch, setting: tuple[str, str]) -> None:
    """A crash after the ref moved must not leave a ref naming bytes never on disk: with
    the user's config asking for fsync of objects (as git honours for its packs), the
    append's pack and index are fsynced, and before the branch moves."""
    from meridian import packfile
    from tests.conftest import git as run_git

    run_git(repo, "config", *setting)
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    tip = run_git(repo, "rev-parse", "meridian/state").strip()
    synced: list[str] = []

    def recording_fsync(fd: int) -> None:
        # the branch has not moved yet when the append's files are synced
        synced.append(run_git(repo, "rev-parse", "meridian/state").strip())
        os.fsync(fd)

    monkeypatch.setattr(packfile, "_os_fsync", recording_fsync)
    ledger.emit("test.append", {"n": 1})
    assert len(synced) >= 2  # the pack and its index
    assert all(seen == tip for seen in synced)
    run_git(repo, "config", "--unset", setting[0])
    synced.clear()
    ledger.emit("test.append", {"n": 2})
    assert synced == []  # git's defaults for loose-object writers: no fsync
