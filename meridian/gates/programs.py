"""The repository files an ``evaluator: command`` program names.

``command: python3 tools/judge.py`` runs a file of the repository: editing that file
changes the judge as surely as editing the command. The files a command names (its
shlex-split words, and the value of a ``--flag=path`` word, that are paths of tracked
files inside the project) are part of the gate's definition (their blob ids are in
``spec_hash``, so an edit makes a pass stale) and harness files (``meridian.harness``:
a change to one is recorded, marked as weakening). What such a program imports in turn
is not followed.
"""

from __future__ import annotations

import hashlib
import os
import shlex
from pathlib import Path


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # an unbalanced quote: the words as the shell would roughly see them
        return command.split()


def _relative(root: Path, word: str) -> str | None:
    """``word`` as a path inside ``root`` (posix, normalised), or None."""
    if not word or "\0" in word:
        return None
    path = Path(word)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(root.resolve())
        except (OSError, ValueError):
            return None
    relative = os.path.normpath(path).replace(os.sep, "/")
    if relative in (".", "") or relative.startswith("../") or relative == "..":
        return None
    return relative


def _tracked(root: Path) -> set[str] | None:
    """The paths git's index holds at ``root`` (None: no repository to ask)."""
    try:
        from meridian import gitio

        repo = gitio.open_repo(root)
        return {entry.path for entry in repo.index}
    except Exception:  # noqa: BLE001 - an exported tree with no repository: files on disk
        return None


def command_files(root: Path, command: str | None) -> list[str]:
    """The tracked files of the project at ``root`` that ``command`` names, sorted."""
    if not command:
        return []
    found: set[str] = set()
    tracked: set[str] | None = None
    asked = False
    for word in _words(command):
        candidates = [word] if not word.startswith("-") else []
        if "=" in word:
            candidates.append(word.split("=", 1)[1])
        for candidate in candidates:
            relative = _relative(root, candidate)
            if relative is None or not (root / relative).is_file():
                continue
            if not asked:
                tracked, asked = _tracked(root), True
            if tracked is None or relative in tracked:
                found.add(relative)
    return sorted(found)


def blob_id(path: Path) -> str | None:
    """The git blob id of the file's content as it is on disk (None: unreadable)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
