"""`meridian hooks snippet` through the real pre-commit framework, with no virtual
environment active: no `meridian` on PATH when git runs the hooks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from meridian.hooks import snippet
from tests.conftest import git
from tests.hooks.conftest import CLEAN_MODULE, STUB_MODULE, Proc, head, write
from tests.packaging.conftest import Installed


def bare_path() -> str:
    """git, sh and coreutils, and no directory holding a `meridian` executable."""
    git_path = shutil.which("git")
    assert git_path is not None
    dirs = [os.path.dirname(git_path), "/usr/bin", "/bin"]
    return os.pathsep.join(d for d in dict.fromkeys(dirs) if not (Path(d) / "meridian").exists())


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> Proc:
    return Proc(subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                               timeout=900, check=False))


@pytest.fixture
def tool_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("VIRTUALENV_OVERRIDE_APP_DATA", str(tmp_path / "virtualenv-data"))


def _framework(project: Path, config: str, env: dict[str, str]) -> None:
    write(project, ".pre-commit-config.yaml", config)
    git(project, "add", ".pre-commit-config.yaml")
    git(project, "commit", "-q", "-m", "pre-commit config")
    installed = run([sys.executable, "-m", "pre_commit", "install", "--hook-type", "pre-commit",
                     "--hook-type", "pre-push"], project, env)
    assert installed.code == 0, installed


def _refuses_a_stub_then_allows_clean_code(project: Path, env: dict[str, str]) -> None:
    write(project, "schema/shapes.py", STUB_MODULE)
    git(project, "add", "schema/shapes.py")
    before = head(project)
    refused = run(["git", "commit", "-q", "-m", "stub"], project, env)
    assert refused.code == 1, refused
    assert "schema/shapes.py:2  [stub_code]" in refused.out + refused.err
    assert head(project) == before
    write(project, "schema/shapes.py", CLEAN_MODULE)
    git(project, "add", "schema/shapes.py")
    allowed = run(["git", "commit", "-q", "-m", "schema"], project, env)
    assert allowed.code == 0, allowed
    assert "meridian pre-commit" in allowed.out + allowed.err


def test_the_default_snippet_is_valid_config_naming_the_distribution() -> None:
    config = yaml.safe_load(snippet.render())
    hooks = config["repos"][0]["hooks"]
    assert config["repos"][0]["repo"] == "local"
    assert [h["id"] for h in hooks] == ["meridian-pre-commit", "meridian-pre-push"]
    for hook in hooks:
        assert hook["language"] == "python"
        assert hook["additional_dependencies"] == ["meridian-gates==0.1.0"]


def test_the_default_snippet_works_through_the_framework_with_no_venv_active(
        project: Path, installed_wheel: Installed, tool_caches: None,
        cli: Callable[..., Proc]) -> None:
    # The framework builds its own environment and pip-installs meridian-gates there;
    # the wheel comes from the session's build (meridian-gates is not on an index here),
    # its dependencies from the package index pip is configured with.
    env = {**os.environ, "PATH": bare_path(), "PIP_NO_INPUT": "1",
           "PIP_FIND_LINKS": " ".join(filter(None, [str(installed_wheel.wheel.parent),
                                                    os.environ.get("PIP_FIND_LINKS")]))}
    env.pop("VIRTUAL_ENV", None)
    out = cli("hooks", "snippet").out
    _framework(project, out, env)
    _refuses_a_stub_then_allows_clean_code(project, env)


def test_the_python_snippet_works_through_the_framework_with_no_venv_active(
        project: Path, tool_caches: None, cli: Callable[..., Proc]) -> None:
    env = {**os.environ, "PATH": bare_path()}
    env.pop("VIRTUAL_ENV", None)
    out = cli("hooks", "snippet", "--python", sys.executable).out
    assert f"entry: {sys.executable} -I -m meridian hook pre-commit" in out  # isolated
    _framework(project, out, env)
    _refuses_a_stub_then_allows_clean_code(project, env)


def test_a_relative_or_missing_interpreter_is_refused(cli: Callable[..., Proc],
                                                      tmp_path: Path) -> None:
    relative = cli("hooks", "snippet", "--python", "python3")
    assert relative.code == 2
    assert relative.err == ("meridian: --python python3: expected an absolute path to a "
                            "Python interpreter (the hook runs without PATH lookups)\n")
    missing = cli("hooks", "snippet", "--python", str(tmp_path / "nope"))
    assert missing.code == 2 and "no executable file there" in missing.err
