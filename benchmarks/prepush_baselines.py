"""What the pre-push hook costs with a pinned baseline on a long state branch.

Builds one project per history size (default 100,000 events, written with pygit2
plumbing) holding two evaluation runs of a small suite and a baseline pinned on the
first, then times the exact hook command `meridian hooks install` writes is given by
git: ``meridian hook pre-push origin URL`` with one pushed ref on stdin, run from
cached bytecode:

- pre-push @N          this version (the baseline pins cached per event shard,
                       ``store.pinned``)
- pre-push @N [base]   with ``--baseline DIR``: the same command with
                       ``PYTHONPATH=DIR`` (another version's ``meridian`` package, e.g.
                       ``git archive main meridian | tar -x -C DIR``), interleaved round
                       by round in the same run
- pinned() @N cached / full
                       ``store.pinned`` in this process, from the cache and reading every
                       shard (``use_cache=False``)

    python benchmarks/prepush_baselines.py [--events 100000] [--rounds 8] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _bench

from meridian.evals import store
from meridian.ledger import Ledger

SUITE = """\
suite: bench
tasks:
  - id: one
    input: say one
    expected: one
    grader: [exact_match]
  - id: two
    input: say two
    expected: two
    grader: [exact_match]
"""
AGENT = "import json, sys\nprint(json.dumps({'final_output': sys.argv[1]}))\n"


def make(root: Path, events: int) -> tuple[Path, str]:
    project = _bench.make_project(root / f"p{events}", 0)
    suite = project / "suite.yaml"
    suite.write_text(SUITE)
    for answer in ("one", "two"):
        agent = project / f"agent_{answer}.py"
        agent.write_text(AGENT)
        _bench.quiet_meridian(project, "eval", "run", str(suite), "--agent",
                              f"command:{sys.executable} {agent} {answer}", "--offline")
        if answer == "one":
            _bench.quiet_meridian(project, "baseline", "pin", "main")
    _bench.write_history(project, {"events": _bench.gate_events(events)})
    bare = root / f"remote{events}.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    _bench.git(project, "remote", "add", "origin", str(bare))
    _bench.git(project, "add", "-A")
    _bench.git(project, "commit", "-q", "-m", "suite")
    head = _bench.git(project, "rev-parse", "HEAD").strip()
    return project, f"refs/heads/main {head} refs/heads/main {'0' * 40}\n"


def hook(project: Path, stdin: str, env: dict[str, str]) -> _bench.Contender:
    command = [sys.executable, "-P", "-m", "meridian", "hook", "pre-push", "origin", "url"]

    def run() -> None:
        proc = subprocess.run(command, cwd=project, input=stdin, env=env, text=True,
                              capture_output=True, check=False)
        if proc.returncode not in (0, 2):
            raise SystemExit(f"pre-push: exit {proc.returncode}: {proc.stderr}")

    return _bench.Contender(run)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", default="100000")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--baseline", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="meridian-bench-") as tmp:
        root = Path(tmp)
        env = dict(os.environ, PYTHONPYCACHEPREFIX=str(root / "pycache"),
                   PYDANTIC_DISABLE_PLUGINS="__all__")
        contenders: dict[str, _bench.Contender] = {}
        for events in (int(n) for n in args.events.split(",")):
            print(f"building {events} events ...", file=sys.stderr)
            project, stdin = make(root, events)
            contenders[f"pre-push @{events}"] = hook(project, stdin, env)
            if args.baseline is not None:
                base_env = dict(env, PYTHONPATH=str(args.baseline.resolve()),
                                PYTHONPYCACHEPREFIX=str(root / "pycache-base"))
                contenders[f"pre-push @{events} [base]"] = hook(project, stdin, base_env)
            ledger = Ledger.open(project)
            assert store.pinned(ledger) == store.pinned(ledger, use_cache=False) != {}
            contenders[f"pinned() @{events} cached"] = _bench.Contender(
                lambda ledger=ledger: store.pinned(ledger))
            contenders[f"pinned() @{events} full"] = _bench.Contender(
                lambda ledger=ledger: store.pinned(ledger, use_cache=False),
                setup=None)
        # the full read rewrites the file for the same tip: the cached contender reads it
        timings = _bench.interleave(contenders, rounds=args.rounds, per_round=1)
        first = next(iter(contenders))
        reference = next((n for n in contenders if n.endswith("[base]")), None)
        _bench.table("pre-push with a pinned baseline (ms)", timings, reference or first)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
