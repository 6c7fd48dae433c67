"""The wheel as users get it: built once per test session from a clone made without
symlinks, installed into a fresh virtual environment outside the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.hooks.conftest import cli, project  # noqa: F401 - fixtures used here too

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Installed:
    wheel: Path
    clone: Path
    venv: Path
    env: dict[str, str]

    @property
    def meridian(self) -> Path:
        return self.venv / "bin" / "meridian"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def names(self) -> list[str]:
        with zipfile.ZipFile(self.wheel) as archive:
            return archive.namelist()

    def run(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.meridian), *args], cwd=cwd, env=self.env,
                              capture_output=True, text=True, timeout=300, check=False)


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


@pytest.fixture(scope="session")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Clone this repository with ``core.symlinks=false`` (as on Windows), build the wheel
    from the clone, and install it into a fresh virtual environment.

    The wheel is installed with ``--no-deps``; its dependencies are taken from the test
    environment through a ``.pth`` line, so the test needs no network and stays fast (the
    lowest-versions step in ``.ci/run`` installs a wheel with real dependency resolution).
    That environment holds no ``meridian`` package of its own (the editable install points
    at the source tree, which the line does not add), so ``meridian`` can only be the wheel's.
    """
    base = tmp_path_factory.mktemp("wheel")
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Meridian Test\n\temail = test@meridian.invalid\n"
                                      "[init]\n\tdefaultBranch = main\n")
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("GIT_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), GIT_CONFIG_NOSYSTEM="1",
               PIP_NO_CACHE_DIR="1", PIP_NO_INPUT="1")
    clone = base / "clone"
    _run(["git", "clone", "-q", "-c", "core.symlinks=false", str(ROOT), str(clone)], base, env)
    dist = base / "dist"
    # No build isolation: hatchling comes from the test extra, so no download is needed.
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "-w", str(dist), str(clone)], base, env)
    wheels = sorted(dist.glob("*.whl"))
    assert len(wheels) == 1, wheels
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base, env)
    _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
          "--no-deps", str(wheels[0])], base, env)
    site = Path(_run([str(venv / "bin" / "python"), "-c",
                      "import sysconfig; print(sysconfig.get_paths()['purelib'])"], base, env).strip())
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "zz_test_dependencies.pth").write_text("".join(f"{path}\n" for path in sorted(deps)))
    run_env = {**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"}
    return Installed(wheels[0], clone, venv, run_env)
