"""A repository git itself cannot read (a damaged pack, an object format libgit2 does not
know) is reported in one line with exit 2: never a traceback, never "internal error"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from meridian import ledger as ledger_module
from meridian.ledger import Ledger
from tests.conftest import git


def _meridian(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "meridian.cli", *args], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=120)


def _one_line_exit_2(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    return lines[0]


def test_damaged_pack_of_the_state_branch_is_one_line_exit_2(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger_module, "RETIRE_SECONDS", 0.0)
    ledger = Ledger.open(repo)
    for n in range(40):
        ledger.emit("test.append", {"n": n, "pad": "x" * 200})
    ledger.pack()
    # the small packs just merged are retired, deleted at the next pack (they are stored
    # at zlib level 0, so one of them, redundant, would be the biggest pack damaged)
    ledger.pack()
    packs = sorted((repo / ".git" / "objects" / "pack").glob("pack-*.pack"),
                   key=lambda p: p.stat().st_size)
    biggest = packs[-1]
    os.chmod(biggest, 0o644)
    data = bytearray(biggest.read_bytes())
    for at in range(200, len(data) - 40, 997):  # flip bytes inside compressed entries
        data[at] ^= 0xFF
    biggest.write_bytes(bytes(data))
    proc = subprocess.run(["git", "fsck", "--full", "--no-progress"], cwd=repo,
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0  # git agrees the repository is damaged
    line = _one_line_exit_2(_meridian(repo, "verify", "--full"))
    assert "git fsck" in line, line


def test_sha256_repository_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "sha256"
    proc = subprocess.run(["git", "init", "-q", "--object-format=sha256", str(path)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip("this git cannot make a sha256 repository")
    git(path, "commit", "-q", "--allow-empty", "-m", "initial")
    line = _one_line_exit_2(_meridian(path, "log"))
    assert "sha256" in line, line
    # nothing was written into it
    assert not list((path / ".git" / "objects" / "pack").glob("pack-*"))
