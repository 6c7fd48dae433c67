"""Median append latency on the state branch versus a bare pygit2 commit.

For histories of 100, 1,000 and 10,000 records, times single-event appends
(`Ledger.emit`: read the tip, append to the open shard, rebuild the trees on the
path, compare-and-swap the ref) and, in the same run, the bare minimum: one pygit2
blob + tree + commit that moves a ref. Prints medians and ratios.

    python benchmarks/ledger_append.py [--samples 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import pygit2

from meridian.ledger import EVENTS, Ledger, Write

HISTORY_SIZES = (100, 1_000, 10_000)
PREFILL_BATCH = 100


def fresh_repo(root: Path, name: str) -> Path:
    path = root / name
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.name", "bench"], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.email", "bench@localhost"], check=True)
    return path


def prefill(ledger: Ledger, count: int) -> None:
    """``count`` realistic events, written ``PREFILL_BATCH`` to a commit."""
    for start in range(0, count, PREFILL_BATCH):
        write = Write(summary=f"prefill {start}")
        for n in range(start, min(count, start + PREFILL_BATCH)):
            record = ledger.record("gate.failed", {
                "gate": f"gate-{n % 17}", "overall": 6.5, "evaluator": "heuristic",
                "subject": "0" * 40, "verdict": f"verdicts/gate-{n % 17}/{n:08d}.json",
            })
            write.add(EVENTS, record)
        ledger.commit(write)


def time_appends(ledger: Ledger, samples: int) -> float:
    timings = []
    for n in range(samples):
        started = time.perf_counter()
        ledger.emit("gate.started", {"gate": f"gate-{n % 17}", "estimate_hours": 2.0})
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def time_bare_commits(path: Path, samples: int) -> float:
    repo = pygit2.Repository(str(path))
    sig = pygit2.Signature("bench", "bench@localhost")
    parent: list[pygit2.Oid] = []
    timings = []
    for n in range(samples):
        started = time.perf_counter()
        blob = repo.create_blob(b'{"n": %d}\n' % n)
        builder = repo.TreeBuilder()
        builder.insert("file.jsonl", blob, pygit2.enums.FileMode.BLOB)
        tree = builder.write()
        oid = repo.create_commit("refs/heads/bare", sig, sig, "bare", tree, parent)
        timings.append(time.perf_counter() - started)
        parent = [oid]
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare = time_bare_commits(fresh_repo(root, "bare"), args.samples)
        results = {}
        for size in HISTORY_SIZES:
            ledger = Ledger.open(fresh_repo(root, f"h{size}"))
            prefill(ledger, size)
            results[size] = time_appends(ledger, args.samples)
    base = results[HISTORY_SIZES[0]]
    print(f"bare pygit2 blob+tree+commit: {bare * 1e3:7.3f} ms (median of {args.samples})")
    print(f"{'history':>10} {'append ms':>10} {'vs 100':>8} {'vs bare':>8}")
    for size, median in results.items():
        print(f"{size:>10,} {median * 1e3:>10.3f} {median / base:>7.2f}x {median / bare:>7.2f}x")


if __name__ == "__main__":
    main()
