"""Denies the PreToolUse hook decides from its cached view (``claude_view.decide``), and
the blocks they record after answering (``meridian.hooks.block_spool``).

Layer: the Claude Code PreToolUse hook. A deny from the view must answer exactly as the
full decision does (same reply bytes, same recorded block), import none of pygit2,
pydantic or yaml, hand every lock that depends on the work tree to the full decision,
and lose no block when the process recording it is killed: the next Meridian command
records what is still spooled, once.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from meridian.hooks import block_spool
from meridian.ledger import Ledger
from tests.adversarial.conftest import CLEAN_MODULE
from tests.adversarial.guard_support import base_env, claude_env, hook, make_project, run, tool

HEAVY = ("pygit2", "pydantic", "yaml")


@pytest.fixture
def guarded(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    return make_project(tmp_path / "project", home), home


def _meridian(root: Path, home: Path, *args: str, check: bool = True):
    return run([sys.executable, "-P", "-m", "meridian", *args], root, base_env(home), check=check)


def _write(root: Path, home: Path, path: str, *, env: dict[str, str] | None = None):
    return hook(root, home, "PreToolUse", tool("Write", file_path=str(root / path),
                                               content="x = 1\n"), env=env)


def _imports(root: Path, home: Path, path: str) -> tuple[object, list[str]]:
    env = claude_env(root, home, extra={"PYTHONPROFILEIMPORTTIME": "1"})
    outcome = _write(root, home, path, env=env)
    modules = [line.rsplit("|", 1)[-1].strip() for line in outcome.err.splitlines()
               if line.startswith("import time:")]
    assert "meridian.hooks.claude_view" in modules, outcome.err[-500:]
    return outcome, sorted({m.split(".")[0] for m in modules if m.split(".")[0] in HEAVY})


def _blocks(root: Path) -> list:
    block_spool.drain_here(root)  # what every Meridian command does first
    return [r for r in Ledger.open(root).records("events") if r.kind == "gate.blocked"]


def _views(root: Path) -> list[Path]:
    return sorted((root / ".git" / "meridian").glob("claude-view-*.json"))


def _spooled(root: Path) -> list[Path]:
    return block_spool.pending(root / ".git")


def _settle(root: Path) -> None:
    """Wait for the detached drainer of the last deny (it holds the spool's lock until its
    blocks are recorded and the view brought up to date), or drain in its place: in a
    process with the hook's environment (this one's HOME is not the project's, and a
    writer keeps only a view keyed as it reads the git config files)."""
    settle = "import sys; from meridian.hooks import block_spool; block_spool.settle(sys.argv[1])"
    subprocess.run([sys.executable, "-P", "-c", settle, str(root)],
                   env=base_env(root.parent / "home"), check=True, timeout=60)


@pytest.mark.parametrize("schema", ["open", "in_progress", "failed"])
def test_a_deny_from_the_view_answers_and_records_as_the_full_path(
        guarded: tuple[Path, Path], schema: str) -> None:
    root, home = guarded
    if schema != "open":
        _meridian(root, home, "gate", "start", "schema")
    if schema == "failed":
        (root / "schema").mkdir()
        (root / "schema" / "shapes.py").write_text("def shape():\n    pass\n")
        _meridian(root, home, "gate", "submit", "schema", check=False)
    # the full path (no view yet) decides and records; it writes the view
    full = _write(root, home, "api/app.py")
    assert full.denied and full.err == "", full
    assert len(_views(root)) == 1
    full_blocks = _blocks(root)
    # the same call again: decided from the view, nothing heavy imported
    fast, heavy = _imports(root, home, "api/app.py")
    assert heavy == [], heavy
    assert fast.code == 0 and fast.out == full.out, (fast.out, full.out)
    _settle(root)
    blocks = _blocks(root)
    assert len(blocks) == len(full_blocks) + 1
    assert blocks[-1].data == full_blocks[-1].data
    assert blocks[-1].ts > full_blocks[-1].ts
    assert _spooled(root) == []
    # the block moved the tip and the drainer re-keyed the view: the next allow is fast
    allowed, heavy = _imports(root, home, "notes/todo.md")
    assert not allowed.denied and heavy == [], (allowed, heavy)
    assert _meridian(root, home, "verify").returncode == 0


def test_a_lock_that_depends_on_the_work_tree_is_left_to_the_full_path(
        guarded: tuple[Path, Path]) -> None:
    """api waits on a passed schema: whether it is locked depends on schema's files, so
    the view never decides it (the full path finds schema stale and denies)."""
    root, home = guarded
    _meridian(root, home, "gate", "start", "schema")
    (root / "schema").mkdir()
    (root / "schema" / "shapes.py").write_text(CLEAN_MODULE)
    run(["git", "add", "-A"], root, base_env(home))
    run(["git", "commit", "-q", "-m", "schema"], root, base_env(home))
    _meridian(root, home, "gate", "submit", "schema")
    assert not _write(root, home, "api/app.py").denied
    (root / "schema" / "shapes.py").write_text(CLEAN_MODULE + "\nEXTRA = 1\n")
    outcome, heavy = _imports(root, home, "api/app.py")
    assert outcome.denied and "schema (stale)" in outcome.reason, outcome
    assert "pygit2" in heavy  # decided in full


def test_fixed_locks_follow_derive_states(guarded: tuple[Path, Path]) -> None:
    """The view's rule against the gates package's on a chain a -> b -> c with every phase
    a need can be in without having passed."""
    from meridian.hooks.claude_view import fixed_locks
    from meridian.hooks.project import GateFacts, ProjectFacts

    facts = ProjectFacts(root=Path("."), branch="meridian/state", block_stale_on_push=True,
                         claude_stop_retry_cap=3, has_graph=True, gates=[
                             GateFacts("a", (), ("a/**",)), GateFacts("b", ("a",), ("b/**",)),
                             GateFacts("c", ("b", "a"), ("c/**",))])
    assert fixed_locks(facts, {}) == {"b": [("a", "open")], "c": [("b", "locked"), ("a", "open")]}
    assert fixed_locks(facts, {"a": "in_progress"}) == {
        "b": [("a", "in_progress")], "c": [("b", "locked"), ("a", "in_progress")]}
    assert fixed_locks(facts, {"a": "failed", "b": "submitted"}) == {
        "c": [("b", "submitted"), ("a", "failed")]}
    # a passed gate anywhere below: the work tree decides (stale or not), not the view
    assert fixed_locks(facts, {"a": "passed"}) == {}
    assert fixed_locks(facts, {"a": "passed", "b": "in_progress"}) == {}


def test_a_killed_drainer_loses_no_block_and_records_none_twice(
        guarded: tuple[Path, Path]) -> None:
    root, home = guarded
    assert _write(root, home, "api/app.py").denied  # full path: writes the view
    before = len(_blocks(root))
    # four denies from the view whose drainers never run (as if each was killed at once)
    entries = [{"root": str(root), "branch": "meridian/state", "source": "claude",
                "reason": f"Meridian: api/x{i}.py belongs to gate api", "gate": "api",
                "files": [f"api/x{i}.py"], "ts": block_spool.now_ts(),
                "extra": {"event": "PreToolUse", "session": "s", "tool": "Write"}}
               for i in range(4)]
    for entry in entries:
        block_spool.put(root / ".git", entry)
    # a drainer killed at some point of its work, several times
    code = ("import sys; from pathlib import Path; from meridian.hooks import block_spool; "
            "block_spool.drain_at(Path(sys.argv[1]))")
    for delay in (0.05, 0.2, 0.4, 0.8):
        proc = subprocess.Popen([sys.executable, "-c", code, str(root)], env=base_env(home))
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # the next Meridian command records whatever is left
    assert _meridian(root, home, "status").returncode in (0, 1)
    assert _spooled(root) == []
    blocks = _blocks(root)
    reasons = [b.data["reason"] for b in blocks[before:]]
    assert sorted(reasons) == sorted(e["reason"] for e in entries), reasons
    assert [b.ts for b in blocks[before:]] == sorted(b.ts for b in blocks[before:])
    verify = _meridian(root, home, "verify", check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_spooled_block_is_recorded_before_a_commit_is_checked(
        guarded: tuple[Path, Path]) -> None:
    root, home = guarded
    run([sys.executable, "-P", "-m", "meridian", "hooks", "install"], root, base_env(home))
    block_spool.put(root / ".git", {
        "root": str(root), "branch": "meridian/state", "source": "claude",
        "reason": "Meridian: api/app.py belongs to gate api", "gate": "api",
        "files": ["api/app.py"], "ts": block_spool.now_ts(),
        "extra": {"event": "PreToolUse", "session": "s", "tool": "Write"}})
    (root / "notes.md").write_text("notes\n")
    run(["git", "add", "notes.md"], root, base_env(home))
    run(["git", "commit", "-q", "-m", "notes"], root, base_env(home))
    assert _spooled(root) == []
    assert [b.data["files"] for b in Ledger.open(root).records("events")
            if b.kind == "gate.blocked"] == [["api/app.py"]]


def test_a_broken_spool_entry_is_logged_and_dropped(guarded: tuple[Path, Path]) -> None:
    root, _home = guarded
    spool = block_spool.spool_dir(root / ".git")
    spool.mkdir(parents=True, exist_ok=True)
    (spool / "2026-01-01T00:00:00.000000Z-1-bad.json").write_text("{not json")
    block_spool.drain_here(root)
    assert _spooled(root) == []
    log = (root / ".git" / "meridian" / "error.log").read_text()
    assert "spooled block 2026-01-01T00:00:00.000000Z-1-bad.json not recorded" in log


def test_a_deny_needs_no_view_to_fail_closed(guarded: tuple[Path, Path]) -> None:
    """A view that cannot be read, or a spool that cannot be written, still denies (the
    full path decides)."""
    root, home = guarded
    assert _write(root, home, "api/app.py").denied
    spool = block_spool.spool_dir(root / ".git")
    spool.write_text("a file where the spool directory goes\n")  # no block can be spooled
    outcome = _write(root, home, "api/app.py")
    spool.unlink()
    assert outcome.denied and "locked" in outcome.reason, outcome
    for view in _views(root):
        view.write_text("{")
    assert _write(root, home, "api/app.py").denied
    assert json.loads(_views(root)[0].read_text())["body"]["phases"]["schema"] == "open"


def _view_tip(root: Path) -> str:
    [view] = _views(root)
    return json.loads(view.read_text())["body"]["key"]["tip"]


def _tip(root: Path) -> str:
    return str(Ledger.open(root).tip())


def test_a_stop_and_a_memory_episode_keep_the_view(guarded: tuple[Path, Path]) -> None:
    """A Stop's session episode (and its block) and `meridian memory add` move the state
    tip but change no gate's phase: the view is re-keyed and the next call is fast."""
    root, home = guarded
    _meridian(root, home, "gate", "start", "schema")
    (root / "schema").mkdir()
    (root / "schema" / "shapes.py").write_text(CLEAN_MODULE)  # unsubmitted work: Stop blocks
    assert not _write(root, home, "schema/shapes.py").denied
    before = _tip(root)
    stop = hook(root, home, "Stop", {"stop_hook_active": False})
    assert stop.code == 0 and '"block"' in stop.out, stop
    assert _tip(root) != before and _view_tip(root) == _tip(root)
    allowed, heavy = _imports(root, home, "schema/shapes.py")
    assert not allowed.denied and heavy == [], heavy
    before = _tip(root)
    _meridian(root, home, "memory", "add", "episodic", "--json",
              '{"session": "s9", "event": "note", "notes": "a note"}')
    assert _tip(root) != before and _view_tip(root) == _tip(root)
    denied, heavy = _imports(root, home, "api/app.py")
    assert denied.denied and "schema (in_progress)" in denied.reason and heavy == [], heavy


def test_a_phase_change_is_computed_again_never_re_keyed(guarded: tuple[Path, Path]) -> None:
    """A command that changes a gate's phase leaves the view computed again for the new
    tip (``claude_view.update``), never re-keyed: the next deny names the new phase and
    is decided from the view. A phase change no Meridian command followed (plumbing, a
    library writer), even hidden between two phase-neutral commits, is never re-keyed:
    the next call is decided in full."""
    root, home = guarded
    assert _write(root, home, "api/app.py").denied  # the view: schema open
    old = _view_tip(root)
    _meridian(root, home, "gate", "start", "schema")
    assert old != _tip(root) == _view_tip(root)  # computed again for the new tip
    [view] = _views(root)
    assert json.loads(view.read_text())["body"]["phases"]["schema"] == "in_progress"
    outcome, heavy = _imports(root, home, "api/app.py")
    assert outcome.denied and "schema (in_progress)" in outcome.reason, outcome
    assert heavy == [], heavy
    _settle(root)
    # a phase change hidden between two neutral commits, no command after it
    ledger = Ledger.open(root)
    ledger.emit("gate.blocked", {"source": "gate", "reason": "r", "gate": "api"})
    ledger.emit("gate.reopened", {"gate": "schema", "reason": "again"})
    ledger.emit("gate.blocked", {"source": "gate", "reason": "r2", "gate": "api"})
    from meridian.hooks import claude_view

    assert claude_view.rekey(ledger.repo, root) is False
    assert _view_tip(root) != _tip(root)
    outcome, heavy = _imports(root, home, "api/app.py")
    assert outcome.denied and "pygit2" in heavy, (outcome, heavy)  # decided in full


@pytest.mark.parametrize("forged", ["another branch", "another repository"])
def test_a_spool_entry_never_writes_elsewhere(guarded: tuple[Path, Path], tmp_path: Path,
                                              forged: str) -> None:
    root, home = guarded
    run(["git", "branch", "feature"], root, base_env(home))
    feature = Ledger.open(root).repo.references["refs/heads/feature"].target
    block_spool.put(root / ".git", {
        "root": str(tmp_path) if forged == "another repository" else str(root),
        "branch": "feature" if forged == "another branch" else "meridian/state",
        "source": "claude", "reason": "r", "gate": "api", "files": ["api/app.py"],
        "ts": block_spool.now_ts(), "extra": {"event": "PreToolUse"}})
    assert _blocks(root) == []
    assert Ledger.open(root).repo.references["refs/heads/feature"].target == feature
    log = (root / ".git" / "meridian" / "error.log").read_text()
    assert "not recorded" in log and ("names branch 'feature'" in log
                                      or "not a work tree of this repository" in log), log


@pytest.mark.parametrize("kind", ["fifo", "symlink to a fifo", "huge", "directory"])
def test_a_spool_entry_that_is_not_a_small_file_hangs_no_command(
        guarded: tuple[Path, Path], tmp_path: Path, kind: str) -> None:
    """Every command, git hook and full Claude decision drains the spool first: an entry
    that blocks a reader (a FIFO, a symlink to one) or floods it (gigabytes) must be
    refused without reading it, else every later Meridian command hangs or exhausts
    memory (a PreToolUse hook that times out is a non-blocking error: the call goes
    ahead)."""
    import os

    root, home = guarded
    spool = block_spool.spool_dir(root / ".git")
    spool.mkdir(parents=True, exist_ok=True)
    bad = spool / "2026-01-01T00:00:00.000000Z-1-bad.json"
    if kind == "fifo":
        os.mkfifo(bad)
    elif kind == "symlink to a fifo":
        os.mkfifo(tmp_path / "pipe")
        bad.symlink_to(tmp_path / "pipe")
    elif kind == "directory":
        bad.mkdir()
    else:
        with bad.open("wb") as handle:  # sparse: no disk used, but 4 GiB to read
            handle.truncate(4 * 1024 ** 3)
    good = {"root": str(root), "branch": "meridian/state", "source": "claude",
            "reason": "Meridian: api/app.py belongs to gate api", "gate": "api",
            "files": ["api/app.py"], "ts": block_spool.now_ts(),
            "extra": {"event": "PreToolUse", "session": "s", "tool": "Write"}}
    block_spool.put(root / ".git", good)
    proc = subprocess.run([sys.executable, "-P", "-m", "meridian", "status"], cwd=root, check=False,
                          env=base_env(home), capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    assert os.path.isdir(bad) if kind == "directory" else not os.path.lexists(bad)
    assert _spooled(root) == ([bad] if kind == "directory" else [])
    assert [b.data["reason"] for b in _blocks(root)] == [good["reason"]]
    log = (root / ".git" / "meridian" / "error.log").read_text()
    assert "spooled block 2026-01-01T00:00:00.000000Z-1-bad.json not recorded" in log, log


def _append_raw_line(root: Path, home: Path, line: bytes) -> None:
    """Append ``line`` to the state branch's event shard in a commit of its own, as git
    plumbing (or a broken writer) can: no Meridian code checks it."""
    env = base_env(home)

    def git(*args: str, extra: dict[str, str] | None = None, raw: bool = False):
        out = subprocess.run(["git", *args], cwd=root, env={**env, **(extra or {})},
                             capture_output=True, check=True).stdout
        return out if raw else out.decode().strip()

    tip = git("rev-parse", "meridian/state")
    [shard] = [p for p in git("ls-tree", "-r", "--name-only", tip).splitlines()
               if p.startswith("events/")]
    blob_file = root / ".git" / "shard.tmp"
    blob_file.write_bytes(git("cat-file", "blob", f"{tip}:{shard}", raw=True) + line + b"\n")
    blob = git("hash-object", "-w", str(blob_file))
    blob_file.unlink()
    index = {"GIT_INDEX_FILE": str(root / ".git" / "index.tmp")}
    git("read-tree", tip, extra=index)
    git("update-index", "--cacheinfo", f"100644,{blob},{shard}", extra=index)
    tree = git("write-tree", extra=index)
    (root / ".git" / "index.tmp").unlink()
    commit = git("commit-tree", tree, "-p", tip, "-m", "a line")
    git("update-ref", "refs/heads/meridian/state", commit, tip)


@pytest.mark.parametrize("line", [b'{"kind":"memory.note"}',
                                  b'{"id":"x","ts":"t","kind":"memory.note","writer":"w"}',
                                  b'{"id":"x","ts":"t","kind":"memory.note","writer":"w","data":[]}'
                                  ])
def test_a_corrupt_line_is_never_re_keyed(guarded: tuple[Path, Path], line: bytes) -> None:
    """A line of no gate kind that is not a record (no data, a list for data) makes every
    full decision fail closed ("could not check": the ledger is corrupt). Re-keying the
    view over it would let the next calls be allowed from the view instead."""
    root, home = guarded
    assert not _write(root, home, "schema/shapes.py").denied  # the full path: the view
    _append_raw_line(root, home, line)
    _meridian(root, home, "memory", "add", "episodic", "--json",
              '{"session": "s9", "event": "note", "notes": "a note"}')  # re-keys what it can
    assert _view_tip(root) != _tip(root)
    outcome = _write(root, home, "schema/shapes.py")
    assert outcome.denied and "corrupt record" in outcome.reason, outcome


def test_a_made_up_work_tree_cannot_aim_a_spool_entry_at_a_code_branch(
        guarded: tuple[Path, Path], tmp_path: Path) -> None:
    """A directory anywhere with a ``.git`` file naming this repository's git dir, and a
    config naming a code branch (``release``), is not a work tree of the repository: an entry
    rooted there is dropped, and ``release`` does not move."""
    root, home = guarded
    run(["git", "branch", "release"], root, base_env(home))
    fake = tmp_path / "fake"
    (fake / ".meridian").mkdir(parents=True)
    (fake / ".git").write_text(f"gitdir: {root / '.git'}\n")
    (fake / ".meridian" / "config.yaml").write_text(
        (root / ".meridian" / "config.yaml").read_text().replace(
            "branch: meridian/state", "branch: release"))
    assert "branch: release" in (fake / ".meridian" / "config.yaml").read_text()
    repo = Ledger.open(root).repo
    release = repo.references["refs/heads/release"].target
    block_spool.put(root / ".git", {
        "root": str(fake), "branch": "release", "source": "claude", "reason": "r",
        "gate": "api", "files": ["api/app.py"], "ts": block_spool.now_ts(),
        "extra": {"event": "PreToolUse"}})
    block_spool.drain_here(root)
    assert _spooled(root) == []
    assert Ledger.open(root).repo.references["refs/heads/release"].target == release
    log = (root / ".git" / "meridian" / "error.log").read_text()
    assert "not a work tree of this repository" in log, log


def test_a_linked_worktree_s_spooled_block_is_recorded(guarded: tuple[Path, Path],
                                                         tmp_path: Path) -> None:
    """The check above leaves real work trees alone: a linked worktree (git's own entry
    under ``worktrees/`` points back at it) records its spooled block, drained from the
    main work tree."""
    root, home = guarded
    linked = tmp_path / "linked"
    run(["git", "worktree", "add", "-q", "-b", "side", str(linked)], root, base_env(home))
    block_spool.put(root / ".git", {
        "root": str(linked), "branch": "meridian/state", "source": "claude",
        "reason": "Meridian: api/app.py belongs to gate api", "gate": "api",
        "files": ["api/app.py"], "ts": block_spool.now_ts(),
        "extra": {"event": "PreToolUse", "session": "s", "tool": "Write"}})
    assert [b.data["files"] for b in _blocks(root)] == [["api/app.py"]]
    assert _spooled(root) == []


def test_a_separate_git_dir_work_tree_s_spooled_block_is_recorded(tmp_path: Path) -> None:
    """``git init --separate-git-dir``: the main work tree is recorded nowhere but in its
    ``.git`` file; its spooled blocks are still recorded (and a made-up directory beside
    a standard ``.git`` is still refused, above)."""
    home = tmp_path / "home"
    root = make_project(tmp_path / "project", home)
    gitdir = tmp_path / "elsewhere.git"
    (root / ".git").rename(gitdir)
    (root / ".git").write_text(f"gitdir: {gitdir}\n")
    block_spool.put(gitdir, {
        "root": str(root), "branch": "meridian/state", "source": "claude",
        "reason": "Meridian: api/app.py belongs to gate api", "gate": "api",
        "files": ["api/app.py"], "ts": block_spool.now_ts(),
        "extra": {"event": "PreToolUse", "session": "s", "tool": "Write"}})
    block_spool.drain_here(root)
    assert block_spool.pending(gitdir) == []
    assert [b.data["files"] for b in Ledger.open(root).records("events")
            if b.kind == "gate.blocked"] == [["api/app.py"]]
