"""Per-task harness overhead of the eval runner, with process isolation on and off.

The agent answers at once (no steps, no sleep), so everything measured is harness:
dispatching the task, running the agent call, grading (one ``exact_match``), pickling
the result over the worker pipe, and collecting it in suite order. For each mode it
times a run of 1,000 tasks and a run of 10, and reports

    per task   (T(1000) - T(10)) / 990, the steady-state cost of one more task
    fixed      T(10) - 10 * per task, the start-up cost (spawning and loading workers)

    python benchmarks/runner_overhead.py [--tasks 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

from meridian.evals.runner import RunOptions, run_tasks
from meridian.evals.types import GraderSpec, Task, Trajectory

SMALL_RUN = 10


class InstantAgent:
    """Returns the expected answer immediately and records no steps."""

    name = "instant"
    version = "1"

    def run(self, task: Task) -> Trajectory:
        return Trajectory(task_id=task.id, final_output=task.expected, completed=True)


# Workers import the agent by name; this module is importable as `runner_overhead`
# because its directory is on sys.path (the script's directory is sys.path[0]).
AGENT_SPEC = "runner_overhead:InstantAgent"


def make_tasks(count: int) -> list[Task]:
    return [Task(id=f"task-{n:05d}", input=f"question {n}", expected=str(n),
                 graders=[GraderSpec(name="exact_match")]) for n in range(count)]


def timed_run(tasks: list[Task], options: RunOptions) -> float:
    started = time.perf_counter()
    entries, interrupted = run_tasks(tasks, AGENT_SPEC, options, agent=InstantAgent())
    elapsed = time.perf_counter() - started
    passed = sum(entry.passes for entry in entries)
    if interrupted or passed != len(tasks):
        raise SystemExit(f"benchmark run went wrong: {passed}/{len(tasks)} passed")
    return elapsed


def measure(label: str, options: RunOptions, count: int, repeat: int) -> tuple[str, float, float, float]:
    large = statistics.median(timed_run(make_tasks(count), options) for _ in range(repeat))
    small = statistics.median(timed_run(make_tasks(SMALL_RUN), options) for _ in range(repeat))
    per_task = (large - small) / (count - SMALL_RUN)
    fixed = small - SMALL_RUN * per_task
    return label, large, per_task * 1000, fixed * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    args = parser.parse_args()
    if args.tasks <= SMALL_RUN:
        parser.error(f"--tasks must exceed {SMALL_RUN}")
    modes = [
        ("isolation on,  1 worker", RunOptions(workers=1)),
        ("isolation on,  4 workers", RunOptions(workers=4)),
        ("isolation off, 1 worker", RunOptions(workers=1, isolation=False)),
        ("isolation off, 4 threads", RunOptions(workers=4, isolation=False)),
    ]
    print(f"runner overhead: {args.tasks} tasks of an agent that answers at once, "
          f"median of {args.repeat}; Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs")
    print(f"{'mode':<26}{'total (s)':>10}{'per task (ms)':>15}{'fixed (ms)':>12}")
    for label, options in modes:
        name, total, per_task_ms, fixed_ms = measure(label, options, args.tasks, args.repeat)
        print(f"{name:<26}{total:>10.2f}{per_task_ms:>15.3f}{fixed_ms:>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
