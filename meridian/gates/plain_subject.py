"""A gate's artifact tree id (``subject``) as the full path computes it, without pygit2.

``gates.state`` marks a passed gate stale when its artifacts no longer hash to its
verdict's ``subject``: ``globs.worktree_files`` lists the work tree with libgit2's
ignore rules (``Repository.path_is_ignored``), ``artifacts.snapshot`` keeps the files
the gate's globs match and ``gitio.tree_of_files`` writes their tree. Importing pygit2
is some 45-85 ms of a fresh process. This lists the work tree the same way (the same
walk, ``.git`` pruned, symlinks stored as their target, ``os.path.isfile`` deciding a
file) and hashes the tree with ``hashlib`` (blobs ``100644``, trees ``40000``, git's
entry order), but decides "ignored" itself only for ignore rules it reads exactly as
git and libgit2 both do:

- sources: the built-in ``.git``, each walked directory's ``.gitignore`` and the common
  dir's ``info/exclude``; a global ``git/ignore`` (under ``XDG_CONFIG_HOME`` or
  ``~/.config``) or a git config (repository, worktree, ``~/.gitconfig``, XDG,
  ``/etc/gitconfig``) that names ``excludesFile``, ``ignoreCase``, an ``include``, a
  worktree config or another object format is not read here;
- patterns: literal characters, ``*``, ``?`` and simple ``[...]`` classes (matched on
  the UTF-8 bytes, as git does: ``?`` is one byte of ``é``), a leading or
  middle ``/`` anchoring, a trailing ``/`` for directories only. No negation (``!``)
  anywhere, no ``**``, no backslash, no leading or trailing whitespace, no ``\\r``:
  with no negation, a path is ignored exactly when some pattern matches it, whatever
  the sources' precedence; a UTF-8 byte order mark starting a file is skipped, as git
  and libgit2 do;
- paths that UTF-8 cannot spell, a ``.gitignore`` that is a symlink or not a file, no
  ``HOME`` (libgit2 then reads the passwd entry's home).

Anything else returns None: the caller derives with pygit2.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from meridian.gates import globs

if TYPE_CHECKING:
    from hashlib import sha1
else:
    # The interpreter's own sha1: ``hashlib`` loads OpenSSL first (some 4-9 ms of a
    # status answered from its view), as ``viewfile`` does for sha256.
    try:
        from _sha1 import sha1
    except ImportError:
        from hashlib import sha1

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_CONFIG_WORDS = re.compile(rb"excludesfile|ignorecase|include|worktreeconfig|objectformat"
                           rb"|precomposeunicode|protectntfs|protecthfs", re.IGNORECASE)
_CLASS = r"\[[^\]\[!^\\/-]+\]"
_PLAIN = re.compile(r"(?:[^\[\]\\!\s*?]|\*|\?|" + _CLASS + r")+")


class _Unsure(Exception):
    pass


class _Rule:
    __slots__ = ("anchored", "base", "dir_only", "regex")

    def __init__(self, base: str, line: str) -> None:
        pattern = line
        self.dir_only = pattern.endswith("/")
        if self.dir_only:
            pattern = pattern[:-1]
        if pattern.startswith("/"):
            pattern = pattern[1:]
            self.anchored = True
        else:
            self.anchored = "/" in pattern
        if not pattern or "**" in pattern or pattern.endswith("/") or "//" in pattern \
                or pattern.startswith("/"):
            raise _Unsure
        for part in pattern.split("/"):
            if not _PLAIN.fullmatch(part):
                raise _Unsure
        self.base = base.encode("utf-8")  # b'' or b'dir/'
        # Matched on the UTF-8 bytes, as git's and libgit2's wildmatch do: ``?`` is one
        # byte, ``*`` any bytes but '/', a class one of its bytes (``?`` does not match
        # ``é``, two bytes; ``[é]`` matches neither of them as a name).
        raw = pattern.encode("utf-8")
        out = []
        index = 0
        while index < len(raw):
            char = raw[index:index + 1]
            if char == b"*":
                out.append(b"[^/]*")
            elif char == b"?":
                out.append(b"[^/]")
            elif char == b"[":
                close = raw.index(b"]", index)
                out.append(b"[" + b"".join(re.escape(raw[at:at + 1])
                                           for at in range(index + 1, close)) + b"]")
                index = close
            else:
                out.append(re.escape(char))
            index += 1
        self.regex = re.compile(b"".join(out), re.DOTALL)

    def matches(self, path: bytes, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        if not path.startswith(self.base):
            return False
        rest = path[len(self.base):]
        if self.anchored:
            return self.regex.fullmatch(rest) is not None
        return self.regex.fullmatch(rest.rsplit(b"/", 1)[-1]) is not None


def _rules(base: str, data: bytes) -> list[_Rule]:
    # git and libgit2 skip a UTF-8 byte order mark at the start of an ignore file
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Unsure from None
    if "\r" in text or "\\" in text:
        raise _Unsure
    rules = []
    for line in text.split("\n"):
        if not line or line.startswith("#"):
            continue
        if line != line.strip() or line.startswith("!"):
            raise _Unsure
        rules.append(_Rule(base, line))
    return rules


def _read_optional(path: Path) -> bytes | None:
    try:
        if path.is_symlink():
            raise _Unsure
        if not path.exists():
            return None
        if not path.is_file():
            raise _Unsure
        return path.read_bytes()
    except OSError:
        raise _Unsure from None


def _global_rules(gitdir: Path, common: Path) -> list[_Rule]:
    home = os.environ.get("HOME")
    if not home:
        # libgit2 then looks for ~/.gitconfig and the global ignore file in the passwd
        # entry's home, git in none: not guessed
        raise _Unsure
    xdg = os.environ.get("XDG_CONFIG_HOME")
    xdg_dir = Path(xdg) / "git" if xdg else Path(home) / ".config" / "git"
    configs = [common / "config", gitdir / "config.worktree", Path("/etc/gitconfig"),
               Path(home) / ".gitconfig", xdg_dir / "config"]
    for config in configs:
        try:
            data = config.read_bytes()
        except FileNotFoundError:
            continue
        except OSError:
            raise _Unsure from None
        if _CONFIG_WORDS.search(data):
            raise _Unsure
    # The global ignore file: where libgit2 looks for it depends on the search path it
    # fixed when it was loaded (``pygit2.settings``), so one that exists is not guessed.
    for home_dir in {xdg_dir, Path(home) / ".config" / "git"}:
        if os.path.lexists(home_dir / "ignore"):
            raise _Unsure
    text = _read_optional(common / "info" / "exclude")
    return [] if text is None else _rules("", text)


def worktree_files(root: Path, gitdir: Path, common: Path) -> list[str] | None:
    """``globs.worktree_files(repo, root)``, or None when this cannot be sure of it."""
    try:
        rules = _global_rules(gitdir, common)
        return _walk(root, rules)
    except _Unsure:
        return None


def _ignored(rules: list[_Rule], path: str, is_dir: bool) -> bool:
    # libgit2's built-in rules ignore '.', '..' and '.git' in every directory
    if path.rsplit("/", 1)[-1] == ".git":
        return True
    raw = path.encode("utf-8")
    return any(rule.matches(raw, is_dir) for rule in rules)


def _walk(root: Path, rules: list[_Rule]) -> list[str]:
    found: list[str] = []
    inherited: dict[str, list[_Rule]] = {"": rules}
    for current, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(current, root)
        prefix = "" if rel_dir == "." else globs.normalise(rel_dir) + "/"
        applying = list(inherited.pop(prefix, rules))
        if ".gitignore" in files or ".gitignore" in dirs:
            data = _read_optional(Path(current) / ".gitignore")
            if data is not None:
                applying += _rules(prefix, data)
        for name in (*dirs, *files):
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                raise _Unsure from None
        dirs[:] = sorted(d for d in dirs
                         if d != ".git" and not _ignored(applying, prefix + d, True))
        for d in dirs:
            inherited[prefix + d + "/"] = applying
        for name in files:
            rel = prefix + name
            if not _ignored(applying, rel, False) and os.path.isfile(os.path.join(current, name)):
                found.append(rel)
    return sorted(found)


def _content(path: Path) -> bytes:
    if path.is_symlink():
        return os.fsencode(os.readlink(path))
    return path.read_bytes()


def _blob_id(data: bytes) -> bytes:
    return sha1(b"blob %d\0" % len(data) + data).digest()


def _tree_id(entries: dict[str, object]) -> bytes:
    """The raw id of a tree of ``entries`` (name -> blob id bytes or a nested dict)."""
    rows = []
    for name, value in entries.items():
        raw = name.encode("utf-8")
        if isinstance(value, dict):
            rows.append((raw + b"/", b"40000 " + raw + b"\0" + _tree_id(value)))
        else:
            assert isinstance(value, bytes)
            rows.append((raw, b"100644 " + raw + b"\0" + value))
    body = b"".join(row for _, row in sorted(rows))
    return sha1(b"tree %d\0" % len(body) + body).digest()


def subject(root: Path, listing: list[str], patterns: list[str]) -> str | None:
    """``artifacts.snapshot(repo, root, patterns, listing).subject`` (None: not sure)."""
    chosen: set[str] = set()
    for pattern in patterns:
        chosen.update(path for path in listing if globs.matches(pattern, path))
    if not chosen:
        return EMPTY_TREE
    tree: dict[str, object] = {}
    try:
        for path in sorted(chosen):
            parts = path.split("/")
            if any(not part or part in (".", "..") for part in parts):
                return None
            node = tree
            for part in parts[:-1]:
                child = node.setdefault(part, {})
                if not isinstance(child, dict):
                    return None
                node = child
            if parts[-1] in node:
                return None
            node[parts[-1]] = _blob_id(_content(root / path))
    except OSError:
        return None
    return _tree_id(tree).hex()
