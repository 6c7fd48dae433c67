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
from collections.abc import Iterable
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
        return "negation is not supported; git-ignored files are never artifacts"
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
    """Every file of the work tree that git does not ignore ('/'-separated, sorted).

    Untracked files count: an agent's uncommitted work is still the work being judged.
    ``.git`` and ignored directories are pruned, so a large ``node_modules`` costs nothing.
    """
    from meridian import gitio

    found: list[str] = []
    for current, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(current, root)
        prefix = "" if rel_dir == "." else normalise(rel_dir) + "/"
        dirs[:] = sorted(
            d for d in dirs
            if d != ".git" and not gitio.is_ignored(repo, prefix + d + "/")
        )
        for name in files:
            rel = prefix + name
            if not gitio.is_ignored(repo, rel) and os.path.isfile(os.path.join(current, name)):
                found.append(rel)
    return sorted(found)
