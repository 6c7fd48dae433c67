"""`meridian status` tells the truth about its source: a fresh clone whose remote has the
state branch, a clone behind its remote, a deleted state branch. Real clones of a real
bare remote, real `git fetch`, `meridian sync` to put things right."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from meridian.cli import main
from tests.conftest import git

GATES = """\
version: 1
gates:
  - id: design
    artifacts: ["DESIGN.md"]
  - id: build
    needs: [design]
    artifacts: ["src/**"]
"""


class Run:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def __repr__(self) -> str:
        return f"Run(code={self.code}, out={self.out!r}, err={self.err!r})"


@pytest.fixture
def meridian(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    def run(where: Path, *args: str) -> Run:
        monkeypatch.chdir(where)
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def origin(repo: Path, tmp_path: Path, meridian) -> tuple[Path, Path]:
    """A project with one gate started, pushed (code and state) to a bare remote."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    assert meridian(repo, "init", "--no-hooks").code == 0
    (repo / ".meridian" / "gates.yaml").write_text(GATES)
    (repo / "DESIGN.md").write_text("# Design\n\nOne command.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "setup")
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    assert meridian(repo, "gate", "start", "design").code == 0
    synced = meridian(repo, "sync")
    assert synced.code == 0, synced
    return repo, remote


def _clone(remote: Path, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(remote), str(where)], check=True)
    return where


def test_a_fresh_clone_is_told_the_remote_has_state_and_to_sync(
        origin: tuple[Path, Path], tmp_path: Path, meridian) -> None:
    _, remote = origin
    clone = _clone(remote, tmp_path / "clone")
    result = meridian(clone, "status")
    assert result.code == 2 and result.out == ""
    assert re.fullmatch(
        r"meridian: no state branch meridian/state in this repository, although "
        r"\.meridian/config\.yaml says it uses Meridian: the gate history is missing, not "
        r"empty, so the gates cannot be shown\. The remote origin has it "
        r"\(origin/meridian/state at [0-9a-f]{10}, as of the last fetch\): run `meridian "
        r"sync` to bring it here\n", result.err), result
    assert meridian(clone, "sync").code == 0
    shown = meridian(clone, "status")
    assert shown.code == 0
    assert shown.out.splitlines()[1].split()[:3] == ["1", "design", "in_progress"]
    assert "note:" not in shown.out


def test_a_clone_behind_its_remote_says_so_and_names_sync(
        origin: tuple[Path, Path], tmp_path: Path, meridian) -> None:
    repo, remote = origin
    clone = _clone(remote, tmp_path / "clone")
    assert meridian(clone, "sync").code == 0
    # The other clone moves on and shares it; this one fetches (git fetch, not sync).
    assert meridian(repo, "gate", "submit", "design").code == 0
    assert meridian(repo, "sync").code == 0
    git(clone, "fetch", "-q", "origin")
    shown = meridian(clone, "status")
    assert shown.code == 0
    assert shown.out.splitlines()[1].split()[:3] == ["1", "design", "in_progress"]
    behind = re.search(r"^note: origin/meridian/state has (\d+) state commit\(s\) this clone "
                       r"lacks \(as of the last fetch\), so gates may be further along than "
                       r"shown: run `meridian sync`$", shown.out, re.MULTILINE)
    assert behind is not None, shown
    as_json = json.loads(meridian(clone, "status", "--json").out)
    assert as_json["remote"]["behind"] == int(behind.group(1)) >= 2  # submitted, passed
    assert as_json["remote"]["ahead"] == 0
    assert meridian(clone, "sync").code == 0
    shown = meridian(clone, "status")
    assert shown.out.splitlines()[1].split()[:3] == ["1", "design", "passed"]
    assert "note:" not in shown.out
    assert json.loads(meridian(clone, "status", "--json").out)["remote"]["behind"] == 0


def test_a_deleted_state_branch_is_an_error_that_says_how_to_restore_it(
        repo: Path, meridian) -> None:
    assert meridian(repo, "init", "--no-hooks").code == 0
    (repo / ".meridian" / "gates.yaml").write_text(GATES)
    assert meridian(repo, "gate", "start", "design").code == 0
    assert meridian(repo, "status").code == 0  # the hooks' caches now know the tip
    tip = git(repo, "rev-parse", "meridian/state").strip()
    git(repo, "branch", "-q", "-D", "meridian/state")
    result = meridian(repo, "status")
    assert result.code == 2 and result.out == ""
    assert result.err == (
        "meridian: no state branch meridian/state in this repository, although "
        ".meridian/config.yaml says it uses Meridian: the gate history is missing, not empty, "
        "so the gates cannot be shown. Restore it: "
        f"`git branch meridian/state {tip[:12]}` restores the last state commit this clone "
        "saw (then `meridian verify`); or from another clone that has it: "
        "`git fetch CLONE meridian/state:meridian/state`; or to start a new, empty history "
        "on purpose: `meridian init`\n")
    assert meridian(repo, "status", "--json").code == 2
    # The command it names works.
    git(repo, "branch", "meridian/state", tip[:12])
    shown = meridian(repo, "status")
    assert shown.code == 0
    assert shown.out.splitlines()[1].split()[:3] == ["1", "design", "in_progress"]


def test_without_a_config_the_missing_branch_is_not_the_complaint(repo: Path, meridian) -> None:
    result = meridian(repo, "status")
    assert "no state branch" not in result.err  # nothing claims Meridian is in use here
