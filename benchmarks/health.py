"""Time `meridian health --json` on a state branch with 100,000 events.

Builds a throwaway repository whose state branch holds a year of realistic history:
gate cycles (start, pre-commit block, submit with a self-score, failed verdict,
submit, passed verdict) with their verdict documents, Claude Code session events,
patterns re-validated, corrections, episodic memory and evaluation runs. Records are
written many to a commit, in batches small enough that shards close at their usual
64 KiB, as they would after a year of one-event appends.

Prints the time of the aggregation (``build_report`` + JSON, median of --repeat runs,
in-process; wall and CPU time, since a loaded machine inflates wall time) and of the
whole command in a fresh process (interpreter start and imports included).

    python benchmarks/health.py [--events 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from meridian.evals import run as runfile
from meridian.evals import store
from meridian.evals.types import Score, Task, TaskResult, Trajectory
from meridian.health import build_report
from meridian.ledger import EVENTS, Ledger, Write

BATCH = 150  # records per commit: about one 64 KiB shard
START = datetime(2026, 1, 1, tzinfo=UTC)
STEP = timedelta(minutes=5)
DIMENSIONS = ("completeness", "correctness", "robustness", "spec_adherence")


def fresh_repo(root: Path) -> Path:
    path = root / "project"
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.name", "bench"], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.email", "bench@localhost"], check=True)
    return path


def stamp(n: int) -> str:
    return (START + n * STEP).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def verdict_document(gate: str, overall: float, passed: bool) -> bytes:
    scores = {d: round(overall + (i - 1.5) * 0.4, 2) for i, d in enumerate(DIMENSIONS)}
    issues = [] if passed else [{"severity": "high", "file": "src/app.py", "line": 12,
                                 "message": "function body is a stub"}]
    import json

    return json.dumps({"gate": gate, "evaluator": "heuristic", "subject": "0" * 40,
                       "scores": scores, "overall": overall, "threshold": 7.0, "passed": passed,
                       "issues": issues, "summary": "benchmark verdict",
                       "usage": {"input_tokens": 4000, "output_tokens": 600, "cost_usd": 0.021}},
                      indent=2, sort_keys=True).encode()


def cycle(n: int, gate: str) -> list[tuple[str, dict[str, Any], bytes | None]]:
    """One gate's work: 10 events, two of them verdicts with documents."""
    usage = {"input_tokens": 4000, "output_tokens": 600, "cost_usd": 0.021}
    failed_path, passed_path = f"verdicts/{gate}/{n:07d}-1.json", f"verdicts/{gate}/{n:07d}-2.json"
    outcome = {"threshold": 7.0, "evaluator": "heuristic", "subject": "0" * 40, "usage": usage}
    return [
        ("session.started", {"session": f"s{n}", "source": "claude"}, None),
        ("gate.started", {"gate": gate, "estimate_hours": 2.0 + n % 5}, None),
        ("gate.blocked", {"gate": gate, "source": "pre-commit", "reason": "stub code in src/app.py",
                          "files": ["src/app.py"]}, None),
        ("gate.submitted", {"gate": gate, "self_score": 8.5, "subject": "0" * 40}, None),
        ("gate.failed", {"gate": gate, "verdict": failed_path, "overall": 6.1, "issues": {"high": 1},
                         "self_score": 8.5, **outcome}, verdict_document(gate, 6.1, False)),
        ("gate.submitted", {"gate": gate, "self_score": 8.0, "subject": "1" * 40}, None),
        ("gate.passed", {"gate": gate, "verdict": passed_path, "overall": 7.8, "issues": {},
                         "self_score": 8.0, **outcome}, verdict_document(gate, 7.8, True)),
        ("gate.blocked", {"source": "claude", "reason": "stop refused: verdict failed"}, None),
        ("pattern.validated", {"id": f"{n:032x}"}, None),
        ("session.ended", {"session": f"s{n}", "source": "claude"}, None),
    ]


def fill_events(ledger: Ledger, count: int) -> None:
    write = Write(summary="benchmark events")
    written = 0
    n = 0
    while written < count:
        for kind, data, document in cycle(n, f"gate-{n % 400:03d}"):
            if written >= count:
                break
            record = ledger.record(kind, data, ts=stamp(written))
            write.add(EVENTS, record)
            if document is not None:
                write.blobs[data["verdict"]] = document
            written += 1
            if len(write.records) >= BATCH:
                ledger.commit(write)
                write = Write(summary="benchmark events")
        n += 1
    if write.records:
        ledger.commit(write)


def fill_memory(ledger: Ledger, corrections: int, episodes: int, patterns: int) -> None:
    batches: list[tuple[str, str, dict[str, Any]]] = []
    for n in range(corrections):
        batches.append(("memory/corrections", "memory.correction",
                        {"gate": f"gate-{n % 400:03d}", "predicted_hours": 2.0 + n % 5,
                         "actual_hours": 1.0 + n % 7, "source": "gate_pass"}))
    for n in range(episodes):
        batches.append(("memory/episodic", "memory.episodic",
                        {"session": f"s{n}", "event": "note", "notes": f"episode {n}"}))
    for n in range(patterns):
        batches.append(("memory/semantic", "memory.semantic",
                        {"text": f"pattern {n}: write the failing test first", "confidence": 0.7}))
    for start in range(0, len(batches), BATCH):
        write = Write(summary="benchmark memory")
        for offset, (stream, kind, data) in enumerate(batches[start:start + BATCH]):
            write.add(stream, ledger.record(kind, data, ts=stamp(start + offset)))
        ledger.commit(write)


def fill_runs(ledger: Ledger, runs: int, tasks: int) -> None:
    for number in range(runs):
        results = []
        for index in range(tasks):
            passed = (index + number) % 4 != 0
            trajectory = Trajectory(task_id=f"t{index}", completed=True, final_output="ok",
                                    cost_usd=0.002, tokens_in=300, tokens_out=80)
            score = Score(name="final_answer", value=1.0 if passed else 0.0, passed=passed)
            results.append(runfile.TaskEntry(index=index, task=Task(id=f"t{index}", input="q"),
                                             trials=[TaskResult(task_id=f"t{index}",
                                                                status="pass" if passed else "fail",
                                                                scores=[score],
                                                                trajectory=trajectory)]))
        run = runfile.Run(run_id=f"run-{number:04d}", created_at=stamp(number * 500),
                          suite=runfile.SuiteInfo(name="reference", hash="h" * 12),
                          agent=runfile.AgentInfo(name="reference", version="2", spec="builtin"),
                          settings=runfile.Settings(), summary=runfile.summarize(results, 1),
                          results=results)
        store.save_run(ledger, run)
    store.pin_baseline(ledger, "main", "run-0000")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = fresh_repo(Path(tmp))
        ledger = Ledger.open(path)
        started = time.perf_counter()
        fill_events(ledger, args.events)
        fill_memory(ledger, corrections=1_000, episodes=2_000, patterns=300)
        fill_runs(ledger, runs=20, tasks=25)
        print(f"built {args.events:,} events, 3,300 memory records, 20 runs "
              f"in {time.perf_counter() - started:.1f}s")

        wall, cpu = [], []
        for _ in range(args.repeat):
            started, started_cpu = time.perf_counter(), time.process_time()
            report = build_report(ledger, path)
            report.model_dump_json()
            wall.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
        # CPU time is what the code costs; wall time also counts other processes' load.
        print(f"aggregation (build_report + JSON, median of {args.repeat}): "
              f"{statistics.median(wall):.3f}s wall, {statistics.median(cpu):.3f}s CPU  "
              f"[{report.events:,} events, {report.gates.verdicts:,} verdicts, "
              f"{report.evaluator.verdicts_read} verdict documents read]")

        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "meridian", "health", "--json"], cwd=path,
                              capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - started
        if proc.returncode != 0:
            raise SystemExit(f"meridian health --json failed: {proc.stderr.strip()}")
        print(f"`meridian health --json` in a fresh process: {elapsed:.3f}s "
              f"({len(proc.stdout):,} bytes of JSON)")


if __name__ == "__main__":
    main()
