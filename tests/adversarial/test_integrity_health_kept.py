"""Attack: make `meridian health` hang, fail or show what the state branch does not say,
through the file it keeps its pass over the events in (``.git/meridian/health-<branch>.json``,
``health/aggregate.py`` ``_FiguresKept``): a FIFO or a device in its place, a huge file,
a directory, a symlink to one.

Layer: the report (a display cache, never trust): anything but a regular file of a
bounded size is ignored without blocking, and the report equals a fresh one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.conftest import Proc


def _kept(root: Path) -> Path:
    return root / ".git" / "meridian" / "health-meridian__state.json"


def _health(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "meridian", "health", *args], cwd=root,
                          capture_output=True, text=True, timeout=60, check=False)


def _figures(out: str) -> dict:
    document = json.loads(out)
    document.pop("generated_at", None)
    return document


@pytest.mark.parametrize("poison", ["fifo", "symlink to a fifo", "directory", "huge"])
def test_a_poisoned_kept_pass_never_hangs_and_is_ignored(
        project: Path, cli: Callable[..., Proc], tmp_path: Path, poison: str) -> None:
    assert cli("gate", "start", "spec").code == 0
    first = _health(project, "--json")
    assert first.returncode == 0, first.stderr
    kept = _kept(project)
    assert kept.is_file()
    kept.unlink()
    if poison == "fifo":
        os.mkfifo(kept)
    elif poison == "symlink to a fifo":
        os.mkfifo(tmp_path / "pipe")
        kept.symlink_to(tmp_path / "pipe")
    elif poison == "directory":
        kept.mkdir()
    else:
        with kept.open("wb") as handle:  # a sparse 3 GiB file
            handle.truncate(3 * 1024 ** 3)
    shown = _health(project, "--json")  # a hang fails here (timeout)
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr
    assert _figures(shown.stdout) == _figures(first.stdout)
    text = _health(project)
    assert text.returncode == 0 and "Traceback" not in text.stderr
