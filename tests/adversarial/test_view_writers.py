"""Every Meridian writer that moves the state tip leaves the PreToolUse view valid for it.

Layer: the Claude Code PreToolUse hook's cached view (``meridian.hooks.claude_view``).
A command (``gate start/submit/reopen``, ``memory add``, ``sync``), a block the git
pre-commit hook records and a spooled block drained by any of them move the state tip;
each then re-keys the view (a phase-neutral commit) or computes it again
(``claude_view.update``), so the next tool call is decided from the view. The view stays
a cache: after every writer its answers must be the full decision's answers (checked by
deciding the same calls with the view deleted), a writer whose environment reads other
git config files than the hook's writes no view the hook trusts, a writer killed
half-way leaves the older view (whose key no longer matches), and a view re-keyed by
hand over a phase change is caught at the commit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from meridian.hooks import block_spool
from meridian.ledger import Ledger
from tests.adversarial.conftest import CLEAN_MODULE
from tests.adversarial.guard_support import base_env, claude_env, hook, make_project, run, tool

HEAVY = ("pygit2", "pydantic", "yaml")
CALLS = ("schema/shapes.py", "api/app.py", "notes/todo.md")


@pytest.fixture
def guarded(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    return make_project(tmp_path / "project", home), home


def _meridian(root: Path, home: Path, *args: str, check: bool = True,
              env: dict[str, str] | None = None):
    return run([sys.executable, "-P", "-m", "meridian", *args], root, env or base_env(home),
               check=check)


def _write(root: Path, home: Path, path: str, *, env: dict[str, str] | None = None):
    return hook(root, home, "PreToolUse", tool("Write", file_path=str(root / path),
                                               content="x = 1\n"), env=env)


def _decided(root: Path, home: Path, path: str) -> tuple[object, list[str]]:
    """The answer to a write of ``path`` and the heavy modules deciding it imported."""
    outcome = _write(root, home, path,
                     env=claude_env(root, home, extra={"PYTHONPROFILEIMPORTTIME": "1"}))
    assert outcome.code == 0, outcome
    modules = [line.rsplit("|", 1)[-1].strip() for line in outcome.err.splitlines()
               if line.startswith("import time:")]
    return outcome, sorted({m.split(".")[0] for m in modules if m.split(".")[0] in HEAVY})


def _views(root: Path) -> list[Path]:
    return sorted((root / ".git" / "meridian").glob("claude-view-*.json"))


def _view_tip(root: Path) -> str:
    [view] = _views(root)
    return json.loads(view.read_text())["body"]["key"]["tip"]


def _tip(root: Path) -> str:
    return str(Ledger.open(root).tip())


def _settle(root: Path) -> None:
    """Wait for the detached drainer of the last deny (it holds the spool's lock until its
    blocks are recorded and the view brought up to date), or drain in its place: in a
    process with the hook's environment (this one's HOME is not the project's, and a
    writer keeps only a view keyed as it reads the git config files)."""
    settle = "import sys; from meridian.hooks import block_spool; block_spool.settle(sys.argv[1])"
    subprocess.run([sys.executable, "-P", "-c", settle, str(root)],
                   env=base_env(root.parent / "home"), check=True, timeout=60)


def _answers_from_the_view_are_the_full_decision_s(root: Path, home: Path,
                                                  full: tuple[str, ...] = ()) -> None:
    """Each call of ``CALLS`` is decided from the view (no heavy import; those in
    ``full`` in full: a gate whose lock depends on the work tree) and answered as the
    full decision answers it with no view at all."""
    assert _view_tip(root) == _tip(root)
    fast = {}
    for path in CALLS:
        outcome, heavy = _decided(root, home, path)
        assert (heavy == []) is (path not in full), (path, heavy)
        fast[path] = (outcome.denied, outcome.reason)  # type: ignore[attr-defined]
        _settle(root)
    for path in CALLS:
        for view in _views(root):
            view.unlink()
        outcome, heavy = _decided(root, home, path)
        assert "pygit2" in heavy, (path, heavy)  # decided in full
        assert fast[path] == (outcome.denied, outcome.reason), path  # type: ignore[attr-defined]
        _settle(root)


def _commit_schema(root: Path, home: Path, text: str = CLEAN_MODULE) -> None:
    (root / "schema").mkdir(exist_ok=True)
    (root / "schema" / "shapes.py").write_text(text)
    run(["git", "add", "-A"], root, base_env(home))
    run(["git", "commit", "-q", "-m", "schema work"], root, base_env(home))


@pytest.mark.parametrize("writer", ["gate start", "gate submit (fails)", "gate submit (passes)",
                                    "gate reopen", "memory add"])
def test_a_command_that_moves_the_tip_leaves_the_view_valid(guarded: tuple[Path, Path],
                                                            writer: str) -> None:
    root, home = guarded
    if writer != "gate start":
        _meridian(root, home, "gate", "start", "schema")
    if writer == "gate submit (fails)":  # a stub in the gate's files (never committed)
        (root / "schema").mkdir()
        (root / "schema" / "shapes.py").write_text("def shape():\n    pass\n")
    elif writer.startswith("gate submit") or writer == "gate reopen":
        _commit_schema(root, home)
    if writer == "gate reopen":
        _meridian(root, home, "gate", "submit", "schema")
    assert _write(root, home, "notes/todo.md").code == 0  # a view, for the tip before
    _settle(root)
    before = _view_tip(root)
    if writer == "gate start":
        _meridian(root, home, "gate", "start", "schema")
    elif writer.startswith("gate submit"):
        _meridian(root, home, "gate", "submit", "schema", check=False)
    elif writer == "gate reopen":
        _meridian(root, home, "gate", "reopen", "schema", "--reason", "the schema was wrong")
    else:
        _meridian(root, home, "memory", "add", "episodic", "--json",
                  '{"session": "s9", "event": "note", "notes": "a note"}')
    assert _tip(root) != before
    # api waits on a passed schema: whether it is locked depends on schema's files
    full = ("api/app.py",) if writer == "gate submit (passes)" else ()
    _answers_from_the_view_are_the_full_decision_s(root, home, full)


def test_a_block_the_pre_commit_hook_records_leaves_the_view_valid(
        guarded: tuple[Path, Path]) -> None:
    root, home = guarded
    _meridian(root, home, "gate", "start", "schema")
    assert _write(root, home, "notes/todo.md").code == 0
    before = _view_tip(root)
    (root / "schema").mkdir()
    (root / "schema" / "shapes.py").write_text("def shape():\n    raise NotImplementedError\n")
    run(["git", "add", "-A"], root, base_env(home))
    proc = run(["git", "commit", "-q", "-m", "a stub"], root, base_env(home), check=False)
    assert proc.returncode != 0 and "NotImplementedError" in proc.stdout + proc.stderr
    assert _tip(root) != before  # the refusal's gate.blocked
    run(["git", "reset", "-q"], root, base_env(home))
    _answers_from_the_view_are_the_full_decision_s(root, home)


def test_a_drained_spool_leaves_the_view_valid(guarded: tuple[Path, Path]) -> None:
    """A spooled block recorded by the next command (not by the deny's own child)."""
    root, home = guarded
    assert _write(root, home, "notes/todo.md").code == 0
    before = _view_tip(root)
    block_spool.put(root / ".git", {
        "root": str(root), "branch": "meridian/state", "source": "claude",
        "reason": "Meridian: api/app.py belongs to gate api, which is locked", "gate": "api",
        "files": ["api/app.py"], "ts": block_spool.now_ts(),
        "extra": {"event": "PreToolUse", "session": "s", "tool": "Write"}})
    _meridian(root, home, "status", check=False)
    assert block_spool.pending(root / ".git") == [] and _tip(root) != before
    _answers_from_the_view_are_the_full_decision_s(root, home)


def test_sync_that_adopts_a_phase_change_leaves_the_view_valid(guarded: tuple[Path, Path],
                                                               tmp_path: Path) -> None:
    root, home = guarded
    env = base_env(home)
    remote = tmp_path / "remote.git"
    run(["git", "init", "-q", "--bare", str(remote)], tmp_path, env)
    run(["git", "remote", "add", "origin", str(remote)], root, env)
    run(["git", "push", "-q", "--no-verify", "origin", "main"], root, env)
    _meridian(root, home, "sync")
    other = tmp_path / "other"
    run(["git", "clone", "-q", str(remote), str(other)], tmp_path, env)
    run(["git", "fetch", "-q", "origin", "meridian/state:meridian/state"], other, env)
    _meridian(other, home, "gate", "start", "schema")  # a teammate starts schema
    _meridian(other, home, "sync")
    assert _write(root, home, "api/app.py").denied  # the view: schema open
    _settle(root)
    before = _view_tip(root)
    _meridian(root, home, "sync")
    assert _tip(root) != before
    [view] = _views(root)
    assert json.loads(view.read_text())["body"]["phases"]["schema"] == "in_progress"
    _answers_from_the_view_are_the_full_decision_s(root, home)


def test_a_writer_reading_other_git_config_files_writes_no_view_the_hook_trusts(
        guarded: tuple[Path, Path], tmp_path: Path) -> None:
    """A command run with another HOME (another ~/.gitconfig, perhaps with a hooksPath)
    computes the view in its own environment: the hook finds its key not matching and
    decides in full, rather than trusting harness locations read from other files."""
    root, home = guarded
    assert _write(root, home, "api/app.py").denied
    _settle(root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / ".gitconfig").write_text((home / ".gitconfig").read_text())
    env = {**base_env(home), "HOME": str(elsewhere)}
    _meridian(root, home, "gate", "start", "schema", env=env)
    outcome, heavy = _decided(root, home, "api/app.py")
    assert outcome.denied and "schema (in_progress)" in outcome.reason, outcome  # type: ignore[attr-defined]
    assert "pygit2" in heavy, heavy  # the view was not trusted
    _settle(root)
    _answers_from_the_view_are_the_full_decision_s(root, home)  # and rewritten by it


def test_a_writer_killed_half_way_leaves_a_view_that_no_longer_matches(
        guarded: tuple[Path, Path]) -> None:
    """Killed as it replaces the view file: the older view stays, keyed by the older tip,
    so the next call is decided in full; the temporary file it left is never read."""
    root, home = guarded
    assert _write(root, home, "api/app.py").denied
    _settle(root)
    old = _view_tip(root)
    Ledger.open(root).emit("gate.started", {"gate": "schema"})
    killed = ("import os, signal\n"
              "from meridian.hooks import claude_view\n"
              "replace = os.replace\n"
              "def killed(source, target):\n"
              "    if os.path.basename(target).startswith('claude-view-'):\n"
              "        os.kill(os.getpid(), signal.SIGKILL)\n"
              "    replace(source, target)\n"
              "os.replace = killed\n"
              "claude_view.update_views('.')\n")
    proc = subprocess.run([sys.executable, "-P", "-c", killed], cwd=root, env=base_env(home),
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == -9, proc
    assert _view_tip(root) == old != _tip(root)
    assert list((root / ".git" / "meridian").glob("claude-view-*.tmp"))
    outcome, heavy = _decided(root, home, "api/app.py")
    assert outcome.denied and "schema (in_progress)" in outcome.reason, outcome  # type: ignore[attr-defined]
    assert "pygit2" in heavy, heavy


def test_a_view_re_keyed_by_hand_over_a_reopen_is_caught_at_the_commit(
        guarded: tuple[Path, Path]) -> None:
    """An attacker who can write .git/meridian (the hook denies it that) keys the view
    from before a reopen by the new tip: the view then allows a write the full decision
    denies. A writer's ``update`` finds its key matching and keeps it (a cache keyed by
    what it read); the pre-commit hook derives the states itself and refuses."""
    root, home = guarded
    _meridian(root, home, "gate", "start", "schema")
    _commit_schema(root, home)
    _meridian(root, home, "gate", "submit", "schema")
    _meridian(root, home, "gate", "start", "api")
    (root / "api").mkdir()
    (root / "api" / "app.py").write_text(CLEAN_MODULE)
    run(["git", "add", "-A"], root, base_env(home))
    run(["git", "commit", "-q", "-m", "api work"], root, base_env(home))
    _meridian(root, home, "gate", "submit", "api")
    assert not _write(root, home, "api/app.py").denied  # both passed: api cannot lock
    _settle(root)
    [view] = _views(root)
    stale = json.loads(view.read_text())["body"]
    assert stale["may_lock"] == []
    Ledger.open(root).emit("gate.reopened", {"gate": "schema", "reason": "taken back"})
    from meridian.hooks import claude_view

    stale["key"]["tip"] = _tip(root)
    view.write_text(json.dumps({"body": stale, "checksum": claude_view._checksum(stale)}))
    assert not _write(root, home, "api/app.py").denied  # the cache is only a cache
    _meridian(root, home, "memory", "add", "episodic", "--json",
              '{"session": "s9", "event": "note", "notes": "a note"}')
    assert _view_tip(root) == _tip(root)  # re-keyed from what it was keyed by
    (root / "api" / "app.py").write_text(CLEAN_MODULE + "\nEXTRA = 1\n")
    run(["git", "add", "-A"], root, base_env(home))
    proc = run(["git", "commit", "-q", "-m", "api"], root, base_env(home), check=False)
    assert proc.returncode != 0 and "api" in proc.stdout + proc.stderr, proc.stdout


def test_a_view_of_a_work_tree_gone_or_misnamed_is_left_alone(guarded: tuple[Path, Path],
                                                               tmp_path: Path) -> None:
    """``update_views`` visits every view of the repository: one naming a directory that
    is no work tree of it, or stored under another work tree's name, is never used to
    open or write anything there."""
    root, home = guarded
    assert _write(root, home, "notes/todo.md").code == 0
    [view] = _views(root)
    body = json.loads(view.read_text())["body"]
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    from meridian.hooks import claude_view

    forged = {**body, "key": {**body["key"], "root": str(stranger)}}
    misnamed = view.with_name("claude-view-0000000000000000.json")
    misnamed.write_text(json.dumps({"body": forged, "checksum": claude_view._checksum(forged)}))
    _meridian(root, home, "gate", "start", "schema")
    assert not (stranger / ".git").exists() and sorted(os.listdir(stranger)) == []
    assert json.loads(misnamed.read_text())["body"] == forged
    assert json.loads(view.read_text())["body"]["key"]["tip"] == _tip(root)
