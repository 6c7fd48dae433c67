"""Builders shared by the run, store, compare, report and CLI tests.

``make_run`` builds a Run from a compact description (no agent involved), so compare
and store tests control every figure. ``write_suite`` writes a suite YAML whose tasks
drive ``agents_for_tests:ScriptedAgent``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from meridian.evals import run as runfile
from meridian.evals.types import GraderSpec, Score, Step, Task, TaskResult, Trajectory

SUITE_HASH = "a" * 64
SCRIPTED = "tests.evals.agents_for_tests:ScriptedAgent"


def trial(task_id: str, status: str, *, epoch: int = 0, steps: int = 2, cost: float = 0.01,
          latency: float = 0.5, tool_errors: int = 0, error: str | None = None) -> TaskResult:
    """A TaskResult: ``status`` is pass, fail or infra_error."""
    if status == "infra_error":
        return TaskResult(task_id=task_id, epoch=epoch, status="infra_error",
                          error=error or "ValueError: boom")
    made = [Step(index=i, kind="tool", name="lookup", input={"q": i},
                 output="x", error="KeyError: q" if i < tool_errors else None,
                 started_at=0.01 * i, latency_s=0.01, cost_usd=cost / steps)
            for i in range(steps)]
    trajectory = Trajectory(task_id=task_id, steps=made, final_output="42", completed=True,
                            latency_s=latency, cost_usd=cost)
    passed = status == "pass"
    score = Score(name="exact_match", value=1.0 if passed else 0.0, passed=passed,
                  detail="matches '42'" if passed else "expected '42', got '41'")
    return TaskResult(task_id=task_id, epoch=epoch, status=status, scores=[score],
                      trajectory=trajectory)


def make_run(outcomes: Mapping[str, Sequence[str] | str], *, run_id: str = "0" * 12,
             agent_version: str = "v1", suite_hash: str = SUITE_HASH,
             order: Sequence[str] | None = None, **trial_kwargs: Any) -> runfile.Run:
    """A run where task ``id`` had the given outcome(s), one per epoch, in ``order``.

    ``trial_kwargs`` maps a task id to keyword arguments for ``trial`` (steps, cost...).
    """
    ids = list(order or outcomes)
    entries = []
    epochs = 1
    for index, task_id in enumerate(ids):
        if task_id not in outcomes:
            continue
        statuses = [outcomes[task_id]] if isinstance(outcomes[task_id], str) else outcomes[task_id]
        epochs = max(epochs, len(statuses))
        extra = trial_kwargs.get(task_id, {})
        task = Task(id=task_id, input=f"question {task_id}", expected="42",
                    graders=[GraderSpec(name="exact_match")])
        entries.append(runfile.TaskEntry(
            index=index, task=task,
            trials=[trial(task_id, str(status), epoch=e, **extra) for e, status in enumerate(statuses)]))
    return runfile.Run(
        run_id=run_id, created_at="2026-11-30T00:00:00Z", duration_s=1.5,
        git=runfile.GitInfo(commit="c" * 40, dirty=False),
        suite=runfile.SuiteInfo(name="golden", hash=suite_hash, path="suites/golden.yaml"),
        agent=runfile.AgentInfo(name="demo-agent", version=agent_version, spec="demo:Agent"),
        settings=runfile.Settings(epochs=epochs, offline=True),
        summary=runfile.summarize(entries, epochs), results=entries,
    )


def write_suite(path: Path, tasks: Sequence[Mapping[str, Any]], *, timeout_s: float = 20,
                name: str = "scripted") -> Path:
    """A suite of ScriptedAgent tasks (``behavior`` and other keys go to metadata)."""
    body = []
    for spec in tasks:
        spec = dict(spec)
        task: dict[str, Any] = {"id": spec.pop("id"), "input": spec.pop("input", "q"),
                                "expected": spec.pop("expected", "42")}
        for key in ("timeout_s", "tags"):
            if key in spec:
                task[key] = spec.pop(key)
        spec.setdefault("answer", task["expected"])  # the agent never sees ``expected``
        task["metadata"] = spec
        body.append(task)
    document = {"suite": name, "defaults": {"grader": "exact_match", "timeout_s": timeout_s},
                "tasks": body}
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (a zombie awaiting its reaper counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return True
    return state in ("Z", "X")


def all_git_objects(repo: Path) -> str:
    """Every object in the repository's database, decompressed, as text."""
    proc = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo,
                          capture_output=True, check=True)
    return proc.stdout.decode("utf-8", errors="replace")
