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
import stat
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
        found, pruned = globs.walk(root, _Ignored(root, rules))
        if not pruned:
            return found
        return globs.with_tracked(root, found, index_paths(gitdir / "index"))
    except _Unsure:
        return None


def _ignored(rules: list[_Rule], path: str, is_dir: bool) -> bool:
    # libgit2's built-in rules ignore '.', '..' and '.git' in every directory
    if path.rsplit("/", 1)[-1] == ".git":
        return True
    raw = path.encode("utf-8")
    return any(rule.matches(raw, is_dir) for rule in rules)


class _Ignored:
    """``ignored(path, is_dir)`` for ``globs.walk``: the rules of the sources read once,
    and each directory's ``.gitignore`` read when a path of that directory is asked."""

    def __init__(self, root: Path, rules: list[_Rule]) -> None:
        self.root = root
        self.by_dir: dict[str, list[_Rule]] = {"": self._own("", rules)}

    def _own(self, prefix: str, inherited: list[_Rule]) -> list[_Rule]:
        path = os.path.join(self.root, prefix, ".gitignore")
        try:
            mode = os.lstat(path).st_mode
            if not stat.S_ISREG(mode):  # a symlink, a directory: not read here
                raise _Unsure
            with open(path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            return inherited
        except OSError:
            raise _Unsure from None
        return [*inherited, *_rules(prefix, data)]

    def _applying(self, prefix: str) -> list[_Rule]:
        rules = self.by_dir.get(prefix)
        if rules is None:
            parent = prefix[:-1].rpartition("/")[0]
            rules = self._own(prefix, self._applying(parent + "/" if parent else ""))
            self.by_dir[prefix] = rules
        return rules

    def __call__(self, path: str, is_dir: bool) -> bool:
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            raise _Unsure from None
        parent = path.rpartition("/")[0]
        rules = self._applying(parent + "/" if parent else "")
        ignored = _ignored(rules, path, is_dir)
        # A symlink to a directory is asked with no '/': libgit2 stats it and reads it as
        # a directory, git as a link (not one): where a directory rule tells them apart
        # this is not sure.
        if not is_dir and any(rule.dir_only for rule in rules) \
                and _ignored(rules, path, True) != ignored and os.path.isdir(self.root / path):
            raise _Unsure
        return ignored


def index_paths(index: Path) -> list[str]:
    """The paths a git index file holds (versions 2-4), as libgit2 reads them; raises
    ``_Unsure`` for anything else: a split or sparse index, an extension that must be
    understood, a file cut short, a path that is not UTF-8. No file: none."""
    try:
        if index.is_symlink():
            raise _Unsure
        data = index.read_bytes()
    except FileNotFoundError:
        return []
    except OSError:
        raise _Unsure from None
    if len(data) < 32 or data[:4] != b"DIRC":
        raise _Unsure
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        raise _Unsure
    end = len(data) - 20  # the trailing sha1 (a sha256 repository is not read here)
    if sha1(data[:end]).digest() != data[end:]:
        raise _Unsure  # libgit2 refuses an index whose checksum fails (or is skipped)
    paths: list[str] = []
    at = 12
    previous = b""
    try:
        for _ in range(count):
            flags = int.from_bytes(data[at + 60:at + 62], "big")
            head = 62
            if flags & 0x4000:  # extended flags (version 3 and later)
                if version < 3:
                    raise _Unsure
                head = 64
            start = at + head
            if version == 4:
                strip, width = 0, 0
                while True:  # git's offset varint: 7 bits a byte, +1 per continuation
                    byte = data[start + width]
                    width += 1
                    strip = (strip << 7) | (byte & 0x7F)
                    if not byte & 0x80:
                        break
                    strip += 1
                if strip > len(previous):
                    raise _Unsure
                stop = data.index(b"\0", start + width)
                name = previous[:len(previous) - strip] + data[start + width:stop]
                at = stop + 1
            else:
                stop = data.index(b"\0", start)
                name = data[start:stop]
                length = flags & 0xFFF
                if length != 0xFFF and length != len(name):
                    raise _Unsure
                at += (head + len(name) + 8) & ~7
            if at > end or not name or any(_not_a_name(part) for part in name.split(b"/")):
                raise _Unsure  # libgit2 refuses such an entry (.git, .., empty parts)
            paths.append(name.decode("utf-8"))
            previous = name
        while at < end:  # extensions: an optional one (A-Z first) is skipped
            signature = data[at:at + 4]
            size = int.from_bytes(data[at + 4:at + 8], "big")
            if not b"A" <= signature[:1] <= b"Z" or at + 8 + size > end:
                raise _Unsure
            if signature == b"TREE" and not _cache_tree_reads(data[at + 8:at + 8 + size]):
                raise _Unsure  # libgit2 parses the cache tree and refuses a corrupt one
            at += 8 + size
    except (IndexError, ValueError, UnicodeDecodeError):
        raise _Unsure from None
    if at != end:
        raise _Unsure
    return paths


def _not_a_name(part: bytes) -> bool:
    """A path part libgit2 refuses in an index entry (or may: not sure): empty, ``.``,
    ``..``, ``.git`` in any case, with trailing dots or spaces, or as ``git~1``."""
    lower = part.lower()
    return part in (b"", b".", b"..") or lower == b"git~1" or (
        lower.startswith(b".git") and lower[4:].strip(b". ") == b"")


def _cache_tree_reads(body: bytes) -> bool:
    """Whether a TREE extension has the shape libgit2's reader accepts: each node
    ``path NUL entries SP subtrees LF`` (entries >= -1, subtrees >= 0, decimal), then
    its 20-byte id unless entries is -1, then its subtrees; nothing left over."""
    at = 0

    def node() -> bool:
        nonlocal at
        try:
            stop = body.index(b"\0", at)
            space = body.index(b" ", stop + 1)
            line = body.index(b"\n", space + 1)
        except ValueError:
            return False
        entries, subtrees = body[stop + 1:space], body[space + 1:line]
        if not (entries == b"-1" or entries.isdigit()) or not subtrees.isdigit():
            return False
        at = line + 1
        if entries != b"-1":
            at += 20
            if at > len(body):
                return False
        return all(node() for _ in range(int(subtrees)))

    try:
        return node() and at == len(body)
    except RecursionError:
        return False


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
    chosen.update(globs.linked_dirs(root, listing, patterns))
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
