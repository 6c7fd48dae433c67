"""`gate submit` streams each check as it runs: plain lines when stderr is not a terminal,
a live rich display when it is, nothing with --quiet. The real command in a subprocess."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

from meridian.gates.checks import run_check
from meridian.gates.graph import CheckSpec
from tests.gates.conftest import commit_all, write

GATES = """\
version: 1
gates:
  - id: calc
    artifacts: ["src/**"]
    checks:
      - run: sleep 0.3 && echo first
      - run: exit 3
"""

MODULE = 'def add(a: int, b: int) -> int:\n    """Sum."""\n    return a + b\n'


def _project(project: Path, gates: str = GATES) -> Path:
    write(project, ".meridian/gates.yaml", gates)
    write(project, "src/calc.py", MODULE)
    commit_all(project, "calc")
    started = subprocess.run([sys.executable, "-m", "meridian", "gate", "start", "calc"],
                             cwd=project, capture_output=True, text=True, check=False)
    assert started.returncode == 0, started.stderr
    return project


def _submit(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "meridian", "gate", "submit", "calc", *extra],
                          cwd=root, capture_output=True, text=True, check=False)


def test_plain_progress_names_each_check_its_outcome_and_elapsed_time(project: Path) -> None:
    result = _submit(_project(project))
    assert result.returncode == 2  # the second check fails the gate
    lines = [ln for ln in result.stderr.splitlines()
             if ln.startswith(("meridian: check", "meridian: evaluating"))]
    assert lines[0] == "meridian: check 1/2 running: sleep 0.3 && echo first"
    assert re.fullmatch(r"meridian: check 1/2 ok in 0\.[3-9] s: sleep 0\.3 && echo first|"
                        r"meridian: check 1/2 ok in [1-9]\.\d s: sleep 0\.3 && echo first",
                        lines[1]), lines
    assert lines[2] == "meridian: check 2/2 running: exit 3"
    assert re.fullmatch(r"meridian: check 2/2 FAILED \(exit 3\) in \d+\.\d s: exit 3", lines[3])
    assert lines[4] == "meridian: evaluating with the heuristic evaluator"
    assert len(lines) == 5
    assert "gate calc: FAILED" in result.stdout  # the verdict is on stdout as before


def test_quiet_keeps_the_progress_silent(project: Path) -> None:
    result = _submit(_project(project), "--quiet")
    assert result.returncode == 2
    assert "meridian: check" not in result.stderr
    assert "evaluating" not in result.stderr
    assert "gate calc: FAILED" in result.stdout


def test_json_output_stays_clean_while_progress_goes_to_stderr(project: Path) -> None:
    import json

    result = _submit(_project(project), "--json")
    assert json.loads(result.stdout)["passed"] is False
    assert "meridian: check 1/2 running" in result.stderr


def test_a_terminal_gets_a_live_display_with_elapsed_times(project: Path) -> None:
    root = _project(project)
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "meridian", "gate", "submit", "calc"],
                            cwd=root, stdout=subprocess.PIPE, stderr=slave, text=False)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.communicate(timeout=60)
    os.close(master)
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode(errors="replace"))
    assert proc.returncode == 2
    assert "check 1/2 ok: sleep 0.3 && echo first" in screen
    assert "check 2/2 FAILED (exit 3): exit 3" in screen
    assert re.search(r"0:00:0\d", screen)  # rich's elapsed-time column
    assert "meridian: check" not in screen  # not the plain lines


def test_a_long_check_gets_heartbeats_and_loses_no_output(tmp_path: Path) -> None:
    ticks: list[float] = []
    spec = CheckSpec(run="echo before; sleep 0.6; echo after", timeout=30)
    result = run_check(spec, tmp_path, "g", on_tick=ticks.append, tick_s=0.1)
    assert result.passed and result.output == "before\nafter\n"
    assert len(ticks) >= 3 and ticks == sorted(ticks)


def test_a_check_past_its_timeout_is_still_killed_between_heartbeats(tmp_path: Path) -> None:
    ticks: list[float] = []
    result = run_check(CheckSpec(run="sleep 5", timeout=0.5), tmp_path, "g",
                       on_tick=ticks.append, tick_s=0.2)
    assert result.timed_out and result.exit_code is None
    assert result.duration_s < 3
    assert "[killed after the 0.5s timeout]" in result.output


def test_ctrl_c_during_a_check_kills_it_and_exits_130_without_a_traceback(project: Path) -> None:
    """The check runs in its own session (so a kill reaches its whole group), which also
    means the terminal's SIGINT never reaches it: Meridian must end it on the way out."""
    import signal
    import time

    root = _project(project, GATES.replace(
        "      - run: sleep 0.3 && echo first\n", "      - run: echo $$ > check.pid; sleep 60\n"))
    # A shell starts a background job (`pytest ... &`, as CI scripts do) with SIGINT
    # ignored, and Python keeps an ignored SIGINT ignored: give the child the default
    # disposition a terminal's foreground process has, or Ctrl-C is never delivered.
    proc = subprocess.Popen([sys.executable, "-m", "meridian", "gate", "submit", "calc"],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509 - no threads here
    pid_file = root / "check.pid"
    # Generous: on a loaded machine the submit can take long to reach its check. On
    # failure, kill first (the check sleeps 60 s: waiting for it would look like a hang).
    deadline = time.monotonic() + 120
    while not (pid_file.exists() and pid_file.read_text().strip()):
        if time.monotonic() >= deadline or proc.poll() is not None:
            proc.kill()
            raise AssertionError(proc.communicate(timeout=30))
        time.sleep(0.05)
    check_pid = int(pid_file.read_text())
    time.sleep(0.5)  # well inside the wait for it, not in the instant it is spawned
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and "meridian: interrupted" in err
    try:
        os.kill(check_pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive, f"the check (pid {check_pid}) outlived meridian"
