"""Attack: reach the harness, or a locked gate's files, under another spelling of case.

Layer: the Claude Code PreToolUse hook. On a case-insensitive file system (macOS and
Windows volumes by default) ``.MERIDIAN/gates.yaml`` is ``.meridian/gates.yaml`` and
``.Claude/settings.json`` is the settings file Claude Code reads, so the hook compares
such paths case-folded there; on a case-sensitive one they are other files and stay
allowed. The file system is probed per repository (``claude.case_insensitive``: the
``.git`` entry looked up as ``.GIT``); this Linux test machine is case-sensitive, so the
insensitive case is simulated with the test-only ``MERIDIAN_TEST_CASE_INSENSITIVE=1``
(which can only add denials), and the probe itself with a ``.GIT`` symlink.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from meridian.hooks.claude import case_insensitive
from tests.adversarial.guard_support import bash, claude_env, hook, make_project, tool

SPELLINGS = [".MERIDIAN/gates.yaml", ".Meridian/config.yaml", ".Claude/settings.json",
             ".CLAUDE/settings.local.json", ".GIT/hooks/pre-commit", ".Git/config",
             ".git/HOOKS/pre-commit", "API/app.py", "Api/new.py"]


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("case")
    home = base / "home"
    root = make_project(base / "project", home)
    (root / "api").mkdir()  # the locked gate's folder exists (empty)
    return root, home


def _env(root: Path, home: Path, folds: bool) -> dict[str, str]:
    return claude_env(root, home, extra={"MERIDIAN_TEST_CASE_INSENSITIVE": "1"} if folds else {})


@pytest.mark.parametrize("path", SPELLINGS)
def test_other_case_is_the_protected_path_on_a_case_insensitive_file_system(
        guarded: tuple[Path, Path], path: str) -> None:
    root, home = guarded
    env = _env(root, home, folds=True)
    write = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / path),
                                                content="x\n"), env=env)
    assert write.code == 0 and write.denied, write
    shell = hook(root, home, "PreToolUse", bash(f"printf x > {path}"), env=env)
    assert shell.code == 0 and shell.denied, shell


@pytest.mark.parametrize("path", SPELLINGS)
def test_other_case_is_another_file_on_a_case_sensitive_file_system(
        guarded: tuple[Path, Path], path: str) -> None:
    root, home = guarded
    outcome = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / path),
                                                  content="x\n"), env=_env(root, home, False))
    assert (outcome.code, outcome.out, outcome.err) == (0, "", ""), outcome


def test_ordinary_files_in_other_case_stay_allowed_when_case_folds(
        guarded: tuple[Path, Path]) -> None:
    root, home = guarded
    env = _env(root, home, folds=True)
    for path in ("README.MD", "Schema/Shapes.py", "docs/Guide.md", ".claude/commands/x.md"):
        outcome = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / path),
                                                      content="x\n"), env=env)
        assert (outcome.code, outcome.out) == (0, ""), (path, outcome)


def test_the_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MERIDIAN_TEST_CASE_INSENSITIVE", raising=False)
    (tmp_path / ".git").mkdir()
    assert case_insensitive(tmp_path) is False  # this machine: .GIT is not .git
    (tmp_path / ".GIT").symlink_to(".git")  # what a case-insensitive lookup finds
    assert case_insensitive(tmp_path) is True
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / ".GIT").mkdir()  # a distinct directory: case-sensitive
    assert case_insensitive(other) is False


NFC_GATES = """\
version: 1
gates:
  - id: schema
    description: The data schema.
    artifacts: ["schema/**"]
  - id: menu
    needs: [schema]
    description: The café menu.
    artifacts: ["café/**"]
"""


@pytest.mark.parametrize("exists", [True, False])
def test_another_unicode_form_is_the_locked_path_when_the_volume_folds(
        tmp_path: Path, exists: bool) -> None:
    """macOS volumes ignore the normalisation form as they ignore case, and git there
    stores names precomposed: ``cafe\\u0301/menu.md`` (NFD) is ``café/menu.md`` (NFC),
    a file of the locked gate menu, whether the folder exists yet or not."""
    import subprocess
    import sys

    from tests.adversarial.guard_support import base_env, run

    home = tmp_path / "home"
    root = make_project(tmp_path / "project", home)
    (root / ".meridian" / "gates.yaml").write_text(NFC_GATES, encoding="utf-8")
    env = base_env(home)
    run(["git", "add", "-A"], root, env)
    run(["git", "commit", "-q", "-m", "menu gate"], root, env)
    subprocess.run([sys.executable, "-P", "-m", "meridian", "status"], cwd=root, env=env,
                   capture_output=True, check=False, timeout=60)
    if exists:
        (root / "caf\u00e9").mkdir()
    folded = _env(root, home, folds=True)
    # (another case of a folder not there yet is a new folder git records in that case)
    spellings = ["cafe\u0301/menu.md", "caf\u00e9/menu.md"] + (["CAFE\u0301/menu.md"] if exists
                                                               else [])
    for spelling in spellings:
        write = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / spelling),
                                                    content="x\n"), env=folded)
        assert write.code == 0 and write.denied and "menu" in write.reason, (spelling, write)
        shell = hook(root, home, "PreToolUse", bash(f"printf x > '{spelling}'"), env=folded)
        assert shell.code == 0 and shell.denied, (spelling, shell)
    outcome = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / "notes.md"),
                                                  content="x\n"), env=folded)
    assert (outcome.code, outcome.out) == (0, ""), outcome


NEW_SPELLINGS = ["API/new.py", "Api/sub/new.py", "api./new.py", "api /new.py", "API. /new.py",
                 ".meridian./gates.yaml", ".claude./settings.json", ".git./hooks/pre-commit",
                 ".MERIDIAN /rules.yaml"]


@pytest.fixture(scope="module")
def no_api_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("case-new")
    home = base / "home"
    return make_project(base / "project", home), home  # no api/ folder yet


@pytest.mark.parametrize("path", NEW_SPELLINGS)
def test_a_new_folder_in_another_case_or_with_a_windows_trailing_dot_is_the_locked_one(
        no_api_folder: tuple[Path, Path], path: str) -> None:
    """On a case-insensitive volume the folder ``API`` made now *is* the gate's ``api/``
    for every later write (and git records it under the case it knows); Windows drops a
    name's trailing dots and spaces, so ``api./x`` is ``api/x`` there."""
    root, home = no_api_folder
    env = _env(root, home, folds=True)
    write = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / path),
                                                content="x\n"), env=env)
    assert write.code == 0 and write.denied, (path, write)
    shell = hook(root, home, "PreToolUse", bash(f"printf x > '{path}'"), env=env)
    assert shell.code == 0 and shell.denied, (path, shell)


def test_core_ignorecase_folds_case_without_the_probe(tmp_path: Path) -> None:
    """``core.ignorecase`` (git sets it on a case-insensitive volume; git then records
    ``API/x`` under the ``api/`` it knows) folds case even where the probe says the file
    system is case-sensitive; without it the other spelling is another file."""
    from tests.adversarial.guard_support import base_env, run

    home = tmp_path / "home"
    root = make_project(tmp_path / "project", home)
    (root / "api").mkdir()
    env = _env(root, home, folds=False)
    run(["git", "config", "core.ignorecase", "true"], root, base_env(home))
    for command in ("printf x > API/new.py", "printf x > .MERIDIAN/gates.yaml"):
        outcome = hook(root, home, "PreToolUse", bash(command), env=env)
        assert outcome.code == 0 and outcome.denied, (command, outcome)
    run(["git", "config", "core.ignorecase", "false"], root, base_env(home))
    for command in ("printf x > API/new.py", "printf x > api./new.py"):
        outcome = hook(root, home, "PreToolUse", bash(command), env=env)
        assert (outcome.code, outcome.out) == (0, ""), (command, outcome)
