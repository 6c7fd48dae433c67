"""Fixtures for gate tests: a real git repository with Meridian's state branch."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.ledger import Ledger
from tests.conftest import git


@pytest.fixture
def project(repo_with_commit: Path) -> Path:
    """A committed repository whose state branch is initialised (as `meridian init` does)."""
    Ledger.open(repo_with_commit).emit("meridian.init", {"branch": "meridian/state"})
    return repo_with_commit


@pytest.fixture
def write_gates(project: Path) -> Callable[[str], Path]:
    def write(text: str) -> Path:
        path = project / ".meridian" / "gates.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    return write


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def commit_all(root: Path, message: str = "work") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


class Run:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def __repr__(self) -> str:
        return f"Run(code={self.code}, out={self.out!r}, err={self.err!r})"


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """Run ``meridian ARGS`` in-process; returns exit code, stdout and stderr."""

    def run(*args: str) -> Run:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def events(project: Path) -> Callable[..., list]:
    """The events of the state branch, optionally of some kinds only."""

    def read(*kinds: str) -> list:
        found = list(Ledger.open(project).records("events"))
        return [r for r in found if not kinds or r.kind in kinds]

    return read


class _Terminal:
    """Stands in for a terminal on standard input (a human at a keyboard)."""

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        raise AssertionError("the command should not read standard input in this test")


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Terminal())
