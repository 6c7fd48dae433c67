"""Redirecting git to another repository is a harness change: a ``commondir`` file in a
git dir (a main one too) or a linked worktree's ``.git`` file (``gitdir: PATH``) makes
git read other hooks and another config, so the project's pre-commit hook never runs.
Denied through the command ``init --claude`` writes, with the allow view warm."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.guard_support import base_env, bash, hook, make_project, run, tool


@pytest.fixture(scope="module")
def linked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Path]]:
    base = tmp_path_factory.mktemp("guard-gitdir")
    home = base / "home"
    root = make_project(base / "project", home)
    worktree = base / "linked"
    run(["git", "worktree", "add", "-q", "-b", "side", str(worktree)], root, base_env(home))
    yield root, worktree, home
    shutil.rmtree(base, ignore_errors=True)


def _warm(root: Path, home: Path) -> None:
    """An allowed call first: it writes the allow view the next call may decide from."""
    outcome = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / "notes.md"),
                                                  content="x"))
    assert (outcome.code, outcome.out) == (0, ""), outcome


def test_git_redirects_the_hooks_when_commondir_is_written(tmp_path: Path) -> None:
    """The premise: git honours a commondir file in a main repository's .git."""
    env = base_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    repo = tmp_path / "repo"
    run(["git", "init", "-q", str(repo)], tmp_path, env)
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 1\n")
    (hooks / "pre-commit").chmod(0o755)
    args = ["git", "-c", "user.name=a", "-c", "user.email=a@b.invalid", "commit", "-q",
            "--allow-empty", "-m", "x"]
    assert run(args, repo, env, check=False).returncode != 0
    run(["git", "clone", "-q", "--bare", str(repo), str(tmp_path / "other.git")], tmp_path, env)
    (repo / ".git" / "commondir").write_text(f"{tmp_path / 'other.git'}\n")
    assert run(args, repo, env, check=False).returncode == 0


@pytest.mark.parametrize("target", [".git", "../project/.git/worktrees/linked/commondir",
                                    "../project/.git/worktrees/linked/gitdir"])
def test_a_linked_worktree_cannot_point_git_elsewhere(linked: tuple[Path, Path, Path],
                                                      target: str) -> None:
    _, worktree, home = linked
    for payload in (tool("Write", file_path=str(worktree / target), content="gitdir: /tmp/x\n"),
                    bash(f"echo 'gitdir: /tmp/x' > {target}")):
        _warm(worktree, home)
        outcome = hook(worktree, home, "PreToolUse", payload, cwd=worktree)
        assert outcome.code == 0 and outcome.denied, outcome
        assert outcome.reason.startswith("Meridian") and "harness" in outcome.reason


@pytest.mark.parametrize("command", ["echo /tmp/x > .git/commondir",
                                     "printf %s /tmp/x > .git/worktrees/linked/commondir",
                                     "rm -rf .git/worktrees"])
def test_the_main_worktree_cannot_point_git_elsewhere(linked: tuple[Path, Path, Path],
                                                      command: str) -> None:
    root, _, home = linked
    _warm(root, home)
    outcome = hook(root, home, "PreToolUse", bash(command))
    assert outcome.code == 0 and outcome.denied, outcome


def test_ordinary_work_in_the_linked_worktree_passes(linked: tuple[Path, Path, Path]) -> None:
    _, worktree, home = linked
    for payload in (tool("Write", file_path=str(worktree / "notes.md"), content="x"),
                    bash("git status"), bash("echo x > notes.md")):
        outcome = hook(worktree, home, "PreToolUse", payload, cwd=worktree)
        assert (outcome.code, outcome.out, outcome.err) == (0, "", ""), outcome
