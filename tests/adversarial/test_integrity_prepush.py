"""Attack: skip the pre-commit hook with ``git commit --no-verify`` and push the result.

Layer: the local pre-push hook (``hooks/prepush.py``), which reads the pushed commits
themselves, not the work tree; CI (``meridian ci``) is the authority behind it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.adversarial.conftest import CLEAN_MODULE, Proc, commit_all, pass_gate, run_git, write
from tests.conftest import git


def _remote_main(bare: Path) -> str:
    return git(bare, "for-each-ref", "--format=%(objectname)", "refs/heads/main").strip()


def test_a_no_verify_commit_of_a_locked_gates_file_is_refused_at_push(
        project: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    assert cli("hooks", "install").code == 0
    assert run_git(project, "push", "-q", "origin", "main").code == 0
    before = _remote_main(remote)
    # impl needs spec, which was never started: impl's files are locked.
    write(project, "src/area.py", CLEAN_MODULE)
    git(project, "add", "src/area.py")
    assert run_git(project, "commit", "-m", "sneak impl in").code != 0  # pre-commit refuses
    sneaked = run_git(project, "commit", "--no-verify", "-m", "sneak impl in")
    assert sneaked.code == 0
    commit = git(project, "rev-parse", "HEAD").strip()
    # The work tree is clean again afterwards: only the commit holds the file.
    write(project, "NOTES.txt", "unrelated\n")
    commit_all(project, "an unrelated commit on top")
    pushed = run_git(project, "push", "origin", "main")
    assert pushed.code != 0, pushed
    assert commit[:10] in pushed.err and "gate impl" in pushed.err and "src/area.py" in pushed.err
    assert _remote_main(remote) == before
    blocked = [line for line in cli("log", "--kind", "gate.blocked").out.splitlines()
               if "pre-push" in line]
    assert blocked, "the refusal is recorded"


def test_the_same_files_push_once_the_gate_opens(project: Path, remote: Path,
                                                 cli: Callable[..., Proc]) -> None:
    assert cli("hooks", "install").code == 0
    write(project, "src/area.py", CLEAN_MODULE)
    git(project, "add", "src/area.py")
    assert run_git(project, "commit", "--no-verify", "-m", "early impl").code == 0
    assert run_git(project, "push", "origin", "main").code != 0
    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    pushed = run_git(project, "push", "origin", "main")
    assert pushed.code == 0, pushed
