"""Running a gate's checks: shell commands with a timeout, output kept.

Each check runs from the repository root in its own process group, with the
``GIT_*`` variables a hook inherits removed (so a check that runs git sees the
repository, not the hook's index), ``MERIDIAN_GATE`` set to the gate id and
``MERIDIAN_PYTHON`` to Meridian's interpreter. A check that outlives
its timeout is killed with its whole process group and counts as failed.

``run_checks`` reports to an optional ``CheckProgress`` as it goes (each check's start,
a heartbeat every ``HEARTBEAT_S`` while it runs, its result with the elapsed time), so
`meridian gate submit` can stream progress instead of running a long suite in silence.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from meridian import gitio
from meridian.evaluators.models import CheckResult
from meridian.gates.graph import CheckSpec

MAX_OUTPUT_CHARS = 20_000
HEARTBEAT_S = 30.0


class CheckProgress(Protocol):
    """Told about each check as it runs (``index`` counts from 1 up to ``total``)."""

    def started(self, index: int, total: int, command: str) -> None: ...

    def running(self, index: int, total: int, command: str, elapsed_s: float) -> None: ...

    def finished(self, index: int, total: int, result: CheckResult) -> None: ...

    def evaluating(self, evaluator: str) -> None: ...


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


def run_check(spec: CheckSpec, root: Path, gate: str, *,
              on_tick: Callable[[float], None] | None = None,
              tick_s: float = HEARTBEAT_S,
              extra_env: Mapping[str, str] | None = None) -> CheckResult:
    """Run one check; ``on_tick(elapsed_s)`` is called every ``tick_s`` while it runs.
    ``extra_env``: variables set for it (the mutation check's ``PYTHONPATH``)."""
    env = gitio.clean_env()
    env.update(extra_env or {})
    env["MERIDIAN_GATE"] = gate
    # The interpreter Meridian runs in, so a check can reach Meridian's own modules
    # (python -m meridian.gates.data_contract) even when `python` on PATH is another one.
    env["MERIDIAN_PYTHON"] = sys.executable
    started = time.monotonic()
    proc: subprocess.Popen[bytes] | None = None
    timed_out = False
    try:
        try:
            proc = subprocess.Popen(
                spec.run, shell=True, cwd=root, env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            )
        except OSError as exc:
            return CheckResult(command=spec.run, exit_code=None, output=f"could not start: {exc}")
        while True:
            # Waiting in slices loses no output (communicate may be retried after a
            # timeout) and lets a heartbeat say the check is still running.
            remaining = spec.timeout - (time.monotonic() - started)
            try:
                raw, _ = proc.communicate(timeout=max(0.0, min(remaining, tick_s)))
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() - started >= spec.timeout:
                    _kill_group(proc)
                    raw, _ = proc.communicate()
                    timed_out = True
                    break
                if on_tick is not None:
                    on_tick(time.monotonic() - started)
    finally:
        # A check that left background children behind must not outlive the gate; nor
        # may an interrupted one (Ctrl-C reaches Meridian, not the check's own session;
        # from the moment it is spawned, hence the Popen inside this try).
        if proc is not None:
            _kill_group(proc)
            if proc.returncode is None:
                proc.wait()
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


def run_checks(specs: Sequence[CheckSpec], root: Path, gate: str,
               progress: CheckProgress | None = None) -> list[CheckResult]:
    """Every check, in order; a failure does not stop the rest (the evaluator sees all)."""
    results = []
    total = len(specs)
    for index, spec in enumerate(specs, start=1):
        if progress is None:
            results.append(run_check(spec, root, gate))
            continue
        progress.started(index, total, spec.run)

        def tick(elapsed: float, index: int = index, command: str = spec.run) -> None:
            progress.running(index, total, command, elapsed)

        result = run_check(spec, root, gate, on_tick=tick)
        progress.finished(index, total, result)
        results.append(result)
    return results
