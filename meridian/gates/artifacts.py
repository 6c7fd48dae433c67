"""The artifacts of a gate as they are now: the files, their tree id, their diff.

A verdict is bound to ``subject``, the id of a git tree holding exactly the artifact
files the evaluator read. Recomputing that id later and finding another one is what
makes a passed gate stale.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from meridian import gitio
from meridian.gates import globs

if TYPE_CHECKING:
    from meridian.evaluators.models import ArtifactFile

MAX_FILE_CHARS = 1_000_000
MAX_DIFF_CHARS = 4_000_000
_NEEDS_QUOTES = re.compile(r'[\x00-\x1f\x7f"\\\x85\u2028\u2029]')


def _header(path: str) -> str:
    """A path as a diff header names it: ``"..."``-quoted (JSON escapes) when it holds a
    line break or another control character, so a file named ``x\\n+++ b/.env`` cannot
    add header lines of its own (``_bundle_text.diff_path`` reads it back)."""
    return json.dumps(path) if _NEEDS_QUOTES.search(path) else path


def _text(data: bytes, encoding: str | None = None) -> tuple[str | None, bool]:
    """(text, exact): UTF-8 text as is, UTF-16/32 with a byte-order mark and text in the
    ``encoding`` ``.gitattributes`` names decoded (``gitio.decode_text``); text with no
    NUL byte that is not UTF-8 (a latin-1 source file) decoded with replacement
    characters, so it is still shown; None for binary content."""
    text = gitio.decode_text(data, encoding)
    if text is not None:
        return text, True
    if b"\0" in data:
        return None, False
    return data.decode("utf-8", "replace"), False


@dataclass(frozen=True)
class Snapshot:
    files: dict[str, bytes]  # repo-relative path -> content, sorted by path
    unmatched: list[str]  # declared globs that matched no file
    subject: str  # git tree id of exactly ``files``
    # symlink to a directory -> the paths below it the globs match that are not
    # artifacts at their own path (``globs.linked_dirs``): nothing judges them
    linked: dict[str, list[str]] = field(default_factory=dict)


def snapshot(repo: gitio.Repository, root: Path, patterns: Sequence[str],
             worktree: Sequence[str] | None = None) -> Snapshot:
    """The files matching ``patterns`` in the work tree now (``worktree``: a cached listing)."""
    listing = globs.worktree_files(repo, root) if worktree is None else worktree
    files: dict[str, bytes] = {}
    unmatched: list[str] = []
    linked = globs.linked_dirs(root, listing, patterns)
    for pattern in patterns:
        hits = [path for path in listing if globs.matches(pattern, path)]
        if not hits and not any(globs.matches(pattern, path)
                                for paths in linked.values() for path in paths):
            unmatched.append(pattern)
        for path in hits:
            if path not in files:
                files[path] = _content(root / path)
    for link in linked:  # bound as git stores it, its target path
        if link not in files:
            files[link] = _content(root / link)
    ordered = dict(sorted(files.items()))
    return Snapshot(files=ordered, unmatched=unmatched, subject=gitio.tree_of_files(repo, ordered),
                    linked=_unjudged(root, linked, ordered))


def _unjudged(root: Path, linked: dict[str, list[str]],
              files: dict[str, bytes]) -> dict[str, list[str]]:
    """Of the paths the globs reach through a symlink to a directory, those that are not
    artifacts at their own path (outside the globs or outside the repository)."""
    out: dict[str, list[str]] = {}
    top = os.path.realpath(root)
    for link, paths in linked.items():
        missing = []
        for path in paths:
            real = os.path.realpath(root / path) if path != "..." else ""
            inside = real.startswith(top + os.sep)
            if not (inside and globs.normalise(os.path.relpath(real, top)) in files):
                missing.append(path)
        if missing:
            out[link] = missing
    return out


def _content(path: Path) -> bytes:
    """A file's bytes; for a symlink, its target path, as git stores it. Following the
    link would hand the evaluator (possibly a remote API) a file from outside the
    repository, e.g. ``docs/notes.md -> ~/.ssh/id_rsa``."""
    if path.is_symlink():
        return os.fsencode(os.readlink(path))
    return path.read_bytes()


def encodings(repo: gitio.Repository, paths: Sequence[str]) -> dict[str, str]:
    """Per path, the ``working-tree-encoding`` ``.gitattributes`` gives it, where one is
    set: git checks such a file out in that encoding (UTF-16 say), and the scan must read
    it as such, not skip it as binary."""
    out = {}
    for path in paths:
        encoding = gitio.working_tree_encoding(repo, path)
        if encoding:
            out[path] = encoding
    return out


def artifact_files(files: dict[str, bytes], encoding: dict[str, str] | None = None,
                   ) -> tuple[list[ArtifactFile], list[str]]:
    """Bundle entries for ``files`` and notes on what was shortened or left out
    (``encoding``: per path, the working-tree encoding ``.gitattributes`` names)."""
    from meridian.evaluators.models import ArtifactFile  # pydantic: only when building a bundle

    out: list[ArtifactFile] = []
    notes: list[str] = []
    named = encoding or {}
    for path, data in files.items():
        text, exact = _text(data, named.get(path))
        if text is not None and not exact:
            notes.append(f"{path}: not valid UTF-8: shown with U+FFFD for the bytes that are not")
        if text is None:
            out.append(ArtifactFile(path=path, content="", truncated=True))
            notes.append(f"{path}: binary file ({len(data)} bytes), content not included")
            continue
        if len(text) > MAX_FILE_CHARS:
            out.append(ArtifactFile(path=path, content=text[:MAX_FILE_CHARS], truncated=True,
                                    total_chars=len(text)))
            notes.append(f"{path}: first {MAX_FILE_CHARS} of {len(text)} characters included")
            continue
        out.append(ArtifactFile(path=path, content=text))
    return out, notes


def base_files(repo: gitio.Repository, base_commit: str | None,
               patterns: Sequence[str]) -> dict[str, bytes]:
    """The artifact files as they were at ``base_commit`` ({} without one)."""
    if not base_commit:
        return {}
    return gitio.files_at_commit(repo, base_commit, lambda path: globs.matches_any(patterns, path))


def changed_lines(base_commit: str | None, before: dict[str, bytes],
                  current: dict[str, bytes], encoding: dict[str, str] | None = None,
                  ) -> dict[str, list[tuple[int, int]]] | None:
    """Per artifact file, the line ranges added or changed since the base commit (a file
    new since then: all of it; an unchanged file is absent). None without a base commit:
    there is nothing to compare with, so the whole tree is the change."""
    if not base_commit:
        return None
    from meridian.evaluators.changes import changed_lines as ranges_of
    from meridian.evaluators.changes import rename_source

    removed = {path: text for path, data in before.items() if path not in current
               if (text := gitio.decode_text(data)) is not None}
    out: dict[str, list[tuple[int, int]]] = {}
    for path, data in current.items():
        old = before.get(path)
        if old == data:
            continue
        new_text = gitio.decode_text(data, (encoding or {}).get(path))
        if new_text is None:
            continue
        old_text = None if old is None else gitio.decode_text(old)
        if old is None and removed:
            source = rename_source(new_text, removed)  # moved or renamed: diff the move
            old_text = None if source is None else removed[source]
        ranges = ranges_of(old_text, new_text)
        if ranges:
            out[path] = [tuple(r) for r in ranges]  # type: ignore[misc]
    return out


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    out = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def diff_since(repo: gitio.Repository, base_commit: str | None, patterns: Sequence[str],
               current: dict[str, bytes], *,
               before: dict[str, bytes] | None = None,
               encoding: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """Unified diff of the artifacts from ``base_commit`` to the work tree, and notes.

    With no base commit (the repository had no commits when the gate started) every
    artifact is shown as added. ``before``: the base files, when already read.
    """
    if before is None:
        before = base_files(repo, base_commit, patterns)
    chunks: list[str] = []
    for path in sorted(set(before) | set(current)):
        old, new = before.get(path), current.get(path)
        if old == new:
            continue
        old_text = "" if old is None else _text(old)[0]
        new_text = "" if new is None else _text(new, (encoding or {}).get(path))[0]
        if old_text is None or new_text is None:
            chunks.append(f"Binary file {_header(path)} changed\n")
            continue
        for line in difflib.unified_diff(
            # Only \n ends a line: a \r or \u2028 inside one is content (splitlines()
            # would cut there and the hunk counts would not match the lines).
            _lines(old_text), _lines(new_text),
            fromfile="/dev/null" if old is None else _header(f"a/{path}"),
            tofile="/dev/null" if new is None else _header(f"b/{path}"),
        ):
            # A last line without a newline (removed or added, wherever difflib puts it)
            # is marked as git marks it, never glued to the next diff line.
            chunks.append(line if line.endswith("\n")
                          else line + "\n\\ No newline at end of file\n")
    diff = "".join(chunks)
    if len(diff) > MAX_DIFF_CHARS:
        return diff[:MAX_DIFF_CHARS], [
            f"diff: first {MAX_DIFF_CHARS} of {len(diff)} characters included"]
    return diff, []
