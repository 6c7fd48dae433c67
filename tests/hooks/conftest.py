"""Fixtures for hook tests: a Meridian project in a real repository, real git commands."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.ledger import Ledger
from tests.conftest import git

GATES = """\
version: 1
gates:
  - id: schema
    description: The data schema.
    acceptance: Every field is typed and documented.
    artifacts: ["schema/**"]
  - id: api
    needs: [schema]
    description: The HTTP API.
    artifacts: ["api/**"]
"""

CLEAN_MODULE = '''\
def area(width: float, height: float) -> float:
    """Area of a rectangle."""
    if width < 0 or height < 0:
        raise ValueError("sides must be non-negative")
    return width * height
'''

STUB_MODULE = '''\
def area(width: float, height: float) -> float:
    raise NotImplementedError
'''

HOLLOW_TEST = '''\
from schema.shapes import area


def test_area():
    area(2, 3)
'''


class Proc:
    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.code, self.out, self.err = proc.returncode, proc.stdout, proc.stderr

    def __repr__(self) -> str:
        return f"Proc(code={self.code}, out={self.out!r}, err={self.err!r})"


def run_git(cwd: Path, *args: str, input: str | None = None) -> Proc:
    """Real git; returns the outcome instead of raising (hooks may refuse)."""
    return Proc(subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                               input=input, check=False))


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Proc]:
    """``meridian ARGS`` in-process: exit code, stdout, stderr."""

    def run(*args: str) -> Proc:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Proc(subprocess.CompletedProcess(list(args), code, captured.out, captured.err))

    return run


@pytest.fixture
def project(repo_with_commit: Path, cli: Callable[..., Proc]) -> Path:
    """A committed Meridian project: config, rules, gates (api needs schema), state branch."""
    assert cli("init", "--no-hooks").code == 0
    write(repo_with_commit, ".meridian/gates.yaml", GATES)
    git(repo_with_commit, "add", ".meridian")
    git(repo_with_commit, "commit", "-q", "-m", "meridian setup")
    return repo_with_commit


@pytest.fixture
def hooked(project: Path, cli: Callable[..., Proc]) -> Path:
    """The project with Meridian's git hooks installed."""
    assert cli("hooks", "install").code == 0
    return project


def blocked_events(root: Path, source: str | None = None) -> list:
    """The recorded blocks, once what a deny decided from the Claude view spooled is
    recorded (as every Meridian command does before it reads: ``block_spool``)."""
    from meridian.hooks.block_spool import drain_here

    drain_here(root)
    found = [r for r in Ledger.open(root).records("events") if r.kind == "gate.blocked"]
    return [r for r in found if source is None or r.data.get("source") == source]


PYTHON = sys.executable
