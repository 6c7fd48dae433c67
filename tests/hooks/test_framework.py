"""The pre-commit framework route: the real framework, a real commit, a real push."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import git
from tests.hooks.conftest import CLEAN_MODULE, PYTHON, STUB_MODULE, Proc, head, run_git, write

ROOT = Path(__file__).resolve().parents[2]

LOCAL_CONFIG = f"""\
repos:
  - repo: local
    hooks:
      - id: meridian-pre-commit
        name: meridian pre-commit
        entry: {PYTHON} -m meridian hook pre-commit
        language: system
        stages: [pre-commit]
        pass_filenames: false
        always_run: true
      - id: meridian-pre-push
        name: meridian pre-push
        entry: {PYTHON} -m meridian hook pre-push
        language: system
        stages: [pre-push]
        pass_filenames: false
        always_run: true
"""


@pytest.fixture
def tool_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tools the framework runs keep their caches in the test's directory, not $HOME:
    pip and virtualenv (XDG_CACHE_HOME), and rustup, which a build step may probe."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("VIRTUALENV_OVERRIDE_APP_DATA", str(tmp_path / "virtualenv-data"))
    monkeypatch.setenv("RUSTUP_HOME", str(tmp_path / "rustup"))
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "cargo"))


def pre_commit(cwd: Path, *args: str) -> Proc:
    return Proc(subprocess.run([PYTHON, "-m", "pre_commit", *args], cwd=cwd, capture_output=True,
                               text=True, check=False))


@pytest.fixture
def framework(project: Path, tool_caches: None) -> Path:
    """The project with Meridian run by the pre-commit framework (``repo: local``)."""
    write(project, ".pre-commit-config.yaml", LOCAL_CONFIG)
    git(project, "add", ".pre-commit-config.yaml")
    git(project, "commit", "-q", "-m", "pre-commit config")
    installed = pre_commit(project, "install", "--hook-type", "pre-commit", "--hook-type",
                           "pre-push")
    assert installed.code == 0, installed
    return project


def test_the_manifest_validates(tmp_path: Path) -> None:
    result = pre_commit(ROOT, "validate-manifest", ".pre-commit-hooks.yaml")
    assert result.code == 0, result
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "- id: meridian-pre-commit" in text and "- id: meridian-pre-push" in text
    assert text.count("minimum_pre_commit_version: \"3.2.0\"") == 2  # the stage names
    broken = tmp_path / "manifest.yaml"
    broken.write_text(text.replace("  entry: python -I -m meridian hook pre-push\n", ""))
    assert pre_commit(tmp_path, "validate-manifest", str(broken)).code == 1


def test_the_framework_runs_meridian_on_a_real_commit(framework: Path,
                                                      cli: Callable[..., Proc]) -> None:
    write(framework, "schema/shapes.py", STUB_MODULE)
    git(framework, "add", "schema/shapes.py")
    before = head(framework)
    refused = run_git(framework, "commit", "-q", "-m", "stub")
    assert refused.code == 1
    output = refused.out + refused.err
    assert "meridian pre-commit" in output and "Failed" in output
    assert "schema/shapes.py:2  [stub_code]" in output
    assert head(framework) == before
    write(framework, "schema/shapes.py", CLEAN_MODULE)
    git(framework, "add", "schema/shapes.py")
    allowed = run_git(framework, "commit", "-q", "-m", "schema")
    assert allowed.code == 0, allowed
    assert "meridian pre-commit" in allowed.out + allowed.err  # it ran, and passed


def test_the_framework_runs_meridian_on_a_real_push(framework: Path, tmp_path: Path,
                                                    cli: Callable[..., Proc]) -> None:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(framework, "remote", "add", "origin", str(bare))
    cli("gate", "start", "schema")
    write(framework, "schema/shapes.py", CLEAN_MODULE)
    git(framework, "add", "schema/shapes.py")
    git(framework, "commit", "-q", "-m", "schema")
    assert cli("gate", "submit", "schema").code == 0
    pushed = run_git(framework, "push", "-q", "origin", "main")
    assert pushed.code == 0, pushed
    write(framework, "schema/shapes.py", CLEAN_MODULE + "\nUNIT = 1.0\n")
    git(framework, "commit", "-q", "-a", "-m", "schema: unit")  # the gate is now stale
    refused = run_git(framework, "push", "-q", "origin", "main")
    assert refused.code == 1
    output = refused.out + refused.err
    assert "gate schema passed, but is stale: artifacts changed since the verdict" in output
    assert git(bare, "rev-parse", "main").strip() != head(framework)


def test_this_repository_as_a_pre_commit_repo(project: Path, tool_caches: None) -> None:
    """``repo: <this checkout>``: the framework builds Meridian into its own environment.

    That needs pip to reach Meridian's dependencies; here they come from the local wheel
    mirror pip is configured with, so no network is used. Without one the test skips.
    """
    write(project, "schema/shapes.py", STUB_MODULE)
    git(project, "add", "schema/shapes.py")
    env = {**os.environ, "PIP_NO_INPUT": "1"}
    proc = subprocess.run([PYTHON, "-m", "pre_commit", "try-repo", str(ROOT),
                           "meridian-pre-commit"], cwd=project, capture_output=True, text=True,
                          env=env, timeout=600, check=False)
    output = proc.stdout + proc.stderr
    if "An unexpected error has occurred" in output and "pip" in output:
        pytest.skip("pip could not build Meridian's environment offline here")
    assert proc.returncode == 1, output
    assert "schema/shapes.py:2  [stub_code]" in output
    git(project, "rm", "-q", "--cached", "schema/shapes.py")
    write(project, "notes.txt", "x\n")
    git(project, "add", "notes.txt")
    proc = subprocess.run([PYTHON, "-m", "pre_commit", "try-repo", str(ROOT),
                           "meridian-pre-commit"], cwd=project, capture_output=True, text=True,
                          env=env, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "meridian pre-commit" in proc.stdout and "Passed" in proc.stdout


def test_the_manifest_route_on_a_real_commit_and_push(project: Path, tmp_path: Path,
                                                     tool_caches: None,
                                                     cli: Callable[..., Proc]) -> None:
    """``repo: <this repository>`` at a commit, as a project would list Meridian: the
    framework reads ``.pre-commit-hooks.yaml``, builds Meridian into its own virtualenv,
    and runs both hook ids from git's own hooks on a real commit and a real push."""
    rev = git(ROOT, "rev-parse", "HEAD").strip()
    write(project, ".pre-commit-config.yaml",
          f"repos:\n  - repo: {ROOT}\n    rev: {rev}\n    hooks:\n"
          "      - id: meridian-pre-commit\n      - id: meridian-pre-push\n")
    git(project, "add", ".pre-commit-config.yaml")
    git(project, "commit", "-q", "-m", "pre-commit config")
    env = {**os.environ, "PIP_NO_INPUT": "1"}
    installed = subprocess.run([PYTHON, "-m", "pre_commit", "install-hooks"], cwd=project,
                               capture_output=True, text=True, env=env, timeout=600, check=False)
    if installed.returncode != 0 and "pip" in installed.stdout + installed.stderr:
        pytest.skip("pip could not build Meridian's environment offline here")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert pre_commit(project, "install", "--hook-type", "pre-commit",
                      "--hook-type", "pre-push").code == 0

    write(project, "schema/shapes.py", STUB_MODULE)
    git(project, "add", "schema/shapes.py")
    refused = run_git(project, "commit", "-q", "-m", "stub")
    assert refused.code == 1
    assert "schema/shapes.py:2  [stub_code]" in refused.out + refused.err

    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(project, "remote", "add", "origin", str(bare))
    cli("gate", "start", "schema")
    write(project, "schema/shapes.py", CLEAN_MODULE)
    git(project, "add", "schema/shapes.py")
    assert run_git(project, "commit", "-q", "-m", "schema").code == 0
    assert cli("gate", "submit", "schema").code == 0
    assert run_git(project, "push", "-q", "origin", "main").code == 0
    write(project, "schema/shapes.py", CLEAN_MODULE + "\nUNIT = 1.0\n")
    assert run_git(project, "commit", "-q", "-a", "-m", "schema: unit").code == 0
    pushed = run_git(project, "push", "-q", "origin", "main")
    assert pushed.code == 1
    assert "gate schema passed, but is stale: artifacts changed since the verdict" in \
        pushed.out + pushed.err
    assert git(bare, "rev-parse", "main").strip() != head(project)
