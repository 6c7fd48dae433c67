"""Attack: close the hook's output pipe so its refusal cannot be printed.

``git commit -m x 2>&1 | true`` runs the pre-commit hook with its stderr on a pipe whose
reader has exited: printing the refusal raised BrokenPipeError, which the command line
turned into exit 0 ("the reader went away") for every command, so git committed and
pushed what the hooks refused. Layer: the local git hooks (``meridian.cli``: a hook's
answer is its exit code, whatever its output can do).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.conftest import CLEAN_MODULE, Proc, run_git, write
from tests.conftest import git

CLOSED = {
    "stderr into a pipe nobody reads": "{git} 2>&1 | true",
    "stderr into a pipe read by head": "{git} 2>&1 | head -c 0",
    "both streams into a closed pipe": "({git}) >/dev/null 2>&1 | true; {git} 2>&1 >/dev/null | true",
}


def _sh(root: Path, line: str) -> int:
    # the status of the git command itself, not of the pipe's last program
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {line}; echo ${{PIPESTATUS[0]}}"],
                          cwd=root, capture_output=True, text=True, check=False, timeout=120)
    return int(proc.stdout.split()[-1])


def _head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("form", list(CLOSED), ids=list(CLOSED))
def test_a_refused_commit_stays_refused_when_its_message_cannot_be_written(
        project: Path, cli: Callable[..., Proc], form: str) -> None:
    assert cli("hooks", "install").code == 0
    before = _head(project)
    write(project, "src/area.py", CLEAN_MODULE)  # impl's file: locked behind spec
    git(project, "add", "src/area.py")
    assert run_git(project, "commit", "-q", "-m", "sneak").code != 0
    code = _sh(project, CLOSED[form].format(git="git commit -q -m sneak"))
    assert code != 0 and _head(project) == before


def test_a_refused_push_stays_refused_when_its_message_cannot_be_written(
        project: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    assert cli("hooks", "install").code == 0
    assert run_git(project, "push", "-q", "origin", "main").code == 0
    pushed = git(remote, "rev-parse", "refs/heads/main").strip()
    write(project, "src/area.py", CLEAN_MODULE)
    git(project, "add", "src/area.py")
    assert run_git(project, "commit", "-q", "--no-verify", "-m", "sneak").code == 0
    assert run_git(project, "push", "-q", "origin", "main").code != 0
    assert _sh(project, "git push -q origin main 2>&1 | true") != 0
    assert git(remote, "rev-parse", "refs/heads/main").strip() == pushed


def test_an_allowed_commit_is_still_allowed_with_its_output_closed(
        project: Path, cli: Callable[..., Proc]) -> None:
    assert cli("hooks", "install").code == 0
    write(project, "NOTES.md", "# notes\n")  # no gate's file
    git(project, "add", "NOTES.md")
    before = _head(project)
    assert _sh(project, "git commit -q -m notes 2>&1 | true") == 0
    assert _head(project) != before
