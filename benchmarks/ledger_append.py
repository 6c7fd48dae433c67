"""Append and verify costs on the state branch at 100, 10,000 and 100,000 records.

Each history is built as one commit with pygit2 plumbing (the whole history in the
current month: the worst case for the append path). Three measurements:

1. one append (`Ledger.emit`: read the tip, find the open shard, append, rebuild the
   trees on the path, compare-and-swap the ref), next to the floor, a bare pygit2
   blob + tree + commit that moves a ref with the same compare-and-swap; interleaved
   round by round, CPU and wall time per append;
2. what 1,000 appends leave on disk (loose objects, packs; nobody runs `git gc`);
   the histories are packed first, as `git gc` packs a long branch;
3. verifying one new commit in process (`verify.verify`, incremental from the cache;
   the append before each verify is not timed).

    python benchmarks/ledger_append.py [--sizes 100,10000,100000] [--rounds 10] [--per-round 32]
                                       [--baseline DIR]

With ``--baseline DIR`` (a folder holding another version's ``meridian`` package, e.g.
``git archive main meridian | tar -x -C DIR``), that code appends too, in this process,
to a copy of each history, interleaved with this code and the bare commit; the script
prints this code's median and mean over the baseline's (same run) per size.

The table prints, per contender, the CPU median [min-max], the CPU mean [min-max of the
per-round means] and wall times, and the ratios of medians and of means to the bare
commit with the range of the per-round ratios. ``--per-round`` is best a multiple of
PACK_EVERY, so every round counts the same number of packs.

Targets (issue #17): append <= 3x the bare commit at every size (CPU, the median and
the mean, which counts the pack every 16th append does,
in this process: no child runs it); <= 3 MiB on disk per
1,000 appends; verify one new commit <= 10 ms at 100k. Exits 1 when one is missed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _bench
import pygit2

from meridian.ledger import EVENTS, PACK_EVERY, Ledger
from meridian.verify import verify


def history_lines(count: int) -> list[bytes]:
    """``count`` realistic gate.blocked events this month."""
    return [_bench.line("gate.blocked", {
        "gate": f"gate-{n % 17}", "source": "pre-commit",
        "reason": "1 high-severity finding(s) in staged files", "files": [f"src/m{n}.py"],
    }, ts) for n, ts in enumerate(_bench.stamps_this_month(count))]


class BareCommitter:
    """The floor: one pygit2 blob + tree + commit that moves a ref (CAS on the old tip)."""

    def __init__(self, path: Path) -> None:
        self.repo = pygit2.Repository(str(path))
        self.sig = pygit2.Signature("bench", "bench@localhost")
        self.n = 0

    def append(self) -> None:
        self.n += 1
        ref = self.repo.references.get("refs/heads/bare")
        parents = [] if ref is None else [ref.target]
        blob = self.repo.create_blob(b'{"n": %d}\n' % self.n)
        builder = self.repo.TreeBuilder()
        builder.insert("file.jsonl", blob, pygit2.enums.FileMode.BLOB)
        # with a ref name, libgit2 moves the ref only if it still points at parents[0]
        self.repo.create_commit("refs/heads/bare", self.sig, self.sig, "bare",
                                builder.write(), parents)


def appender(ledger: Any) -> Callable[[], None]:
    counter = iter(range(10**9))

    def append() -> None:
        n = next(counter)
        ledger.emit("gate.started", {"gate": f"gate-{n % 17}", "estimate_hours": 2.0})

    return append


def label(size: int) -> str:
    return f"{size:,} records"


def build(root: Path, size: int) -> Ledger:
    """The history, packed as `git gc` would have packed a branch that long."""
    path = _bench.fresh_repo(root / f"h{size}")
    _bench.write_history(path, {EVENTS: history_lines(size)})
    _bench.git(path, "repack", "-a", "-d", "-q")
    return Ledger.open(path)


def copy_history(ledger: Ledger, root: Path, name: str) -> Path:
    """A copy of ``ledger``'s repository (its packed history, nothing appended yet)."""
    source = Path(ledger.repo.path).parent
    target = root / name
    shutil.copytree(source, target, symlinks=True)
    return target


def disk_per_thousand(ledger: Ledger, appends: int) -> tuple[int, int, int]:
    """(loose objects before, after, bytes on disk added) by ``appends`` appends."""
    git_dir = Path(ledger.repo.path)
    objects = git_dir / "objects"
    loose_before, disk_before = _bench.loose_objects(git_dir), _bench.disk_bytes(objects)
    append = appender(ledger)
    for _ in range(appends):
        append()
    loose_after, disk_after = _bench.loose_objects(git_dir), _bench.disk_bytes(objects)
    return loose_before, loose_after, disk_after - disk_before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,10000,100000",
                        help="history sizes in records, comma-separated")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=2 * PACK_EVERY,
                        help="appends per contender per round")
    parser.add_argument("--disk-appends", type=int, default=1000,
                        help="appends for the disk measurement")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a folder holding another version's meridian package, "
                             "appended with in this process (same-run A/B)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    ok = True
    other = None
    if args.baseline is not None:
        other = _bench.OtherCode(args.baseline.resolve(), ["meridian.ledger"])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ledgers = {}
        baselines: dict[int, Any] = {}
        for size in sizes:
            ledgers[size] = build(root, size)
            if other is not None:
                # each side appends to a copy of its own, made and opened alike
                built = ledgers[size]
                ledgers[size] = Ledger.open(copy_history(built, root, f"h{size}-this"))
                baselines[size] = other["meridian.ledger"].Ledger.open(
                    copy_history(built, root, f"h{size}-baseline"))
        print(f"histories of {', '.join(f'{s:,}' for s in sizes)} records built "
              "(one commit each, pygit2 plumbing)")

        bare = BareCommitter(_bench.fresh_repo(root / "bare"))
        contenders = {"bare pygit2 commit": _bench.Contender(bare.append)}
        for size in sizes:
            if other is None:
                contenders[label(size)] = _bench.Contender(appender(ledgers[size]))
                continue
            contenders[label(size)] = _bench.Contender(
                appender(ledgers[size]), setup=lambda: other.use("this"))
            contenders[f"{label(size)} (baseline)"] = _bench.Contender(
                appender(baselines[size]), setup=lambda: other.use("baseline"))
        timings = _bench.interleave(contenders, rounds=args.rounds, per_round=args.per_round,
                                    rotate=True)
        if other is not None:
            other.use("this")
        _bench.table(f"one append ({args.rounds} rounds x {args.per_round}, interleaved)",
                     timings, reference="bare pygit2 commit")
        if other is not None:
            print(f"this code / the baseline ({args.baseline}), same run:")
            for size in sizes:
                mine, theirs = timings[label(size)], timings[f"{label(size)} (baseline)"]
                print(f"  {label(size):<16} CPU median {_bench.ratio_text(mine, theirs)}, "
                      f"CPU mean {_bench.mean_ratio_text(mine, theirs)}")
        for size in sizes:
            mine, floor = timings[label(size)], timings["bare pygit2 commit"]
            ok &= _bench.verdict(f"append at {label(size)} vs bare commit, CPU median",
                                 _bench.ratio(mine, floor)[0], 3.0)
            # the periodic pack is part of the append path: judged amortized too
            ok &= _bench.verdict(f"append at {label(size)} vs bare commit, CPU mean "
                                 "(packing amortized)", _bench.mean_ratio(mine, floor), 3.0)

        print(f"on disk after {args.disk_appends:,} appends, no gc (per 1,000 appends):")
        for size in sizes:
            before, after, added = disk_per_thousand(ledgers[size], args.disk_appends)
            mib = added * 1000 / args.disk_appends / 2**20
            print(f"  {label(size):<16} {mib:6.2f} MiB added; loose objects {before:,} before, "
                  f"{after:,} after")
            ok &= _bench.verdict(f"MiB per 1,000 appends at {label(size)}", mib, 3.0)

        verifiers = {}
        for size in sizes:
            ledger = ledgers[size]
            # the first verify of a branch reads it all (done only now: a ledger that ran
            # it appends with what it loaded in memory, which its baseline's copy has not)
            verify(ledger, full=True)
            verify(ledger)
            new_event = appender(ledger)

            def check(ledger: Ledger = ledger) -> None:
                report = verify(ledger)
                if not report.ok or report.commits != 1:
                    raise SystemExit(f"verify: {report.problems[:1]} ({report.commits} commits)")

            verifiers[label(size)] = _bench.Contender(check, setup=new_event)
        per_round = max(1, args.per_round // 4)
        timings = _bench.interleave(verifiers, rounds=args.rounds, per_round=per_round)
        _bench.table(f"verify one new commit, in process ({args.rounds} rounds x {per_round})",
                     timings)
        largest = label(max(sizes))
        ok &= _bench.verdict(f"verify one new commit at {largest}, CPU ms",
                             statistics.median(timings[largest].cpu) * 1e3, 10.0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
