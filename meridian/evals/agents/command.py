"""``command:PROGRAM``: any executable is an agent, in any language.

The protocol (version 1, ``meridian eval schema`` prints both JSON Schemas):

- stdin: one JSON object, the task as the agent may see it (``AgentTask``):
  ``{"protocol": "meridian.agent/1", "id", "input", "metadata", "timeout_s"}`` plus
  any field the suite lists under ``visible:``. The target (``expected``), the
  graders and the references are never sent unless the suite makes them visible.
  The environment carries ``MERIDIAN_AGENT_PROTOCOL=1``.
- stdout: one JSON object, the trajectory (the whole output, else its last line, so
  log lines may come first): ``steps`` and ``final_output`` at least; ``task_id``
  defaults to the task's, totals to the sums over the steps, ``completed`` to "there
  is a final output and no error". ``protocol`` may be given and must then be 1.
- exit status: 0 with a trajectory; 75 (EX_TEMPFAIL) for a transient failure of
  the agent's environment (rate limit, network): an infra error, retried with
  backoff; anything else is the agent's own failure and the task FAILS, as does
  output that is not a trajectory.

On timeout the program's whole process tree is killed, including children that
started their own session (see ``meridian.evals.proctree``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from meridian import yamlio
from meridian.errors import MeridianError
from meridian.evals import proctree
from meridian.evals.runner import AgentFailure, InfraError, TaskTimeout
from meridian.evals.types import AgentTask, Task, Trajectory

PROTOCOL = "meridian.agent/1"
PROTOCOL_VERSION = 1
EX_TEMPFAIL = 75


class AgentInfraError(AgentFailure):
    """The program did not produce a trajectory (kept for compatibility: it is the
    agent's own failure, so the task fails)."""


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

    def run(self, task: AgentTask | Task) -> Trajectory:
        shown = task.for_agent() if isinstance(task, Task) else task
        timeout = shown.effective_timeout_s()
        stdin = json.dumps({"protocol": PROTOCOL, **shown.model_dump(mode="json", exclude_none=True)},
                           ensure_ascii=False)
        try:
            proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                # Output that is not UTF-8 is read with replacement characters (and
                # graded as such), not a UnicodeDecodeError that loses the trajectory.
                encoding="utf-8", errors="replace", start_new_session=True,
                env={**os.environ, "MERIDIAN_AGENT_PROTOCOL": str(PROTOCOL_VERSION)},
            )
        except FileNotFoundError:
            raise InfraError(f"agent {self.program!r}: program {self.argv[0]!r} not found") from None
        except PermissionError:
            raise InfraError(f"agent {self.program!r}: {self.argv[0]!r} is not executable") from None
        try:
            stdout, stderr = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            proctree.kill_tree(proc.pid)
            if proctree.is_subreaper():  # in a worker: orphans of the program are ours now
                proctree.kill_tree(os.getpid(), include_root=False)
            proc.communicate()
            # The agent's own failure (a task failure), not the harness's: see runner.
            raise TaskTimeout(f"agent {self.program!r}: no answer within {timeout:g}s (killed)") from None
        except BaseException:
            proctree.kill_tree(proc.pid)
            proc.wait()
            raise
        # A finished agent leaves nothing behind: daemons it forked die with it, its
        # process group and, in a worker (a subreaper running one task at a time),
        # every orphan re-parented to the worker, including children that started a
        # session of their own (which would otherwise outlive the task and be there
        # when the full task arrives for grading). With --no-isolation such a child is
        # re-parented to init and cannot be found: see docs/evals.md.
        proctree.kill_tree(proc.pid, leader_exited=True)
        if proctree.is_subreaper():
            proctree.kill_tree(os.getpid(), include_root=False)
        if proc.returncode == EX_TEMPFAIL:
            raise InfraError(f"agent {self.program!r}: exited {EX_TEMPFAIL} (temporary failure)"
                             + (f": {_tail(stderr)}" if _tail(stderr) else ""))
        if proc.returncode != 0:
            tail = _tail(stderr)
            raise AgentInfraError(
                f"agent {self.program!r}: exited {proc.returncode}" + (f": {tail}" if tail else "")
            )
        return parse_trajectory(stdout, shown, source=f"agent {self.program!r}")


def read_task(text: str) -> AgentTask:
    """The task a ``command:`` agent written in Python reads from stdin (protocol 1)."""
    data = json.loads(text)
    protocol = data.pop("protocol", PROTOCOL) if isinstance(data, dict) else None
    if protocol != PROTOCOL:
        raise ValueError(f"stdin speaks protocol {protocol!r}, expected {PROTOCOL!r}")
    return AgentTask.model_validate(data)


def parse_trajectory(stdout: str, task: AgentTask | Task, elapsed_s: float | None = None, *,
                     source: str) -> Trajectory:
    """The trajectory a program printed (the whole output, else its last line)."""
    payload = _json_payload(stdout, source)
    if not isinstance(payload, dict):
        raise AgentInfraError(f"{source}: stdout is JSON but not an object (expected a trajectory)")
    data: dict[str, Any] = dict(payload)
    protocol = data.pop("protocol", PROTOCOL)
    if protocol not in (PROTOCOL, PROTOCOL_VERSION):
        raise AgentInfraError(f"{source}: speaks protocol {protocol!r}; this Meridian speaks "
                              f"{PROTOCOL!r} (see `meridian eval schema`)")
    data.pop("reported_latency_s", None)  # the harness's field, not the agent's
    data.setdefault("task_id", task.id)
    if data["task_id"] != task.id:
        raise AgentInfraError(
            f"{source}: trajectory is for task {data['task_id']!r}, expected {task.id!r}"
        )
    if elapsed_s is not None:
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
