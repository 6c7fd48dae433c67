"""Median append latency on the state branch versus a bare pygit2 commit.

For histories of 100, 1,000 and 10,000 records, times single-event appends
(`Ledger.emit`: read the tip, append to the open shard, rebuild the trees on the
path, compare-and-swap the ref) and, in the same run, the bare minimum: one pygit2
blob + tree + commit that moves a ref. Prints medians and ratios.

    python benchmarks/ledger_append.py [--samples 600] [--rounds 6]

Exits 1 when a budget is missed (10k within 1.5x of 100 records, within 3x of bare).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
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
            record = ledger.record("gate.blocked", {
                "gate": f"gate-{n % 17}", "source": "pre-commit",
                "reason": "1 high-severity finding(s) in staged files", "files": [f"src/m{n}.py"],
            })
            write.add(EVENTS, record)
        ledger.commit(write)


class BareCommitter:
    """The floor: one pygit2 blob + tree + commit that moves a ref, nothing else."""

    def __init__(self, path: Path) -> None:
        self.repo = pygit2.Repository(str(path))
        self.sig = pygit2.Signature("bench", "bench@localhost")
        self.parents: list[pygit2.Oid] = []
        self.n = 0

    def append(self) -> None:
        self.n += 1
        blob = self.repo.create_blob(b'{"n": %d}\n' % self.n)
        builder = self.repo.TreeBuilder()
        builder.insert("file.jsonl", blob, pygit2.enums.FileMode.BLOB)
        oid = self.repo.create_commit("refs/heads/bare", self.sig, self.sig, "bare",
                                      builder.write(), self.parents)
        self.parents = [oid]


def ledger_appender(ledger: Ledger) -> Callable[[], None]:
    counter = iter(range(10**9))

    def append() -> None:
        n = next(counter)
        ledger.emit("gate.started", {"gate": f"gate-{n % 17}", "estimate_hours": 2.0})

    return append


def measure(appenders: dict[str, Callable[[], None]], samples: int, rounds: int) -> dict[str, float]:
    """Median seconds per append, rounds interleaved so drift hits every contender alike."""
    timings: dict[str, list[float]] = {name: [] for name in appenders}
    for append in appenders.values():  # warm-up: imports, caches, first shard
        for _ in range(5):
            append()
    per_round = max(1, samples // rounds)
    for _ in range(rounds):
        for name, append in appenders.items():
            for _ in range(per_round):
                started = time.perf_counter()
                append()
                timings[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in timings.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=600,
                        help="appends per contender (600 spans more than two full shards)")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        appenders: dict[str, Callable[[], None]] = {
            "bare": BareCommitter(fresh_repo(root, "bare")).append}
        for size in HISTORY_SIZES:
            ledger = Ledger.open(fresh_repo(root, f"h{size}"))
            prefill(ledger, size)
            appenders[f"{size:,}"] = ledger_appender(ledger)
        medians = measure(appenders, args.samples, args.rounds)
    bare = medians.pop("bare")
    small, large = medians[f"{HISTORY_SIZES[0]:,}"], medians[f"{HISTORY_SIZES[-1]:,}"]
    print(f"bare pygit2 blob+tree+commit: {bare * 1e3:7.3f} ms (median of {args.samples})")
    print(f"{'history':>10} {'append ms':>10} {'vs 100':>8} {'vs bare':>8}")
    for size, median in medians.items():
        print(f"{size:>10} {median * 1e3:>10.3f} {median / small:>7.2f}x {median / bare:>7.2f}x")
    checks = [("10k vs 100 records", large / small, 1.5), ("10k vs bare commit", large / bare, 3.0)]
    failed = False
    for label, ratio, budget in checks:
        ok = ratio <= budget
        failed |= not ok
        print(f"{'PASS' if ok else 'FAIL'}  {label}: {ratio:.2f}x (budget {budget}x)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
