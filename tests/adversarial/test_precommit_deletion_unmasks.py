"""Attack (rt3 F10): the staged scan judged only the lines a commit adds, so a commit that
only deletes lines could remove a stub's excuse (the subclass overriding a base stub, in
the same file or a file of its own) and commit the bare stub; `--no-verify` and the push
went through as well.

Layer: pre-commit (`hook:staged_heuristics`) and pre-push (the same scan over what the push
adds). A finding the change's version of the scanned files holds and the version before it
does not is new wherever its line is, matched by check, file, enclosing def/class names
and line text (not line numbers); the files a deleted or changed Python file imports are
scanned with it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.conftest import Proc, pass_gate, write
from tests.conftest import git
from tests.hooks.conftest import run_git

BASE = '''\
class Shape:
    """A shape."""

    def area(self) -> float:
        """The area."""
        raise NotImplementedError
'''
SUBCLASS = '''

class Square(Shape):
    """A square."""

    def __init__(self, side: float) -> None:
        self.side = side

    def area(self) -> float:
        """The area."""
        return self.side * self.side
'''
SQUARE_FILE = "from src.shapes import Shape\n\n" + SUBCLASS.lstrip("\n")
HELPER = '''

def perimeter(side: float) -> float:
    """Four sides."""
    return 4 * side
'''


@pytest.fixture
def working(project: Path, remote: Path, cli: Callable[..., Proc]) -> Path:
    """spec passed, impl in progress, hooks installed, main and the state on the remote."""
    assert cli("hooks", "install").code == 0
    pass_gate(cli, project, "spec", "spec/spec.py")
    assert cli("gate", "start", "impl").code == 0
    assert run_git(project, "push", "-q", "origin", "main").code == 0
    assert cli("sync").code == 0
    return project


def _commit(project: Path, message: str, *extra: str) -> Proc:
    git(project, "add", "-A", "src")
    return run_git(project, "commit", "-q", *extra, "-m", message)


def _refused_commit(project: Path, where: str) -> None:
    result = _commit(project, "drop the square")
    assert result.code == 1, result
    assert "high-severity finding(s) in staged files of gate impl" in result.err, result.err
    assert where in result.err, result.err


def _refused_push(project: Path, where: str) -> None:
    assert _commit(project, "drop the square", "--no-verify").code == 0
    result = run_git(project, "push", "-q", "origin", "main")
    assert result.code == 1, result
    assert "high-severity finding(s) in the files pushed by main" in result.err, result.err
    assert where in result.err, result.err


def _same_file(project: Path) -> None:
    # The helper keeps the deletion away from the stub's own lines (a deletion right
    # after them counts as touching them).
    write(project, "src/shapes.py", BASE + HELPER + SUBCLASS)
    assert _commit(project, "shapes").code == 0
    write(project, "src/shapes.py", BASE + HELPER)


def _other_file(project: Path) -> None:
    write(project, "src/shapes.py", BASE)
    write(project, "src/square.py", SQUARE_FILE)
    assert _commit(project, "shapes").code == 0
    (project / "src/square.py").unlink()


ATTACKS = {"subclass-deleted-in-the-same-file": _same_file,
           "subclass-file-deleted": _other_file}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_deletion_that_unmasks_a_stub_is_refused_at_commit(working: Path, attack: str) -> None:
    ATTACKS[attack](working)
    _refused_commit(working, "src/shapes.py:6")
    assert "class Square" in git(working, "show", "HEAD:src/shapes.py") \
        or "src/square.py" in git(working, "ls-tree", "-r", "--name-only", "HEAD")


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_same_deletion_committed_with_no_verify_is_refused_at_push(
        working: Path, remote: Path, attack: str) -> None:
    ATTACKS[attack](working)
    assert run_git(working, "push", "-q", "origin", "main").code == 0  # excused: pushed
    _refused_push(working, "src/shapes.py:6")
    assert "class Square" in git(remote, "show", "main:src/shapes.py") \
        or "src/square.py" in git(remote, "ls-tree", "-r", "--name-only", "main")


def test_a_deletion_that_removes_the_stub_with_its_excuse_is_allowed(working: Path) -> None:
    write(working, "src/shapes.py", BASE + SUBCLASS)
    assert _commit(working, "shapes").code == 0
    write(working, "src/shapes.py", 'class Shape:\n    """A shape."""\n')
    result = _commit(working, "drop area")
    assert result.code == 0, result
    assert run_git(working, "push", "-q", "origin", "main").code == 0


def test_a_deleted_file_whose_importers_keep_no_excused_stub_is_allowed(working: Path) -> None:
    write(working, "src/shapes.py", BASE + SUBCLASS)
    write(working, "src/helpers.py", "from src.shapes import Shape\n" + HELPER)
    assert _commit(working, "shapes").code == 0
    (working / "src/helpers.py").unlink()
    result = _commit(working, "drop helpers")
    assert result.code == 0, result
    assert run_git(working, "push", "-q", "origin", "main").code == 0


def test_a_pre_existing_stub_stays_pre_existing_when_a_deletion_moves_its_line(
        working: Path) -> None:
    """A bare stub already committed (past the hook) is the gate's business: a commit that
    deletes lines above it moves it and still does not count it as its own."""
    write(working, "src/shapes.py", HELPER.lstrip("\n") + "\n\n" + BASE)
    assert _commit(working, "shapes", "--no-verify").code == 0
    assert run_git(working, "push", "-q", "--no-verify", "origin", "main").code == 0
    write(working, "src/shapes.py", BASE)  # the helper above it goes: the stub moves up
    result = _commit(working, "drop perimeter")
    assert result.code == 0, result
    assert run_git(working, "push", "-q", "origin", "main").code == 0


def test_a_deletion_of_an_unrelated_line_keeps_an_excused_stub_excused(working: Path) -> None:
    write(working, "src/shapes.py", HELPER.lstrip("\n") + "\n\n" + BASE + SUBCLASS)
    write(working, "src/square.py", SQUARE_FILE)
    assert _commit(working, "shapes").code == 0
    assert run_git(working, "push", "-q", "origin", "main").code == 0
    write(working, "src/shapes.py", BASE + SUBCLASS)
    write(working, "src/square.py", SQUARE_FILE.replace('    """A square."""\n', ""))
    result = _commit(working, "tidy")
    assert result.code == 0, result
    assert run_git(working, "push", "-q", "origin", "main").code == 0
