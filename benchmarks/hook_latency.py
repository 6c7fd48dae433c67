"""What Meridian's pre-commit hook costs a `git commit`, next to the pre-commit framework.

Builds one repository whose state branch holds 10,000 events and 500 evaluation runs
(written in batches), with a gate in progress, then times real `git commit`s of a
change to that gate's artifact file (so the heuristic scan runs) under:

- meridian        the stub `meridian hooks install` writes (`meridian hook pre-commit`)
- meridian+event  the same, with one new event on the state branch before each commit
                  (the hook verifies that commit and catches its gate snapshot up)
- meridian, other the stub, committing a file no gate owns (no heuristic scan)
- framework       the pre-commit framework with a single no-op `repo: local`,
                  `language: system` hook
- no hook         `git commit --no-verify`, the floor

The configurations are interleaved (hook files swapped between commits) so drift on
a busy machine hits them alike. Every hook runs from cached bytecode (a private
``PYTHONPYCACHEPREFIX``), as an installed package would, whatever the caller's
``PYTHONDONTWRITEBYTECODE``. Prints the medians and Meridian's ratio to the
framework; the target is a ratio of at most 1.0.

    python benchmarks/hook_latency.py [--samples 15] [--events 10000] [--runs 500]
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

from meridian.cli import main as meridian
from meridian.ledger import EVENTS, Ledger, Write

BATCH = 500
RUN_BATCH = 50
GATES = """\
version: 1
gates:
  - id: core
    artifacts: ["src/**"]
  - id: docs
    needs: [core]
    artifacts: ["docs/**"]
"""
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
MODULE = '''\
def total(values: list[float]) -> float:
    """Sum of the values."""
    result = 0.0
    for value in values:
        result += value
    return result
'''


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def quiet_meridian(*args: str) -> None:
    saved = sys.stdout
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - restored below
    try:
        code = meridian(list(args))
    finally:
        sys.stdout.close()
        sys.stdout = saved
    if code != 0:
        raise SystemExit(f"meridian {' '.join(args)} exited {code}")


def fill_events(ledger: Ledger, count: int) -> None:
    for start in range(0, count, BATCH):
        write = Write(summary=f"benchmark events {start}")
        for n in range(start, min(count, start + BATCH)):
            if n % 5 == 0:
                record = ledger.record("gate.reopened", {"gate": f"g{n % 40}", "reason": "benchmark"})
            else:
                record = ledger.record("gate.blocked", {"gate": f"g{n % 40}", "source": "gate",
                                                        "reason": f"benchmark block {n}"})
            write.add(EVENTS, record)
        ledger.commit(write)


def fill_runs(root: Path, ledger: Ledger, count: int) -> None:
    """One real run of the reference agent, stored ``count`` times under new ids."""
    from meridian.evals import store

    suite = Path(__file__).resolve().parents[1] / "suites" / "reference.yaml"
    quiet_meridian("eval", "run", str(suite), "--agent", "reference-v2", "--offline",
                   "--limit", "3", "--no-isolation")
    template = store.load_run(ledger, store.resolve(ledger, "latest"))
    for start in range(1, count, RUN_BATCH):
        write = Write(summary=f"benchmark runs {start}")
        for n in range(start, min(count, start + RUN_BATCH)):
            run = template.model_copy(update={"run_id": f"bench{n:07d}"})
            write.blobs[store.run_path(run.run_id)] = store.checked_bytes(run)
            write.add(store.INDEX_STREAM, ledger.record("eval.run", store.index_data(run)))
        ledger.commit(write)


def build(root: Path, events: int, runs: int) -> tuple[str, str]:
    """The repository; returns the text of Meridian's stub and of the framework's hook."""
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "bench")
    git(root, "config", "user.email", "bench@localhost")
    (root / "README.md").write_text("benchmark\n")
    os.chdir(root)
    quiet_meridian("init", "--no-hooks")
    (root / ".meridian" / "gates.yaml").write_text(GATES)
    (root / ".pre-commit-config.yaml").write_text(FRAMEWORK_CONFIG)
    (root / "src").mkdir()
    (root / "src" / "module.py").write_text(MODULE)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "setup")
    ledger = Ledger.open(root)
    started = time.perf_counter()
    fill_events(ledger, events)
    if runs:
        fill_runs(root, ledger, runs)
    quiet_meridian("gate", "start", "core")
    print(f"state branch: {events} events and {runs} runs written in "
          f"{time.perf_counter() - started:.1f}s")
    hooks = root / ".git" / "hooks"
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=root, check=True,
                   capture_output=True)
    framework = (hooks / "pre-commit").read_text()
    (hooks / "pre-commit").unlink()
    quiet_meridian("hooks", "install")
    stub = (hooks / "pre-commit").read_text()
    return stub, framework


def timed_commit(root: Path, n: int, *extra: str, path: str = "src/module.py") -> float:
    with (root / path).open("a") as handle:
        handle.write(f"\n\ndef scaled_{n}(value: float) -> float:\n    return value * {n}\n")
    git(root, "add", path)
    started = time.perf_counter()
    proc = subprocess.run(["git", "commit", "-q", "-m", f"change {n}", *extra], cwd=root,
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"commit {n} was refused:\n{proc.stdout}{proc.stderr}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=15)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PRE_COMMIT_HOME"] = str(Path(tmp) / "pre-commit-home")
        # Every hook runs from compiled bytecode, as an installed package does. Under
        # PYTHONDONTWRITEBYTECODE an editable checkout would recompile each of its modules
        # on every commit (no user pays that); the cache lives in the temporary directory.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        root = Path(tmp) / "repo"
        root.mkdir()
        stub, framework = build(root, args.events, args.runs)
        hook = root / ".git" / "hooks" / "pre-commit"
        ledger = Ledger.open(root)

        def use(text: str) -> None:
            hook.write_text(text)
            hook.chmod(0o755)

        def meridian_after_event(n: int) -> float:
            ledger.emit("gate.blocked", {"gate": "docs", "source": "gate", "reason": f"bench {n}"})
            return timed_commit(root, n)

        configurations = {
            "meridian": lambda n: (use(stub), timed_commit(root, n))[1],
            "meridian+event": lambda n: (use(stub), meridian_after_event(n))[1],
            "meridian, other": lambda n: (use(stub), timed_commit(root, n, path="notes.py"))[1],
            "framework": lambda n: (use(framework), timed_commit(root, n))[1],
            "no hook": lambda n: timed_commit(root, n, "--no-verify"),
        }
        timings: dict[str, list[float]] = {name: [] for name in configurations}
        counter = 0
        # Warm up: the first commit verifies the whole branch and builds the caches.
        for name, run in configurations.items():
            for _ in range(2):
                counter += 1
                run(counter)
        for sample in range(args.samples):
            names = list(configurations)
            if sample % 2:
                names.reverse()
            for name in names:
                counter += 1
                timings[name].append(configurations[name](counter))
        medians = {name: statistics.median(values) for name, values in timings.items()}
        print(f"git commit, median of {args.samples} (one change to a gate's artifact file, "
              "except 'meridian, other'):")
        for name, value in medians.items():
            print(f"  {name:<16} {value * 1000:7.1f} ms")
        ratio = medians["meridian"] / medians["framework"]
        ratio_event = medians["meridian+event"] / medians["framework"]
        print(f"meridian / framework: {ratio:.2f} (with a new state event: {ratio_event:.2f}); "
              f"target <= 1.00: {'met' if ratio <= 1.0 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
