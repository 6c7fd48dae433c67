"""What writing a memory costs at 20,000 stored memory records, alone and contended.

Builds a state branch (pygit2 plumbing) holding --records episodic memories, as many
semantic memories and as many events, then:

1. times one write in process (a new ``Ledger`` each time, as a fresh process has),
   interleaved: ``memory.store.record_episode`` (every
   Claude Code SessionStart), ``memory.store.add`` of a new semantic memory
   (`meridian memory add semantic`), and ``Ledger.emit`` of one event (the reference);
2. runs --writers processes at once, each writing --writes records to the same branch
   (all episodic memories, or all events), alternately, and reports the wall time
   until the last one finished and the CPU all of them used.

    python benchmarks/memory_write.py [--records 20000] [--rounds 10] [--writers 8] [--writes 5]

Targets (issue #17): record_episode / memory add <= 10 ms at 20k; contention no
worse for memory than for events.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _bench

from meridian.ledger import EVENTS, Ledger

WRITER_SCRIPT = """
import sys
from meridian.ledger import Ledger
from meridian.memory.store import record_episode
ledger = Ledger.open(sys.argv[1])
what, writer, writes = sys.argv[2], sys.argv[3], int(sys.argv[4])
for n in range(writes):
    if what == "memory":
        record_episode(ledger, f"contended-{writer}", "note", notes=f"write {n} of {writer}")
    else:
        ledger.emit("gate.blocked", {"gate": "core", "source": "gate",
                                     "reason": f"write {n} of {writer}"})
"""


def build(path: Path, count: int) -> Ledger:
    _bench.fresh_repo(path)
    stamps = _bench.stamps_this_month(count)
    _bench.write_history(path, {
        "memory/episodic": [_bench.line("memory.episodic", {
            "session": f"s{n // 4}", "event": "note", "notes": f"episode {n}"}, ts)
            for n, ts in enumerate(stamps)],
        "memory/semantic": [_bench.line("memory.semantic", {
            "text": f"pattern {n}: write the failing test first", "confidence": 0.7,
            "source_gates": [], "source_projects": [], "tags": []}, ts)
            for n, ts in enumerate(stamps)],
        EVENTS: _bench.gate_events(count),
    })
    return Ledger.open(path)


def contended(path: Path, what: str, writers: int, writes: int,
              round_number: int) -> tuple[float, float, int]:
    """(wall seconds until every writer finished, CPU seconds of all of them, writers
    that failed: a writer gives up when the branch stays busy past the retry deadline)."""
    cpu, wall = _bench.cpu_seconds(), time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER_SCRIPT, str(path), what,
                               f"r{round_number}w{n}", str(writes)],
                              stderr=subprocess.PIPE, text=True) for n in range(writers)]
    failed = 0
    for proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            failed += 1
            print(f"  a {what} writer failed: {err.strip().splitlines()[-1] if err.strip() else proc.returncode}")
    return time.perf_counter() - wall, _bench.cpu_seconds() - cpu, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000,
                        help="memory records per stream (and events) already stored")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=3)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--writes", type=int, default=5, help="writes per contending writer")
    parser.add_argument("--contention-rounds", type=int, default=2)
    args = parser.parse_args()
    from meridian.memory import store

    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "repo"
        ledger = build(path, args.records)
        print(f"state branch with {args.records:,} episodic and {args.records:,} semantic "
              f"memories and {args.records:,} events built")
        counter = iter(range(10**9))

        def fresh() -> Ledger:
            # a new Ledger per write, as each hook or command process has: nothing it
            # read for an earlier write is reused
            return Ledger(ledger.repo, ledger.branch)

        contenders = {
            "emit (events)": _bench.Contender(lambda: fresh().emit(
                "gate.blocked", {"gate": "core", "source": "gate", "reason": f"n{next(counter)}"})),
            "record_episode": _bench.Contender(lambda: store.record_episode(
                fresh(), "bench", "note", notes=f"n{next(counter)}")),
            "memory add semantic": _bench.Contender(lambda: store.add(
                fresh(), "semantic", {"text": f"new pattern {next(counter)}", "confidence": 0.5})),
        }
        timings = _bench.interleave(contenders, rounds=args.rounds, per_round=args.per_round)
        _bench.table(f"one write at {args.records:,} records ({args.rounds} rounds x "
                     f"{args.per_round}, interleaved)", timings, reference="emit (events)")
        for name in ("record_episode", "memory add semantic"):
            ok &= _bench.verdict(f"{name} at {args.records:,}, CPU ms",
                                 statistics.median(timings[name].cpu) * 1e3, 10.0)

        # The whole command in a fresh process, split into what python's start costs,
        # what importing the command's modules costs and the rest (the write itself).
        cli_counter = iter(range(10**9))

        # Bytecode cached as an installed package has it: with PYTHONDONTWRITEBYTECODE set
        # (as in some CI and sandboxes) every run would compile Meridian's sources again,
        # some 50 ms that no pip-installed Meridian pays.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")

        def run(*argv: str) -> None:
            subprocess.run([sys.executable, *argv], cwd=path, check=True, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def refused() -> None:
            # an invalid write: refused by the model's one-line message, exit 2
            proc = subprocess.run([sys.executable, "-m", "meridian", "memory", "add",
                                   "episodic", "--json", '{"session": "cli", "event": "gate_passed"}'],
                                  cwd=path, capture_output=True, text=True, check=False, env=env)
            if proc.returncode != 2 or proc.stderr.count("\n") != 1:
                raise SystemExit(f"invalid memory add: exit {proc.returncode}: {proc.stderr}")

        processes = {
            "python -c pass": _bench.Contender(lambda: run("-c", "pass")),
            # the floor of any command that writes to git through pygit2
            "python -c 'import pygit2'": _bench.Contender(lambda: run("-c", "import pygit2")),
            "import meridian.cli": _bench.Contender(lambda: run("-c", "import meridian.cli")),
            "meridian memory add": _bench.Contender(lambda: run(
                "-m", "meridian", "memory", "add", "episodic", "--json",
                f'{{"session": "cli", "event": "note", "notes": "n{next(cli_counter)}"}}')),
            "memory add, refused": _bench.Contender(refused),
        }
        rounds = max(2, args.rounds // 2)
        timings = _bench.interleave(processes, rounds=rounds, per_round=1, warmup=1)
        _bench.table(f"`meridian memory add` as a command ({rounds} rounds, interleaved; "
                     "CPU includes the child)", timings, reference="python -c pass")
        floor = timings["python -c 'import pygit2'"]
        print(f"  memory add vs import pygit2: "
              f"{_bench.ratio_text(timings['meridian memory add'], floor)}")
        # what the command imports (-X importtime): module count, and the heavy ones
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "meridian", "memory",
                               "add", "episodic", "--json",
                               f'{{"session": "cli", "event": "note", "notes": "n{next(cli_counter)}"}}'],
                              cwd=path, capture_output=True, text=True, check=True, env=env)
        modules = [line.split("|")[-1].strip() for line in proc.stderr.splitlines()
                   if line.startswith("import time:") and "|" in line][1:]
        heavy = [name for name in ("pydantic", "yaml", "pygit2", "rich") if name in modules]
        print(f"  `meridian memory add` imports {len(modules)} modules; of pydantic, yaml, "
              f"pygit2, rich: {', '.join(heavy) or 'none'}")

        results: dict[str, list[tuple[float, float, int]]] = {"events": [], "memory": []}
        for number in range(args.contention_rounds):
            order = ["events", "memory"] if number % 2 == 0 else ["memory", "events"]
            for what in order:
                results[what].append(contended(path, what, args.writers, args.writes, number))
        print(f"{args.writers} writers x {args.writes} writes at once "
              f"({args.contention_rounds} rounds, alternating):")
        for what, values in results.items():
            walls, cpus = [v[0] for v in values], [v[1] for v in values]
            failed = sum(v[2] for v in values)
            print(f"  {what:<8} wall {_bench.spread(walls)} ms, CPU {_bench.spread(cpus)} ms, "
                  f"{failed} writer(s) failed")
            ok &= failed == 0
        memory_wall = statistics.median(v[0] for v in results["memory"])
        events_wall = statistics.median(v[0] for v in results["events"])
        ok &= _bench.verdict("contended memory vs events, wall", memory_wall / events_wall, 1.0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
