"""The PreToolUse view carried over state commits no Meridian writer followed
(``meridian.state_catchup.neutral_since``).

Layer: the Claude Code PreToolUse hook. A library caller or git plumbing that moves the
state branch leaves the view keyed by the old tip; the hook reads the new commits with
git and decides from the view only when they change no gate's phase. Each attack here
writes the state branch behind Meridian's back (a gate event, a corrupt line, an edit in
place, a rewrite, another stream, a merge) and checks that the hook then takes the full
path (pygit2 imported) and answers exactly as a decision with no view at all does; the
harmless appends (blocks, other kinds) are decided from the view and answered the same.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial.guard_support import base_env, claude_env, hook, make_project, run, tool

STATE = "refs/heads/meridian/state"


@pytest.fixture
def guarded(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    root = make_project(tmp_path / "project", home)
    run([sys.executable, "-P", "-m", "meridian", "gate", "start", "schema"], root,
        base_env(home))
    assert not _write(root, home, "schema/a.py")[0].denied  # the full path writes the view
    assert _write(root, home, "schema/a.py")[1] is False  # ... and the next is decided from it
    return root, home


def _write(root: Path, home: Path, path: str):
    """(outcome, whether the full path decided: pygit2 imported)."""
    env = claude_env(root, home, extra={"PYTHONPROFILEIMPORTTIME": "1"})
    outcome = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / path),
                                                  content="x = 1\n"), env=env)
    assert outcome.code == 0, outcome
    modules = {line.rsplit("|", 1)[-1].strip() for line in outcome.err.splitlines()
               if line.startswith("import time:")}
    return outcome, "pygit2" in modules


def _without_view(root: Path, home: Path, path: str) -> dict[str, object] | None:
    """The decision with no view at all (the full path from scratch)."""
    for view in (root / ".git" / "meridian").glob("claude-view-*.json"):
        view.unlink()
    outcome, full = _write(root, home, path)
    assert full
    return outcome.decision


def _git(root: Path, home: Path, *args: str, input: str | None = None,
         env: dict[str, str] | None = None) -> str:
    return run(["git", *args], root, {**base_env(home), **(env or {})}, input=input).stdout.strip()


def _last_shard(root: Path, home: Path) -> str:
    """The shard the newest event went to (where the ledger appends the next one)."""
    return _git(root, home, "log", "-1", "--name-only", "--format=", STATE, "--",
                "events/").splitlines()[0]


def _plumb(root: Path, home: Path, files: dict[str, bytes], *, parents: list[str] | None = None,
           base: str = STATE) -> None:
    """A state commit made with git plumbing: ``files`` (path -> bytes) replaced in the
    tree of ``base``, the ref moved to it (no Meridian writer runs)."""
    index = root / ".git" / "plumb-index"
    env = {"GIT_INDEX_FILE": str(index)}
    _git(root, home, "read-tree", base, env=env)
    for path, content in files.items():
        blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=content,
                              env=base_env(home), capture_output=True, check=True
                              ).stdout.decode().strip()
        _git(root, home, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree = _git(root, home, "write-tree", env=env)
    index.unlink()
    parent_args = [a for p in (parents if parents is not None else [base]) for a in ("-p", p)]
    commit = _git(root, home, "commit-tree", tree, *parent_args, "-m", "plumbing")
    _git(root, home, "update-ref", STATE, commit)


def _record(kind: str, data: dict[str, object]) -> bytes:
    from meridian import records

    made = records.make(kind, data, writer="plumber <p@x>")
    return (json.dumps({"id": made.id, "ts": made.ts, "kind": made.kind, "writer": made.writer,
                        "data": made.data}, sort_keys=True) + "\n").encode()


def _append(root: Path, home: Path, line: bytes) -> None:
    shard = _last_shard(root, home)
    old = subprocess.run(["git", "cat-file", "blob", f"{STATE}:{shard}"], cwd=root,
                         env=base_env(home), capture_output=True, check=True).stdout
    _plumb(root, home, {shard: old + line})


def _library_event(root: Path, kind: str, data: dict[str, object]) -> None:
    """An event appended by a library caller (``Ledger.emit``), no command around it."""
    script = ("import json, sys\nfrom meridian.ledger import Ledger\n"
              "Ledger.open(sys.argv[1]).emit(sys.argv[2], json.loads(sys.argv[3]))\n")
    subprocess.run([sys.executable, "-P", "-c", script, str(root), kind, json.dumps(data)],
                   check=True, capture_output=True)


def _tip(root: Path, home: Path) -> str:
    return _git(root, home, "rev-parse", STATE)


def _view_tip(root: Path) -> str:
    [view] = (root / ".git" / "meridian").glob("claude-view-*.json")
    return json.loads(view.read_text())["body"]["key"]["tip"]


@pytest.mark.parametrize("how", ["library block", "plumbing block", "plumbing other kind",
                                 "two commits"])
def test_harmless_appends_are_decided_from_the_view_as_in_full(
        guarded: tuple[Path, Path], how: str) -> None:
    root, home = guarded
    if how == "library block":
        _library_event(root, "gate.blocked", {"gate": "api", "source": "gate", "reason": "x"})
    elif how == "plumbing block":
        _append(root, home, _record("gate.blocked", {"gate": "api", "source": "gate",
                                                     "reason": "y"}))
    elif how == "plumbing other kind":
        _append(root, home, _record("session.note", {"text": "hello"}))
    else:
        _library_event(root, "gate.blocked", {"gate": "api", "source": "gate", "reason": "1"})
        _append(root, home, _record("session.note", {"text": "two"}))
    paths = ("schema/a.py", "api/app.py", "notes.md")
    decided = {}
    for path in paths:
        outcome, full = _write(root, home, path)
        assert not full, (how, path, outcome)  # decided from the view, carried over
        assert _view_tip(root) == _tip(root, home)  # ... and written re-keyed
        decided[path] = outcome.decision
    assert decided["api/app.py"] is not None and decided["schema/a.py"] is None
    for path in paths:
        assert decided[path] == _without_view(root, home, path), (how, path)


@pytest.mark.parametrize("attack", [
    "gate event by a library", "gate event by plumbing", "corrupt line", "shapeless line",
    "edit in place", "another stream", "a merge", "a rewrite", "an unrelated branch",
    "a shard with no newline", "an odd path under events"])
def test_what_the_view_cannot_vouch_for_is_decided_in_full(
        guarded: tuple[Path, Path], attack: str) -> None:
    root, home = guarded
    before = _tip(root, home)
    shard = _last_shard(root, home)
    old = subprocess.run(["git", "cat-file", "blob", f"{STATE}:{shard}"], cwd=root,
                         env=base_env(home), capture_output=True, check=True).stdout
    if attack == "gate event by a library":
        _library_event(root, "gate.started", {"gate": "api"})
    elif attack == "gate event by plumbing":
        _append(root, home, _record("gate.started", {"gate": "api"}))
    elif attack == "corrupt line":
        _append(root, home, b'{"id": "x", "kind": "gate.blocked", \n')
    elif attack == "shapeless line":
        _append(root, home, b'{"id": "x", "ts": "t", "kind": "gate.blocked", "writer": "w"}\n')
    elif attack == "edit in place":
        lines = old.splitlines(keepends=True)
        _plumb(root, home, {shard: b"".join(lines[:-1])
                            + _record("gate.blocked", {"gate": "api", "source": "gate",
                                                       "reason": "z"})})
    elif attack == "another stream":
        _plumb(root, home, {"memory/semantic/2026-01/1.jsonl": _record("memory.note", {})})
    elif attack == "a merge":
        _append(root, home, _record("gate.blocked", {"gate": "api", "source": "gate", "reason": "m"}))
        side = _tip(root, home)
        _git(root, home, "update-ref", STATE, before)
        _plumb(root, home, {shard: old + _record("session.note", {"text": "side"})})
        _plumb(root, home, {}, parents=[_tip(root, home), side])
    elif attack == "a rewrite":
        _git(root, home, "update-ref", STATE, f"{before}~1")
        _append(root, home, _record("gate.blocked", {"gate": "api", "source": "gate", "reason": "r"}))
    elif attack == "an unrelated branch":
        tree = _git(root, home, "rev-parse", f"{before}^{{tree}}")
        _git(root, home, "update-ref", STATE, _git(root, home, "commit-tree", tree, "-m", "new root"))
    elif attack == "a shard with no newline":
        _plumb(root, home, {shard: old.rstrip(b"\n")})
        _append(root, home, _record("gate.blocked", {"gate": "api", "source": "gate", "reason": "n"}))
    else:
        _plumb(root, home, {shard.replace(".jsonl", ".json"): _record(
            "gate.blocked", {"gate": "api", "source": "gate", "reason": "o"})})
    assert _tip(root, home) != before
    # (one call: the full path then rewrites the view for the tip it read)
    outcome, full = _write(root, home, "api/app.py")
    assert full, (attack, outcome)
    assert outcome.decision == _without_view(root, home, "api/app.py"), attack


def _nested(depth: int) -> bytes:
    """A well-formed record of a non-gate kind whose data nests ``depth`` lists deep."""
    from meridian import records

    made = records.make("session.note", {"text": "deep"}, writer="plumber <p@x>")
    return (json.dumps({"id": made.id, "ts": made.ts, "kind": made.kind, "writer": made.writer,
                        "data": {"x": "@"}}, sort_keys=True)
            .replace('"@"', "[" * depth + "]" * depth) + "\n").encode()


@pytest.mark.parametrize("depth", [100, 980])
def test_a_line_nesting_deep_is_decided_in_full(guarded: tuple[Path, Path], depth: int) -> None:
    """A line nesting ~980 deep parses in the catch-up (a shallow stack) and raises
    RecursionError in the full path's readers (deeper), which deny the call: the view
    allowed schema/a.py while a decision with no view denied it (r12)."""
    root, home = guarded
    _append(root, home, _nested(depth))
    outcome, full = _write(root, home, "schema/a.py")
    assert full, outcome
    assert outcome.decision == _without_view(root, home, "schema/a.py")


@pytest.mark.parametrize("written", [" {}\n", "\t{}\n", "{}\x1c\n"])
def test_a_state_ref_git_cannot_read_is_decided_in_full(guarded: tuple[Path, Path],
                                                        written: str) -> None:
    """The state tip moved over a harmless block, its loose ref then rewritten with a
    leading blank (or a trailing byte git does not count as space): git and libgit2 call
    the ref corrupt (the full path denies: it cannot decide), while ``str.strip`` read it
    as the new tip and the view was carried over to allow schema/a.py (r12)."""
    root, home = guarded
    _append(root, home, _record("gate.blocked", {"gate": "api", "source": "gate", "reason": "w"}))
    ref = root / ".git" / STATE
    ref.write_text(written.format(ref.read_text().strip()))
    outcome, full = _write(root, home, "schema/a.py")
    assert full, outcome
    assert outcome.decision == _without_view(root, home, "schema/a.py")


def test_packed_refs_with_crlf_are_decided_in_full(guarded: tuple[Path, Path]) -> None:
    """The state tip moved over a harmless block and packed, packed-refs then rewritten
    with CRLF line ends: git and libgit2 find no state ref there (the name ends in "\\r";
    the full path denies: the branch is missing although it was verified), while
    ``str.splitlines`` found the new tip and the view was carried over to allow (r12)."""
    root, home = guarded
    _append(root, home, _record("gate.blocked", {"gate": "api", "source": "gate", "reason": "c"}))
    _git(root, home, "pack-refs", "--all")
    packed = root / ".git" / "packed-refs"
    packed.write_bytes(packed.read_bytes().replace(b"\n", b"\r\n"))
    outcome, full = _write(root, home, "schema/a.py")
    assert full, outcome
    assert outcome.decision == _without_view(root, home, "schema/a.py")
