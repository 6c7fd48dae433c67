"""Fixtures for the adversarial suite: a Meridian project in a real repository, attacked
the way an agent with a shell would, with real git commands and a local bare remote."""

from __future__ import annotations

import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.cli import main
from tests.conftest import git

# Three gates in a line, each owning its own files, none needing a check.
CHAIN = """\
version: 1
gates:
  - id: spec
    description: The specification.
    acceptance: Says what the code does.
    artifacts: ["spec/**"]
  - id: impl
    needs: [spec]
    description: The implementation.
    acceptance: Implements the spec.
    artifacts: ["src/**"]
  - id: release
    needs: [impl]
    description: The release notes.
    acceptance: Describe the release.
    artifacts: ["release/**"]
"""

CLEAN_MODULE = '''\
def area(width: float, height: float) -> float:
    """Area of a rectangle."""
    if width < 0 or height < 0:
        raise ValueError("sides must be non-negative")
    return width * height
'''


class Proc:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def __repr__(self) -> str:
        return f"Proc(code={self.code}, out={self.out!r}, err={self.err!r})"


def run_git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Proc:
    """Real git; the outcome instead of an exception (hooks may refuse)."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=False, env=env)
    return Proc(proc.returncode, proc.stdout, proc.stderr)


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def commit_all(root: Path, message: str = "work") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Proc]:
    """``meridian ARGS`` in-process: exit code, stdout, stderr."""

    def run(*args: str) -> Proc:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Proc(code, captured.out, captured.err)

    return run


@pytest.fixture
def project(repo_with_commit: Path, cli: Callable[..., Proc]) -> Path:
    """An initialised project (no hooks) with the spec -> impl -> release chain committed."""
    assert cli("init", "--no-hooks").code == 0
    write(repo_with_commit, ".meridian/gates.yaml", CHAIN)
    commit_all(repo_with_commit, "meridian setup")
    return repo_with_commit


@pytest.fixture
def remote(project: Path, tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(project, "remote", "add", "origin", str(bare))
    return bare


def pass_gate(cli: Callable[..., Proc], root: Path, gate: str, relative: str,
              text: str = CLEAN_MODULE) -> None:
    """Start ``gate``, write its artifact, commit and submit it: a genuine pass."""
    assert cli("gate", "start", gate).code == 0
    write(root, relative, text)
    commit_all(root, f"{gate} work")
    result = cli("gate", "submit", gate)
    assert result.code == 0, result


def all_history(root: Path) -> str:
    """Everything git holds for every ref: ``git log -p --all`` plus commit messages."""
    return git(root, "log", "-p", "--all", "--format=%H%n%B")
