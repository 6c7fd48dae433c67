"""Per-task harness overhead of the eval runner, with process isolation on and off,
then the END-TO-END cost per task of `meridian eval run` for 100 and 1,000 tasks.

End to end (the second table) is everything a stored run costs: loading the suite
YAML, running every task through the agent in worker processes (or threads), grading,
redacting the run and serialising it (the secret scan included), and committing it to
the state branch of a real git repository. Each phase is timed separately, per task,
over ``--repeat`` rounds in which the two modes alternate (round robin, so drift in
machine load hits both); the figures are medians with the min-max range: wall time
per phase, and the CPU time of the whole (this process and the workers it waited for).

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

Then it saves a --save-tasks run (default 10,000 tasks) to a state branch, interleaved
with its reference (``json.dumps`` of the same document, C encoder), and judges the
issue #17 targets: end to end <= 1 ms per task (isolation off, the in-process figure)
and saving a 10k-task run <= 5 s (CPU and wall medians).

    python benchmarks/runner_overhead.py [--tasks 1000] [--repeat 3] [--sizes 100,1000]
                                         [--save-tasks 10000]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import _bench

from meridian.evals.runner import RunOptions, run_tasks
from meridian.evals.types import GraderSpec, Task, TaskResult, Trajectory


class InstantAgent:
    """Returns the expected answer immediately and records no steps."""

    name = "instant"
    version = "1"

    def run(self, task: Task) -> Trajectory:
        # The agent never sees the target: the answer comes in the task's metadata.
        return Trajectory(task_id=task.id, final_output=task.metadata["answer"], completed=True)


# Workers import the agent by name; this module is importable as `runner_overhead`
# because its directory is on sys.path (the script's directory is sys.path[0]).
AGENT_SPEC = "runner_overhead:InstantAgent"


def make_tasks(count: int) -> list[Task]:
    return [Task(id=f"task-{n:05d}", input=f"question {n}", expected=str(n),
                 metadata={"answer": str(n)}, graders=[GraderSpec(name="exact_match")])
            for n in range(count)]


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


# --- end to end ------------------------------------------------------------------

# "store" is all of save_run (redact, serialise, scan, commit); "redact" times the
# redact + serialise + scan part of it again on its own, to show what the commit adds.
PHASES = ("load", "run+grade", "store", "total", "total CPU", "redact")


def write_suite(path: Path, count: int) -> None:
    import yaml

    tasks = [{"id": f"task-{n:05d}", "input": f"question {n}", "expected": str(n),
              "metadata": {"answer": str(n)}} for n in range(count)]
    path.write_text(yaml.safe_dump({"suite": "bench", "defaults": {"grader": "exact_match"},
                                    "tasks": tasks}, sort_keys=False))


def end_to_end(root: Path, count: int, options: RunOptions) -> dict[str, float]:
    """Seconds per phase for one stored run of ``count`` tasks (cwd: a git repository)."""
    from meridian.evals import store
    from meridian.evals.runner import run_suite
    from meridian.evals.suite import load_suite
    from meridian.ledger import Ledger

    suite_path = root / f"bench-{count}.yaml"
    times: dict[str, float] = {}
    cpu = _bench.cpu_seconds()
    started = time.perf_counter()
    suite = load_suite(suite_path)
    times["load"] = time.perf_counter() - started
    mark = time.perf_counter()
    run = run_suite(suite, AGENT_SPEC, options)
    times["run+grade"] = time.perf_counter() - mark
    if run.summary.passed != count:
        raise SystemExit(f"end-to-end run went wrong: {run.summary.passed}/{count} passed")
    ledger = Ledger.open(str(root))
    mark = time.perf_counter()
    store.save_run(ledger, run)  # redacts, serialises, scans, commits
    times["store"] = time.perf_counter() - mark
    times["total"] = time.perf_counter() - started
    times["total CPU"] = _bench.cpu_seconds() - cpu  # this process and its workers
    mark = time.perf_counter()
    store.checked_bytes(store.redacted(run))
    times["redact"] = time.perf_counter() - mark
    return times


def end_to_end_table(sizes: list[int], repeat: int) -> dict[str, float]:
    import subprocess
    import tempfile

    modes = [("isolation on,  4 workers", RunOptions(workers=4)),
             ("isolation off, 4 threads", RunOptions(workers=4, isolation=False))]
    print()
    print(f"end to end per task (suite load, run, grade, redact, store), median of {repeat} "
          "rounds [min-max], modes interleaved")
    print(f"{'tasks':>6}  {'mode':<26}" + "".join(f" {p + ' (ms)':>23}" for p in PHASES))
    totals: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        subprocess.run(["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@b",
                        "commit", "-q", "--allow-empty", "-m", "init"], check=True)
        previous = os.getcwd()
        os.chdir(root)
        try:
            for count in sizes:
                write_suite(root / f"bench-{count}.yaml", count)
                samples: dict[str, list[dict[str, float]]] = {label: [] for label, _ in modes}
                for _ in range(repeat):
                    for label, options in modes:
                        samples[label].append(end_to_end(root, count, options))
                for label, _ in modes:
                    cells = []
                    totals[f"{label} @{count}"] = statistics.median(
                        s["total"] / count * 1000 for s in samples[label])
                    totals[f"{label} @{count} CPU"] = statistics.median(
                        s["total CPU"] / count * 1000 for s in samples[label])
                    for phase in PHASES:
                        per_task = [s[phase] / count * 1000 for s in samples[label]]
                        cells.append(f"{statistics.median(per_task):.3f} "
                                     f"[{min(per_task):.3f}-{max(per_task):.3f}]")
                    print(f"{count:>6}  {label:<26}" + "".join(f" {c:>23}" for c in cells))
        finally:
            os.chdir(previous)
    return totals


def instant_run(count: int, run_id: str) -> object:
    """A stored-run's worth of results: ``count`` graded tasks of an instant agent."""
    from meridian.evals import run as runfile
    from meridian.evals.types import Score

    results = []
    for task in make_tasks(count):
        trajectory = Trajectory(task_id=task.id, final_output=task.metadata["answer"],
                                completed=True, tokens_in=300, tokens_out=80, cost_usd=0.002)
        score = Score(name="exact_match", value=1.0, passed=True)
        results.append(runfile.TaskEntry(index=len(results), task=task, trials=[
            TaskResult(task_id=task.id, status="pass", scores=[score], trajectory=trajectory)]))
    return runfile.Run(run_id=run_id, suite=runfile.SuiteInfo(name="bench", hash="0" * 64),
                       agent=runfile.AgentInfo(name="instant", version="1", spec=AGENT_SPEC),
                       settings=runfile.Settings(), summary=runfile.summarize(results, 1),
                       results=results)


def save_table(count: int, repeat: int) -> bool:
    """save_run of a ``count``-task run vs json.dumps of its document, interleaved."""
    import json
    import subprocess
    import tempfile

    from meridian.evals import run as runfile
    from meridian.evals import store
    from meridian.ledger import Ledger

    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(["git", "init", "-q", folder], check=True)
        ledger = Ledger.open(folder)
        runs = iter(instant_run(count, f"save{n:06d}") for n in range(repeat + 2))
        pending: list[object] = []

        def next_run() -> None:
            pending[:] = [next(runs)]

        document = runfile.to_document(instant_run(count, "reference"))
        contenders = {
            "json.dumps of the document": _bench.Contender(lambda: json.dumps(document)),
            f"save_run, {count:,} tasks": _bench.Contender(
                lambda: store.save_run(ledger, pending[0]), setup=next_run),  # type: ignore[arg-type]
        }
        timings = _bench.interleave(contenders, rounds=repeat, per_round=1, warmup=1)
    print()
    _bench.table(f"saving a run ({repeat} rounds, interleaved)", timings,
                 reference="json.dumps of the document")
    saved = timings[f"save_run, {count:,} tasks"]
    ok = _bench.verdict(f"save a {count:,}-task run, CPU s", statistics.median(saved.cpu), 5.0)
    ok &= _bench.verdict(f"save a {count:,}-task run, wall s", statistics.median(saved.wall), 5.0)
    return ok


def big_output_store(repeat: int, megabytes: int = 10) -> None:
    """Seconds to redact, serialise, scan and commit a run whose answer is 10 MB of text."""
    import subprocess
    import tempfile

    from meridian.evals import run as runfile
    from meridian.evals import store
    from meridian.evals.types import Score, TaskResult
    from meridian.ledger import Ledger

    text = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * (megabytes * 20000))
    text = text[: megabytes * 1_000_000]
    task = make_tasks(1)[0]
    trial = TaskResult(task_id=task.id, status="pass",
                       scores=[Score(name="exact_match", value=1.0, passed=True)],
                       trajectory=Trajectory(task_id=task.id, final_output=text, completed=True))
    entries = [runfile.TaskEntry(index=0, task=task, trials=[trial])]
    times = []
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(["git", "init", "-q", folder], check=True)
        ledger = Ledger.open(folder)
        for n in range(repeat):
            # A fresh string each round: the redactor's per-string memo must not carry over.
            fresh = [e.model_copy(update={"trials": [trial.model_copy(update={
                "trajectory": trial.trajectory.model_copy(update={"final_output": f"{n} {text}"})})]})
                for e in entries]
            run = runfile.Run(run_id=f"big{n:09d}", suite=runfile.SuiteInfo(name="big", hash="0" * 64),
                              agent=runfile.AgentInfo(name="a", version="1", spec="a"),
                              settings=runfile.Settings(), summary=runfile.summarize(fresh, 1),
                              results=fresh)
            started = time.perf_counter()
            store.save_run(ledger, run)
            times.append(time.perf_counter() - started)
    print()
    print(f"a {megabytes} MB final output: redact + serialise + scan + commit "
          f"{statistics.median(times):.2f}s [{min(times):.2f}-{max(times):.2f}] (median of {repeat})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--save-tasks", type=int, default=10_000,
                        help="tasks in the run whose save is timed")
    parser.add_argument("--sizes", default="100,1000",
                        help="suite sizes for the end-to-end table (comma-separated)")
    args = parser.parse_args()
    if args.tasks < 2 or args.repeat < 1:
        parser.error("--tasks must be at least 2 and --repeat at least 1")
    try:
        sizes = [int(n) for n in args.sizes.split(",") if n.strip()]
    except ValueError:
        parser.error(f"--sizes: expected comma-separated numbers, got {args.sizes!r}")
    if not sizes or min(sizes) < 1:
        parser.error("--sizes: every size must be at least 1")
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
    totals = end_to_end_table(sizes, args.repeat)
    big_output_store(args.repeat, megabytes=10 if max(sizes) >= 100 else 1)
    largest = max(sizes)
    ok = _bench.verdict(f"end to end per task @{largest} (isolation off, 4 threads), wall ms",
                        totals[f"isolation off, 4 threads @{largest}"], 1.0)
    ok &= _bench.verdict(f"end to end per task @{largest} (isolation off, 4 threads), CPU ms",
                         totals[f"isolation off, 4 threads @{largest} CPU"], 1.0)
    ok &= save_table(args.save_tasks, args.repeat)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
