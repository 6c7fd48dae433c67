"""``meridian demo``: the product, end to end, offline, in a throwaway repository.

Each step prints the command a user would type and runs it for real: the same
``main(argv)`` the console script calls, and real ``git`` for commits. The demo
checks every exit code it expects, so a broken step fails loudly instead of
narrating success.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from meridian.errors import MeridianError

DESIGN = """\
# calc: a tiny calculator library

- `add(a, b)` returns the sum.
- `divide(a, b)` returns the quotient; dividing by zero raises ZeroDivisionError.
"""

STUB = '''\
def add(a: float, b: float) -> float:
    return a + b


def divide(a: float, b: float) -> float:
    raise NotImplementedError
'''

REAL = '''\
def add(a: float, b: float) -> float:
    return a + b


def divide(a: float, b: float) -> float:
    if b == 0:
        raise ZeroDivisionError("cannot divide by zero")
    return a / b
'''

TESTS = '''\
import unittest

from src.calc import add, divide


class CalcTest(unittest.TestCase):
    def test_add(self) -> None:
        self.assertEqual(add(2, 3), 5)

    def test_divide(self) -> None:
        self.assertEqual(divide(6, 3), 2)

    def test_divide_by_zero(self) -> None:
        with self.assertRaises(ZeroDivisionError):
            divide(1, 0)
'''

GATES = """\
# Adapted from the `cli` template for this small library.
version: 1
gates:
  - id: design
    description: What the library does, decided before code.
    acceptance: DESIGN.md names every function, its arguments and its errors.
    artifacts: [DESIGN.md]
    estimate_hours: 1
  - id: core
    needs: [design]
    description: The calculator functions and their tests.
    acceptance: Every function in DESIGN.md is implemented and tested, errors included.
    artifacts: ["src/**/*.py", "tests/**/*.py"]
    checks:
      - run: '"${MERIDIAN_PYTHON:-python}" -m unittest discover -s tests -t . -q'
        timeout: 120
    estimate_hours: 2
  - id: release
    needs: [core]
    description: A changelog entry for the first version.
    acceptance: CHANGELOG.md has an entry for 0.1.0.
    artifacts: [CHANGELOG.md]
    estimate_hours: 0.5
"""

# One line per finished task that `eval run` prints when stderr is not a terminal.
PROGRESS_LINE = re.compile(r"^\[\d+/\d+\] \S+ epoch \d+: ")


def _reference_suite() -> Path:
    from meridian.resources import resource_dir

    return resource_dir("suites", "reference.yaml") / "reference.yaml"


class Tour:
    def __init__(self, root: Path, out: Callable[[str], None]) -> None:
        self.root = root
        self.out = out
        self.step_no = 0

    def step(self, title: str) -> None:
        self.step_no += 1
        self.out(f"\n== {self.step_no}. {title}")

    def write(self, relative: str, text: str) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def meridian(self, *argv: str, expect: int = 0, hide_progress: bool = False) -> None:
        """Run one command as the user would; ``hide_progress`` drops the per-task lines
        of ``eval run`` (23 lines each that the run's summary repeats)."""
        from meridian.cli import main

        self.out("$ meridian " + " ".join(_quote(a) for a in argv))
        sys.stdout.flush()
        if hide_progress:
            with contextlib.redirect_stderr(_WithoutProgress(sys.stderr)):
                code = main(list(argv))
        else:
            code = main(list(argv))
        sys.stdout.flush()
        sys.stderr.flush()
        if code != expect:
            raise MeridianError(f"demo step `meridian {' '.join(argv)}` exited {code}, expected {expect}")

    def git(self, *argv: str, expect: int = 0) -> None:
        self.out("$ git " + " ".join(_quote(a) for a in argv))
        proc = subprocess.run(["git", *argv], cwd=self.root, capture_output=True, text=True,
                              env=_git_env(), check=False)  # the exit code is checked below
        for line in (proc.stdout + proc.stderr).strip().splitlines():
            self.out("  " + line)
        if (proc.returncode == 0) != (expect == 0):
            raise MeridianError(f"demo step `git {' '.join(argv)}` exited {proc.returncode}")


class _WithoutProgress(io.TextIOBase):
    """A stderr that passes every line through as it comes, except per-task progress.
    Not a terminal, so `eval run` prints plain lines rather than a progress bar."""

    def __init__(self, target: TextIO) -> None:
        self.target = target
        self.pending = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if not PROGRESS_LINE.match(line):
                self.target.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        if self.pending and not PROGRESS_LINE.match(self.pending):
            self.target.write(self.pending)
        self.pending = ""
        self.target.flush()


def _quote(arg: str) -> str:
    return f"'{arg}'" if any(c in arg for c in " {}\"'") else arg


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_AUTHOR_NAME": "Meridian Demo", "GIT_AUTHOR_EMAIL": "demo@meridian.invalid",
                "GIT_COMMITTER_NAME": "Meridian Demo", "GIT_COMMITTER_EMAIL": "demo@meridian.invalid"})
    return env


def run_tour(root: Path, out: Callable[[str], None] = print) -> None:
    tour = Tour(root, out)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for key, value in (("user.name", "Meridian Demo"), ("user.email", "demo@meridian.invalid"),
                       ("commit.gpgsign", "false")):
        subprocess.run(["git", "-C", str(root), "config", key, value], check=True)
    os.chdir(root)

    tour.step("A project and Meridian, set up from a template")
    tour.write("DESIGN.md", DESIGN)
    tour.meridian("init", "--template", "cli")
    _use_offline_evaluator(root)
    out("(the tour is offline: the evaluator is Meridian's heuristic reviewer even when "
        "ANTHROPIC_API_KEY is set; in a project, `evaluator: kind: auto` uses Claude when it is)")
    out("(the `cli` graph is adapted to this library: design -> core -> release)")
    tour.write(".meridian/gates.yaml", GATES)
    tour.git("add", "-A")
    tour.git("commit", "-q", "-m", "calc: design and Meridian gates")
    tour.meridian("status")

    tour.step("The design gate passes the independent evaluator")
    tour.meridian("gate", "start", "design", "--estimate", "1")
    tour.meridian("gate", "submit", "design", "--self-score", "8")

    tour.step("The agent says `core` is done; the evaluator finds the stub and blocks (exit 2)")
    tour.meridian("gate", "start", "core", "--estimate", "2")
    tour.write("src/__init__.py", "")
    tour.write("src/calc.py", STUB)
    tour.write("tests/__init__.py", "")
    tour.write("tests/test_calc.py", TESTS)
    tour.meridian("gate", "submit", "core", "--self-score", "9", expect=2)
    tour.meridian("why", "core")

    tour.step("The pre-commit hook refuses the stub too (git exits 1)")
    tour.git("add", "-A")
    tour.git("commit", "-q", "-m", "calc: core functions", expect=1)

    tour.step("The stub is replaced by real code; the gate passes and calibration is recorded")
    tour.write("src/calc.py", REAL)
    tour.meridian("gate", "submit", "core", "--self-score", "9")
    tour.git("add", "-A")
    tour.git("commit", "-q", "-m", "calc: core functions")
    out("(each pass wrote a correction: predicted vs actual hours. The tour passed both gates "
        "in seconds, so the corrections are amended with the hours the work really took)")
    tour.meridian("memory", "add", "correction", "--json", json.dumps(
        {"gate": "design", "amends": _gate_pass_correction(root, "design"), "actual_hours": 1.5}))
    tour.meridian("memory", "add", "correction", "--json", json.dumps(
        {"gate": "core", "amends": _gate_pass_correction(root, "core"), "actual_hours": 3,
         "root_cause": "divide was left as a stub",
         "next_action": "submit only after the tests run green"}))
    tour.meridian("memory", "add", "semantic", "--json",
                  '{"text": "agents leave error paths as stubs when the happy path passes", '
                  '"context": "core gates", "confidence": 0.8, "source_gates": ["core"]}')
    tour.meridian("calibration")

    tour.step("Agents measured: reference v1 vs v2 on the 25-task suite, offline")
    out("(the reference agents are offline stand-ins: they bill simulated tokens, as a model "
        "would, so the cost figures have something to show; nothing is spent)")
    suite = root / "suites" / "reference.yaml"
    suite.parent.mkdir(exist_ok=True)
    shutil.copyfile(_reference_suite(), suite)
    for agent in ("reference-v1", "reference-v2"):
        tour.meridian("eval", "run", "suites/reference.yaml", "--agent", agent, "--offline",
                      hide_progress=True)
    tour.meridian("eval", "compare", "latest", "latest~1")
    tour.meridian("baseline", "pin", "main", "latest")
    tour.meridian("eval", "compare", "latest~1", "baseline:main", "--fail-on-regression", expect=1)
    out("(exit 1: measured against the pinned baseline, v1 regresses 15 tasks; "
        "this is the check a CI job runs on every change to an agent)")

    tour.step("Everything above is on the state branch, and provably append-only")
    tour.git("log", "--oneline", "-5", "meridian/state")
    tour.meridian("log", "-n", "8")
    tour.meridian("verify")

    tour.step("The health report")
    tour.meridian("health")
    tour.meridian("health", "--html", "health.html")


def _use_offline_evaluator(root: Path) -> None:
    """Pin the heuristic evaluator: with `auto`, a user's ANTHROPIC_API_KEY would send the
    tour to the API (network, money, and verdicts the demo cannot predict)."""
    config = root / ".meridian" / "config.yaml"
    text = config.read_text(encoding="utf-8")
    pinned = re.sub(r"(?m)^(  kind:) auto$", r"\1 heuristic", text, count=1)
    if pinned == text:
        raise MeridianError(f"{config}: expected `kind: auto` under `evaluator` from `meridian init`")
    config.write_text(pinned, encoding="utf-8")


def _gate_pass_correction(root: Path, gate: str) -> str:
    """Id of the correction written when ``gate`` passed (what an amendment names)."""
    from meridian.ledger import Ledger
    from meridian.memory.calibration import effective_corrections

    corrections = effective_corrections(Ledger.open(root), gate=gate)
    if not corrections:
        raise MeridianError(f"demo: no correction was recorded when gate {gate} passed")
    return corrections[-1].id


def run_demo(keep: bool = False, directory: str | None = None) -> int:
    started = time.monotonic()
    previous = os.getcwd()
    root = Path(directory).resolve() if directory else Path(tempfile.mkdtemp(prefix="meridian-demo-"))
    if directory:
        if root.exists() and any(root.iterdir()):
            raise MeridianError(f"{root}: directory is not empty; the demo needs an empty one")
        root.mkdir(parents=True, exist_ok=True)
    print(f"Meridian demo in {root}")
    try:
        run_tour(root)
    finally:
        os.chdir(previous)
        if not keep and not directory:
            shutil.rmtree(root, ignore_errors=True)
    elapsed = time.monotonic() - started
    if keep or directory:
        print(f"\nDemo finished in {elapsed:.1f}s. The repository is kept at {root}; "
              f"open {root / 'health.html'} in a browser.")
    else:
        print(f"\nDemo finished in {elapsed:.1f}s; its repository was removed "
              "(`meridian demo --keep` keeps it, with health.html).")
    return 0
