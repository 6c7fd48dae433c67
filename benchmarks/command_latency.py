"""Fresh-process latency of the commands an agent loop runs all the time.

Builds one project per history size (default: none and 100,000 events on the state
branch, written with pygit2 plumbing) with `meridian init --claude`, gate ``core`` in
progress and gate ``docs`` (needs core) locked, and times, interleaved one run at a
time:

- PreToolUse allow  the exact command `init --claude` wrote to .claude/settings.json,
                    run through the shell with a documented Write payload for
                    src/module.py (gate core, in progress: allowed)
- PreToolUse deny   the same for docs/guide.md (gate docs is locked: denied, and a
                    gate.blocked event is appended)
- status            `meridian status` in a project of its own (no PreToolUse deny
                    appends events there), so nothing it shows changed since the last
                    run: answered from its view (``commands/status_view.py``)
- status, new event the same right after one more event (a session episode) is
                    appended (untimed): the view is caught up over the new commit
                    (``commands/status_catchup.py``)
- status, new block the same after a ``gate.blocked`` of gate core (a count it shows)
- status, passed    `meridian status` in a project where gate core passed (offline
                    evaluator): answered from the view, its pass checked again
                    (``commands/status_passes.py``: the branch read with git, the
                    verdict by the plain rule, the artifacts hashed without pygit2)
- status, passed, new event
                    the same right after one more session event: the view is caught
                    up and its pass checked against the snapshot of its own tip
- ... (before)      with ``--before DIR`` (another Meridian's source tree, e.g.
                    ``git archive main | tar -x -C DIR``): the same status, passed
                    run with that code (``PYTHONPATH=DIR``) in a project of its own
                    built the same way, interleaved with this code's
- why               `meridian why core` (the gate's story: its events in ledger order)
- owners            `meridian owners src/module.py docs/guide.md`
- python floor      the same interpreter running `pass` (start-up alone)

CPU time counts the shell and the Python process.

    python benchmarks/command_latency.py [--events 0,100000] [--rounds 12] [--before DIR]
                                         [--only "status, passed"]

``--only NAME`` builds and times only the contenders whose name starts with NAME (and
the python floor): ``--only "status, passed" --before DIR`` is the A/B of that row.

Targets (issue #17): PreToolUse allow <= 60 ms and deny <= 100 ms; status <= 200 ms
at 100k events. Judged on CPU time (on a quiet machine the wall time an agent waits
is about the same; on a loaded one wall time mostly measures the other processes).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import _bench


def pre_tool_use(root: Path, target: str, deny: bool) -> _bench.Contender:
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    payload = json.dumps({
        "session_id": "bench-session", "transcript_path": str(root / "transcript.jsonl"),
        "cwd": str(root), "hook_event_name": "PreToolUse", "permission_mode": "default",
        "tool_name": "Write",
        "tool_input": {"file_path": str(root / target), "content": "print('hello')\n"},
    })

    def run() -> None:
        proc = subprocess.run(command, shell=True, input=payload, cwd=root,
                              capture_output=True, text=True, check=False)
        denied = '"deny"' in proc.stdout
        if proc.returncode != 0 or denied != deny:
            raise SystemExit(f"PreToolUse {target}: exit {proc.returncode}, expected "
                             f"{'deny' if deny else 'allow'}: {proc.stdout}{proc.stderr}")

    return _bench.Contender(run)


def command(root: Path, *args: str, codes: tuple[int, ...] = (0,),
            code: Path | None = None) -> _bench.Contender:
    """``meridian ARGS`` in a fresh process (``code``: that source tree's Meridian)."""
    env = None if code is None else {**os.environ, "PYTHONPATH": str(code)}

    def run() -> None:
        proc = subprocess.run([sys.executable, "-m", "meridian", *args], cwd=root,
                              capture_output=True, text=True, check=False, env=env)
        if proc.returncode not in codes:
            raise SystemExit(f"meridian {' '.join(args)}: exit {proc.returncode}: "
                             f"{proc.stdout}{proc.stderr}")

    return _bench.Contender(run)


def status(root: Path) -> _bench.Contender:
    return command(root, "status")


def status_after_event(root: Path, block: bool = False) -> _bench.Contender:
    from meridian.ledger import Ledger

    ledger = Ledger.open(root)
    count = [0]

    def new_event() -> None:
        count[0] += 1
        if block:
            ledger.emit("gate.blocked", {"gate": "core", "source": "claude",
                                         "reason": f"bench {count[0]}"})
        else:
            ledger.emit("session.started", {"session": f"bench-{count[0]}",
                                            "source": "claude"})

    return _bench.Contender(command(root, "status").run, setup=new_event)


def _judge(name: str, timings: _bench.Timings, budget_ms: float) -> bool:
    """A latency target holds for the CPU spent and for the time the caller waits (wall:
    disk reads and process start-up a CPU figure leaves out)."""
    cpu = _bench.verdict(f"{name}, CPU ms", statistics.median(timings.cpu) * 1e3, budget_ms)
    wall = _bench.verdict(f"{name}, wall ms", statistics.median(timings.wall) * 1e3, budget_ms)
    return cpu and wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="0,100000",
                        help="history sizes in events, comma-separated")
    parser.add_argument("--rounds", type=int, default=12, help="runs per contender")
    parser.add_argument("--before", type=Path, default=None,
                        help="another Meridian's source tree: its `status, passed` too")
    parser.add_argument("--only", default=None,
                        help="only the contenders whose name starts with this")
    args = parser.parse_args()

    def wanted(name: str) -> bool:
        return args.only is None or name.startswith(args.only)

    sizes = [int(s) for s in args.events.split(",")]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        contenders = {"python floor": _bench.Contender(lambda: subprocess.run(
            f"{shlex.quote(sys.executable)} -c pass", shell=True, check=True))}
        for size in sizes:
            if wanted("PreToolUse") or wanted("why") or wanted("owners"):
                root = _bench.make_project(Path(tmp) / f"p{size}", size, claude=True)
                contenders[f"PreToolUse allow @{size:,}"] = pre_tool_use(root, "src/module.py",
                                                                         False)
                contenders[f"PreToolUse deny @{size:,}"] = pre_tool_use(root, "docs/guide.md",
                                                                        True)
                contenders[f"why @{size:,}"] = command(root, "why", "core")
                # docs/guide.md belongs to the locked gate docs: refused, exit 2
                contenders[f"owners @{size:,}"] = command(root, "owners", "src/module.py",
                                                          "docs/guide.md", codes=(2,))
            if wanted(f"status @{size:,}"):
                contenders[f"status @{size:,}"] = status(
                    _bench.make_project(Path(tmp) / f"s{size}", size))
            if wanted("status, new event"):
                contenders[f"status, new event @{size:,}"] = status_after_event(
                    _bench.make_project(Path(tmp) / f"e{size}", size))
            if wanted("status, new block"):
                contenders[f"status, new block @{size:,}"] = status_after_event(
                    _bench.make_project(Path(tmp) / f"b{size}", size), block=True)
            if wanted("status, passed @"):
                passed = _bench.make_project(Path(tmp) / f"d{size}", size)
                _bench.quiet_meridian(passed, "gate", "submit", "core")
                contenders[f"status, passed @{size:,}"] = status(passed)
            if wanted("status, passed, new event"):
                moved = _bench.make_project(Path(tmp) / f"m{size}", size)
                _bench.quiet_meridian(moved, "gate", "submit", "core")
                contenders[f"status, passed, new event @{size:,}"] = status_after_event(moved)
            if args.before is not None:
                other = _bench.make_project(Path(tmp) / f"o{size}", size)
                _bench.quiet_meridian(other, "gate", "submit", "core")
                contenders[f"status, passed (before) @{size:,}"] = command(
                    other, "status", code=args.before.resolve())
        contenders = {name: c for name, c in contenders.items()
                      if name == "python floor" or wanted(name) or "(before)" in name}
        print(f"projects with {', '.join(f'{s:,}' for s in sizes)} events built")
        timings = _bench.interleave(contenders, rounds=args.rounds, per_round=1)
        _bench.table(f"fresh-process commands ({args.rounds} rounds, interleaved)", timings,
                     reference="python floor")
        if args.before is not None:
            for size in sizes:
                after = timings[f"status, passed @{size:,}"]
                before = timings[f"status, passed (before) @{size:,}"]
                print(f"  status, passed @{size:,}: this code / before, CPU "
                      f"{_bench.ratio_text(after, before)}, wall "
                      f"{_bench.ratio_text(after, before, 'wall')}")
        judged = [(f"{name} @{size:,}", budget) for size in sizes
                  for name, budget in (("PreToolUse allow", 60.0), ("PreToolUse deny", 100.0))]
        largest = max(sizes)
        judged += [(f"{name} @{largest:,}", 200.0)
                   for name in ("status", "status, new event", "status, new block",
                                "status, passed", "status, passed, new event")]
        for name, budget in judged:
            if name in timings:
                ok &= _judge(name, timings[name], budget)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
