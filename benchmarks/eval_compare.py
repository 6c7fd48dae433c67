"""`meridian eval compare A B` of two N-task runs on the state branch, against parsing
both documents with `json.loads` and diffing their statuses task by task.

Two runs of --tasks tasks (default 10,000; each trial with a two-step trajectory,
the suite's manifest recorded as `eval run` records it) are saved with `save_run` to
the state branch of a real git repository; the candidate regresses 1% of the tasks
and fixes 1%. Contenders, interleaved round by round (order reversed every other
round), each operation timed on its own in CPU and wall time:

    json.loads + diff   read both documents (files with the same bytes), json.loads
                        each, map task id -> trial statuses, list the tasks that differ
    eval compare        `meridian eval compare <A> <B> --fail-on-regression` in process
                        (resolve both ids on the branch, read and check both documents,
                        compare, print the report; exit 1 as the candidate regressed)
    compare, files      the same on the two exported files (read the same way: no
                        reader trusts who wrote a document)

and, shown beside the reference, the same json.loads + diff with the cyclic garbage
collector paused as Meridian's readers pause it (``meridian.evals.nogc``): what the
comparison costs beyond parsing, with the collector's share taken out of both sides.

Target (issue #17): eval compare <= 1.3x the reference, CPU median, same run, for
the runs on the branch and for the two files.

    python benchmarks/eval_compare.py [--tasks 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import _bench

TARGET = 1.3


def bench_run(count: int, run_id: str, *, fail: set[int]) -> Any:
    """A stored run's worth of results: ``count`` tasks, those in ``fail`` failing."""
    from meridian.evals import run as runfile
    from meridian.evals.types import GraderSpec, Score, Step, Task, TaskResult, Trajectory

    tasks = [Task(id=f"task-{n:05d}", input=f"question {n}: what is {n} + 1?",
                  expected=str(n + 1), graders=[GraderSpec(name="exact_match")],
                  tags=["bench"]) for n in range(count)]
    results = []
    for n, task in enumerate(tasks):
        passed = n not in fail
        answer = str(n + 1) if passed else "no idea"
        steps = [Step(index=0, kind="llm", name="claude", input=task.input,
                      output=f"I should add one to {n}.", latency_s=0.4, tokens_in=120,
                      tokens_out=30, cost_usd=0.0011),
                 Step(index=1, kind="tool", name="calculator", input={"a": n, "b": 1},
                      output=answer, latency_s=0.01)]
        trajectory = Trajectory(task_id=task.id, steps=steps, final_output=answer,
                                completed=True, latency_s=0.45)
        score = Score(name="exact_match", value=1.0 if passed else 0.0, passed=passed,
                      detail="" if passed else f"expected {n + 1!r}, got 'no idea'")
        results.append(runfile.TaskEntry(index=n, task=task, trials=[TaskResult(
            task_id=task.id, status="pass" if passed else "fail", scores=[score],
            trajectory=trajectory)]))
    manifest = {task.id: task.definition_hash() for task in tasks}
    return runfile.Run(run_id=run_id, created_at="2026-12-01T00:00:00Z",
                       suite=runfile.SuiteInfo(name="bench", hash="0" * 64, tasks=manifest),
                       agent=runfile.AgentInfo(name="bench", version="1", spec="bench:Agent"),
                       settings=runfile.Settings(), summary=runfile.summarize(results, 1),
                       results=results)


def reference(a_path: Path, b_path: Path) -> list[str]:
    """json.loads of both documents and the tasks whose statuses differ."""
    a = json.loads(a_path.read_bytes())
    b = json.loads(b_path.read_bytes())
    a_status = {e["task"]["id"]: [t["status"] for t in e["trials"]] for e in a["results"]}
    b_status = {e["task"]["id"]: [t["status"] for t in e["trials"]] for e in b["results"]}
    return [task for task, statuses in a_status.items() if b_status.get(task) != statuses]


def paused_reference(a_path: Path, b_path: Path) -> list[str]:
    """The reference with the cyclic collector off, as Meridian's readers run."""
    gc.disable()
    try:
        return reference(a_path, b_path)
    finally:
        gc.enable()


def meridian_compare(*args: str) -> tuple[int, str]:
    from meridian.cli import main as meridian

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = meridian(["eval", "compare", *args, "--fail-on-regression"])
    return code, out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.tasks < 100 or args.rounds < 1:
        parser.error("--tasks must be at least 100 and --rounds at least 1")

    from meridian.evals import store
    from meridian.ledger import Ledger

    count = args.tasks
    every = 100
    baseline = bench_run(count, "b" * 12, fail={n for n in range(count) if n % every == 50})
    candidate = bench_run(count, "a" * 12, fail={n for n in range(count) if n % every == 0})
    with tempfile.TemporaryDirectory() as folder:
        root = _bench.fresh_repo(Path(folder) / "repo")
        _bench.git(root, "commit", "-q", "--allow-empty", "-m", "init")
        ledger = Ledger.open(str(root))
        store.save_run(ledger, baseline)
        store.save_run(ledger, candidate)
        files = {}
        for run in (candidate, baseline):
            path = Path(folder) / f"{run.run_id}.json"
            data = ledger.read(store.run_path(run.run_id))
            assert data is not None
            path.write_bytes(data)
            files[run.run_id] = path
        a_path, b_path = files[candidate.run_id], files[baseline.run_id]
        size = a_path.stat().st_size
        previous = os.getcwd()
        os.chdir(root)
        try:
            regressed = len(reference(a_path, b_path))
            code, report = meridian_compare(candidate.run_id, baseline.run_id)
            if code != 1 or f"REGRESSIONS ({count // every})" not in report:
                raise SystemExit(f"eval compare went wrong (exit {code}):\n{report[:2000]}")
            # Each operation starts with the cyclic collector's generations empty, so a
            # collection left over from the previous one does not land on the next.
            contenders = {
                "json.loads + diff": _bench.Contender(lambda: reference(a_path, b_path),
                                                      setup=gc.collect),
                "json.loads + diff, gc paused": _bench.Contender(
                    lambda: paused_reference(a_path, b_path), setup=gc.collect),
                "eval compare (state branch)": _bench.Contender(
                    lambda: meridian_compare(candidate.run_id, baseline.run_id),
                    setup=gc.collect),
                "eval compare (two files)": _bench.Contender(
                    lambda: meridian_compare(str(a_path), str(b_path)), setup=gc.collect),
            }
            timings = _bench.interleave(contenders, rounds=args.rounds, per_round=1, warmup=1)
        finally:
            os.chdir(previous)
    print(f"eval compare of two {count:,}-task runs ({size / 1e6:.1f} MB each, {regressed} tasks "
          f"differ), {args.rounds} rounds interleaved; {os.cpu_count()} CPUs")
    _bench.table("per comparison", timings, reference="json.loads + diff")
    branch = timings["eval compare (state branch)"]
    ratio, low, high = _bench.ratio(branch, timings["json.loads + diff"])
    wall, wall_low, wall_high = _bench.ratio(branch, timings["json.loads + diff"], "wall")
    print(f"eval compare vs json.loads + diff: CPU {ratio:.2f}x [{low:.2f}-{high:.2f}], "
          f"wall {wall:.2f}x [{wall_low:.2f}-{wall_high:.2f}]; "
          f"eval compare {statistics.median(branch.cpu) * 1e3:.0f} ms CPU")
    strict, strict_low, strict_high = _bench.ratio(branch, timings["json.loads + diff, gc paused"])
    print(f"eval compare vs json.loads + diff with the collector paused too: CPU {strict:.2f}x "
          f"[{strict_low:.2f}-{strict_high:.2f}] (not judged: the issue's reference is the plain one)")
    files = timings["eval compare (two files)"]
    file_ratio, file_low, file_high = _bench.ratio(files, timings["json.loads + diff"])
    print(f"eval compare of the two files vs json.loads + diff: CPU {file_ratio:.2f}x "
          f"[{file_low:.2f}-{file_high:.2f}]; {statistics.median(files.cpu) * 1e3:.0f} ms CPU")
    ok = _bench.verdict(f"eval compare of two {count:,}-task runs vs json.loads + diff, CPU x",
                        ratio, TARGET)
    ok = _bench.verdict(f"eval compare of two {count:,}-task run files vs json.loads + diff, "
                        "CPU x", file_ratio, TARGET) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
