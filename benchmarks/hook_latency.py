"""What Meridian's pre-commit hook costs a `git commit`, next to the pre-commit framework.

Builds one project per history size (default 10,000 and 100,000 events on the state
branch, written with pygit2 plumbing), with gate ``core`` in progress, and times real
`git commit`s of a change to that gate's artifact file (so the heuristic scan runs):

- meridian+event @N  the stub `meridian hooks install` writes, with one new event on
                     the state branch before each commit (untimed): the hook verifies
                     that commit and catches its gate snapshot up
- meridian @N        the stub, no new event since the last commit
- meridian, other    the stub, committing a file no gate owns (no heuristic scan)
- framework          the pre-commit framework with a single no-op `repo: local`,
                     `language: system` hook
- no hook            `git commit --no-verify`, the floor

The contenders are interleaved one commit at a time (hook files swapped between
commits, untimed). CPU time counts git and every hook process. Every hook runs from
cached bytecode (a private ``PYTHONPYCACHEPREFIX``), as an installed package would.

    python benchmarks/hook_latency.py [--events 10000,100000] [--rounds 12]

Target (issue #17): meridian+event <= 1.0x the framework at both sizes (CPU).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import _bench

from meridian.ledger import Ledger

FRAMEWORK_CONFIG = """\
repos:
  - repo: local
    hooks:
      - id: noop
        name: no-op
        entry: "true"
        language: system
        pass_filenames: false
        always_run: true
"""


class Project:
    def __init__(self, root: Path, events: int) -> None:
        self.root = _bench.make_project(root, events)
        (self.root / ".pre-commit-config.yaml").write_text(FRAMEWORK_CONFIG)
        _bench.git(self.root, "add", ".pre-commit-config.yaml")
        _bench.git(self.root, "commit", "-q", "-m", "framework config")
        self.hook = self.root / ".git" / "hooks" / "pre-commit"
        subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=self.root,
                       check=True, capture_output=True)
        self.framework = self.hook.read_text()
        self.hook.unlink()
        _bench.quiet_meridian(self.root, "hooks", "install")
        self.stub = self.hook.read_text()
        self.ledger = Ledger.open(self.root)
        self.n = 0

    def stage(self, hook: str | None, path: str = "src/module.py") -> None:
        if hook is not None:
            self.hook.write_text(hook)
            self.hook.chmod(0o755)
        self.n += 1
        with (self.root / path).open("a") as handle:
            handle.write(f"\n\ndef scaled_{self.n}(value: float) -> float:\n"
                         f"    return value * {self.n}\n")
        _bench.git(self.root, "add", path)

    def commit(self, *extra: str) -> None:
        proc = subprocess.run(["git", "commit", "-q", "-m", f"change {self.n}", *extra],
                              cwd=self.root, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"commit {self.n} was refused:\n{proc.stdout}{proc.stderr}")

    def new_event(self) -> None:
        self.ledger.emit("gate.blocked", {"gate": "docs", "source": "gate",
                                          "reason": f"bench {self.n}"})


def contenders(projects: dict[int, Project]) -> dict[str, _bench.Contender]:
    first = projects[min(projects)]
    out: dict[str, _bench.Contender] = {}

    def setup(project: Project, hook: str | None, path: str = "src/module.py",
              event: bool = False) -> Callable[[], None]:
        def run() -> None:
            project.stage(hook, path)
            if event:
                project.new_event()
        return run

    out["framework"] = _bench.Contender(first.commit, setup(first, first.framework))
    for size, project in projects.items():
        out[f"meridian+event @{size:,}"] = _bench.Contender(
            project.commit, setup(project, project.stub, event=True))
        out[f"meridian @{size:,}"] = _bench.Contender(project.commit, setup(project, project.stub))
    out["meridian, other"] = _bench.Contender(first.commit, setup(first, first.stub, "notes.py"))
    out["no hook"] = _bench.Contender(lambda: first.commit("--no-verify"), setup(first, None))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="10000,100000",
                        help="history sizes in events, comma-separated")
    parser.add_argument("--rounds", type=int, default=12, help="commits per contender")
    args = parser.parse_args()
    sizes = [int(s) for s in args.events.split(",")]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PRE_COMMIT_HOME"] = str(Path(tmp) / "pre-commit-home")
        # Every hook runs from compiled bytecode, as an installed package does. Under
        # PYTHONDONTWRITEBYTECODE an editable checkout would recompile each of its modules
        # on every commit (no user pays that); the cache lives in the temporary directory.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        projects = {size: Project(Path(tmp) / f"p{size}", size) for size in sizes}
        print(f"projects with {', '.join(f'{s:,}' for s in sizes)} events built")
        # the warm-up commits verify each whole branch and build the caches
        timings = _bench.interleave(contenders(projects), rounds=args.rounds, per_round=1)
        _bench.table(f"git commit of a change to a gate's artifact file ({args.rounds} "
                     "rounds, interleaved)", timings, reference="framework")
        for size in sizes:
            value = _bench.ratio(timings[f"meridian+event @{size:,}"], timings["framework"])[0]
            ok &= _bench.verdict(f"commit after a new state event @{size:,} vs framework, CPU",
                                 value, 1.0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
