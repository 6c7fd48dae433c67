"""What Meridian's hooks cost: a `git commit` next to the pre-commit framework, and the
Claude Code PreToolUse hook next to a bare Python start-up.

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

Then, in the same projects (set up with ``init --claude``), the PreToolUse hook: the
exact command ``init --claude`` wrote, run through ``/bin/sh`` with a documented payload
and the environment Claude Code gives it (this one's, with the ``env`` of
``.claude/settings.json`` and ``settings.local.json``: ``MERIDIAN_PYTHON``, so the
command runs ``$MERIDIAN_PYTHON -P -m meridian``), interleaved one call at a time:

- allow Write @N    src/module.py (gate core, in progress): allowed
- allow Bash @N     ``pytest -q tests && git status`` (writes nothing): allowed
- deny Write @N     docs/guide.md (gate docs, locked behind core): denied, after an
                    untimed deny (the view current); its ``gate.blocked`` event is
                    spooled and recorded by a child the hook does not wait for
- allow Write after a deny @N
                    src/module.py right after an untimed deny, once its block is
                    recorded: the block moved the state tip and the drainer re-keyed the
                    view, so this shows whether the allow after it is still decided from
                    the view (the plain allows above run after an untimed allow, so their
                    place in the round never decides which path they take)
- allow Write after a Stop @N
                    src/module.py right after the Stop hook, whose session episode and
                    block moved the state tip (the hook re-keys the view: they change no
                    gate's phase)
- allow Write after a gate command @N
                    src/module.py right after ``meridian gate submit extra`` or ``meridian
                    gate reopen extra`` (in turn: each changes a gate's phase), run in a
                    process of its own; the command leaves the view computed again for
                    the tip it moved to (``claude_view.update``)
- allow Write after a refused commit @N
                    src/module.py right after a ``git commit`` the pre-commit hook refused
                    (a stub in a gate's file: its ``gate.blocked`` moved the tip; the hook
                    re-keys the view)
- allow Write after a new event @N
                    src/module.py right after a ``gate.blocked`` event written in this
                    process, which no Meridian command follows to re-key the view: the
                    hook reads the new commit with git and carries the view over
                    (``state_catchup.py``; not judged against the budget: it runs
                    two git commands, and a commit it cannot vouch for takes the full path)
- record a spooled block @N
                    what the deny's child does after the answer, in a process of its own
                    (``block_spool.drain_at``; the child itself starts from the hook's
                    interpreter, so it costs less than this)

Before each operation the spools are drained (untimed): a drainer never runs beside a
timed contender, as a tool call comes seconds after the last one.
- python floor      ``python -c pass`` through the same shell

With ``--baseline DIR`` (a folder holding another version's ``meridian`` package, e.g.
``git archive main meridian | tar -x -C DIR``), every PreToolUse contender also runs as
``... [baseline]``: the same command with ``PYTHONPATH=DIR``, so that version's code
answers, interleaved in the same rounds (an A/B in one run; the setups and the view are
this version's, so a baseline whose view format differs shows its full path).

    python benchmarks/hook_latency.py [--events 10000,100000] [--rounds 12] [--skip-commit]
                                      [--baseline DIR]

Targets (issue #17): meridian+event <= 1.0x the framework at both sizes (CPU);
PreToolUse allow <= 60 ms and deny <= 100 ms (CPU and wall medians).
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
from collections.abc import Callable
from pathlib import Path

import _bench

from meridian.hooks import block_spool
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


EXTRA_GATE = """\
  - id: extra
    artifacts: ["extra/**"]
"""
STUB = "def later():\n    raise NotImplementedError\n"


class Project:
    def __init__(self, root: Path, events: int) -> None:
        self.root = _bench.make_project(root, events, claude=True)
        (self.root / ".pre-commit-config.yaml").write_text(FRAMEWORK_CONFIG)
        # a gate of no needs whose phase a setup changes with a command each round
        # (the offline evaluator: submitting it never leaves the machine)
        gates = self.root / ".meridian" / "gates.yaml"
        gates.write_text(gates.read_text() + EXTRA_GATE)
        config = self.root / ".meridian" / "config.yaml"
        config.write_text(config.read_text().replace("kind: auto", "kind: heuristic", 1))
        (self.root / "extra").mkdir()
        (self.root / "extra" / "notes.py").write_text(_bench.MODULE)
        _bench.git(self.root, "add", "-A")
        _bench.git(self.root, "commit", "-q", "-m", "framework config, gate extra")
        _bench.quiet_meridian(self.root, "gate", "start", "extra")
        self.extra_submitted = False
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

    def gate_command(self) -> None:
        """``meridian gate submit extra`` or ``gate reopen extra``, in turn, in a process of
        its own as a user runs it (each changes the gate's phase)."""
        args = (["gate", "reopen", "extra", "--reason", "bench"] if self.extra_submitted
                else ["gate", "submit", "extra"])
        proc = subprocess.run([sys.executable, "-P", "-m", "meridian", *args], cwd=self.root,
                              capture_output=True, text=True, check=False)
        if proc.returncode not in (0, 2):
            raise SystemExit(f"meridian {' '.join(args)}: exit {proc.returncode}: {proc.stderr}")
        self.extra_submitted = not self.extra_submitted

    def refused_commit(self) -> None:
        """A commit the pre-commit hook refuses (a stub in a gate's file), then unstaged."""
        self.hook.write_text(self.stub)
        self.hook.chmod(0o755)
        stub = self.root / "src" / "later.py"
        stub.write_text(STUB)
        _bench.git(self.root, "add", "src/later.py")
        proc = subprocess.run(["git", "commit", "-q", "-m", "a stub"], cwd=self.root,
                              capture_output=True, text=True, check=False)
        _bench.git(self.root, "rm", "-q", "--cached", "src/later.py")
        stub.unlink()
        if proc.returncode == 0:
            raise SystemExit("the pre-commit hook let a stub through")


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


def claude_env(root: Path, baseline: Path | None = None) -> dict[str, str]:
    """The environment Claude Code gives a hook: its own, the ``env`` of the project's
    settings files, ``CLAUDE_PROJECT_DIR``; with ``baseline``, that version's code first on
    ``sys.path``."""
    env = dict(os.environ)
    for name in ("settings.json", "settings.local.json"):
        path = root / ".claude" / name
        if path.exists():
            env.update(json.loads(path.read_text()).get("env", {}))
    env["CLAUDE_PROJECT_DIR"] = str(root)
    if baseline is not None:
        env["PYTHONPATH"] = str(baseline)
    return env


def pre_tool_use(root: Path, tool: str, value: str, deny: bool,
                 baseline: Path | None = None) -> _bench.Contender:
    """The PreToolUse command of .claude/settings.json through the shell, as Claude Code runs it."""
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    [command] = [h["command"] for group in settings["hooks"]["PreToolUse"]
                 for h in group["hooks"] if "meridian hook claude" in h["command"]]
    tool_input = ({"command": value, "description": "run the tests"} if tool == "Bash"
                  else {"file_path": str(root / value), "content": "print('hello')\n"})
    payload = json.dumps({
        "session_id": "bench-session", "transcript_path": str(root / "transcript.jsonl"),
        "cwd": str(root), "hook_event_name": "PreToolUse", "permission_mode": "default",
        "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_bench"})
    env = claude_env(root, baseline)

    def run() -> None:
        proc = subprocess.run(command, shell=True, input=payload, cwd=root, env=env,
                              capture_output=True, text=True, check=False)
        denied = '"deny"' in proc.stdout
        if proc.returncode != 0 or denied != deny:
            raise SystemExit(f"PreToolUse {tool} {value}: exit {proc.returncode}, expected "
                             f"{'deny' if deny else 'allow'}: {proc.stdout}{proc.stderr}")

    return _bench.Contender(run)


def stop_hook(root: Path) -> Callable[[], None]:
    """The Stop command of .claude/settings.json through the shell (untimed setup)."""
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    [command] = [h["command"] for group in settings["hooks"]["Stop"]
                 for h in group["hooks"] if "meridian hook claude" in h["command"]]
    payload = json.dumps({"session_id": "bench-session", "transcript_path": "/dev/null",
                          "cwd": str(root), "hook_event_name": "Stop", "stop_hook_active": False})
    env = claude_env(root)

    def run() -> None:
        proc = subprocess.run(command, shell=True, input=payload, cwd=root, env=env,
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"Stop hook: exit {proc.returncode}: {proc.stdout}{proc.stderr}")
    return run


def settle(projects: dict[int, Project]) -> None:
    """Wait (untimed) until the blocks the denies spooled are recorded: their detached
    drainer must not run beside the next contender (it is timed on its own below)."""
    for project in projects.values():
        block_spool.settle(project.root)


def spool_block(project: Project) -> None:
    """Spool one block as a deny decided from the view does."""
    block_spool.put(project.root / ".git", {
        "root": str(project.root), "branch": "meridian/state", "source": "claude",
        "reason": "Meridian: docs/guide.md belongs to gate docs, which is locked",
        "gate": "docs", "files": ["docs/guide.md"], "ts": block_spool.now_ts(),
        "extra": {"event": "PreToolUse", "session": "bench-session", "tool": "Write"}})


JUDGED = (("allow Write", 60.0), ("allow Bash", 60.0), ("allow Write after a deny", 60.0),
          ("allow Write after a Stop", 60.0), ("allow Write after a gate command", 60.0),
          ("allow Write after a refused commit", 60.0), ("deny Write", 100.0))
BASELINE = " [baseline]"


def claude_contenders(projects: dict[int, Project],
                      baseline: Path | None = None) -> dict[str, _bench.Contender]:
    floor = f"{shlex.quote(sys.executable)} -c pass"
    out = {"python floor": _bench.Contender(
        lambda: subprocess.run(floor, shell=True, check=True))}
    for code in (None, baseline) if baseline is not None else (None,):
        out.update(_hook_contenders(projects, code))
    for name, contender in out.items():
        # (a spooled block's setup leaves it spooled: that is what its contender records)
        contender.setup = _settled(projects, contender.setup, after=not name.startswith("record"))
    return out


def _hook_contenders(projects: dict[int, Project],
                     baseline: Path | None) -> dict[str, _bench.Contender]:
    """The PreToolUse contenders of every project, answered by this version's code or,
    with ``baseline``, by that folder's (named ``... [baseline]``)."""
    tag = BASELINE if baseline is not None else ""
    out: dict[str, _bench.Contender] = {}
    drain = ("import sys; from pathlib import Path; from meridian.hooks import block_spool; "
             "block_spool.drain_at(Path(sys.argv[1]))")
    for size, project in projects.items():
        write = pre_tool_use(project.root, "Write", "src/module.py", False, baseline)
        shell = pre_tool_use(project.root, "Bash", "pytest -q tests && git status", False,
                             baseline)
        deny = pre_tool_use(project.root, "Write", "docs/guide.md", True, baseline)
        # The allows, each after an untimed allow (the view current), so a deny's event
        # before them in the round never decides which path they take ...
        out[f"allow Write @{size:,}{tag}"] = _bench.Contender(write.run, setup=write.run)
        out[f"allow Bash @{size:,}{tag}"] = _bench.Contender(shell.run, setup=shell.run)
        # ... the deny after an untimed deny (the view current: no new state since) ...
        out[f"deny Write @{size:,}{tag}"] = _bench.Contender(deny.run, setup=deny.run)
        # ... the allow right after an untimed deny's gate.blocked event (the block is
        # recorded after the deny answers, and the view re-keyed to the tip it moved to:
        # this checks the allow still finds it) ...
        out[f"allow Write after a deny @{size:,}{tag}"] = _bench.Contender(
            write.run, setup=deny.run)
        # ... the allow right after the Stop hook (its session episode and block move the
        # state tip; the hook re-keys the view, as every Meridian command does) ...
        out[f"allow Write after a Stop @{size:,}{tag}"] = _bench.Contender(
            write.run, setup=stop_hook(project.root))
        # ... right after a command that changes a gate's phase (it computes the view
        # again) and after a commit the pre-commit hook refused (its block re-keys it) ...
        out[f"allow Write after a gate command @{size:,}{tag}"] = _bench.Contender(
            write.run, setup=project.gate_command)
        out[f"allow Write after a refused commit @{size:,}{tag}"] = _bench.Contender(
            write.run, setup=project.refused_commit)
        # ... and right after an event a writer other than a Meridian command appended
        # (here: this process's ledger; no command ran to re-key the view)
        out[f"allow Write after a new event @{size:,}{tag}"] = _bench.Contender(
            write.run, setup=project.new_event)
        if baseline is not None:
            continue
        # ... and what recording a deny's block costs in a process of its own (the deny's
        # child does it after answering, from an interpreter already started: less)
        out[f"record a spooled block @{size:,}"] = _bench.Contender(
            lambda root=project.root: subprocess.run(
                [sys.executable, "-P", "-c", drain, str(root)], check=True),
            setup=lambda project=project: spool_block(project))
    return out


def _settled(projects: dict[int, Project], setup: Callable[[], object] | None, *,
             after: bool) -> Callable[[], None]:
    """``setup`` with the spools drained before it (and after it, for a deny's): each
    contender runs alone, as a tool call seconds after the last one does."""
    def run() -> None:
        settle(projects)
        if setup is not None:
            setup()
            if after:
                settle(projects)
    return run


def _judge(name: str, timings: _bench.Timings, budget_ms: float) -> bool:
    cpu = _bench.verdict(f"{name}, CPU ms", statistics.median(timings.cpu) * 1e3, budget_ms)
    wall = _bench.verdict(f"{name}, wall ms", statistics.median(timings.wall) * 1e3, budget_ms)
    return cpu and wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="10000,100000",
                        help="history sizes in events, comma-separated")
    parser.add_argument("--rounds", type=int, default=12, help="commits per contender")
    parser.add_argument("--skip-commit", action="store_true",
                        help="time only the PreToolUse hook")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a folder holding another version's meridian package: its "
                             "PreToolUse answers are timed in the same rounds")
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
        if not args.skip_commit:
            # the warm-up commits verify each whole branch and build the caches
            timings = _bench.interleave(contenders(projects), rounds=args.rounds, per_round=1)
            _bench.table(f"git commit of a change to a gate's artifact file ({args.rounds} "
                         "rounds, interleaved)", timings, reference="framework")
            for size in sizes:
                value = _bench.ratio(timings[f"meridian+event @{size:,}"],
                                     timings["framework"])[0]
                ok &= _bench.verdict(
                    f"commit after a new state event @{size:,} vs framework, CPU", value, 1.0)
        try:
            timings = _bench.interleave(claude_contenders(projects, args.baseline),
                                        rounds=args.rounds, per_round=1)
        finally:
            settle(projects)  # no drainer may outlive the projects
        _bench.table(f"Claude Code PreToolUse, the settings' command through the shell "
                     f"({args.rounds} rounds, interleaved)", timings, reference="python floor")
        for size in sizes:
            for name, budget in JUDGED:
                ok &= _judge(f"PreToolUse {name} @{size:,}", timings[f"{name} @{size:,}"],
                             budget)
        if args.baseline is not None:  # this version against the baseline, same rounds
            for size in sizes:
                for name, _ in JUDGED:
                    mine = timings[f"{name} @{size:,}"]
                    theirs = timings[f"{name} @{size:,}{BASELINE}"]
                    print(f"  {name} @{size:,} vs baseline: CPU {_bench.ratio_text(mine, theirs)}"
                          f", wall {_bench.ratio_text(mine, theirs, 'wall')}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
