"""`meridian health --json` over 100,000 events, next to reading and parsing every shard.

Builds a throwaway repository whose state branch holds a year of realistic history
(pygit2 plumbing, one commit): gate cycles (start, pre-commit block, submit with a
self-score, failed verdict, submit, passed verdict) with their verdict documents,
Claude Code session events, patterns re-validated, corrections, episodic memory, and
--runs evaluation runs (saved through the run store). Then times, interleaved:

- health --json (process)          the whole command in a fresh process, the state
                                   unchanged since the last report (its kept pass is
                                   the answer: ``aggregate._FiguresKept``)
- health --json, new event         the same right after one more event is appended
  (process)                        (untimed): the kept pass goes on with the new lines
- parse every shard (process)      the reference: a fresh process that reads every
                                   JSONL shard of the branch and parses every line
- build_report + JSON (in process) the aggregation alone
- parse event shards (in process)  the in-process floor for the events

With several --runs counts (``--runs 20,60,500``) a repository is built for each, the
same events in each, and ``health --json (process) @N runs`` of every other count is
interleaved with the rest: the growth with the number of stored runs is then a ratio
taken in the same run, not two runs' figures side by side.

    python benchmarks/health.py [--events 100000] [--runs 20[,60,...]] [--rounds 5]

Target (issue #17): health --json <= 1.2x parsing every shard (CPU), judged for both
the unchanged state and the state one event later, and not growing with the number of
stored runs: the most runs vs the fewest <= 1.1x (CPU medians, same run).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import _bench

from meridian.evals import run as runfile
from meridian.evals import store
from meridian.evals.types import Score, Task, TaskResult, Trajectory
from meridian.health import build_report
from meridian.ledger import EVENTS, Ledger

START = datetime(2026, 1, 1, tzinfo=UTC)
STEP = timedelta(minutes=5)
DIMENSIONS = ("completeness", "correctness", "robustness", "spec_adherence")


def stamp(n: int) -> str:
    return (START + n * STEP).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def verdict_document(gate: str, overall: float, passed: bool) -> bytes:
    scores = {d: round(overall + (i - 1.5) * 0.4, 2) for i, d in enumerate(DIMENSIONS)}
    issues = [] if passed else [{"severity": "high", "file": "src/app.py", "line": 12,
                                 "message": "function body is a stub"}]
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


def event_history(count: int) -> tuple[list[bytes], dict[str, bytes]]:
    """``count`` events in gate cycles, and their verdict documents."""
    lines: list[bytes] = []
    documents: dict[str, bytes] = {}
    n = 0
    while len(lines) < count:
        for kind, data, document in cycle(n, f"gate-{n % 400:03d}"):
            if len(lines) >= count:
                break
            lines.append(_bench.line(kind, data, stamp(len(lines))))
            if document is not None:
                documents[data["verdict"]] = document
        n += 1
    return lines, documents


def memory_history(corrections: int, episodes: int, patterns: int) -> dict[str, list[bytes]]:
    correction_lines = []
    for n in range(corrections):
        predicted, actual = 2.0 + n % 5, 1.0 + n % 7
        correction_lines.append(_bench.line("memory.correction", {
            "gate": f"gate-{n % 400:03d}", "predicted_hours": predicted, "actual_hours": actual,
            "ratio": round(actual / predicted, 4), "source": "gate_pass"}, stamp(n)))
    return {
        "memory/corrections": correction_lines,
        "memory/episodic": [_bench.line("memory.episodic", {
            "session": f"s{n}", "event": "note", "notes": f"episode {n}"}, stamp(n))
            for n in range(episodes)],
        "memory/semantic": [_bench.line("memory.semantic", {
            "text": f"pattern {n}: write the failing test first", "confidence": 0.7,
            "source_gates": [], "source_projects": [], "tags": []}, stamp(n))
            for n in range(patterns)],
    }


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


PARSE_EVERY_SHARD = """
import json, sys
import pygit2
repo = pygit2.Repository(sys.argv[1])
tree = repo.revparse_single("refs/heads/meridian/state").peel(pygit2.Tree)
def walk(tree):
    for entry in tree:
        obj = repo[entry.id]
        if isinstance(obj, pygit2.Tree):
            yield from walk(obj)
        elif entry.name.endswith(".jsonl"):
            yield obj.data
count = sum(len(json.loads(b"[" + b",".join(data.splitlines()) + b"]")) for data in walk(tree))
print(count)
"""


GROWTH = 1.1


def run_counts(text: str) -> list[int]:
    counts = sorted({int(part) for part in text.split(",") if part.strip()})
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError("--runs: one or more counts >= 1, e.g. 20,60")
    return counts


def health_command(path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "meridian", "health", "--json"],
                          cwd=path, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"meridian health --json failed: {proc.stderr.strip()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=run_counts, default=[20],
                        help="stored runs; several counts (20,60) build one repository each")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    counts: list[int] = args.runs
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        events, documents = event_history(args.events)
        paths: dict[int, Path] = {}
        for count in counts:
            paths[count] = _bench.fresh_repo(Path(tmp) / f"project-{count}")
            _bench.write_history(paths[count],
                                 {EVENTS: events, **memory_history(1_000, 2_000, 300)}, documents)
            fill_runs(Ledger.open(paths[count]), runs=count, tasks=25)
        path = paths[counts[0]]
        ledger = Ledger.open(path)
        print(f"built {args.events:,} events, 3,300 memory records, "
              f"{' / '.join(str(c) for c in counts)} runs in {time.perf_counter() - started:.1f}s")
        report = build_report(ledger, path)
        print(f"[{report.events:,} events, {report.gates.verdicts:,} verdicts, "
              f"{report.evaluator.verdicts_read} verdict documents read, "
              f"{report.evaluation.runs} runs]")

        def aggregate() -> None:
            build_report(ledger, path).model_dump_json()

        def parse_in_process() -> None:
            for shard in ledger.shards(EVENTS):
                data = ledger.read(shard) or b""
                json.loads(b"[" + b",".join(data.splitlines()) + b"]")

        def parse_every_shard() -> None:
            subprocess.run([sys.executable, "-c", PARSE_EVERY_SHARD, str(path)], check=True,
                           capture_output=True)

        appended = [0]

        def new_event() -> None:
            appended[0] += 1
            ledger.emit("session.started", {"session": f"bench-{appended[0]}",
                                            "source": "claude"})

        first = f"health --json (process) @{counts[0]} runs"
        contenders = {
            "parse every shard (process)": _bench.Contender(parse_every_shard),
            first: _bench.Contender(lambda: health_command(path)),
            "health --json, new event (process)": _bench.Contender(
                lambda: health_command(path), setup=new_event),
            "parse event shards (in process)": _bench.Contender(parse_in_process),
            "build_report + JSON (in process)": _bench.Contender(aggregate),
        }
        for count in counts[1:]:
            contenders[f"health --json (process) @{count} runs"] = _bench.Contender(
                lambda at=paths[count]: health_command(at))  # type: ignore[misc]
            other = Ledger.open(paths[count])
            contenders[f"build_report + JSON @{count} runs (in process)"] = _bench.Contender(
                lambda at=paths[count], led=other: build_report(led, at).model_dump_json())  # type: ignore[misc]
        timings = _bench.interleave(contenders, rounds=args.rounds, per_round=1, warmup=1)
        _bench.table(f"health over {args.events:,} events ({args.rounds} rounds, interleaved)",
                     timings, reference="parse every shard (process)")
        value = _bench.ratio(timings[first], timings["parse every shard (process)"])[0]
        ok = _bench.verdict("health --json vs parsing every shard, CPU", value, 1.2)
        value = _bench.ratio(timings["health --json, new event (process)"],
                             timings["parse every shard (process)"])[0]
        ok &= _bench.verdict("health --json one event later vs parsing every shard, CPU",
                             value, 1.2)
        for count in counts[1:]:
            mine = timings[f"health --json (process) @{count} runs"]
            growth, low, high = _bench.ratio(mine, timings[first])
            print(f"health --json @{count} runs vs @{counts[0]} runs: CPU {growth:.2f}x "
                  f"[{low:.2f}-{high:.2f}], wall {_bench.ratio_text(mine, timings[first], 'wall')}")
            ok &= _bench.verdict(f"health --json @{count} runs vs @{counts[0]} runs, CPU",
                                 growth, GROWTH)
            inner = timings[f"build_report + JSON @{count} runs (in process)"]
            print(f"build_report + JSON @{count} runs vs @{counts[0]} runs (in process, less "
                  f"noise): CPU {_bench.ratio_text(inner, timings['build_report + JSON (in process)'])}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
