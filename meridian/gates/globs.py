"""Artifact globs: which work-tree files a gate's verdict reads.

A pattern is relative to the repository root and uses '/' separators:

- ``*`` matches within one path segment, ``?`` one character, ``[abc]`` / ``[!abc]``
  a character class;
- ``**`` spans any number of directories (``src/**/*.py``, ``**/test_*.py``);
- a pattern that matches a directory takes every file below it (``docs``, ``docs/``,
  ``backend/**`` all mean "everything under docs/backend").

The same matcher serves the work-tree walk and ``Graph.gate_for_path``, so a hook
asking "which gate owns this file?" gets the answer the verdict was computed with.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # no `typing` on the Claude hook's allow path (meridian.lean)
if TYPE_CHECKING:  # matching needs no git: the Claude hook's cached view matches without pygit2
    from meridian import gitio


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be an artifact glob, or None when it is fine."""
    if not pattern.strip():
        return "an empty pattern matches nothing"
    if pattern.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", pattern):
        return "patterns are relative to the repository root; drop the leading '/'"
    if pattern.startswith("!"):
        return ("negation is not supported; an untracked git-ignored file is never an "
                "artifact, a tracked one always is")
    if "\\" in pattern:
        return "use '/' as the path separator"
    if ".." in pattern.split("/"):
        return "'..' would leave the repository"
    for index, char in enumerate(pattern):
        if char == "[" and _class_end(pattern, index) is None:
            return "unbalanced '[' in character class"
    try:
        compile_pattern(pattern)
    except re.error as exc:
        return f"invalid character class: {exc.msg}"
    return None


def _class_end(pattern: str, start: int) -> int | None:
    """Index of the ']' closing the class opened at ``start`` (a ']' first in it, after an
    optional '!', is a member, as in fnmatch), or None when the class never closes."""
    index = start + 1
    if pattern.startswith("!", index):
        index += 1
    if pattern.startswith("]", index):
        index += 1
    close = pattern.find("]", index)
    return None if close < 0 else close


def _translate(pattern: str) -> str:
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.rstrip("/") or "**"
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:[^/]+/)*")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif char == "*":
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[" and (close := _class_end(pattern, index)) is not None:
            body = pattern[index + 1:close]
            negate = body.startswith("!")
            body = re.sub(r"([\\\[\]^&~|])", r"\\\1", body[1:] if negate else body)
            out.append("[" + ("^" if negate else "") + body + "]")
            index = close + 1
        else:
            out.append(re.escape(char))
            index += 1
    # A match on a directory covers everything below it.
    return "".join(out) + "(?:/.*)?"


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(_translate(pattern), re.DOTALL)


def normalise(path: str | os.PathLike[str]) -> str:
    text = str(path).replace(os.sep, "/")
    while text.startswith("./"):
        text = text[2:]
    return text


def matches(pattern: str, path: str) -> bool:
    return compile_pattern(pattern).fullmatch(normalise(path)) is not None


def matches_any(patterns: Iterable[str], path: str) -> bool:
    path = normalise(path)
    return any(compile_pattern(p).fullmatch(path) is not None for p in patterns)


def worktree_files(repo: gitio.Repository, root: Path) -> list[str]:
    """Every file of the work tree that git tracks or does not ignore ('/'-separated,
    sorted): what a commit holds or ``git add -A`` would add.

    Untracked files count: an agent's uncommitted work is still the work being judged.
    A tracked file counts whatever the ignore rules say (git ignores them for a tracked
    file: ``git add -f src/extra.py`` under a ``.gitignore`` rule ships it all the same).
    A symlink is a file, as git stores it (its target path, never followed): one to a
    directory is not walked into. ``.git`` and ignored directories are pruned, so a large
    ``node_modules`` costs nothing; the index then names the tracked files below them.
    """
    from meridian import gitio

    found, pruned = walk(root, lambda path, is_dir: gitio.is_ignored(
        repo, path + "/" if is_dir else path))
    if not pruned:
        return found
    return with_tracked(root, found, gitio.index_paths(repo))


def walk(root: Path, ignored: Callable[[str, bool], bool]) -> tuple[list[str], bool]:
    """The files of the work tree that ``ignored(path, is_dir)`` keeps (sorted), and
    whether it ignored any path (then a tracked file may lie among them).

    A file is a regular file or a symlink (to anything: a file, a directory, nothing);
    a symlink to a directory is asked as a path with no trailing '/' (libgit2 then
    stats it: the plain reader is unsure where that differs)."""
    found: list[str] = []
    pruned = False
    for current, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(current, root)
        prefix = "" if rel_dir == "." else normalise(rel_dir) + "/"
        kept = []
        for d in dirs:
            if d == ".git":
                continue
            if os.path.islink(os.path.join(current, d)):
                files.append(d)  # listed as the link git stores, never walked into
            elif ignored(prefix + d, True):
                pruned = True
            else:
                kept.append(d)
        dirs[:] = sorted(kept)
        for name in files:
            rel = prefix + name
            full = os.path.join(current, name)
            if not (os.path.islink(full) or os.path.isfile(full)):
                continue
            if ignored(rel, False):
                pruned = True
            else:
                found.append(rel)
    return sorted(found), pruned


def with_tracked(root: Path, found: list[str], tracked: Iterable[str]) -> list[str]:
    """``found`` and the ``tracked`` paths (the index's) that are a file of the work tree
    now (a regular file or a symlink, reached through real directories only, as git
    reaches them): a tracked file ignored by a rule is still an artifact."""
    listed = set(found)
    extra = []
    real_dirs: dict[str, bool] = {}

    def real_dir(directory: str) -> bool:
        if directory not in real_dirs:
            parent, _, name = directory.rpartition("/")
            try:
                mode = os.lstat(os.path.join(root, directory)).st_mode
            except (OSError, ValueError):
                real_dirs[directory] = False
            else:
                real_dirs[directory] = stat.S_ISDIR(mode) and name != ".git" and \
                    (not parent or real_dir(parent))
        return real_dirs[directory]

    for path in tracked:
        if path in listed:
            continue
        parts = path.split("/")
        if any(not part or part in (".", "..", ".git") for part in parts):
            continue
        parent = path.rpartition("/")[0]
        if parent and not real_dir(parent):
            continue
        try:
            mode = os.lstat(os.path.join(root, path)).st_mode
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
            listed.add(path)
            extra.append(path)
    return sorted(found + extra) if extra else found


LINKED_WALK_LIMIT = 10_000


def linked_dirs(root: Path, listing: Iterable[str],
                patterns: Sequence[str]) -> dict[str, list[str]]:
    """Per symlink to a directory in ``listing``, the paths below it that ``patterns``
    match as the product reaches them through the link (``src/ext/__init__.py`` for
    ``src/ext -> ../vendor/ext``), sorted; a link none of whose paths match is absent.

    git stores the link (its target path), so the files behind it are no artifact of
    the tree: this names the ones the globs reach through it. Links below it are not
    followed (they are paths too); past ``LINKED_WALK_LIMIT`` entries the walk stops and
    ``...`` closes the list."""
    out: dict[str, list[str]] = {}
    compiled = [compile_pattern(p) for p in patterns]
    for link in listing:
        full = os.path.join(root, link)
        if not (os.path.islink(full) and os.path.isdir(full)):
            continue
        hits: list[str] = []
        seen = 0
        for current, dirs, files in os.walk(full):
            rel_dir = os.path.relpath(current, full)
            prefix = link + "/" + ("" if rel_dir == "." else normalise(rel_dir) + "/")
            dirs[:] = sorted(d for d in dirs if d != ".git")
            links = [d for d in dirs if os.path.islink(os.path.join(current, d))]
            for name in sorted([*files, *links]):
                seen += 1
                if any(c.fullmatch(prefix + name) for c in compiled):
                    hits.append(prefix + name)
            if seen > LINKED_WALK_LIMIT:
                hits.append("...")
                break
        if hits:
            out[link] = hits
    return out
