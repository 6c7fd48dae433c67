"""What the pre-push hook costs: a real `git push` of one new commit (a change to gate
core's artifact file, so the pushed-content scan reads it) to a local bare remote, with
10,000 and 100,000 events on the state branch (written with pygit2 plumbing).

- pre-push @N            the stub `meridian hooks install` writes, this version's code
- pre-push @N, no scan   the same, in a second project whose rule
                         ``staged-files-checked`` (``hook:staged_heuristics``) is retired:
                         pre-push without the scan of the pushed content (what it cost
                         before that scan existed; an A/B in one run, same code)
- no hook                ``git push --no-verify``, the floor

Each push is preceded (untimed) by one `git commit --no-verify` of a change to
src/module.py; contenders are interleaved one push at a time. CPU time counts git and
the hook process.

    python benchmarks/prepush_latency.py [--events 10000,100000] [--rounds 8]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import _bench


class Project:
    def __init__(self, root: Path, events: int, *, scan: bool = True) -> None:
        self.root = _bench.make_project(root, events)
        if not scan:
            _bench.quiet_meridian(self.root, "rules", "retire", "staged-files-checked",
                                  "--reason", "benchmark: pre-push without the content scan")
            _bench.git(self.root, "commit", "-q", "--no-verify", "-am", "retire the scan")
        _bench.quiet_meridian(self.root, "hooks", "install")
        bare = root.parent / f"{root.name}.git"
        _bench.git(root.parent, "init", "-q", "--bare", str(bare))
        _bench.git(self.root, "remote", "add", "origin", str(bare))
        _bench.git(self.root, "push", "-q", "--no-verify", "origin", "main",
                   "meridian/state")
        self.n = 0

    def change(self) -> None:
        self.n += 1
        with (self.root / "src" / "module.py").open("a") as handle:
            handle.write(f"\n\ndef scaled_{self.n}(value: float) -> float:\n"
                         f"    return value * {self.n}\n")
        _bench.git(self.root, "commit", "-q", "--no-verify", "-am", f"change {self.n}")

    def push(self, *extra: str, env: dict[str, str] | None = None) -> None:
        proc = subprocess.run(["git", "push", "-q", *extra, "origin", "main"], cwd=self.root,
                              capture_output=True, text=True, check=False, env=env)
        if proc.returncode != 0:
            raise SystemExit(f"push {self.n} was refused:\n{proc.stdout}{proc.stderr}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    sizes = [int(s) for s in args.events.split(",") if s]
    cache = tempfile.mkdtemp(prefix="meridian-pycache-")
    os.environ["PYTHONPYCACHEPREFIX"] = cache  # the hook runs from cached bytecode
    with tempfile.TemporaryDirectory(prefix="meridian-prepush-") as tmp:
        projects = {n: Project(Path(tmp) / f"p{n}", n) for n in sizes}
        plain = {n: Project(Path(tmp) / f"q{n}", n, scan=False) for n in sizes}
        contenders: dict[str, _bench.Contender] = {}
        for size, project in projects.items():
            contenders[f"pre-push @{size:,}"] = _bench.Contender(project.push, project.change)
            contenders[f"pre-push @{size:,}, no scan"] = _bench.Contender(
                plain[size].push, plain[size].change)
        first = projects[min(projects)]
        contenders["no hook"] = _bench.Contender(lambda: first.push("--no-verify"), first.change)
        timings = _bench.interleave(contenders, rounds=args.rounds, per_round=1, warmup=1)
        _bench.table("git push of one commit (ms, CPU and wall medians [min-max])", timings,
                     reference="no hook")
        for size in sizes:
            name = f"pre-push @{size:,}"
            print(f"{name}: with the scan / without, CPU "
                  f"{_bench.ratio_text(timings[name], timings[f'{name}, no scan'])}, wall "
                  f"{_bench.ratio_text(timings[name], timings[f'{name}, no scan'], 'wall')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
