"""`git repack -ad` racing an append: the append's pack must survive a repack that
listed the packs and read the refs before the ref moved, then deletes what it listed.

git itself protects a pack it wrote before a ref names its objects with a ``.keep``
file (receive-pack, fetch's index-pack --keep); an append's pack is such a pack."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from meridian import gitio
from meridian.ledger import Ledger
from meridian.verify import verify
from tests.conftest import git

# Stands in for git's exec path: `git repack` runs `git pack-objects` through it. The
# real pack-objects runs to the end (it has read the refs and written the new pack),
# then the repack is held until the test says go, before it deletes the old packs.
WRAPPER = textwrap.dedent(
    """\
    #!{python}
    import os, subprocess, sys, time
    real = os.environ["REAL_GIT_EXEC_PATH"]
    env = dict(os.environ, GIT_EXEC_PATH=real)
    args = sys.argv[1:]
    if not args or args[0] != "pack-objects":
        os.execve(real + "/git", [real + "/git", *args], env)
    done = subprocess.run([real + "/git", *args], env=env, stdout=subprocess.PIPE)
    signals = os.environ["RACE_DIR"]
    open(signals + "/packed", "w").close()
    deadline = time.monotonic() + 60
    while not os.path.exists(signals + "/go") and time.monotonic() < deadline:
        time.sleep(0.01)
    sys.stdout.buffer.write(done.stdout)
    sys.exit(done.returncode)
    """
)


def _wait_for(path: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the repack never ran pack-objects"
        time.sleep(0.01)


def test_an_append_acknowledged_while_git_repack_ad_runs_is_not_deleted_by_it(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    exec_dir = tmp_path / "exec"
    exec_dir.mkdir()
    wrapper = exec_dir / "git"
    wrapper.write_text(WRAPPER.replace("{python}", sys.executable))
    wrapper.chmod(0o755)
    signals = tmp_path / "signals"
    signals.mkdir()
    env = dict(os.environ, GIT_EXEC_PATH=str(exec_dir), RACE_DIR=str(signals),
               REAL_GIT_EXEC_PATH=git(repo, "--exec-path").strip())
    real_create = gitio.create_commit
    repack: list[subprocess.Popen[bytes]] = []

    def repack_meanwhile(*args, **kwargs):  # type: ignore[no-untyped-def]
        # the append's pack is written, the ref not moved yet: a repack lists the packs
        # and packs what the refs reach now
        proc = subprocess.Popen(["git", "repack", "-a", "-d", "-q"], cwd=repo, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        repack.append(proc)
        _wait_for(signals / "packed", proc)
        return real_create(*args, **kwargs)

    monkeypatch.setattr(gitio, "create_commit", repack_meanwhile)
    record = ledger.emit("test.append", {"n": 1})  # acknowledged
    monkeypatch.setattr(gitio, "create_commit", real_create)
    (signals / "go").touch()
    _, err = repack[0].communicate(timeout=60)
    assert repack[0].returncode == 0, err
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling", "--no-progress"],
                          cwd=repo, capture_output=True, text=True, check=False)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    fresh = Ledger.open(repo)
    assert [r.id for r in fresh.records()][-1] == record.id
    report = verify(fresh, full=True)
    assert report.ok, [str(p) for p in report.problems]
    # the pack's guard went with the append: a later repack packs it like any other
    packs = repo / ".git" / "objects" / "pack"
    assert not list(packs.glob("*.keep"))
    git(repo, "repack", "-a", "-d", "-q")
    assert len(list(packs.glob("pack-*.pack"))) == 1
    fresh.emit("test.append", {"n": 2})
    assert [r.data["n"] for r in Ledger.open(repo).records()] == [0, 1, 2]


KILLED_BEFORE_THE_REF = textwrap.dedent(
    """
    import os, signal, sys
    from meridian import gitio
    from meridian.ledger import Ledger

    def killed(*args, **kwargs):  # the append's pack is written and kept; no ref moved
        os.kill(os.getpid(), signal.SIGKILL)

    gitio.create_commit = killed
    Ledger.open(sys.argv[1]).emit("test.append", {"n": "killed"})
    """
)


def test_the_keep_of_a_writer_killed_before_its_ref_moved_is_released_once_stale(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    proc = subprocess.run([sys.executable, "-c", KILLED_BEFORE_THE_REF, str(repo)], check=False)
    assert proc.returncode == -9
    packs = repo / ".git" / "objects" / "pack"
    (keep,) = packs.glob("pack-*.keep")
    from meridian import packfile

    assert packfile.own_keep(packs, keep.stem)  # a hard link to its own pack file
    assert keep.stat().st_ino == keep.with_suffix(".pack").stat().st_ino
    ledger.pack()
    assert keep.exists()  # a writer may still be about to move the ref: left alone
    old = time.time() - gitio.STALE_KEEP_SECONDS - 60
    os.utime(keep, (old, old))
    ledger.pack()
    assert not keep.exists()  # released, and its pack merged with the others
    state = json.loads(ledger._local_name("packed", ".json").read_text())
    assert keep.stem in dict(state["retired"])  # merged: deleted once retired long enough
    # a keep the user (or git) wrote is never touched
    theirs = packs / (min(packs.glob("pack-*.idx")).stem + ".keep")
    theirs.write_text("kept by the user\n")
    os.utime(theirs, (old, old))
    ledger.emit("test.append", {"n": 1})
    ledger.pack()
    assert theirs.read_text() == "kept by the user\n"
    assert [r.data["n"] for r in Ledger.open(repo).records()] == [0, 1]


def test_a_full_disk_on_the_keep_leaves_nothing_and_acknowledges_nothing(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from meridian import packfile
    from meridian.errors import MeridianError

    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    tip = ledger.tip()
    packs = repo / ".git" / "objects" / "pack"
    before = sorted(p.name for p in packs.iterdir())
    real, real_link = packfile._os_write, packfile._os_link

    def full(fd, data):  # type: ignore[no-untyped-def]
        if bytes(data).startswith(packfile.KEEP_MARKER):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data)

    def no_room(source, target):  # type: ignore[no-untyped-def]
        raise OSError(errno.ENOSPC, "No space left on device")

    # the keep as a hard link: no room for the directory entry
    monkeypatch.setattr(packfile, "_os_link", no_room)
    with pytest.raises(MeridianError, match="No space left on device"):
        ledger.emit("test.append", {"n": 1})
    assert sorted(p.name for p in packs.iterdir()) == before
    # a filesystem without hard links: the keep is a marker file, and the disk fills there

    def no_links(source, target):  # type: ignore[no-untyped-def]
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(packfile, "_os_link", no_links)
    monkeypatch.setattr(packfile, "_os_write", full)
    with pytest.raises(MeridianError, match="No space left on device"):
        ledger.emit("test.append", {"n": 1})
    monkeypatch.setattr(packfile, "_os_write", real)
    assert sorted(p.name for p in packs.iterdir()) == before
    assert Ledger.open(repo).tip() == tip
    # without hard links an append keeps its pack with a marker file, released once
    # the write is acknowledged
    Ledger.open(repo).emit("test.append", {"n": 1})
    assert not list(packs.glob("*.keep"))
    monkeypatch.setattr(packfile, "_os_link", real_link)
    Ledger.open(repo).emit("test.append", {"n": 2})
    assert [r.data["n"] for r in Ledger.open(repo).records()] == [0, 1, 2]
