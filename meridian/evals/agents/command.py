"""``command:PROGRAM``: any executable is an agent, in any language.

The task goes to the program's stdin as JSON (the ``Task`` model); the program
prints a trajectory as JSON (the ``Trajectory`` model) on stdout. Only ``steps``
and ``final_output`` are needed: ``task_id`` defaults to the task's, totals to the
sums over the steps, ``latency_s`` to the measured wall time, and ``completed`` to
"there is a final output and no error". Anything else the program does wrong (a
non-zero exit, no JSON, a malformed trajectory) is an infrastructure error with a
message that says which.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from meridian import yamlio
from meridian.errors import MeridianError
from meridian.evals.runner import TaskTimeout
from meridian.evals.types import Task, Trajectory


class AgentInfraError(MeridianError):
    """The agent could not produce a trajectory: not a verdict on its answer."""


def _tail(text: str, lines: int = 3) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()][-lines:]
    return " | ".join(kept)[:300]


class CommandAgent:
    """Runs ``program`` (split with shlex) once per task."""

    def __init__(self, program: str) -> None:
        argv = shlex.split(program)
        if not argv:
            raise MeridianError("agent 'command:': no program given (expected command:PROGRAM [ARGS])")
        found = shutil.which(argv[0])
        if found is None:
            # Refused before the run: otherwise every task would be an infra error, stored.
            problem = "is not executable" if Path(argv[0]).is_file() else "not found"
            raise MeridianError(f"agent 'command:{program}': program {argv[0]!r} {problem}")
        self.program = program
        self.argv = argv
        self.name = f"command:{Path(argv[0]).name}"
        self.version = self._fingerprint([found, *argv[1:]])

    @staticmethod
    def _fingerprint(paths: list[str]) -> str:
        """A short hash of the program and of every argument that is a file (the script
        of ``python agent.py``), so a changed agent shows a changed version."""
        digest = hashlib.sha256()
        for candidate in paths:
            try:
                if Path(candidate).is_file():
                    digest.update(Path(candidate).read_bytes())
            except OSError:
                return "unknown"
        return "sha256:" + digest.hexdigest()[:12]

    def run(self, task: Task) -> Trajectory:
        started = time.perf_counter()
        try:
            proc = subprocess.run(
                self.argv,
                input=task.model_dump_json(),
                check=False,  # a non-zero exit is reported below, with stderr
                capture_output=True,
                text=True,
                timeout=task.effective_timeout_s(),
            )
        except FileNotFoundError:
            raise AgentInfraError(f"agent {self.program!r}: program {self.argv[0]!r} not found") from None
        except PermissionError:
            raise AgentInfraError(f"agent {self.program!r}: {self.argv[0]!r} is not executable") from None
        except subprocess.TimeoutExpired:
            # The agent's own failure (a task failure), not the harness's: see runner.
            raise TaskTimeout(
                f"agent {self.program!r}: no answer within {task.effective_timeout_s():g}s (killed)"
            ) from None
        elapsed = round(time.perf_counter() - started, 6)
        if proc.returncode != 0:
            stderr = _tail(proc.stderr)
            raise AgentInfraError(
                f"agent {self.program!r}: exited {proc.returncode}" + (f": {stderr}" if stderr else "")
            )
        return parse_trajectory(proc.stdout, task, elapsed, source=f"agent {self.program!r}")


def parse_trajectory(stdout: str, task: Task, elapsed_s: float, *, source: str) -> Trajectory:
    """The trajectory a program printed (the whole output, else its last line)."""
    payload = _json_payload(stdout, source)
    if not isinstance(payload, dict):
        raise AgentInfraError(f"{source}: stdout is JSON but not an object (expected a trajectory)")
    data: dict[str, Any] = dict(payload)
    data.setdefault("task_id", task.id)
    if data["task_id"] != task.id:
        raise AgentInfraError(
            f"{source}: trajectory is for task {data['task_id']!r}, expected {task.id!r}"
        )
    data.setdefault("latency_s", elapsed_s)
    data.setdefault("completed", data.get("final_output") is not None and not data.get("error"))
    try:
        return Trajectory.model_validate(data)
    except ValidationError as exc:
        raise AgentInfraError(f"{source}: stdout is not a trajectory: {yamlio.first_error(exc)}") from None


def _json_payload(stdout: str, source: str) -> Any:
    text = stdout.strip()
    if not text:
        raise AgentInfraError(f"{source}: printed nothing on stdout (expected a trajectory as JSON)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as whole_error:
        last_line = text.splitlines()[-1]
        try:
            return json.loads(last_line)  # tolerate log lines printed before the JSON
        except json.JSONDecodeError:
            raise AgentInfraError(
                f"{source}: stdout is not JSON ({whole_error.msg} at line {whole_error.lineno}): "
                f"{text[:80]!r}"
            ) from None
