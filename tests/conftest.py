"""Fixtures shared by every test.

Each test gets a fresh HOME holding only a .gitconfig with a test identity; any file
a test leaves in HOME fails it (Meridian must never write outside the repository).
Git and the pre-commit framework are pointed at temporary locations.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

GITCONFIG = """\
[user]
\tname = Meridian Test
\temail = test@meridian.invalid
[init]
\tdefaultBranch = main
[commit]
\tgpgsign = false
"""


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    (home / ".gitconfig").write_text(GITCONFIG)
    for key in list(os.environ):
        if key.startswith("GIT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path_factory.mktemp("pre-commit-cache")))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    level = pygit2.enums.ConfigLevel.GLOBAL
    previous = pygit2.settings.search_path[level]
    pygit2.settings.search_path[level] = str(home)
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    yield home
    pygit2.settings.search_path[level] = previous
    after = sorted(p.relative_to(home) for p in home.rglob("*"))
    assert after == before, f"test wrote into $HOME: {sorted(set(after) - set(before))}"


def git(cwd: Path, *args: str) -> str:
    """Run real git in ``cwd`` and return stdout (raises on failure)."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh git repository with no commits; the test's current directory."""
    path = tmp_path / "project"
    path.mkdir()
    git(path, "init", "-q")
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def repo_with_commit(repo: Path) -> Path:
    (repo / "README.md").write_text("# sample project\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "initial")
    return repo
