"""A persistent index of the record ids of one stream, keyed by the commit it describes.

``meridian verify`` checks that a new line does not repeat an id already in its stream,
and ``Write(dedupe=True)`` skips a record whose id is stored already. Both used to read
every shard of the stream (or its month) to answer, a cost that grew with the branch.
This index answers from ``.git/meridian/ids-<branch>.<stream>.idx`` and is brought up
to date with what was appended since (``Ledger.new_records``), so a check costs what the
new lines cost.

File format (binary; a 100,000-record stream is 1.6 MB and loads in about a millisecond,
where a set of 100,000 ids takes 20 ms to build)::

    meridian-ids 1 <stream> <key commit> <hex ids> <other ids> <sha256>\\n
    <hex ids x 16 bytes: the 32-hex-digit ids, binary, sorted>
    <JSON list of ids that are not 32 hex digits>\\n
    segments, each:
    + <from commit> <to commit> <hex ids> <other ids> <sha256>\\n<16-byte ids><JSON list>\\n

The base holds every id of the stream at the key commit; a segment adds the ids stored
between its ``from`` commit (the key reached so far) and its ``to`` commit. A writer
appends one small segment (O_APPEND, one write: an update costs what it adds), and the
file is rewritten (compacted, written to a temporary file and renamed) when its
segments grow past COMPACT_IDS ids or COMPACT_SEGMENTS segments, or one does not
chain. Lookups are a binary
search in the base plus a set of the segments' ids.

The index is a cache, never trust (issue #11): it is used only for a commit it names
(or an ancestor of the commit wanted, caught up from git), and a file that is missing,
of another stream, of an unknown format, whose checksum or lengths do not match (a torn
or hand-edited write), or whose key is not in this repository is recomputed from the
commits. A segment that fails its checksum or does not continue the chain ends the
file there. An id the index claims is present is confirmed from git before anything is
refused or skipped on its word (``IdSet.confirmed``), so an extra id neither invents a
duplicate nor drops a write. What a checksum cannot stop, an agent with the same shell
rewriting the file and its checksum to drop an id, is the same power as repointing the
verified-tip marker: the local checks can be lied to that way, ``meridian verify
--full`` and ``meridian ci`` read no cache.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from meridian import gitio, layout, plainread

if TYPE_CHECKING:
    from meridian.ledger import Ledger
    from meridian.records import Record

VERSION = 1
MAGIC = b"meridian-ids"
WIDTH = 16  # a 32-hex-digit id, binary
COMPACT_IDS = 4096  # ids in segments before the file is rewritten as one base
COMPACT_SEGMENTS = 64  # segments before the same (each costs its parse on every load)
ANCESTOR_TRIES = 4  # keys tried with a graph walk before recomputing from the root


def _split(ids: Iterable[str]) -> tuple[list[bytes], list[str]]:
    """(binary 32-hex ids, other ids) of ``ids``."""
    binary: list[bytes] = []
    other: list[str] = []
    for rid in ids:
        raw = _binary(rid)
        if raw is None:
            other.append(rid)
        else:
            binary.append(raw)
    return binary, other


def _binary(rid: str) -> bytes | None:
    if len(rid) != 32:
        return None
    try:
        raw = bytes.fromhex(rid)
    except ValueError:
        return None
    return raw if raw.hex() == rid else None  # upper case is another id


class _Sorted:
    """A sorted run of fixed-width ids in one bytes object, searched in place."""

    __slots__ = ("count", "data")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.count = len(data) // WIDTH

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> bytes:
        start = index * WIDTH
        return self.data[start:start + WIDTH]

    def __contains__(self, raw: object) -> bool:
        at = bisect.bisect_left(self, raw)  # type: ignore[call-overload]
        return at < self.count and self[at] == raw


def _merge(base: bytes, extra: Iterable[bytes]) -> bytes:
    """``base`` (sorted ids) with ``extra`` inserted, duplicates dropped: O(n) copying."""
    run = _Sorted(base)
    parts: list[bytes] = []
    start = 0
    for raw in sorted(set(extra)):
        at = bisect.bisect_left(run, raw, lo=start // WIDTH) * WIDTH
        if at < len(base) and base[at:at + WIDTH] == raw:
            continue
        parts.append(base[start:at])
        parts.append(raw)
        start = at
    parts.append(base[start:])
    return b"".join(parts)


def _digest(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


class IdSet:
    """The ids of one stream at ``at``.

    ``trusted`` ids were read from git by this process; the rest came from the index
    file (``loaded_at`` names the commit they describe) and are confirmed from git
    before a caller acts on one (``confirmed``).
    """

    def __init__(self, ledger: Ledger, stream: str, at: gitio.Oid | None,
                 base: bytes = b"", tail: set[bytes] | None = None,
                 other: set[str] | None = None, loaded_at: gitio.Oid | None = None,
                 derive: Derive | None = None) -> None:
        self.ledger = ledger
        self.stream = stream
        self.derive = derive  # what is indexed instead of the record id (see load)
        self.at = at
        self._base = _Sorted(base)
        self._tail = tail or set()
        self._other = other or set()
        self.loaded_at = loaded_at  # None: nothing came from the file
        self.trusted: set[str] = set()
        self._fresh: set[str] = set()  # added since ``loaded_at``: what a segment must hold
        # the index file as load() read it, and its (inode, size, mtime) then
        self._file: tuple[_File | None, tuple[int, int, int] | None] = (None, None)

    def __contains__(self, rid: object) -> bool:
        if not isinstance(rid, str):
            return False
        if rid in self.trusted:
            return True
        raw = _binary(rid)
        if raw is None:
            return rid in self._other
        return raw in self._tail or raw in self._base

    def add(self, rid: str) -> None:
        self.trusted.add(rid)
        self._fresh.add(rid)

    def update(self, rids: Iterable[str], at: gitio.Oid | None) -> None:
        added = set(rids)
        self.trusted |= added
        self._fresh |= added
        self.at = at

    def confirmed(self, rid: str) -> bool:
        """Whether ``rid`` is really in the stream: an id only the file vouches for is
        checked against the commits (and a file found lying is dropped)."""
        if rid in self.trusted:
            return True
        if rid not in self:
            return False
        exact = scan_ids(self.ledger, self.stream, self.loaded_at, self.derive)
        if rid in exact:
            self.trusted.update(exact)
            return True
        # The file claimed an id the stream does not hold: poisoned. Forget all of it.
        self._base, self._tail, self._other = _Sorted(b""), set(), set()
        self.trusted.update(exact)
        self.loaded_at = None
        return False

    def copy(self) -> IdSet:
        out = IdSet(self.ledger, self.stream, self.at, derive=self.derive)
        out._base, out._tail, out._other = self._base, set(self._tail), set(self._other)
        out.loaded_at = self.loaded_at
        out.trusted = set(self.trusted)
        out._fresh = set(self._fresh)
        out._file = self._file
        return out

    def _state(self) -> tuple[bytes, set[str]]:
        """(sorted binary ids, other ids): everything, for a rewrite."""
        binary, other = _split(self.trusted)
        return _merge(self._base.data, [*self._tail, *binary]), self._other | set(other)


def index_path(ledger: Ledger, stream: str, derive: Derive | None = None) -> Path:
    # One flat file per branch and stream (sync removes a scratch branch's files by name).
    name = stream.replace("/", "__") + (f".{derive.name}" if derive is not None else "")
    return ledger.local_dir / f"ids-{ledger.branch.replace('/', '__')}.{name}.idx"


class Derive:
    """A key indexed instead of the record id (e.g. a semantic memory's pattern), named
    for its file; ``key`` maps a stored record to it (None: not indexed)."""

    def __init__(self, name: str, key: Callable[[Record], str | None]) -> None:
        self.name = name
        self.key = key

    def keys(self, found: Iterable[Record]) -> Iterator[str]:
        for record in found:
            value = self.key(record)
            if value is not None:
                yield value


def _label(stream: str, derive: Derive | None) -> str:
    return stream if derive is None else f"{stream}#{derive.name}"


def scan_ids(ledger: Ledger, stream: str, at: gitio.Oid | None,
             derive: Derive | None = None) -> set[str]:
    """Every id (or derived key) in ``stream`` at commit ``at``, read from git (the slow,
    exact way)."""
    if derive is not None:
        return set(derive.keys(ledger.records(stream, at=at))) if at is not None else set()
    out: set[str] = set()
    if at is None:
        return out
    repo = ledger.repo
    tree = gitio.commit_tree(repo, at)
    stream_tree = gitio.tree_entry(repo, tree, stream)
    if not isinstance(stream_tree, gitio.Tree):
        return out
    for path in layout.stream_shards(repo, stream_tree, stream):
        data = gitio.blob_data(gitio.tree_entry(repo, tree, path))
        for line in (data or b"").splitlines():
            rid = line_id(line)
            if rid:
                out.add(rid)
    return out


line_id = plainread.line_id  # one reader, shared with the plain re-check


# --- the file -----------------------------------------------------------------------


class _File:
    """A parsed index file: the base and the chain of valid segments."""

    def __init__(self, stream: str, key: str, base: bytes, other: set[str]) -> None:
        self.stream = stream
        self.keys = [key]  # keys[i]: the commit the base plus segments[:i] describe
        self.base = base
        self.other = other
        self.segments: list[tuple[set[bytes], set[str]]] = []
        self.clean = True  # False: bytes after the valid chain (torn or not chaining)
        self.segment_ids = 0


def _read_block(data: bytes, offset: int, fields: int) -> tuple[list[bytes], int] | None:
    end = data.find(b"\n", offset)
    if end < 0:
        return None
    head = data[offset:end].split(b" ")
    return (head, end + 1) if len(head) == fields else None


def _body(data: bytes, offset: int, hex_count: bytes, other_count: bytes
          ) -> tuple[bytes, set[str], bytes, int] | None:
    """(binary ids, other ids, the bytes they came from, next offset) of one block."""
    try:
        count, others = int(hex_count), int(other_count)
    except ValueError:
        return None
    if count < 0 or others < 0:
        return None
    binary_end = offset + count * WIDTH
    line_end = data.find(b"\n", binary_end)
    if binary_end > len(data) or line_end < 0:
        return None
    try:
        listed = json.loads(data[binary_end:line_end])
    except ValueError:
        return None
    if not isinstance(listed, list) or len(listed) != others \
            or not all(isinstance(rid, str) for rid in listed):
        return None
    return data[offset:binary_end], set(listed), data[offset:line_end + 1], line_end + 1


def _parse(data: bytes, stream: str) -> _File | None:
    header = _read_block(data, 0, 7)
    if header is None:
        return None
    fields, offset = header
    magic, version, name, key, hex_count, other_count, digest = fields
    if magic != MAGIC or version != str(VERSION).encode() or name.decode(errors="replace") != stream:
        return None
    body = _body(data, offset, hex_count, other_count)
    if body is None:
        return None
    base, other, raw, offset = body
    if _digest(name, key, raw).encode() != digest:
        return None
    parsed = _File(stream, key.decode(), base, other)
    while offset < len(data):
        block = _read_block(data, offset, 6)
        if block is None or block[0][0] != b"+":
            parsed.clean = False
            break
        (_, start, end, hex_count, other_count, digest), next_offset = block
        body = _body(data, next_offset, hex_count, other_count)
        if body is None or start.decode() != parsed.keys[-1] \
                or _digest(start, end, body[2]).encode() != digest:
            parsed.clean = False
            break
        binary, listed, _, offset = body
        parsed.segments.append(({binary[i:i + WIDTH] for i in range(0, len(binary), WIDTH)},
                                listed))
        parsed.keys.append(end.decode())
        parsed.segment_ids += len(binary) // WIDTH + len(listed)
    return parsed


def _block(binary: bytes, other: Iterable[str]) -> bytes:
    return binary + json.dumps(sorted(other), separators=(",", ":")).encode() + b"\n"


STALE_TEMPORARY_SECONDS = 60.0  # a temporary of a dead writer is left this long
ORPHAN_TEMPORARY_SECONDS = 24 * 3600.0  # any temporary this old (its pid since reused)


def sweep_temporaries(path: Path, *, now: float | None = None) -> int:
    """Remove ``<path>.<pid>.tmp`` files that writers killed mid-rewrite left behind.

    Such a file belongs to a dead writer when its pid is not running and it is older
    than STALE_TEMPORARY_SECONDS (the grace covers a writer in another pid namespace
    sharing the repository, whose pid means nothing here), or to anybody once it is a
    day old (pids are reused). A live writer's temporary is never touched: it is
    renamed into place within milliseconds of being created. Returns how many went.
    """
    import time

    now = time.time() if now is None else now
    prefix = path.name + "."
    removed = 0
    try:
        names = os.listdir(path.parent)
    except OSError:
        return 0
    for name in names:
        if not name.startswith(prefix) or not name.endswith(".tmp"):
            continue
        pid_text = name[len(prefix):-len(".tmp")]
        if not pid_text.isdigit():
            continue
        candidate = path.parent / name
        try:
            age = now - candidate.lstat().st_mtime
        except OSError:
            continue
        if age < STALE_TEMPORARY_SECONDS:
            continue
        if age < ORPHAN_TEMPORARY_SECONDS and _running(int(pid_text)):
            continue
        try:
            candidate.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # another user's process (or unknowable): treat as alive
    return True


def _write_whole(path: Path, stream: str, key: str, base: bytes, other: set[str]) -> None:
    sweep_temporaries(path)  # rare (a rewrite), so the directory listing costs nothing
    raw = _block(base, other)
    head = b" ".join([MAGIC, str(VERSION).encode(), stream.encode(), key.encode(),
                      str(len(base) // WIDTH).encode(), str(len(other)).encode(),
                      _digest(stream.encode(), key.encode(), raw).encode()])
    from meridian.viewfile import replace_with

    try:
        replace_with(path, head + b"\n" + raw)  # readers see the old file or the new, whole
    except OSError:
        pass  # an index that cannot be written is only slower


def _append_segment(path: Path, start: str, end: str, binary: list[bytes],
                    other: list[str]) -> None:
    raw = _block(b"".join(sorted(binary)), other)
    head = b" ".join([b"+", start.encode(), end.encode(), str(len(binary)).encode(),
                      str(len(other)).encode(), _digest(start.encode(), end.encode(), raw).encode()])
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except OSError:
        return
    try:
        os.write(fd, head + b"\n" + raw)  # one write: concurrent appends do not interleave
    except OSError:
        pass  # a torn segment fails its checksum and ends the chain there
    finally:
        os.close(fd)


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def _read_file(ledger: Ledger, stream: str, derive: Derive | None = None
               ) -> tuple[_File | None, tuple[int, int, int] | None]:
    """The parsed index file (None: absent or unusable) and what identifies its bytes."""
    path = index_path(ledger, stream, derive)
    try:
        with path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            data = handle.read()
    except OSError:
        return None, None
    seen = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    parsed = _parse(data, _label(stream, derive))
    if parsed is not None:
        parsed.stream = stream
    return parsed, seen if len(data) == stat.st_size else None


def _oid(text: str) -> gitio.Oid | None:
    try:
        oid = gitio.Oid(hex=text)
    except ValueError:
        return None
    return oid


def load(ledger: Ledger, stream: str, at: gitio.Oid | None,
         derive: Derive | None = None) -> IdSet:
    """The ids of ``stream`` at commit ``at`` (or the keys ``derive`` makes of its
    records): from the index when it names ``at`` or an ancestor of it (caught up from
    git), else read from every shard."""
    if at is None:
        return IdSet(ledger, stream, None, derive=derive)
    parsed, seen = _read_file(ledger, stream, derive)
    out = _from_file(ledger, parsed, at, derive) if parsed is not None else None
    if out is None:
        out = IdSet(ledger, stream, at, derive=derive)
        out.trusted = scan_ids(ledger, stream, at, derive)
    out._file = (parsed, seen)
    return out


def exact(ledger: Ledger, stream: str, at: gitio.Oid | None,
          derive: Derive | None = None) -> IdSet:
    """The ids of ``stream`` at ``at`` read from git only, the index file not opened:
    for the checks that must read no cache (``meridian verify --full``, ``meridian ci``)."""
    out = IdSet(ledger, stream, at, derive=derive)
    out.trusted = scan_ids(ledger, stream, at, derive)
    return out


def _from_file(ledger: Ledger, parsed: _File, at: gitio.Oid,
               derive: Derive | None = None) -> IdSet | None:
    wanted = str(at)
    keys = parsed.keys
    position = None
    for index in range(len(keys) - 1, -1, -1):
        if keys[index] == wanted:
            position = index
            break
    if position is None:
        tries = 0
        for index in range(len(keys) - 1, -1, -1):
            if tries >= ANCESTOR_TRIES:
                break
            key = _oid(keys[index])
            if key is None:
                continue
            tries += 1
            try:
                if gitio.is_ancestor(ledger.repo, key, at):
                    position = index
                    break
            except (KeyError, ValueError, gitio.GitError):
                return None  # a key this repository does not hold: a foreign file
    if position is None:
        return None
    key = _oid(keys[position])
    if key is None:
        return None
    try:
        ledger.repo[key]
    except (KeyError, ValueError):
        return None
    tail: set[bytes] = set()
    other = set(parsed.other)
    for binary, listed in parsed.segments[:position]:
        tail |= binary
        other |= listed
    out = IdSet(ledger, parsed.stream, key, parsed.base, tail, other, loaded_at=key,
                derive=derive)
    if key != at:
        added = ledger.new_records(parsed.stream, since=key, at=at)
        if added is None:
            return None
        out.update(derive.keys(added) if derive is not None else (r.id for r in added), at)
    return out


def save(ledger: Ledger, ids: IdSet) -> None:
    """Keep ``ids`` (at ``ids.at``) in the index: one appended segment, or a rewrite."""
    if ids.at is None:
        return
    at = str(ids.at)
    path = index_path(ledger, ids.stream, ids.derive)
    parsed, seen = ids._file
    if seen is None or _stat_key(path) != seen:  # changed since it was loaded: read it again
        parsed, _ = _read_file(ledger, ids.stream, ids.derive)
    if parsed is not None and parsed.keys[-1] == at:
        _saved(ids, path)  # already there
        return
    if parsed is not None and parsed.clean and ids.loaded_at is not None \
            and parsed.segment_ids + len(ids._fresh) <= COMPACT_IDS \
            and len(parsed.segments) < COMPACT_SEGMENTS:
        last = _oid(parsed.keys[-1])
        # A segment continues the chain from its last key; what this process read since
        # the key it loaded covers everything appended after that last key.
        loaded = str(ids.loaded_at)
        if last is not None and loaded in parsed.keys and _reaches(ledger, last, ids.at):
            binary, other = _split(ids._fresh)
            _append_segment(path, parsed.keys[-1], at, binary, other)
            _saved(ids, path)
            return
    base, other_ids = ids._state()
    _write_whole(path, _label(ids.stream, ids.derive), at, base, other_ids)
    _saved(ids, path)


def _saved(ids: IdSet, path: Path) -> None:
    """``ids`` is in the file at ``ids.at`` now: the next save adds only what follows."""
    ids.loaded_at = ids.at
    ids._fresh = set()
    ids._file = (None, None)  # read the file again before the next save


def _reaches(ledger: Ledger, ancestor: gitio.Oid, descendant: gitio.Oid) -> bool:
    try:
        return gitio.is_ancestor(ledger.repo, ancestor, descendant)
    except (KeyError, ValueError, gitio.GitError):
        return False
