"""A spool lock held by a stopped process delays one Meridian process once, not twice.

Layer: the local hooks (``meridian.hooks.block_spool``). Every command and git hook
drains the Claude deny's spool first, waiting up to ``LOCK_WAIT_SECONDS`` for a drainer
at work. A drainer that never finishes (``kill -STOP``, a debugger) must cost a
``git commit`` that one wait: the pre-commit hook drains in ``cli.main`` and again in
``precommit.run``, and a second full wait made the commit take twice the bound.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from meridian import cli
from meridian.hooks import block_spool
from tests.adversarial.guard_support import base_env, make_project, run


@pytest.mark.skipif(os.name == "nt", reason="flock(1) and SIGSTOP")
def test_a_stopped_drainer_costs_a_commit_one_lock_wait(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    root = make_project(tmp_path / "project", home)
    spool = block_spool.spool_dir(root / ".git")
    spool.mkdir(parents=True, exist_ok=True)
    ts = "2026-01-01T00:00:00.000000Z"
    (spool / f"{ts}-1-abcd.json").write_text(json.dumps({
        "root": str(root), "branch": "meridian/state", "source": "claude", "reason": "r",
        "gate": None, "files": None, "ts": ts, "extra": {}}))
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "a.md").write_text("hello\n")
    run(["git", "add", "-A"], root, base_env(home))
    holder = subprocess.Popen(["flock", str(spool / ".lock"), "sleep", "300"])
    try:
        deadline = time.monotonic() + 30
        while not _held(spool / ".lock") and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(holder.pid, signal.SIGSTOP)
        monkeypatch.setattr(block_spool, "LOCK_WAIT_SECONDS", 0.3)
        waits: list[bool] = []
        real_lock, real_sleep = block_spool._lock, block_spool.time.sleep
        slept = [0]

        def counting_sleep(seconds: float) -> None:
            slept[0] += 1
            real_sleep(seconds)

        def spying_lock(fd: int, *args: object, **kwargs: object) -> bool:
            before = slept[0]
            got = real_lock(fd, *args, **kwargs)  # type: ignore[arg-type]
            if slept[0] > before:
                waits.append(got)
            return got

        monkeypatch.setattr(block_spool.time, "sleep", counting_sleep)
        monkeypatch.setattr(block_spool, "_lock", spying_lock)
        for key, value in base_env(home).items():
            monkeypatch.setenv(key, value)
        monkeypatch.chdir(root)
        assert cli.main(["hook", "pre-commit"]) == 0
        assert waits == [False]  # waited once, gave up; the second drain did not wait again
        assert block_spool.pending(root / ".git")  # the block is kept for the next drainer
    finally:
        os.kill(holder.pid, signal.SIGCONT)
        holder.kill()
        holder.wait()


def _held(lock: Path) -> bool:
    import fcntl

    if not lock.exists():
        return False
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
