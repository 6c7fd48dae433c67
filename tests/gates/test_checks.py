"""Gate checks: run from the root, without the hook's GIT_* variables, killed on timeout."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from meridian.gates.checks import MAX_OUTPUT_CHARS, run_check
from meridian.gates.graph import CheckSpec


def test_check_runs_in_the_root_with_a_clean_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GIT_INDEX_FILE", "/elsewhere/index")
    result = run_check(CheckSpec(run='pwd; echo "gate=$MERIDIAN_GATE index=${GIT_INDEX_FILE:-none}"'
                                     ' py=$MERIDIAN_PYTHON; exit 3'), tmp_path, "backend")
    assert result.exit_code == 3 and not result.passed and not result.timed_out
    assert result.output == f"{tmp_path}\ngate=backend index=none py={sys.executable}\n"


def _alive(pid: int) -> bool:
    """Running (not exited, not a zombie awaiting its reaper)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def test_check_is_killed_at_its_timeout_with_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    result = run_check(CheckSpec(run=f"sh -c 'echo $$ > {pid_file}; exec sleep 60' & sleep 60",
                                 timeout=0.5), tmp_path, "g")
    assert result.timed_out and result.exit_code is None and not result.passed
    assert result.output.endswith("[killed after the 0.5s timeout]")
    # The background child was in the check's process group and was killed with it
    # (SIGKILL is asynchronous: wait, up to a deadline, for it to be gone).
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_long_output_keeps_the_end(tmp_path: Path) -> None:
    result = run_check(CheckSpec(run="seq 1 20000; echo SUMMARY"), tmp_path, "g")
    assert result.passed
    assert result.output.endswith("20000\nSUMMARY\n")
    assert result.output.startswith("[... ")
    assert len(result.output) < MAX_OUTPUT_CHARS + 100
