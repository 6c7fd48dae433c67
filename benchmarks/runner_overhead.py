"""Per-task harness overhead of the eval runner, with process isolation on and off.

The agent answers at once (no steps, no sleep), so everything measured is harness:
dispatching the task, running the agent call, grading (one ``exact_match``), pickling
the result over the worker pipe, and collecting it in suite order. For each mode it
runs 1,000 tasks, notes when each result arrives, and reports

    per task   (last result - first result) / (tasks - 1): the steady-state wall time
               one more task adds (with N workers, their combined throughput)
    fixed      start -> first result: spawning and loading workers, one first task

Both come from one run, so the start-up cost (spawning 4 interpreters varies by tens
of milliseconds) cannot leak into the per-task figure, as a difference of two runs
of different sizes would let it.

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
from meridian.evals.types import GraderSpec, Task, TaskResult, Trajectory


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


class ArrivalTimes:
    """A progress sink noting when each result reaches the parent."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def started(self, total: int) -> None:
        self.times = []

    def finished(self, result: TaskResult, done: int, total: int) -> None:
        self.times.append(time.perf_counter())


def timed_run(tasks: list[Task], options: RunOptions) -> tuple[float, float, float]:
    """(total, per task, fixed) in seconds for one run of ``tasks``."""
    arrivals = ArrivalTimes()
    started = time.perf_counter()
    entries, interrupted = run_tasks(tasks, AGENT_SPEC, options, agent=InstantAgent(),
                                     progress=arrivals)
    total = time.perf_counter() - started
    passed = sum(entry.passes for entry in entries)
    if interrupted or passed != len(tasks):
        raise SystemExit(f"benchmark run went wrong: {passed}/{len(tasks)} passed")
    first, last = arrivals.times[0], arrivals.times[-1]
    return total, (last - first) / (len(tasks) - 1), first - started


def measure(label: str, options: RunOptions, count: int, repeat: int) -> tuple[str, float, float, float]:
    runs = [timed_run(make_tasks(count), options) for _ in range(repeat)]
    total, per_task, fixed = (statistics.median(run[i] for run in runs) for i in range(3))
    return label, total, per_task * 1000, fixed * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    args = parser.parse_args()
    if args.tasks < 2 or args.repeat < 1:
        parser.error("--tasks must be at least 2 and --repeat at least 1")
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
