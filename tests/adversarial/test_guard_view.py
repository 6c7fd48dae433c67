"""The cached view PreToolUse allows from (``meridian.hooks.claude_view``).

Layer: the Claude Code PreToolUse hook. The view is a speed cache, never trust: it
only proves an allow, it is keyed by the state tip (read from the ref files), the
config files' hashes and the git config, and whatever it cannot answer goes to the
full decision. These attacks change what decides a lock (a state event, a need going
stale in the work tree, the gate graph, the view file itself, packed refs, a linked
worktree) after a view was written, and check that the hook still answers as the full
decision does. The allow path is checked to run without pygit2, pydantic or yaml.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial.conftest import CLEAN_MODULE
from tests.adversarial.guard_support import (
    GATES,
    base_env,
    claude_env,
    hook,
    make_project,
    run,
    settings_command,
    tool,
)

HEAVY = ("pygit2", "pydantic", "yaml")


@pytest.fixture
def guarded(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    return make_project(tmp_path / "project", home), home


def _meridian(root: Path, home: Path, *args: str) -> None:
    run([sys.executable, "-P", "-m", "meridian", *args], root, base_env(home))


def _write(root: Path, home: Path, path: str, *, cwd: Path | None = None,
           env: dict[str, str] | None = None):
    return hook(root, home, "PreToolUse", tool("Write", file_path=str(root / path),
                                               content="x = 1\n"), cwd=cwd, env=env)


def _allowed(outcome) -> bool:
    assert outcome.code == 0, outcome
    return not outcome.denied


def _heavy_imports(root: Path, home: Path, path: str, *, project_dir: Path | None = None) -> list[str]:
    """The heavy modules an allowed write imports, run through the exact settings command
    with ``-X importtime`` added (it runs Python isolated, ``-I``, which ignores
    ``PYTHONPROFILEIMPORTTIME``; what it prints goes to stderr)."""
    command = settings_command(root, "PreToolUse")
    assert command.count('"$p" -I -m meridian') == 1, command
    env = claude_env(root, home, project_dir=project_dir)
    outcome = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / path),
                                                   content="x = 1\n"),
                   cwd=project_dir, env=env,
                   command=command.replace('"$p" -I -m meridian', '"$p" -I -X importtime -m meridian'))
    assert outcome.code == 0 and not outcome.denied, outcome
    modules = [line.rsplit("|", 1)[-1].strip() for line in outcome.err.splitlines()
               if line.startswith("import time:")]
    assert "meridian.hooks.claude_view" in modules, outcome.err[-500:]
    return sorted({m.split(".")[0] for m in modules if m.split(".")[0] in HEAVY})


def _views(root: Path) -> list[Path]:
    return sorted((root / ".git" / "meridian").glob("claude-view-*.json"))


def _pass(root: Path, home: Path, gate: str, relative: str) -> None:
    _meridian(root, home, "gate", "start", gate)
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CLEAN_MODULE)
    run(["git", "add", "-A"], root, base_env(home))
    run(["git", "commit", "-q", "-m", f"{gate} work"], root, base_env(home))
    _meridian(root, home, "gate", "submit", gate)


def test_an_allowed_write_is_decided_from_the_view_without_heavy_imports(
        guarded: tuple[Path, Path]) -> None:
    root, home = guarded
    assert _allowed(_write(root, home, "schema/shapes.py"))  # the full path writes the view
    assert len(_views(root)) == 1
    assert _heavy_imports(root, home, "schema/shapes.py") == []
    assert _heavy_imports(root, home, "notes/todo.md") == []
    # a locked gate's file is still denied, and the harness; an allow after that is fast again
    denied = _write(root, home, "api/app.py")
    assert denied.denied and "locked" in denied.reason
    assert _write(root, home, ".meridian/gates.yaml").denied
    assert _heavy_imports(root, home, "schema/shapes.py") == []


def test_a_need_going_stale_in_the_work_tree_locks_without_a_state_event(
        guarded: tuple[Path, Path]) -> None:
    root, home = guarded
    _pass(root, home, "schema", "schema/shapes.py")
    # api is open (its need passed): allowed, decided in full because it may lock
    assert _allowed(_write(root, home, "api/app.py"))
    assert _allowed(_write(root, home, "api/app.py"))
    # schema's file changes: schema is stale, so api is locked again, with no new event
    (root / "schema" / "shapes.py").write_text(CLEAN_MODULE + "\nEXTRA = 1\n")
    outcome = _write(root, home, "api/app.py")
    assert outcome.denied and "schema (stale)" in outcome.reason, outcome


def test_a_need_taken_back_after_a_pass_locks_through_the_new_tip(
        guarded: tuple[Path, Path]) -> None:
    root, home = guarded
    _pass(root, home, "schema", "schema/shapes.py")
    _pass(root, home, "api", "api/app.py")
    assert _allowed(_write(root, home, "api/app.py"))
    assert _heavy_imports(root, home, "api/app.py") == []  # passed, nothing taken back
    _meridian(root, home, "gate", "reopen", "schema", "--reason", "the schema was wrong")
    outcome = _write(root, home, "api/app.py")
    assert outcome.denied and "schema" in outcome.reason, outcome


def test_a_changed_gate_graph_is_read_again(guarded: tuple[Path, Path]) -> None:
    root, home = guarded
    assert _allowed(_write(root, home, "schema/shapes.py"))
    assert _heavy_imports(root, home, "schema/shapes.py") == []
    # a human puts schema behind a new gate: the view's key (the graph's hash) no longer
    # matches, and schema's files are locked at once
    (root / ".meridian" / "gates.yaml").write_text(GATES.replace(
        "  - id: schema\n", "  - id: design\n    artifacts: [\"design/**\"]\n"
        "  - id: schema\n    needs: [design]\n"))
    outcome = _write(root, home, "schema/shapes.py")
    assert outcome.denied and "design" in outcome.reason, outcome


@pytest.mark.parametrize("damage", ["garbage", "may_lock emptied", "foreign tip"])
def test_a_damaged_or_edited_view_is_recomputed_not_trusted(guarded: tuple[Path, Path],
                                                          damage: str) -> None:
    root, home = guarded
    assert _allowed(_write(root, home, "schema/shapes.py"))
    [view] = _views(root)
    document = json.loads(view.read_text())
    if damage == "garbage":
        view.write_text("{not json")
    elif damage == "may_lock emptied":  # without the checksum that goes with it
        document["body"]["may_lock"] = []
        view.write_text(json.dumps(document))
    else:
        document["body"]["key"]["tip"] = "0" * 40
        view.write_text(json.dumps(document))
    outcome = _write(root, home, "api/app.py")
    assert outcome.denied and "locked" in outcome.reason, outcome
    assert json.loads(view.read_text())["body"]["may_lock"] == ["api"]  # rewritten


def test_a_forged_view_with_a_valid_checksum_is_caught_at_the_commit(
        guarded: tuple[Path, Path]) -> None:
    """An attacker who can write .git/meridian (the hook denies it that) can make the
    view allow a locked write; the pre-commit hook derives the states itself."""
    root, home = guarded
    assert _allowed(_write(root, home, "schema/shapes.py"))
    [view] = _views(root)
    from meridian.hooks import claude_view

    body = json.loads(view.read_text())["body"]
    body["may_lock"] = []
    view.write_text(json.dumps({"body": body, "checksum": claude_view._checksum(body)}))
    assert _allowed(_write(root, home, "api/app.py"))  # the cache is only a cache
    (root / "api").mkdir()
    (root / "api" / "app.py").write_text(CLEAN_MODULE)
    run(["git", "add", "-A"], root, base_env(home))
    proc = run(["git", "commit", "-q", "-m", "api"], root, base_env(home), check=False)
    assert proc.returncode != 0 and "api" in proc.stdout + proc.stderr


def test_packed_refs_and_a_new_event_after_them(guarded: tuple[Path, Path]) -> None:
    root, home = guarded
    run(["git", "pack-refs", "--all"], root, base_env(home))
    assert not (root / ".git" / "refs" / "heads" / "meridian" / "state").exists()
    assert _allowed(_write(root, home, "schema/shapes.py"))
    assert _heavy_imports(root, home, "schema/shapes.py") == []
    _meridian(root, home, "gate", "start", "schema")  # a loose ref again, a new tip
    assert _write(root, home, "api/app.py").denied
    assert _heavy_imports(root, home, "schema/shapes.py") == []


def test_a_linked_worktree_has_its_own_view(guarded: tuple[Path, Path], tmp_path: Path) -> None:
    root, home = guarded
    other = tmp_path / "second"
    run(["git", "worktree", "add", "-q", str(other), "-b", "second"], root, base_env(home))
    assert _allowed(_write(root, home, "schema/shapes.py"))
    outcome = hook(root, home, "PreToolUse",
                   tool("Write", file_path=str(other / "schema" / "x.py"), content="x\n"),
                   cwd=other, env=claude_env(root, home, project_dir=other))
    assert outcome.code == 0 and not outcome.denied, outcome
    assert _heavy_imports(root, home, "schema/shapes.py") == []
    assert len(_views(root)) == 2
    denied = hook(root, home, "PreToolUse",
                  tool("Write", file_path=str(other / "api" / "x.py"), content="x\n"),
                  cwd=other, env=claude_env(root, home, project_dir=other))
    assert denied.denied, denied
    env = claude_env(root, home, project_dir=other, extra={"PYTHONPROFILEIMPORTTIME": "1"})
    fast = hook(root, home, "PreToolUse",
                tool("Write", file_path=str(other / "schema" / "x.py"), content="x\n"),
                cwd=other, env=env)
    assert fast.code == 0 and not fast.denied
    assert "pygit2" not in fast.err and "pydantic" not in fast.err


def test_no_state_branch_is_never_decided_from_a_view(guarded: tuple[Path, Path]) -> None:
    root, home = guarded
    assert _allowed(_write(root, home, "schema/shapes.py"))
    env = base_env(home)
    run(["git", "update-ref", "-d", "refs/heads/meridian/state"], root, env)
    subprocess.run(["git", "pack-refs", "--all"], cwd=root, env=env, check=True)
    command = settings_command(root, "PreToolUse")
    outcome = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / "schema/shapes.py"),
                                                   content="x = 1\n"),
                   env=claude_env(root, home),
                   command=command.replace('"$p" -I -m meridian', '"$p" -I -X importtime -m meridian'))
    assert outcome.code == 0
    assert "pygit2" in outcome.err  # decided in full, whatever that decides


@pytest.mark.parametrize("kind", ["fifo", "huge", "directory"])
def test_a_view_file_that_is_no_regular_file_never_hangs(guarded: tuple[Path, Path],
                                                        kind: str) -> None:
    """A FIFO in the view's place blocked the read until the 40 s deadline; now it is no
    view (decided in full, at once), as are a huge file and a directory."""
    import os
    import shutil
    import time

    root, home = guarded
    assert _allowed(_write(root, home, "notes.md"))
    [view] = _views(root)
    view.unlink()
    if kind == "fifo":
        os.mkfifo(view)
    elif kind == "huge":
        with view.open("wb") as handle:
            handle.truncate(80 * 1024 * 1024)
    else:
        view.mkdir()
    started = time.monotonic()
    outcome = _write(root, home, "api/app.py")
    assert outcome.code == 0 and outcome.denied and "locked" in outcome.reason, outcome
    assert _allowed(_write(root, home, "notes.md"))
    assert time.monotonic() - started < 20
    if view.is_dir():
        shutil.rmtree(view)


def test_a_git_config_include_is_harness_and_keys_the_view(guarded: tuple[Path, Path]) -> None:
    """A core.hooksPath set in a file the git config includes replaces Meridian's hooks:
    the included file is harness, and a change to it (made by the user) is seen by the
    view's key, so the new hooks directory is harness at once."""
    root, home = guarded
    included = home / "extra.gitconfig"
    included.write_text("[alias]\n\tst = status\n")
    nested = home / "nested.gitconfig"
    nested.write_text("[alias]\n\tlg = log\n")
    run(["git", "config", "include.path", str(included)], root, base_env(home))
    with (home / ".gitconfig").open("a") as handle:
        handle.write('[includeIf "gitdir:/"]\n\tpath = nested.gitconfig\n')
    assert _allowed(_write(root, home, "notes.md"))  # the view is written
    for target in (included, nested):
        outcome = hook(root, home, "PreToolUse", tool("Write", file_path=str(target),
                                                      content="[core]\n\thooksPath = /x\n"))
        assert outcome.denied and "harness" in outcome.reason, outcome
    assert _allowed(_write(root, home, "notes.md"))
    included.write_text("[core]\n\thooksPath = other-hooks\n")  # the user's own change
    outcome = _write(root, home, "other-hooks/pre-commit")
    assert outcome.denied and "harness" in outcome.reason, outcome
