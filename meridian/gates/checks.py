"""Running a gate's checks: shell commands with a timeout, output kept.

Each check runs from the repository root in its own process group, with the
``GIT_*`` variables a hook inherits removed (so a check that runs git sees the
repository, not the hook's index), ``MERIDIAN_GATE`` set to the gate id and
``MERIDIAN_PYTHON`` to Meridian's interpreter. A check that outlives
its timeout is killed with its whole process group and counts as failed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from meridian import gitio
from meridian.evaluators.models import CheckResult
from meridian.gates.graph import CheckSpec

MAX_OUTPUT_CHARS = 20_000


def _tail(text: str) -> str:
    """The end of the output, where test runners put their summary."""
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    omitted = len(text) - MAX_OUTPUT_CHARS
    return f"[... {omitted} characters omitted ...]\n" + text[-MAX_OUTPUT_CHARS:]


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        return


def run_check(spec: CheckSpec, root: Path, gate: str) -> CheckResult:
    env = gitio.clean_env()
    env["MERIDIAN_GATE"] = gate
    # The interpreter Meridian runs in, so a check can reach Meridian's own modules
    # (python -m meridian.gates.data_contract) even when `python` on PATH is another one.
    env["MERIDIAN_PYTHON"] = sys.executable
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            spec.run, shell=True, cwd=root, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )
    except OSError as exc:
        return CheckResult(command=spec.run, exit_code=None, output=f"could not start: {exc}")
    try:
        raw, _ = proc.communicate(timeout=spec.timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raw, _ = proc.communicate()
        timed_out = True
    finally:
        # A check that left background children behind must not outlive the gate.
        if proc.returncode is not None:
            _kill_group(proc)
    output = raw.decode("utf-8", errors="replace")
    if timed_out:
        output += f"\n[killed after the {spec.timeout:g}s timeout]"
    return CheckResult(
        command=spec.run,
        exit_code=None if timed_out else proc.returncode,
        output=_tail(output),
        duration_s=round(time.monotonic() - started, 3),
        timed_out=timed_out,
    )


def run_checks(specs: Sequence[CheckSpec], root: Path, gate: str) -> list[CheckResult]:
    """Every check, in order; a failure does not stop the rest (the evaluator sees all)."""
    return [run_check(spec, root, gate) for spec in specs]
