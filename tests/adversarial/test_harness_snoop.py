"""Adversarial agents under evaluation: they look for the answers and leave daemons.

A ``command:`` agent is another process: it may read its own environment, argv,
/proc of its ancestors (cmdline, environ), the temporary directory. None of those may
hold a task's target. An agent that exits normally may not leave a process behind
(a daemon in its own session that watches the rest of the run).
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from meridian.evals.runner import RunOptions, run_suite
from meridian.evals.suite import load_suite
from tests.evals.runs_support import process_gone, write_suite

SECRET = "zq-hidden-target-7731"

SNOOP = """
import json, os, sys, tempfile
task = json.load(sys.stdin)
START = __import__("time").time()
found = []
def look(label, data):
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    if "zq-hidden-target" in data:
        found.append(label)
look("stdin", json.dumps(task))
look("argv", " ".join(sys.argv))
look("env", json.dumps(dict(os.environ)))
pid = os.getppid()
while pid > 1:
    for name in ("cmdline", "environ"):
        try:
            look(f"/proc/{pid}/{name}", open(f"/proc/{pid}/{name}", "rb").read())
        except OSError:
            pass
    try:
        pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        break
tmp = tempfile.gettempdir()
for name in os.listdir(tmp):  # the harness's own temp files and multiprocessing dirs
    path = os.path.join(tmp, name)
    paths = [path]
    if os.path.isdir(path) and name.startswith(("pymp-", "meridian", "tmp")):
        try:
            paths = [os.path.join(path, f) for f in os.listdir(path)]
        except OSError:
            paths = []
    for candidate in paths:
        try:
            if os.path.isfile(candidate) and os.path.getmtime(candidate) > START - 60:
                look(candidate, open(candidate, "rb").read(200000))
        except OSError:
            pass
print(json.dumps({"steps": [], "final_output": ",".join(found) or "nothing"}))
"""

DAEMON_AND_EXIT = """
import json, subprocess, sys
task = json.load(sys.stdin)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                         start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
open(task["metadata"]["pid_file"], "w").write(str(child.pid))
print(json.dumps({"steps": [], "final_output": "42"}))
"""


def command(tmp: Path, name: str, body: str) -> str:
    path = tmp / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return f"command:{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


@pytest.mark.parametrize("isolation", [True, False])
def test_a_command_agent_finds_no_target_in_env_argv_proc_or_tmp(
        tmp_path: Path, isolation: bool) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [
        {"id": "t1", "expected": SECRET, "answer": "nothing"}]))
    result = run_suite(suite, command(tmp_path, "snoop", SNOOP),
                       RunOptions(workers=1, isolation=isolation))
    trajectory = result.results[0].trials[0].trajectory
    assert trajectory is not None
    assert trajectory.final_output == "nothing"


def test_a_daemon_forked_in_a_new_session_by_an_agent_that_exits_is_killed(
        tmp_path: Path) -> None:
    """In a worker (the default). With --no-isolation the orphan is re-parented to init
    and cannot be found (documented in docs/evals.md)."""
    pid_file = tmp_path / "daemon.pid"
    suite = load_suite(write_suite(tmp_path / "s.yaml", [{"id": "d", "pid_file": str(pid_file)}]))
    result = run_suite(suite, command(tmp_path, "daemon", DAEMON_AND_EXIT),
                       RunOptions(workers=1))
    assert result.results[0].status == "pass"
    daemon = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while not process_gone(daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    gone = process_gone(daemon)
    if not gone:
        os.kill(daemon, signal.SIGKILL)
    assert gone
