"""Attack (rt4, new F2): a committed file that an ignore rule names (`.gitignore`,
`.git/info/exclude`, `core.excludesFile`) was invisible to its gate: the listing of the
work tree dropped every path libgit2's rule-only `path_is_ignored` named, so the stub in
it was never scanned, never in the subject, and editing it never made the gate stale,
while the checks and the product import it.

Layer: the gate's artifact listing (`globs.worktree_files`, and the status fast path's
`plain_subject`): a tracked file is always listed, as git itself never ignores one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.conftest import Proc, pass_gate, write
from tests.conftest import git

STUB = '''\
def multiply(a: int, b: int) -> int:
    """Multiply."""
    raise NotImplementedError
'''


def _ignore(project: Path, how: str, pattern: str) -> None:
    if how == ".gitignore":
        write(project, ".gitignore", pattern + "\n")
        git(project, "add", ".gitignore")
    elif how == "info/exclude":
        exclude = project / ".git" / "info" / "exclude"
        exclude.parent.mkdir(exist_ok=True)
        exclude.write_text(pattern + "\n")
    else:
        (project / ".git" / "myexcludes").write_text(pattern + "\n")
        git(project, "config", "core.excludesFile", str(project / ".git" / "myexcludes"))


@pytest.mark.parametrize("how", [".gitignore", "info/exclude", "core.excludesFile"])
@pytest.mark.parametrize("pattern", ["src/extra.py", "extra.py", "src/hidden/"])
def test_a_tracked_file_under_an_ignore_rule_is_still_judged(
        project: Path, cli: Callable[..., Proc], how: str, pattern: str) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py")
    assert cli("gate", "start", "impl").code == 0
    relative = "src/hidden/extra.py" if pattern.endswith("/") else "src/extra.py"
    write(project, "src/module.py", '"""The module."""\n')
    write(project, relative, STUB)
    _ignore(project, how, pattern)
    git(project, "add", "-f", relative, "src/module.py")
    git(project, "commit", "-q", "-m", "calc: multiply; ignore editor files", "--no-verify")
    assert relative in git(project, "ls-files")

    submitted = cli("gate", "submit", "impl")
    assert submitted.code != 0 or "FAILED" in submitted.out, submitted
    assert relative in submitted.out + submitted.err, submitted


def test_editing_a_tracked_ignored_file_makes_its_passed_gate_stale(
        project: Path, cli: Callable[..., Proc]) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py")
    assert cli("gate", "start", "impl").code == 0
    write(project, "src/extra.py", "def double(x: int) -> int:\n    \"\"\"Twice.\"\"\"\n"
          "    return 2 * x\n")
    write(project, ".gitignore", "src/extra.py\n")
    git(project, "add", "-f", ".gitignore", "src/extra.py")
    git(project, "commit", "-q", "-m", "impl")
    assert cli("gate", "submit", "impl").code == 0
    assert cli("status", "--strict").code == 0
    write(project, "src/extra.py", STUB)
    git(project, "commit", "-q", "-am", "more", "--no-verify")
    for _ in range(2):  # the full path, then whatever view it left
        status = cli("status", "--strict")
        assert status.code == 1 and "impl" in status.err, status
