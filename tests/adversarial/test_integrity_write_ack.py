"""Attack surface: a write reported as stored that never reached the disk.

Layer: the ledger's write acknowledgement (``Ledger._acknowledge``: the ref re-read from
disk through a fresh repository must name the new commit and its tree) and the CLI's
error edge (a full disk is one line and exit 2, never a traceback).
"""

from __future__ import annotations

import errno
import json
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from meridian import gitio
from meridian.ledger import Ledger
from tests.adversarial.conftest import Proc

NOTE = json.dumps({"session": "s1", "event": "note", "notes": "a lesson"})


def test_a_commit_object_lost_on_a_full_disk_is_never_acknowledged(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch) -> None:
    """libgit2 returned an id, the ref moved, but the object write failed (ENOSPC)."""
    tip = Ledger.open(project).tip()
    real = gitio.create_commit

    def lossy(repo, refname, tree, parents, message, **options):  # type: ignore[no-untyped-def]
        oid = real(repo, refname, tree, parents, message, **options)
        loose = Path(repo.path) / "objects" / str(oid)[:2] / str(oid)[2:]
        loose.unlink()  # what a full disk leaves: the id without the object
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


def test_enospc_from_the_object_database_is_one_line_and_exit_2(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch) -> None:
    tip = Ledger.open(project).tip()

    def full(self, data):  # type: ignore[no-untyped-def]
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(pygit2.Repository, "create_blob", full)
        result = cli("memory", "add", "episodic", "--json", NOTE)
    assert result.code == 2, result
    assert result.err == ("meridian: cannot write to the object database: No space left on "
                          "device\n")
    assert Ledger.open(project).tip() == tip


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


def _lose_after(real: Callable[..., gitio.Oid], pick: Callable[..., gitio.Oid | None]
                ) -> Callable[..., gitio.Oid]:
    """``real``, then the loose file of the object ``pick`` names deleted: an id libgit2
    returned for an object a full disk never wrote."""
    def lossy(repo, *args, **kwargs):  # type: ignore[no-untyped-def]
        oid = real(repo, *args, **kwargs)
        lost = pick(repo, oid)
        if lost is not None:
            (Path(repo.path) / "objects" / str(lost)[:2] / str(lost)[2:]).unlink()
        return oid
    return lossy


@pytest.mark.parametrize("lost", ["shard blob", "subtree"])
def test_a_lost_blob_or_subtree_is_never_acknowledged(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch,
        lost: str) -> None:
    """An id came back for the record's shard (or a tree on its path) but the object is
    not on disk: the write is lost, must not be said to be stored, and is one line."""
    tip = Ledger.open(project).tip()

    def subtree(repo, tree):  # type: ignore[no-untyped-def]
        # the recursion calls the patched function too: lose the root's memory/ tree
        return repo[tree]["memory"].id if "memory" in repo[tree] else None

    with monkeypatch.context() as patched:
        if lost == "shard blob":
            patched.setattr(gitio, "write_blob",
                            _lose_after(gitio.write_blob, lambda repo, oid: oid))
        else:
            patched.setattr(gitio, "update_tree", _lose_after(gitio.update_tree, subtree))
        result = cli("memory", "add", "episodic", "--json", NOTE)
    assert result.code == 2, result  # refused where the tree is built (libgit2 checks
    assert result.err.count("\n") == 1 and "Traceback" not in result.err  # each entry)
    assert "stored" not in result.out
    assert Ledger.open(project).tip() == tip
    assert cli("verify").code == 0
