"""The pre-commit hook judges the staged hunks only, through real ``git commit``."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git
from tests.hooks.conftest import blocked_events, head, run_git, write

# Committed before the hooks existed: a null object and an abstract-looking raise.
LEGACY = '''\
"""Shapes."""


class Shape:
    def area(self):
        raise NotImplementedError


def perimeter(width, height):
    return 2 * (width + height)
'''


def _seed(root: Path) -> None:
    write(root, "schema/shapes.py", LEGACY)
    git(root, "add", "schema/shapes.py")
    git(root, "commit", "-q", "--no-verify", "-m", "legacy")


def test_a_docstring_edit_next_to_pre_existing_findings_is_allowed(hooked: Path) -> None:
    _seed(hooked)
    write(hooked, "schema/shapes.py", LEGACY.replace('"""Shapes."""', '"""Plane shapes."""'))
    git(hooked, "add", "schema/shapes.py")
    result = run_git(hooked, "commit", "-q", "-m", "docs")
    assert result.code == 0, result
    assert blocked_events(hooked) == []


def test_a_stub_in_a_staged_hunk_is_refused(hooked: Path) -> None:
    _seed(hooked)
    write(hooked, "schema/shapes.py", LEGACY.replace(
        "    return 2 * (width + height)", "    pass"))
    git(hooked, "add", "schema/shapes.py")
    before = head(hooked)
    result = run_git(hooked, "commit", "-q", "-m", "oops")
    assert result.code == 1
    assert "schema/shapes.py:9  [stub_code] function `perimeter` is a stub" in result.err
    assert "schema/shapes.py:6" not in result.err  # the untouched raise is not this commit's
    assert head(hooked) == before


def test_only_the_staged_hunk_counts_not_the_work_tree(hooked: Path) -> None:
    _seed(hooked)
    write(hooked, "schema/shapes.py", LEGACY + "\n\ndef volume(x):\n    pass\n")
    git(hooked, "add", "schema/shapes.py")
    assert run_git(hooked, "commit", "-q", "-m", "stub").code == 1
    # An allow marker with a reason, staged: the commit goes through.
    write(hooked, "schema/shapes.py", LEGACY + "\n\ndef volume(x):  # meridian: allow "
          "stub_code -- filled in by the 3-D gate\n    pass\n")
    git(hooked, "add", "schema/shapes.py")
    assert run_git(hooked, "commit", "-q", "-m", "stub, declared").code == 0


def test_a_file_excluded_by_its_gate_is_not_scanned(hooked: Path) -> None:
    gates = (hooked / ".meridian/gates.yaml").read_text().replace(
        '    artifacts: ["schema/**"]\n', '    artifacts: ["schema/**"]\n'
        '    exclude: ["schema/vendor/**"]\n', 1)
    write(hooked, ".meridian/gates.yaml", gates)
    write(hooked, "schema/vendor/lib.py", "def moved():\n    pass\n")
    git(hooked, "add", "-A")
    result = run_git(hooked, "commit", "-q", "-m", "vendor a lib")
    assert result.code == 0, result


def test_the_first_commit_of_a_file_judges_all_of_it(hooked: Path) -> None:
    write(hooked, "schema/shapes.py", LEGACY)
    git(hooked, "add", "schema/shapes.py")
    result = run_git(hooked, "commit", "-q", "-m", "new file")
    assert result.code == 1
    assert "schema/shapes.py:6  [stub_code]" in result.err


def test_a_renamed_file_is_judged_against_its_old_self(hooked: Path) -> None:
    # `git mv` of a mature file: its pre-existing findings are not this commit's (the
    # whole file used to count as new and the rename was refused).
    _seed(hooked)
    git(hooked, "mv", "schema/shapes.py", "schema/geometry.py")
    result = run_git(hooked, "commit", "-q", "-m", "rename")
    assert result.code == 0, result
    # A stub planted while moving the file is still the commit's own.
    git(hooked, "mv", "schema/geometry.py", "schema/plane.py")
    write(hooked, "schema/plane.py", LEGACY.replace("    return 2 * (width + height)",
                                                    "    pass"))
    git(hooked, "add", "schema/plane.py")
    before = head(hooked)
    result = run_git(hooked, "commit", "-q", "-m", "move and stub")
    assert result.code == 1
    assert "schema/plane.py:9  [stub_code] function `perimeter` is a stub" in result.err
    assert "schema/plane.py:6" not in result.err
    assert head(hooked) == before


def test_block_pre_existing_makes_the_hook_judge_the_whole_staged_file(hooked: Path) -> None:
    gates = (hooked / ".meridian/gates.yaml").read_text().replace(
        '    artifacts: ["schema/**"]\n', '    artifacts: ["schema/**"]\n'
        '    evaluate: {block_pre_existing: true}\n', 1)
    write(hooked, ".meridian/gates.yaml", gates)
    git(hooked, "add", ".meridian/gates.yaml")
    git(hooked, "commit", "-q", "--no-verify", "-m", "a clean-tree gate")
    _seed(hooked)
    write(hooked, "schema/shapes.py", LEGACY.replace('"""Shapes."""', '"""Plane shapes."""'))
    git(hooked, "add", "schema/shapes.py")
    before = head(hooked)
    result = run_git(hooked, "commit", "-q", "-m", "docs")
    assert result.code == 1, result
    assert "schema/shapes.py:6  [stub_code]" in result.err  # untouched, and still refused
    assert head(hooked) == before
    # Switched back off (the default): the same commit goes through.
    write(hooked, ".meridian/gates.yaml", gates.replace(
        "    evaluate: {block_pre_existing: true}\n", "    evaluate: {block_pre_existing: false}\n"))
    git(hooked, "add", ".meridian/gates.yaml")
    git(hooked, "commit", "-q", "--no-verify", "-m", "the default again", "--",
        ".meridian/gates.yaml")
    git(hooked, "add", "schema/shapes.py")
    assert run_git(hooked, "commit", "-q", "-m", "docs").code == 0
