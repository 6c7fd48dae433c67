"""All git access: the only module that imports pygit2 or runs the git CLI.

Functions here are small and named for what they do. The ledger composes them into
its append/read/walk/merge operations; nothing else touches objects or refs.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pygit2

from meridian import packfile
from meridian.errors import LedgerConflict, MeridianError, NotARepository

Repository = pygit2.Repository
Oid = pygit2.Oid
Tree = pygit2.Tree
GitError = pygit2.GitError

# libgit2 keeps every pack file it opened open for the life of the repository object, so
# a process making thousands of appends (each its own small pack, merged and deleted
# later) would hold thousands of descriptors; with a limit it closes the least recently
# used (a pack is reopened when needed; a deleted one is skipped).
PACK_FILE_LIMIT = 128
if pygit2.option(pygit2.enums.Option.GET_MWINDOW_FILE_LIMIT) == 0:
    pygit2.option(pygit2.enums.Option.SET_MWINDOW_FILE_LIMIT, PACK_FILE_LIMIT)

BLOB_MODE = pygit2.enums.FileMode.BLOB
TREE_MODE = pygit2.enums.FileMode.TREE


def open_repo(path: str | os.PathLike[str] = ".") -> Repository:
    """The repository containing ``path`` (searching upwards), or NotARepository."""
    found = pygit2.discover_repository(str(path))
    if found is None:
        raise NotARepository(
            f"not a git repository (or any parent up to /): {Path(path).resolve()}"
        )
    try:
        return pygit2.Repository(found)
    except pygit2.GitError as exc:
        # an object format libgit2 does not know (extensions.objectFormat=sha256), a
        # config it cannot parse: refused before anything is read or written
        reason = (str(exc).strip().splitlines() or ["unreadable"])[0]
        hint = " (Meridian stores its state in SHA-1 repositories only)" \
            if "object format" in reason or "objectformat" in reason.lower() else ""
        raise MeridianError(f"cannot open the git repository {found}: {reason}{hint}") from None


def reopen(repo: Repository) -> Repository:
    """A new repository object for the same repository (nothing of libgit2's in-memory
    state of the old one carried over)."""
    return pygit2.Repository(repo.path)


_COMMON_DIRS: dict[str, Path] = {}


def common_dir(repo: Repository) -> Path:
    """The shared .git directory (a linked worktree's gitdir points to it)."""
    known = _COMMON_DIRS.get(repo.path)
    if known is not None:
        return known
    gitdir = Path(repo.path)
    pointer = gitdir / "commondir"
    if pointer.is_file():
        found = (gitdir / pointer.read_text().strip()).resolve()
    else:
        found = gitdir.resolve()
    _COMMON_DIRS[repo.path] = found
    return found


def meridian_dir(repo: Repository) -> Path:
    """``.git/meridian``: local caches, logs and verification state (never committed)."""
    path = common_dir(repo) / "meridian"
    path.mkdir(parents=True, exist_ok=True)
    return path


def workdir(repo: Repository) -> Path | None:
    return Path(repo.workdir) if repo.workdir else None


def identity(repo: Repository) -> tuple[str, str]:
    """(name, email) of the configured git user, or a clear stand-in."""
    try:
        sig = repo.default_signature
        return sig.name, sig.email
    except (KeyError, pygit2.GitError):
        user = os.environ.get("USER") or "unknown"
        return user, f"{user}@localhost"


def signature_now(who: tuple[str, str]) -> pygit2.Signature:
    return pygit2.Signature(*who)


def signature(repo: Repository, when: int | None = None) -> pygit2.Signature:
    name, email = identity(repo)
    if when is None:
        return pygit2.Signature(name, email)
    return pygit2.Signature(name, email, when, 0)


# --- refs -------------------------------------------------------------------------


def valid_ref_name(refname: str) -> bool:
    return bool(pygit2.reference_is_valid_name(refname))


def ref_target(repo: Repository, refname: str) -> Oid | None:
    """Where ``refname`` points, or None when it does not exist (other errors raise)."""
    try:
        ref = repo.references.get(refname)
    except (pygit2.GitError, ValueError) as exc:
        raise MeridianError(f"cannot read {refname}: {exc}") from None
    if ref is None:
        return None
    return ref.resolve().target  # type: ignore[return-value]


def current_branch(repo: Repository) -> str | None:
    """refs/heads/NAME that HEAD points to (also before the first commit), else None."""
    try:
        return repo.references["HEAD"].target if not repo.head_is_detached else None  # type: ignore[return-value]
    except (KeyError, pygit2.GitError):
        return None


# How git and libgit2 say "another writer got there first" (retry) as opposed to a
# real failure (a file where a directory should be, a bad name, a full disk, no
# permission: git's "Unable to create '<lock>': Permission denied").
CAS_MARKERS = ("but expected", "already exists", "File exists",
               "current tip is not the first parent", "failed to lock",
               "old reference value does not match")


def is_conflict(message: str) -> bool:
    """Whether a git/libgit2 error says the ref moved or is locked by another writer.

    Quoted paths are left out of the match, so a repository living under a directory
    such as ``already exists/`` cannot turn every real failure into a retry loop.
    """
    unquoted = re.sub(r"'[^'\n]*'", "''", message)
    return any(marker in unquoted for marker in CAS_MARKERS)


def set_ref(repo: Repository, refname: str, oid: Oid, *, expected: Oid | None) -> None:
    """Move ``refname`` to ``oid`` only if it still points at ``expected`` (CAS).

    Uses ``git update-ref NEW OLD``, which checks the old value under the ref lock;
    pygit2 exposes no compare-and-swap for a bare ref move.
    """
    old = str(expected) if expected is not None else "0" * 40
    proc = git(["update-ref", refname, str(oid), old], cwd=repo.path, check=False)
    if proc.returncode != 0:
        message = proc.stderr.strip()
        if ref_target(repo, refname) == oid:
            return  # the ref moved and git failed after (a reflog line): it is stored
        if is_conflict(message):
            raise LedgerConflict(message or f"{refname} moved")
        raise MeridianError(f"cannot update {refname}: "
                            f"{message.splitlines()[-1] if message else proc.returncode}")


def reflog_targets(repo: Repository, refname: str, limit: int,
                   tip: str | None = None) -> list[str]:
    """The ids ``refname`` pointed at, newest first, from git's reflog (empty without one).

    An entry that never took effect is left out: git and libgit2 append the reflog line
    before they rename the ref's lock into place, so a writer killed between the two
    leaves a line ``P -> C`` while the ref stays at ``P``; the next move is then logged
    from ``P`` again (or the ref, ``tip``, still names ``P``). Such a ``C`` was never the
    branch's tip and says nothing about a rewrite.

    Read from the end of the reflog file, so the cost follows ``limit``, not the number
    of times the ref ever moved (libgit2 parses the whole log); libgit2's reader is the
    fallback for a log this cannot read.
    """
    pairs: list[tuple[str, str]] = []  # (old, new), newest first
    path = common_dir(repo) / "logs" / refname
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            chunk, data = 256 * max(limit, 1), b""
            while True:
                start = max(0, size - chunk)
                handle.seek(start)
                data = handle.read(size - start)
                lines = data.splitlines()
                if start == 0 or len(lines) > limit:
                    break
                chunk *= 4
        if start > 0:
            lines = lines[1:]  # the first one may be cut
        for line in reversed(lines):
            fields = line.split(b" ", 2)
            if len(fields) < 3 or len(fields[0]) != 40 or len(fields[1]) != 40:
                raise ValueError("not a reflog line")
            pairs.append((fields[0].decode("ascii"), fields[1].decode("ascii")))
            if len(pairs) >= limit:
                break
        return _effective_targets(pairs, tip)
    except FileNotFoundError:
        return []
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    pairs = []
    try:
        ref = repo.references.get(refname)
        if ref is None:
            return []
        for entry in ref.log():
            pairs.append((str(entry.oid_old), str(entry.oid_new)))
            if len(pairs) >= limit:
                break
    except (pygit2.GitError, OSError, ValueError):
        return []
    return _effective_targets(pairs, tip)


def _effective_targets(pairs: list[tuple[str, str]], tip: str | None) -> list[str]:
    """The new ids of reflog entries (newest first) that took effect: an entry ``P -> C``
    whose successor moved the ref from ``P`` again (or, newest, with the ref still at
    ``P``) was logged by a writer that died before the ref moved."""
    out = []
    following = tip  # what the ref held when the next (newer) move was made
    for old, new in pairs:
        if following is not None and new != following and old == following:
            continue  # logged, never in effect: the ref stayed at `old`
        out.append(new)
        following = old
    return out


def ancestors_among(repo: Repository, tip: Oid, wanted: set[str], limit: int) -> set[str]:
    """Those of ``wanted`` that are ``tip`` or among its ``limit`` newest ancestors
    (one walk, stopped once every wanted id was met)."""
    found: set[str] = set()
    for count, commit in enumerate(repo.walk(tip, pygit2.enums.SortMode.NONE)):
        oid = str(commit.id)
        if oid in wanted:
            found.add(oid)
            if len(found) == len(wanted):
                break
        if count >= limit:
            break
    return found


def list_refs(repo: Repository, prefix: str) -> list[str]:
    return sorted(name for name in repo.references if name.startswith(prefix))


def delete_ref(repo: Repository, refname: str) -> None:
    repo.references.delete(refname)


# --- objects ----------------------------------------------------------------------


_T = TypeVar("_T")
ODB_TRIES = 5


def _raced(exc: BaseException) -> bool:
    return "No such file or directory" in str(exc)


def _odb_write(write: Callable[[], _T]) -> _T:
    """``write()`` (an object write: blob, tree or commit), retried when a concurrent
    `git prune-packed` (Ledger.pack) removed the object's directory between libgit2
    creating it and renaming the object in (ENOENT). Writing an object twice is
    harmless; any other failure, or the race every time, is raised to the caller."""
    for attempt in range(ODB_TRIES):
        try:
            return write()
        except (pygit2.GitError, OSError) as exc:
            if attempt < ODB_TRIES - 1 and _raced(exc):
                continue
            raise
    raise AssertionError("unreachable")


def write_blob(repo: Repository, data: bytes) -> Oid:
    try:
        return _odb_write(lambda: repo.create_blob(data))
    except (pygit2.GitError, OSError) as exc:
        raise MeridianError(f"cannot write to the object database: {_os_reason(exc)}") from None


def _os_reason(exc: BaseException) -> str:
    """One line for an OS-level failure (a full disk says so)."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return (text.strip().splitlines() or [type(exc).__name__])[-1]


def stored_on_branch(repo: Repository, refname: str, oid: Oid, tree: Oid,
                     objects: Sequence[Oid] = (),
                     pack: packfile.Written | None = None) -> bool | None:
    """Whether commit ``oid`` (with ``tree``, and ``objects``: the blobs and subtrees the
    write made) is on disk and ``refname`` reaches it.

    Read through a fresh repository object, so nothing libgit2 keeps in memory (an id
    it returned for an object whose write failed) can stand in for the disk. None when
    the ref names a commit that is not on disk itself, or is this write's and lacks an
    object of it (the branch must be put back).
    """
    if _stored_loose(repo, refname, oid, tree, objects, pack):
        return True
    try:
        fresh = pygit2.Repository(repo.path)
        ref = fresh.references.get(refname)
        if ref is None:
            return False
        target = ref.resolve().target  # (a symbolic ref: the commit its target names)
    except (pygit2.GitError, OSError, ValueError, KeyError):
        return False

    def get(wanted: Oid) -> pygit2.Object | None:
        try:
            return fresh.get(wanted)
        except (pygit2.GitError, OSError, ValueError, KeyError):
            return None  # unreadable (a pack cut short, say): not on disk as written

    try:
        commit = get(oid)
        tip = get(target)  # type: ignore[arg-type]
        if not isinstance(tip, pygit2.Commit):
            return None
        if not isinstance(commit, pygit2.Commit) or commit.tree_id != tree \
                or not isinstance(get(tree), pygit2.Tree) \
                or any(get(written) is None for written in objects):
            # Lost (a blob or tree of the write is not on disk): a branch naming it must
            # be put back, or the next write would build on the hole.
            return None if target == oid else False
        return target == oid or fresh.descendant_of(target, oid)
    except (pygit2.GitError, OSError, ValueError, KeyError):
        return False


def _stored_loose(repo: Repository, refname: str, oid: Oid, tree: Oid,
                  objects: Sequence[Oid] = (), pack: packfile.Written | None = None) -> bool:
    """The common case of ``stored_on_branch``, read from the files themselves: the loose
    ref names ``oid`` and the commit, its tree and ``objects`` are loose objects on disk
    (libgit2 renames an object into place only once it is completely written) or in
    ``pack``, whose pack and index files have the sizes written. False means "ask the
    slow way", never "not stored"."""
    try:
        common = str(common_dir(repo))
        with open(os.path.join(common, refname), "rb") as handle:
            if handle.read().strip() != str(oid).encode():
                return False
        packed: frozenset[bytes] = frozenset()
        if pack is not None:
            where = os.path.join(common, "objects", "pack", pack.name)
            if os.stat(where + ".pack").st_size != pack.pack_size \
                    or os.stat(where + ".idx").st_size != pack.idx_size:
                return False
            packed = frozenset(pack.ids)
        for written in (oid, tree, *objects):
            if written.raw in packed:
                continue
            name = str(written)
            if os.stat(os.path.join(common, "objects", name[:2], name[2:])).st_size == 0:
                return False
    except OSError:
        return False
    return True


def read_blob(repo: Repository, oid: Oid) -> bytes:
    return repo[oid].data  # type: ignore[no-any-return, union-attr, attr-defined]


def commit_parents(repo: Repository, commit_oid: Oid) -> list[Oid]:
    commit = repo[commit_oid]
    return list(commit.parent_ids) if isinstance(commit, pygit2.Commit) else []


def commit_tree_id(repo: Repository, commit_oid: Oid) -> Oid:
    commit = repo[commit_oid]
    if not isinstance(commit, pygit2.Commit):
        raise MeridianError(f"{commit_oid} is not a commit")
    return commit.tree_id


def commit_tree(repo: Repository, commit_oid: Oid) -> pygit2.Tree:
    return repo[commit_oid].peel(pygit2.Tree)  # type: ignore[no-any-return]


def tree_entry(repo: Repository, tree: pygit2.Tree | None, path: str) -> pygit2.Object | None:
    if tree is None:
        return None
    try:
        entry = tree[path]
    except KeyError:
        return None
    return repo[entry.id]


def tree_names(repo: Repository, tree: pygit2.Tree | None, path: str) -> list[tuple[str, bool]]:
    """Sorted (name, is_dir) entries of the directory ``path`` ('' is the root)."""
    node: pygit2.Object | None = tree if path in ("", ".") else tree_entry(repo, tree, path)
    if not isinstance(node, pygit2.Tree):
        return []
    return sorted((entry.name, entry.type_str == "tree") for entry in node)  # type: ignore[misc]


# What git's ``working-tree-encoding`` (and editors) write with a byte-order mark: the
# UTF-32 marks first, as UTF-32-LE's starts with UTF-16-LE's.
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def decode_text(data: bytes, encoding: str | None = None) -> str | None:
    """File content as text, or None for binary content.

    UTF-8; UTF-16/32 with a byte-order mark (what ``working-tree-encoding=UTF-16LE-BOM``
    checks out), decoded without the mark; ``encoding``: the one ``.gitattributes`` names
    for the file (``working-tree-encoding``), tried first. Anything else with a NUL byte,
    or not UTF-8, is binary."""
    if encoding:
        try:
            text = data.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            pass
        else:
            return text.removeprefix("\ufeff")
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or data[:4] == b"\x00\x00\xfe\xff":
        for mark, name in _BOMS:
            if data.startswith(mark):
                try:
                    return data[len(mark):].decode(name)
                except UnicodeDecodeError:
                    break
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def working_tree_encoding(repo: Repository, path: str) -> str | None:
    """The ``working-tree-encoding`` ``.gitattributes`` gives ``path`` (None: unset, or
    UTF-8, which needs no decoding of its own)."""
    try:
        value = repo.get_attr(path, "working-tree-encoding")
    except (pygit2.GitError, ValueError):
        return None
    if not isinstance(value, str) or value.replace("-", "").lower() == "utf8":
        return None
    return value


def blob_data(obj: pygit2.Object | None) -> bytes | None:
    """The bytes of a blob already looked up (no second object-store lookup)."""
    return bytes(obj.data) if isinstance(obj, pygit2.Blob) else None


def blob_size(obj: pygit2.Object | None) -> int:
    return obj.size if isinstance(obj, pygit2.Blob) else 0


def object_size(repo: Repository, oid: Oid) -> int:
    """An object's size from its header, without inflating it, where the installed pygit2
    has ``Odb.read_header``; the oldest one allowed (1.16) does not, so it reads the
    object."""
    read_header = getattr(repo.odb, "read_header", None)
    if read_header is not None:
        return int(read_header(oid)[1])
    return len(repo.odb.read(oid)[1])


def update_tree(repo: Repository, base: pygit2.Tree | None, updates: Mapping[str, Oid],
                written: list[Oid] | None = None) -> Oid:
    """A new tree: ``base`` with each ``path -> blob`` of ``updates`` written in.

    Only the directories on the updated paths are rebuilt, so the cost follows the
    number of updates, not the size of the tree. ``written`` collects the id of every
    tree written (the write acknowledgement checks each is on disk).
    """
    direct: dict[str, Oid] = {}
    nested: dict[str, dict[str, Oid]] = {}
    for path, oid in updates.items():
        head, _, rest = path.partition("/")
        if rest:
            nested.setdefault(head, {})[rest] = oid
        else:
            direct[head] = oid
    try:
        builder = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
        for name, oid in direct.items():
            builder.insert(name, oid, BLOB_MODE)
        for name, sub_updates in nested.items():
            sub_base = None
            if base is not None and name in base:
                candidate = repo[base[name].id]
                sub_base = candidate if isinstance(candidate, pygit2.Tree) else None
            builder.insert(name, update_tree(repo, sub_base, sub_updates, written), TREE_MODE)
        oid = _odb_write(builder.write)
        if written is not None:
            written.append(oid)
        return oid
    except (pygit2.GitError, OSError) as exc:
        # libgit2 refuses to insert an object that is not in the database: one whose
        # write a full disk lost although an id came back. One line, nothing stored.
        raise MeridianError(f"cannot write to the object database: {_os_reason(exc)} "
                            "(is the disk full?)") from None


# --- appends written as one small pack (see meridian.packfile) ------------------------

_TREE_ENTRY = re.compile(rb"([0-7]{5,6}) ([^\0]+)\0", re.DOTALL)
_BLOB_MODE_BYTES, _TREE_MODE_BYTES = b"100644", b"40000"
_BAD_NAMES = frozenset({b"", b".", b".."})


def parse_tree(raw: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """(mode, name, 20-byte id) of each entry of a raw tree object, in stored order."""
    out = []
    pos, end = 0, len(raw)
    while pos < end:
        match = _TREE_ENTRY.match(raw, pos)
        if match is None or match.end() + 20 > end:
            raise MeridianError("a tree on the state branch is corrupt; run `git fsck`")
        pos = match.end() + 20
        out.append((match.group(1), match.group(2), raw[match.end():pos]))
    return out


def _tree_key(mode: bytes, name: bytes) -> bytes:
    return name + b"/" if mode == _TREE_MODE_BYTES else name  # git's entry order


class RawEntry:
    """A tree entry as ``meridian.layout`` reads one (``name``, ``type_str``, ``id``)."""

    __slots__ = ("id", "name", "raw_id", "type_str")

    def __init__(self, mode: bytes, name: bytes, raw_id: bytes) -> None:
        self.name = name.decode("utf-8", "surrogateescape")
        self.type_str = "tree" if mode == _TREE_MODE_BYTES else "blob"
        self.raw_id = raw_id
        self.id = Oid(raw=raw_id)


class RawTree:
    """A tree read as bytes: its length, entries by position and in order."""

    def __init__(self, raw_id: bytes, raw: bytes | None = None,
                 entries: list[tuple[bytes, bytes, bytes]] | None = None,
                 ids_at: list[int] | None = None) -> None:
        self.raw_id = raw_id
        self.entries = entries if entries is not None else parse_tree(raw or b"")
        self.raw = raw
        self._ids_at = ids_at

    def ids_at(self) -> list[int]:
        """Where each entry's id starts in the tree's bytes (a name's length, not its id,
        places the entries after it: an id replaced in place moves nothing)."""
        if self._ids_at is None:
            out, at = [], 0
            for mode, name, _ in self.entries:
                at += len(mode) + len(name) + 2
                out.append(at)
                at += 20
            self._ids_at = out
        return self._ids_at

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, position: int) -> RawEntry:
        return RawEntry(*self.entries[position])

    def __iter__(self) -> Iterator[RawEntry]:
        return (RawEntry(*entry) for entry in self.entries)

    def find(self, name: bytes) -> tuple[bytes, bytes, bytes] | None:
        for entry in reversed(self.entries):  # appends edit the newest (last) entries
            if entry[1] == name:
                return entry
        return None


class PackedAppend:
    """The objects of one append, built in memory and written as one pack.

    Trees are edited as lists of entries: a tree this process made is taken from
    ``known`` (id -> tree), any other is read from the object store once. ``self[id]``
    is the tree ``meridian.layout`` reads; ``made`` the trees this append made. Nothing
    is on disk before ``write``.
    """

    def __init__(self, repo: Repository, known: Mapping[bytes, RawTree]) -> None:
        self.repo = repo
        self.known = known
        self.objects: dict[bytes, tuple[int, bytes]] = {}  # id -> (type, data)
        self.made: dict[bytes, RawTree] = {}
        self._trees: dict[bytes, RawTree] = {}

    def tree(self, raw_id: bytes) -> RawTree:
        found = self._trees.get(raw_id) or self.known.get(raw_id)
        if found is None:
            kind, raw = self.repo.odb.read(Oid(raw=raw_id))
            if kind != packfile.TREE:
                raise MeridianError(f"object {raw_id.hex()} on the state branch is not a tree")
            found = self._trees[raw_id] = RawTree(raw_id, raw)
        return found

    def __getitem__(self, oid: Oid) -> RawTree:
        return self.tree(oid.raw)

    def entry(self, root: bytes | None, path: str) -> tuple[bytes, bytes, bytes] | None:
        """(mode, name, id) at ``path`` below the tree ``root``, or None."""
        node = root
        found = None
        for part in path.split("/"):
            if node is None:
                return None
            found = self.tree(node).find(part.encode())
            if found is None:
                return None
            node = found[2] if found[0] == _TREE_MODE_BYTES else None
        return found

    def subtree(self, root: bytes | None, path: str) -> RawTree | None:
        found = self.entry(root, path)
        return self.tree(found[2]) if found is not None and found[0] == _TREE_MODE_BYTES \
            else None

    def add(self, kind: int, data: bytes) -> bytes:
        oid = packfile.object_id(kind, data)
        self.objects.setdefault(oid, (kind, data))
        return oid

    def update(self, base: bytes | None, updates: Mapping[str, bytes]) -> bytes:
        """The id of ``base`` with each ``path -> blob id`` of ``updates`` written in."""
        direct: dict[bytes, bytes] = {}
        nested: dict[bytes, dict[str, bytes]] = {}
        for path, oid in updates.items():
            head, _, rest = path.partition("/")
            name = head.encode()
            if name in _BAD_NAMES or b"\0" in name or name.lower() == b".git":
                raise MeridianError(f"cannot write {path!r} to the state branch: "
                                    f"{head!r} is not a valid file name")
            if rest:
                nested.setdefault(name, {})[rest] = oid
            else:
                direct[name] = oid
        base_tree = self.tree(base) if base is not None else None
        entries = list(base_tree.entries) if base_tree is not None else []
        in_place: list[tuple[int, bytes]] = []  # (entry, new id): the common case
        reshaped = base_tree is None or base_tree.raw is None
        changes = [(_BLOB_MODE_BYTES, name, oid) for name, oid in direct.items()]
        for name, sub_updates in nested.items():
            current = next((e for e in reversed(entries) if e[1] == name), None)
            sub_base = current[2] if current is not None and current[0] == _TREE_MODE_BYTES \
                else None
            changes.append((_TREE_MODE_BYTES, name, self.update(sub_base, sub_updates)))
        for mode, name, oid in changes:
            index = next((at for at in range(len(entries) - 1, -1, -1)
                          if entries[at][1] == name), None)
            if index is not None and entries[index][0] == mode:
                entries[index] = (mode, name, oid)  # the common case: same place
                in_place.append((index, oid))
                continue
            reshaped = True
            if index is not None:
                del entries[index]  # a blob becoming a tree (or back) moves in git's order
            key = _tree_key(mode, name)
            place = len(entries)
            while place and _tree_key(entries[place - 1][0], entries[place - 1][1]) > key:
                place -= 1
            entries.insert(place, (mode, name, oid))
        if reshaped or base_tree is None or base_tree.raw is None:
            data = b"".join(b"%s %s\0%s" % e for e in entries)
            ids_at = None
        else:
            # only ids changed: the base's bytes with those ids written over
            ids_at = base_tree.ids_at()
            spliced = bytearray(base_tree.raw)
            for index, new_id in in_place:
                spliced[ids_at[index]:ids_at[index] + 20] = new_id
            data = bytes(spliced)
        oid = self.add(packfile.TREE, data)
        self.made[oid] = RawTree(oid, data, entries=entries, ids_at=ids_at)
        return oid

    def write(self, durable: bool | None = None) -> packfile.Written:
        """The pack of every object made, on disk and visible; OSError leaves none.
        ``durable``: fsync it (None: as the git config asks). The pack is kept (a
        ``.keep`` file, as git's receive-pack keeps a pack until its refs moved) from
        before it is visible: the caller releases it (``release_pack``) once the ref
        names its objects, or the write failed."""
        directory = pack_dir(self.repo)
        return packfile.write(directory, ((kind, data, oid)
                                          for oid, (kind, data) in self.objects.items()),
                              durable=fsync_packs(self.repo) if durable is None else durable,
                              keep=True)


def write_packed(append: PackedAppend, durable: bool | None = None) -> packfile.Written:
    try:
        return append.write(durable)
    except OSError as exc:
        raise MeridianError(f"cannot write to the object database: {_os_reason(exc)}") from None


def create_commit(
    repo: Repository,
    refname: str,
    tree: Oid,
    parents: Sequence[Oid],
    message: str,
    *,
    expected: Oid | None,
    who: tuple[str, str] | None = None,
    sig: pygit2.Signature | None = None,
    stored: Oid | None = None,
    fsync_ref: bool | None = None,
) -> Oid:
    """Write a commit and move ``refname`` to it iff the ref is still at ``expected``.

    The compare-and-swap happens under the ref's lock file: when another writer moved
    the ref first, this raises LedgerConflict and nothing is lost. ``who`` is the
    (name, email) to commit as, when the caller read it already (``identity``: a
    configuration lookup per commit otherwise); ``sig`` the signature itself, when the
    caller wrote the commit object already (``commit_bytes``), and ``stored`` its id:
    then only the ref moves, by ``swap_ref`` (git's own lock protocol, in process),
    or by libgit2 where that does not apply (HEAD names the ref, a symbolic ref);
    ``fsync_ref`` is ``fsync_settings``' answer for refs when the caller read it.
    """
    if sig is None:
        sig = pygit2.Signature(*who) if who is not None else signature(repo)
    if expected is None and stored is not None and not parents and swap_ref(
            repo, refname, stored, expected=None, sig=sig,
            message=reflog_message(message, parents), durable=fsync_ref):
        return stored
    if expected is None:
        # libgit2 creates a missing ref with force, so two writers racing to make the
        # first commit could both "win". Create the ref with an explicit zero old value.
        if ref_target(repo, refname) is not None:
            raise LedgerConflict(f"{refname} was created by another writer")
        oid = _odb_write(lambda: repo.create_commit(None, sig, sig, message, tree, list(parents)))
        set_ref(repo, refname, oid, expected=None)
        return oid
    if not parents or parents[0] != expected:
        raise ValueError("the first parent must be the expected tip")
    if stored is not None and swap_ref(repo, refname, stored, expected=expected, sig=sig,
                                       message=reflog_message(message, parents),
                                       durable=fsync_ref):
        return stored
    try:
        # (the object is written before the ref is touched: a raced write is retried)
        return _odb_write(lambda: repo.create_commit(refname, sig, sig, message, tree,
                                                     list(parents)))
    except (pygit2.GitError, pygit2.AlreadyExistsError, OSError, KeyError) as exc:
        if isinstance(exc, pygit2.AlreadyExistsError) or is_conflict(str(exc)):
            raise LedgerConflict(str(exc)) from None
        # An error reported after the ref moved (a reflog line that could not be
        # appended, say) still leaves the commit on the branch: that write is stored,
        # and saying "failed" would make the caller write it again.
        moved = moved_to(repo, refname, expected, sig, tree, parents, message)
        if moved is not None:
            return moved
        reason = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc  # pygit2 1.16
        raise MeridianError(f"cannot write {refname}: {reason}") from None


_ZERO_ID = b"0" * 40
_HEX_ID = re.compile(rb"[0-9a-f]{40}\n?")
_os_rename = os.replace  # (a test kills the writer here; replace: over the ref on Windows too)
_ref_write = os.write  # (a test fills the disk here)


def reflog_message(message: str, parents: Sequence[Oid]) -> str:
    """The reflog message libgit2's ``create_commit`` writes: ``commit: <summary>``
    (``commit (initial)``, ``commit (merge)``), the summary being the commit message's
    first paragraph on one line."""
    paragraph = message.lstrip().split("\n\n", 1)[0]
    kind = " (initial)" if not parents else " (merge)" if len(parents) > 1 else ""
    return f"commit{kind}: {' '.join(paragraph.split())}"


def _packed_ref(common: str, refname: str) -> bytes | None:
    """The id ``refname`` has in packed-refs (hex), or None when it is not there."""
    try:
        with open(os.path.join(common, "packed-refs"), "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    wanted = b" " + refname.encode() + b"\n"
    at = data.find(wanted)
    while at != -1:
        start = data.rfind(b"\n", 0, at) + 1
        if at - start == 40 and data[start] not in b"#^":
            return data[start:at]
        at = data.find(wanted, at + 1)
    return None


def _reflog_wanted(repo: Repository, refname: str) -> bool:
    """Whether git would create ``refname``'s reflog (core.logAllRefUpdates: true, the
    default outside a bare repository, for branches; always: for every ref)."""
    try:
        value = repo.config["core.logAllRefUpdates"]
    except (KeyError, pygit2.GitError):
        value = None
    if value is None:
        return not repo.is_bare and refname.startswith("refs/heads/")
    value = str(value).strip().lower()
    if value == "always":
        return True
    if value in ("true", "yes", "on", "1"):
        return refname.startswith(("refs/heads/", "refs/remotes/", "refs/notes/"))
    return False


def swap_ref(repo: Repository, refname: str, new: Oid, *, expected: Oid | None,
             sig: pygit2.Signature, message: str, durable: bool | None = None) -> bool:
    """Move the loose ref ``refname`` to ``new`` iff it names ``expected`` (None: it
    must not exist), exactly as git's files backend does: ``<ref>.lock`` created with
    O_CREAT|O_EXCL (another writer holding it is a conflict), the current value read
    under the lock (the loose ref, else packed-refs), the new value written to the
    lock, the reflog line appended in git's format (created as core.logAllRefUpdates
    says), each fsynced only when core.fsync asks (``durable``: the caller read it
    already), and the lock renamed over the ref.

    Like git, the reflog line goes before the rename: a writer killed between the two
    leaves a line naming a commit that never became the tip (and its lock, expired
    by the ledger like any lock a killed writer left). Returns False, touching
    nothing, where this does not apply (the refs are in a reftable, git's other ref
    backend, where a loose ref file would be one no git reads; HEAD names the ref,
    whose reflog git and libgit2 also append to; the ref is symbolic): the caller
    lets libgit2 move it.
    """
    common = str(common_dir(repo))
    if os.path.isdir(f"{common}/reftable"):
        return False  # `git init --ref-format=reftable` (git 2.45+), `git refs migrate`
    ref_path = f"{common}/{refname}"
    lock_path = ref_path + ".lock"
    head = _read_small(f"{repo.path}/HEAD")
    if head is not None and head.strip() == b"ref: " + refname.encode():
        return False
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        for attempt in range(3):
            try:
                fd = os.open(lock_path, flags, 0o666)
                break
            except FileNotFoundError:
                # the ref's directory is missing (the first ref in it, or git removed it
                # empty meanwhile, as it does after deleting or packing a ref): made,
                # maybe by another writer at the same time; a file in its place fails
                # here, FileExistsError naming the directory, not the lock
                if attempt == 2:
                    raise
                os.makedirs(os.path.dirname(lock_path), exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        if isinstance(exc, NotADirectoryError) or exc.filename != lock_path:
            raise MeridianError(f"cannot write {refname}: a file is in the way of its "
                                "directory (another ref's name is a prefix of it)") from None
        raise LedgerConflict(f"failed to lock {refname}: {refname}.lock exists") from None
    except OSError as exc:
        raise MeridianError(f"cannot write {refname}: {_os_reason(exc)}") from None
    renamed = False
    try:
        current: bytes | None
        loose = _read_small(ref_path, missing_ok=False)
        if loose is None:
            current = _packed_ref(common, refname)
        else:
            if loose.startswith(b"ref:"):
                return False  # symbolic: libgit2 resolves and moves its target
            if not _HEX_ID.fullmatch(loose):
                raise MeridianError(f"cannot write {refname}: the ref file is damaged "
                                    f"({ref_path}); run git fsck")
            current = loose[:40]
        old = _ZERO_ID if expected is None else str(expected).encode()
        if (current or _ZERO_ID) != old:
            raise LedgerConflict(f"{refname} moved: it names "
                                 f"{(current or _ZERO_ID).decode()}, but expected {old.decode()}")
        if durable is None:
            durable = fsync_settings(repo)[1]
        new_hex = str(new).encode()
        view = memoryview(new_hex + b"\n")
        while view:
            view = view[_ref_write(fd, view):]
        if durable:
            os.fsync(fd)
        _append_reflog(repo, common, refname, old + b" " + new_hex + b" "
                       + _reflog_who(sig) + b"\t" + message.encode("utf-8") + b"\n",
                       durable)
        if not _holds(fd, lock_path):
            # our lock was expired as stale (held past the ledger's limit): another
            # writer may hold the ref now, and renaming its lock would install its value
            raise LedgerConflict(f"{refname}.lock was taken over by another writer")
        _os_rename(lock_path, ref_path)
        renamed = True
        return True
    except OSError as exc:
        raise MeridianError(f"cannot write {refname}: {_os_reason(exc)}") from None
    finally:
        if not renamed and _holds(fd, lock_path):
            with contextlib.suppress(OSError):
                os.unlink(lock_path)
        os.close(fd)


def _read_small(path: str, *, missing_ok: bool = True) -> bytes | None:
    """The bytes of a small file (a ref, HEAD), None when it does not exist; other errors
    raise unless ``missing_ok`` (then None too)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError:
        if missing_ok:
            return None
        raise
    try:
        data = os.read(fd, 4096)
        while True:
            more = os.read(fd, 65536)
            if not more:
                return data
            data += more
    finally:
        os.close(fd)


def _holds(fd: int, lock_path: str) -> bool:
    """Whether the file at ``lock_path`` is still the lock ``fd`` created."""
    try:
        return os.fstat(fd).st_ino == os.stat(lock_path).st_ino
    except OSError:
        return False


def _reflog_who(sig: pygit2.Signature) -> bytes:
    offset = sig.offset
    return sig.raw_name + b" <" + sig.raw_email + b"> " + b"%d %c%02d%02d" % (
        sig.time, 45 if offset < 0 else 43, abs(offset) // 60, abs(offset) % 60)


def _append_reflog(repo: Repository, common: str, refname: str, line: bytes,
                   durable: bool) -> None:
    """Append ``line`` to ``refname``'s reflog in one write (creating the log where git
    would); a write cut short (a full disk) is taken back, so the log keeps whole lines."""
    path = f"{common}/logs/{refname}"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except (FileNotFoundError, IsADirectoryError) as exc:
        if not _reflog_wanted(repo, refname):
            return  # (a directory in its place: no log, as git does)
        if isinstance(exc, IsADirectoryError):
            # an empty directory in its place (the logs of refs once beneath it) goes,
            # as git and libgit2 remove it; one holding logs is an error
            try:
                os.rmdir(path)
            except OSError:
                raise exc from None
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        size = os.fstat(fd).st_size
        try:
            if _ref_write(fd, line) != len(line):
                raise OSError(28, os.strerror(28))  # ENOSPC: what a short write means
            if durable:
                os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


def commit_bytes(tree: Oid, parents: Sequence[Oid], sig: pygit2.Signature,
                 message: str) -> bytes:
    """The commit object libgit2's ``create_commit`` writes for these arguments (same
    author and committer, no encoding header), so its id can be known, and the object
    written, before libgit2 is asked to move the ref."""
    offset = sig.offset
    when = b"%d %c%02d%02d" % (sig.time, 45 if offset < 0 else 43, abs(offset) // 60,
                                abs(offset) % 60)
    person = sig.raw_name + b" <" + sig.raw_email + b"> " + when
    lines = [b"tree " + str(tree).encode()]
    lines.extend(b"parent " + str(parent).encode() for parent in parents)
    lines.append(b"author " + person)
    lines.append(b"committer " + person)
    return b"\n".join(lines) + b"\n\n" + message.encode("utf-8")


def moved_to(repo: Repository, refname: str, expected: Oid | None, sig: pygit2.Signature,
             tree: Oid, parents: Sequence[Oid], message: str) -> Oid | None:
    """The commit ``refname`` names now if it is the one a failed call was making
    (``tree``, ``parents``, ``message``, committed by ``sig``'s identity no earlier than
    its time), else None: the ref did not move, or another writer moved it."""
    try:
        ref = repo.references.get(refname)
        target = None if ref is None else ref.resolve().target
        if target is None or target == expected:
            return None
        commit = repo.get(target)  # type: ignore[arg-type]
    except (pygit2.GitError, ValueError, KeyError, OSError):
        return None
    if not isinstance(commit, pygit2.Commit) or commit.tree_id != tree \
            or list(commit.parent_ids) != list(parents) or commit.message != message \
            or commit.committer.name != sig.name or commit.committer.email != sig.email \
            or commit.commit_time < sig.time:
        return None
    return target  # type: ignore[return-value]


def write_commit(repo: Repository, tree: Oid, parents: Sequence[Oid], message: str) -> Oid:
    """A commit object with no ref update (the caller moves the ref with set_ref)."""
    sig = signature(repo)
    return _odb_write(lambda: repo.create_commit(None, sig, sig, message, tree, list(parents)))


def ref_lock_path(repo: Repository, refname: str) -> Path:
    return common_dir(repo) / (refname + ".lock")


# --- history ----------------------------------------------------------------------


@dataclass(frozen=True)
class CommitInfo:
    oid: Oid
    parents: tuple[Oid, ...]
    summary: str
    message: str
    time: int
    author: str

    @property
    def trailers(self) -> dict[str, str]:
        return parse_trailers(self.message)


def parse_trailers(message: str) -> dict[str, str]:
    paragraphs = message.strip().split("\n\n")
    if len(paragraphs) < 2:
        return {}
    out: dict[str, str] = {}
    for line in paragraphs[-1].splitlines():
        key, sep, value = line.partition(": ")
        if not sep or " " in key:
            return {}
        out[key] = value.strip()
    return out


def commit_info(repo: Repository, oid: Oid) -> CommitInfo:
    commit = repo[oid]
    assert isinstance(commit, pygit2.Commit), f"{oid} is not a commit"
    return CommitInfo(
        oid=commit.id,
        parents=tuple(commit.parent_ids),
        summary=commit.message.split("\n", 1)[0],
        message=commit.message,
        time=commit.commit_time,
        author=f"{commit.author.name} <{commit.author.email}>",
    )


def walk(
    repo: Repository, tip: Oid, *, oldest_first: bool = False, hide: Iterable[Oid] = ()
) -> Iterator[CommitInfo]:
    mode = pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME
    if oldest_first:
        mode |= pygit2.enums.SortMode.REVERSE
    walker = repo.walk(tip, mode)
    for oid in hide:
        walker.hide(oid)
    for commit in walker:
        yield commit_info(repo, commit.id)


def commits_touching(repo: Repository, since: int, until: int,
                     matcher: Callable[[str], bool]) -> list[int]:
    """Author times (epoch seconds) of the commits reachable from HEAD, authored within
    [since, until], that change a path ``matcher`` accepts (diffed against the first
    parent; a root commit against the empty tree). The walk stops a day before
    ``since``, so its cost is the commits of the period, not the history."""
    head = head_commit(repo)
    if head is None:
        return []
    found = []
    for commit in repo.walk(pygit2.Oid(hex=head), pygit2.enums.SortMode.TIME):
        when = commit.author.time
        if commit.commit_time < since - 86400:
            break
        if not since <= when <= until:
            continue
        parent = commit.parents[0].tree if commit.parents else None
        if any(matcher(path) for path, _, _ in changed_paths(repo, parent, commit.tree)):
            found.append(when)
    return sorted(found)


def unreachable_commits(repo: Repository) -> list[str]:
    """Commits no ref reaches (a deleted branch's, until ``git gc`` prunes them)."""
    proc = git(["fsck", "--unreachable", "--no-reflogs", "--no-progress"], cwd=repo.path,
               check=False)
    # With no ref at all, git reports them as "dangling" rather than "unreachable".
    return [line.split()[2] for line in proc.stdout.splitlines()
            if line.startswith(("unreachable commit ", "dangling commit "))]


def is_ancestor(repo: Repository, ancestor: Oid, descendant: Oid) -> bool:
    return ancestor == descendant or repo.descendant_of(descendant, ancestor)


def changed_paths(
    repo: Repository, old: pygit2.Object | None, new: pygit2.Object | None
) -> Iterator[tuple[str, Oid | None, Oid | None]]:
    """(path, old blob or None, new blob or None) for every file that differs.

    ``old``/``new`` are trees (anything else counts as an empty tree).
    """
    yield from _diff_trees(repo, _as_tree(old), _as_tree(new), "")


def _as_tree(obj: pygit2.Object | None) -> pygit2.Tree | None:
    return obj if isinstance(obj, pygit2.Tree) else None


def _diff_trees(
    repo: Repository, old: pygit2.Tree | None, new: pygit2.Tree | None, prefix: str
) -> Iterator[tuple[str, Oid | None, Oid | None]]:
    old_entries = {str(e.name): e for e in old} if old is not None else {}
    new_entries = {str(e.name): e for e in new} if new is not None else {}
    for name in sorted(set(old_entries) | set(new_entries)):
        o, n = old_entries.get(name), new_entries.get(name)
        if o is not None and n is not None and o.id == n.id:
            continue
        path = prefix + name
        o_tree = o is not None and o.type_str == "tree"
        n_tree = n is not None and n.type_str == "tree"
        if o_tree or n_tree:
            yield from _diff_trees(
                repo,
                _as_tree(repo[o.id]) if o is not None and o_tree else None,
                _as_tree(repo[n.id]) if n is not None and n_tree else None,
                path + "/",
            )
            if o is not None and not o_tree:
                yield path, o.id, None
            if n is not None and not n_tree:
                yield path, None, n.id
        else:
            yield path, (o.id if o else None), (n.id if n else None)


def commit_complete(repo: Repository, oid: Oid) -> bool:
    """Whether commit ``oid``, its trees and its blobs are all in the object database
    (a write a full disk left without a blob or tree, and the branch put back, is not)."""
    try:
        commit = repo[oid]
        if not isinstance(commit, pygit2.Commit):
            return False
        return all(blob in repo for _, blob in iter_files(repo, commit.tree))
    except (KeyError, ValueError, pygit2.GitError):
        return False


def iter_files(repo: Repository, tree: pygit2.Tree, prefix: str = "") -> Iterator[tuple[str, Oid]]:
    for entry in tree:
        path = prefix + str(entry.name)
        if entry.type_str == "tree":
            yield from iter_files(repo, repo[entry.id], path + "/")  # type: ignore[arg-type]
        else:
            yield path, entry.id


# --- the git CLI (network operations pygit2 does not do well) ----------------------


# What `git rev-parse --local-env-vars` lists, plus the receive-side quarantine: the
# variables that pin git to one repository. A hook inherits them; a command run from
# it must not. GIT_SSH_COMMAND, GIT_ASKPASS and the like are left alone.
REPOSITORY_ENV = frozenset({
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE", "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR", "GIT_QUARANTINE_PATH", "GIT_NAMESPACE",
})


def clean_env() -> dict[str, str]:
    """The environment minus the variables that tie git to the calling repository."""
    return {k: v for k, v in os.environ.items()
            if k not in REPOSITORY_ENV and not k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))}


def git(
    args: Sequence[str], cwd: str | os.PathLike[str], *, check: bool = True, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = clean_env()
    env["LC_ALL"] = env["LANGUAGE"] = "C"  # messages are parsed below: keep them English
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        input=input,
        check=False,
    )
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise MeridianError(f"git {' '.join(args)} failed: {detail[-1] if detail else proc.returncode}")
    return proc


# --- packing (the ledger keeps its own objects packed) --------------------------------


_PACK_DIRS: dict[str, Path] = {}


def pack_dir(repo: Repository) -> Path:
    known = _PACK_DIRS.get(repo.path)
    if known is None:
        known = _PACK_DIRS[repo.path] = common_dir(repo) / "objects" / "pack"
    return known


def pack_new_objects(repo: Repository, tip: Oid, since: Oid | None) -> str | None:
    """Pack the objects reachable from ``tip`` but not from ``since``, skipping any already
    in a pack, into one new pack; returns its name (``pack-<hash>``), None when none.

    git writes the pack under a temporary name and renames it into place with its index,
    so a reader sees the whole pack or none of it, and a killed run leaves only a
    ``tmp_pack_*`` file.
    """
    revs = f"{tip}\n" + (f"^{since}\n" if since is not None else "")
    # A shard's versions differ by appends: the previous version is the delta base git
    # finds first, so a small window (and one thread) packs as small for a third less CPU.
    proc = git(["pack-objects", "--revs", "--incremental", "--quiet", "--window=2",
                "--threads=1", str(pack_dir(repo) / "pack")], common_dir(repo), input=revs)
    digest = proc.stdout.strip()
    return f"pack-{digest}" if digest else None


_IDX_HEADER = b"\xfftOc\x00\x00\x00\x02"  # a version 2 pack index


def pack_object_ids(repo: Repository, name: str) -> list[str] | None:
    """The ids of the objects pack ``name`` holds, read from its index (version 2,
    SHA-1); None when the pack or its index is not complete and readable as such."""
    directory = pack_dir(repo)
    try:
        if not (directory / f"{name}.pack").is_file():
            return None
        data = (directory / f"{name}.idx").read_bytes()
    except OSError:
        return None
    fanout_end = len(_IDX_HEADER) + 256 * 4
    if len(data) < fanout_end or not data.startswith(_IDX_HEADER):
        return None
    count = int.from_bytes(data[fanout_end - 4:fanout_end], "big")
    # names (20 bytes each), CRCs and offsets (4 each), two trailing checksums; large
    # offsets (packs past 2 GiB) add a table this does not need to read
    if len(data) < fanout_end + count * 28 + 40:
        return None
    names = data[fanout_end:fanout_end + 20 * count]
    return [names[at:at + 20].hex() for at in range(0, len(names), 20)]


SMALL_PACK_OBJECTS = 64  # an append's pack holds a few objects; git's packs hold many


def small_packs(repo: Repository, exclude: Iterable[str]) -> list[tuple[str, list[packfile.Entry]]]:
    """The packs an append wrote (or any pack of at most SMALL_PACK_OBJECTS full objects,
    which merging loses nothing of), read, oldest first; ``exclude`` names packs to leave
    (the merged ones), and packs kept (``.keep``) or promised are left too."""
    directory = pack_dir(repo)
    skip = set(exclude)
    found = []
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    present = set(names)
    for file in names:
        if not (file.startswith("pack-") and file.endswith(".idx")):
            continue
        name = file[:-4]
        if name in skip or f"{name}.promisor" in present:
            continue
        if f"{name}.keep" in present and not _stale_own_keep(directory, name):
            continue
        try:
            if os.stat(f"{directory}/{file}").st_size > 1072 + SMALL_PACK_OBJECTS * 28:
                continue
            when = os.stat(f"{directory}/{name}.pack").st_mtime
        except OSError:
            continue
        entries = packfile.read(directory, name)
        if entries is None or any(e.kind not in packfile.TYPE_NAMES for e in entries):
            continue
        found.append((when, name, entries))
    found.sort(key=lambda item: (item[0], item[1]))
    return [(name, entries) for _, name, entries in found]


def _stale_own_keep(directory: Path, name: str) -> bool:
    """Whether ``name``'s .keep is an append's, left by a killed writer (then released)."""
    try:
        age = time.time() - os.stat(f"{directory}/{name}.keep").st_mtime
    except OSError:
        return False
    if age < STALE_KEEP_SECONDS or not packfile.own_keep(directory, name):
        return False
    packfile.release(directory, name)
    return True


def merge_own_packs(repo: Repository, sources: Sequence[tuple[str, list[packfile.Entry]]], *,
                    regroup: bool, before_visible: Callable[[str], None] | None = None) -> str:
    return packfile.merge(pack_dir(repo), sources, regroup=regroup,
                          before_visible=before_visible, durable=fsync_packs(repo)).name


_FSYNC_PACK_COMPONENTS = frozenset({"pack", "objects", "committed", "added", "all"})
_FSYNC_REF_COMPONENTS = frozenset({"reference", "committed", "added", "all"})


def fsync_settings(repo: Repository) -> tuple[bool, bool]:
    """(packs, refs): whether the user's git config asks git to fsync pack files before
    a ref names their objects (core.fsyncObjectFiles=true, or core.fsync naming pack,
    objects, committed, added or all), and ref files and their logs before the ref
    moves (core.fsync naming reference, committed, added or all), as git then does.
    One read of the config for both (an append asks once)."""
    packs = refs = False
    config = repo.config  # (each ``repo.config`` is a fresh object, stat-ing every file)
    try:
        packs = bool(config.get_bool("core.fsyncObjectFiles"))
    except (KeyError, ValueError, pygit2.GitError):
        pass
    try:
        value: str | None = str(config["core.fsync"])
    except (KeyError, pygit2.GitError):
        value = None
    for part in (part.strip() for part in (value or "").split(",")):
        if part in _FSYNC_PACK_COMPONENTS:
            packs = True
        elif part in ("-pack", "-objects"):
            packs = False
        if part in _FSYNC_REF_COMPONENTS:
            refs = True
        elif part in ("-reference", "-committed", "-added", "-all"):
            refs = False
    return packs, refs


def fsync_packs(repo: Repository) -> bool:
    return fsync_settings(repo)[0]


def read_pack(repo: Repository, name: str) -> list[packfile.Entry] | None:
    return packfile.read(pack_dir(repo), name)


def load_pack(repo: Repository, name: str) -> packfile.Loaded | None:
    return packfile.load(pack_dir(repo), name)


def concatenate_packs(repo: Repository, sources: Sequence[packfile.Loaded], *,
                      before_visible: Callable[[str], None] | None = None) -> str:
    return packfile.concatenate(pack_dir(repo), sources, before_visible=before_visible,
                                durable=fsync_packs(repo)).name


def remove_packs(repo: Repository, names: Iterable[str]) -> None:
    packfile.remove(pack_dir(repo), names)


def release_pack(repo: Repository, name: str) -> None:
    """An append's pack no longer kept (its ref moved, or the write failed): the
    ``.keep`` it wrote itself, removed without reading it first."""
    with contextlib.suppress(OSError):
        os.unlink(f"{pack_dir(repo)}/{name}.keep")


# An append's .keep older than this was left by a writer killed before its ref moved (an
# append holds it for milliseconds): the packer releases it and merges the pack.
STALE_KEEP_SECONDS = 3600.0


def loose_commit_since(repo: Repository, tip: Oid, since: Oid | None) -> bool:
    """Whether a commit reachable from ``tip`` and not from ``since`` is a loose object
    (written by libgit2 or git, not as an append's pack: a merge, an older version).

    The first-parent chain is followed by hand while it has no merge (an append's
    history: 64 commits in ~0.1 ms, where a revision walk costs ~1 ms); from the first
    merge on, a revision walk finds every commit reachable from it."""
    objects = f"{common_dir(repo)}/objects/"
    commit = tip
    while commit != since:
        name = str(commit)
        if os.path.exists(objects + name[:2] + "/" + name[2:]):
            return True
        parents = commit_parents(repo, commit)
        if len(parents) != 1:
            if not parents:
                return False  # the root: every commit on the way was looked at
            break  # a merge: its other parents' histories too, below
        commit = parents[0]
    else:
        return False
    walker = repo.walk(commit, pygit2.enums.SortMode.NONE)
    if since is not None:
        walker.hide(since)
    for found in walker:
        name = str(found.id)
        if os.path.exists(objects + name[:2] + "/" + name[2:]):
            return True
    return False


def prune_loose(repo: Repository, ids: Iterable[str]) -> None:
    """Delete the loose copies of ``ids`` (objects a complete pack holds: each stays
    readable from the pack). Object directories are left in place."""
    objects = common_dir(repo) / "objects"
    for hex_id in ids:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            os.unlink(objects / hex_id[:2] / hex_id[2:])


def prune_packed(repo: Repository) -> None:
    """Delete the loose objects that a pack holds (each stays readable from the pack)."""
    git(["prune-packed", "--quiet"], common_dir(repo))


def merge_packs(repo: Repository, names: Sequence[str]) -> str | None:
    """One pack holding every object of the packs ``names``, which are then removed.

    The new pack is complete and in place before any old one goes; an old pack's index
    goes first, so no reader finds an index without its pack.
    """
    directory = pack_dir(repo)
    present = [name for name in names if (directory / f"{name}.pack").is_file()
               and (directory / f"{name}.idx").is_file()]
    if not present:
        return None
    proc = git(["pack-objects", "--stdin-packs", "--quiet", str(directory / "pack")],
               common_dir(repo), input="".join(f"{name}.pack\n" for name in present))
    digest = proc.stdout.strip()
    merged = f"pack-{digest}" if digest else None
    for name in present:
        if name == merged:
            continue
        for suffix in (".idx", ".rev", ".bitmap", ".pack"):
            with contextlib.suppress(FileNotFoundError):
                (directory / f"{name}{suffix}").unlink()
    return merged


# --- work-tree snapshots (gates bind verdicts to the exact artifact files read) ------


def head_commit(repo: Repository) -> str | None:
    """The commit HEAD points at, or None in a repository with no commits yet."""
    if repo.head_is_unborn:
        return None
    return str(repo.head.target)


def is_ignored(repo: Repository, path: str) -> bool:
    """Whether ``path`` (relative to the work tree, '/'-separated) is git-ignored."""
    return bool(repo.path_is_ignored(path))


def index_paths(repo: Repository) -> list[str]:
    """The paths the index tracks (every stage, in the index's order), read from the file
    now. The index is the repository's own (libgit2 does not read ``GIT_INDEX_FILE``)."""
    index = repo.index
    index.read(False)  # again when the file changed since libgit2 loaded it
    return [entry.path for entry in index]


def tree_of_files(repo: Repository, files: Mapping[str, bytes]) -> str:
    """The id of a git tree holding exactly ``files`` ('/'-separated path -> content).

    Blobs and trees are written to the object database only: the index, HEAD and the
    work tree are untouched. Equal content always gives the same id, so the id names
    the artifacts a verdict read.
    """
    if not files:
        return str(repo.TreeBuilder().write())
    updates = {path: repo.create_blob(data) for path, data in files.items()}
    return str(update_tree(repo, None, updates))


def files_at_commit(
    repo: Repository, commit: str, wanted: Callable[[str], bool]
) -> dict[str, bytes]:
    """Content of the files of ``commit`` whose path ``wanted`` accepts ({} if unknown)."""
    try:
        tree = commit_tree(repo, pygit2.Oid(hex=commit))
    except (KeyError, ValueError, pygit2.GitError):
        return {}
    return {path: read_blob(repo, oid) for path, oid in iter_files(repo, tree) if wanted(path)}


def tree_changed_files(repo: Repository, old_tree: str, new_tree: str) -> list[str] | None:
    """Paths that differ between two trees, or None when either tree is not stored here."""
    try:
        old = repo[pygit2.Oid(hex=old_tree)]
        new = repo[pygit2.Oid(hex=new_tree)]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    if not isinstance(old, pygit2.Tree) or not isinstance(new, pygit2.Tree):
        return None
    return [path for path, _, _ in changed_paths(repo, old, new)]


# --- evaluation runs: provenance and baseline tags -----------------------------------


def is_dirty(repo: Repository) -> bool:
    """Whether tracked files differ from HEAD (staged or not); untracked files do not count.

    This is what ``git describe --dirty`` means, so a run's provenance says whether
    its commit alone reproduces the code that was measured.
    """
    if repo.is_bare:
        return False
    current = pygit2.enums.FileStatus.CURRENT
    ignored = pygit2.enums.FileStatus.IGNORED
    return any(flags not in (current, ignored) for flags in repo.status(untracked_files="no").values())


def set_tag(repo: Repository, name: str, oid: Oid) -> Oid | None:
    """Point the lightweight tag ``refs/tags/<name>`` at ``oid``; the previous target or None."""
    refname = f"refs/tags/{name}"
    previous = ref_target(repo, refname)
    repo.references.create(refname, oid, force=True)
    return previous


def tag_targets(repo: Repository, prefix: str) -> dict[str, Oid]:
    """``name -> target`` of the tags under ``refs/tags/<prefix>`` (name without the prefix)."""
    base = f"refs/tags/{prefix}"
    out: dict[str, Oid] = {}
    for refname in list_refs(repo, base):
        target = ref_target(repo, refname)
        if target is not None:
            out[refname[len(base):]] = target
    return out


# --- remotes (the git CLI: transport, credentials and hooks behave as users expect) ---


def has_remote(repo: Repository, remote: str) -> bool:
    return remote in repo.remotes.names()


def is_shallow(repo: Repository) -> bool:
    return (common_dir(repo) / "shallow").exists()


def shallow_boundary(repo: Repository) -> set[str]:
    """Commits whose parents a shallow clone does not have."""
    try:
        return set((common_dir(repo) / "shallow").read_text().split())
    except FileNotFoundError:
        return set()


class PushRejected(Exception):
    """The remote moved since we fetched (lease failed or non-fast-forward)."""


def remote_cwd(repo: Repository) -> str:
    """Where to run a git command that talks to a remote: the work tree's top, where the
    user's own ``git fetch`` runs (git resolves a relative remote URL such as ``../x.git``
    from there), or the repository itself when it is bare. Never the ``.git`` directory
    of a non-bare repository: ``../x.git`` would name a path beside ``.git`` instead."""
    workdir = repo.workdir
    return str(workdir) if workdir else str(repo.path)


def fetch_branch(repo: Repository, remote: str, branch: str) -> Oid | None:
    """Fetch ``branch`` in full into refs/remotes/REMOTE/BRANCH; None if it has none.

    In a shallow clone the state branch is fetched with unlimited depth, so its whole
    history is present (verification and merges need every commit).
    """
    tracking = f"refs/remotes/{remote}/{branch}"
    args = ["fetch", "--quiet", "--no-tags"]
    if is_shallow(repo):
        args.append("--depth=2147483647")
    args += [remote, f"+refs/heads/{branch}:{tracking}"]
    proc = git(args, cwd=remote_cwd(repo), check=False)
    if proc.returncode != 0:
        if "couldn't find remote ref" in proc.stderr:
            return None
        detail = proc.stderr.strip().splitlines()
        raise MeridianError(f"git fetch {remote} {branch} failed: "
                            f"{detail[-1] if detail else proc.returncode}")
    return ref_target(repo, tracking)


def push_branch(repo: Repository, remote: str, branch: str, *, expected_remote: Oid | None,
                tag_prefix: str | None = None) -> None:
    """Push with a lease on the remote's old value; never runs the user's hooks.

    Tags under ``tag_prefix`` are pushed with force: they are derived from events on
    the branch (see meridian.sync), so the pushed branch decides where they point.
    Raises PushRejected when the remote moved (retry), MeridianError otherwise.
    """
    lease = f"refs/heads/{branch}:{expected_remote if expected_remote else ''}"
    refspecs = [f"refs/heads/{branch}:refs/heads/{branch}"]
    if tag_prefix:
        refspecs += [f"+{name}:{name}" for name in list_refs(repo, f"refs/tags/{tag_prefix}")]
    # --atomic: a refused branch must not leave the force-pushed tags on the remote
    # pointing at commits its branch does not hold.
    args = ["push", "--quiet", "--no-verify", "--porcelain", f"--force-with-lease={lease}"]
    cwd = remote_cwd(repo)
    proc = git([*args, "--atomic", remote, *refspecs], cwd=cwd, check=False)
    if proc.returncode != 0 and "does not support --atomic" in proc.stderr:
        # An old server: push the branch first, and the tags only once it is there.
        proc = git([*args, remote, refspecs[0]], cwd=cwd, check=False)
        if proc.returncode == 0 and refspecs[1:]:
            proc = git(["push", "--quiet", "--no-verify", "--porcelain", remote, *refspecs[1:]],
                       cwd=cwd, check=False)
    if proc.returncode == 0:
        return
    text = proc.stdout + proc.stderr
    permanent = any(marker in text for marker in ("hook declined", "denied", "protected branch"))
    raced = any(marker in text for marker in ("stale info", "fetch first", "non-fast-forward",
                                              "cannot lock ref", "but expected",
                                              "failed to update ref"))
    if raced and not permanent:
        raise PushRejected(text.strip())
    # porcelain: "!\t<src>:<dst>\t[remote rejected] (pre-receive hook declined)"
    rejected = [" ".join(line.split("\t")[2:]) for line in proc.stdout.splitlines()
                if line.startswith("!")]
    errors = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    reason = (rejected or errors or [f"exit code {proc.returncode}"])[0]
    raise MeridianError(f"git push {remote} {branch} was refused: {reason}")


# --- hooks: where they live, and what a commit is about to record ---------------------


def config_value(repo: Repository, key: str) -> str | None:
    """A git config value as git resolves it (local, global, system), or None when unset."""
    try:
        value = repo.config[key]
    except (KeyError, pygit2.GitError):
        return None
    return str(value)


def config_int(repo: Repository, key: str, default: int) -> int:
    """A git config integer as git reads one (``50``, ``1k``), or ``default`` when unset
    or not an integer."""
    try:
        return int(repo.config.get_int(key))
    except (KeyError, ValueError, pygit2.GitError):
        return default


def hooks_dir(repo: Repository) -> Path:
    """``.git/hooks`` of the common dir, so every linked worktree shares one set of hooks."""
    return common_dir(repo) / "hooks"


def _commit_index(repo: Repository) -> pygit2.Index:
    """The index a commit is being built from.

    During ``git commit <paths>`` or ``git commit -a`` git builds the commit from a
    temporary index and names it in GIT_INDEX_FILE for the hooks; libgit2 ignores that
    variable, so the file is opened here and bound to the repository (what
    ``Index.from_c`` does) so it can be diffed.
    """
    override = os.environ.get("GIT_INDEX_FILE")
    if not override:
        return repo.index
    path = Path(override)
    if not path.is_absolute():
        path = Path.cwd() / path
    index = pygit2.Index(str(path))
    index._repo = repo  # type: ignore[assignment]
    return index


def staged_changes(repo: Repository) -> dict[str, Oid | None]:
    """What the next commit changes relative to HEAD: path -> staged blob id (None: deleted).

    Ids are those of the blobs in the index, not of the work-tree files, so a hook
    judges exactly what will be committed (``read_blob`` gives the content). Paths are
    '/'-separated and repository-relative. Submodule entries are left out.
    """
    index = _commit_index(repo)
    gitlink = pygit2.enums.FileMode.COMMIT  # a commit of another repository, not content
    out: dict[str, Oid | None] = {}
    if repo.head_is_unborn:
        for entry in index:
            if entry.mode != gitlink:
                out[entry.path] = entry.id
        return out
    head_tree = repo.head.peel(pygit2.Tree)
    for delta in index.diff_to_tree(head_tree).deltas:
        if delta.status == pygit2.enums.DeltaStatus.DELETED:
            out[delta.old_file.path] = None
        elif delta.new_file.mode != gitlink:
            if delta.status == pygit2.enums.DeltaStatus.RENAMED:
                out[delta.old_file.path] = None
            out[delta.new_file.path] = delta.new_file.id
    return out


def staged_files(repo: Repository) -> dict[str, bytes]:
    """Content of every file the next commit adds or modifies, as staged."""
    return {path: read_blob(repo, oid)
            for path, oid in staged_changes(repo).items() if oid is not None}


def unstaged_paths(repo: Repository, paths: Iterable[str]) -> list[str]:
    """Of ``paths``, those the next commit holds with content other than the work tree's.

    A path the commit's index holds is listed when its work-tree file is missing or
    hashes (with the repository's filters, as ``git add`` would) to another blob. Paths
    the index does not hold are left out: the commit does not carry them either way.
    Like ``staged_changes`` it reads the index ``GIT_INDEX_FILE`` names during a commit.
    """
    index = _commit_index(repo)
    root = workdir(repo)
    out: list[str] = []
    for path in paths:
        try:
            staged = index[path].id
        except KeyError:
            continue
        file = None if root is None else root / path
        if file is None or not file.is_file() or repo.hashfile(str(file), as_path=path) != staged:
            out.append(path)
    return out
