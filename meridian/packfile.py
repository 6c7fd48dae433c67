"""Git pack files written and merged in process (format version 2, index version 2, SHA-1).

The state branch's appends are written as one small pack each (``write``: every object
of the append in one file and its index, where loose objects cost one file each, and a
file's creation is most of an object write's cost); ``merge`` makes one pack of many.
Merging small packs (full objects only) stores each object that extends another as a
delta against it: a shard's versions are prefixes of its newest one (an append only
adds lines), and a tree's versions differ by an entry or two, so the common prefix and
suffix make a delta of a few bytes. Merging packs this module merged before copies
their entries as they are (offsets of deltas re-encoded), so no object is inflated
twice. Every delta's base is a full object in the same pack (depth 1).

A pack becomes visible to git and libgit2 only with its index, and the index is
renamed into place complete, after the pack: a reader sees all of a pack or none of it.
Nothing here imports pygit2; ids are the SHA-1 git computes (``object_id``).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
import struct
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

COMMIT, TREE, BLOB, TAG = 1, 2, 3, 4
OFS_DELTA, REF_DELTA = 6, 7
TYPE_NAMES = {COMMIT: b"commit", TREE: b"tree", BLOB: b"blob", TAG: b"tag"}
_IDX_MAGIC = b"\xfftOc\x00\x00\x00\x02"
_MAX_OFFSET = 0x7FFFFFFF  # index offsets past this need the large-offset table: not written
DELTA_MAX_BYTES = 1 << 20  # objects larger than this are stored full (documents)
# ... and smaller than this too: a delta changing a tree entry's id inserts its 20 bytes
# plus headers, never half of such an object (a tree of one or two entries)
DELTA_MIN_BYTES = 64
LEVEL = 1  # zlib level of the objects written (git's core.looseCompression default)
# An append's own pack stores its blobs and trees uncompressed (zlib level 0, still
# zlib): it lives until the next pack merges it (PACK_EVERY appends), which compresses
# each family's base once, where compressing every version of a 16 KiB shard at level 1
# cost more than the rest of the pack's writing. Commits (small) and objects past
# DELTA_MAX_BYTES (documents, copied as they are by a merge) are compressed.
SMALL_PACK_LEVEL = 0


def object_id(kind: int, data: bytes) -> bytes:
    """The 20-byte id git gives an object of type ``kind`` holding ``data``."""
    digest = hashlib.sha1(b"%s %d\0" % (TYPE_NAMES[kind], len(data)))
    digest.update(data)
    return digest.digest()


@dataclass(frozen=True)
class Written:
    """A pack on disk: its name (``pack-<hex>``), the ids it holds, its files' sizes."""

    name: str
    ids: tuple[bytes, ...]
    pack_size: int
    idx_size: int


def _header(kind: int, size: int) -> bytes:
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def _ofs(distance: int) -> bytes:
    out = bytearray([distance & 0x7F])
    distance >>= 7
    while distance:
        distance -= 1
        out.insert(0, 0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(out)


class _Builder:
    """Entries of a pack being assembled in memory, then written with its index."""

    def __init__(self) -> None:
        self.parts: list[bytes] = [b""]  # the pack header goes first, once the count is known
        self.offset = 12
        self.entries: dict[bytes, tuple[int, int]] = {}  # id -> (offset, crc32)

    def add(self, oid: bytes, entry: bytes) -> int:
        at = self.offset
        self.parts.append(entry)
        self.entries[oid] = (at, zlib.crc32(entry))
        self.offset += len(entry)
        return at

    def full(self, oid: bytes, kind: int, data: bytes) -> int:
        return self.add(oid, _header(kind, len(data)) + zlib.compress(data, LEVEL))

    def finish(self) -> tuple[bytes, bytes, str]:
        """(pack bytes, index bytes, name)."""
        self.parts[0] = b"PACK" + struct.pack(">II", 2, len(self.entries))
        digest = hashlib.sha1()
        for part in self.parts:
            digest.update(part)
        checksum = digest.digest()
        self.parts.append(checksum)
        pack = b"".join(self.parts)
        ids = sorted(self.entries)
        entries = self.entries
        index = _index(ids, [entries[oid][1] for oid in ids], [entries[oid][0] for oid in ids],
                       checksum)
        return pack, index, f"pack-{checksum.hex()}"


def _index(ids: Sequence[bytes], crcs: Sequence[int], offsets: Sequence[int],
           checksum: bytes) -> bytes:
    """A version 2 index of a pack whose checksum is ``checksum``: ``ids`` sorted, with
    each one's CRC-32 and offset in the same order."""
    fanout = [0] * 256
    for oid in ids:
        fanout[oid[0]] += 1
    total = 0
    for byte in range(256):
        total += fanout[byte]
        fanout[byte] = total
    if offsets and max(offsets) > _MAX_OFFSET:
        raise ValueError("pack too large for a plain index")
    index = b"".join([
        _IDX_MAGIC, struct.pack(">256I", *fanout), b"".join(ids),
        struct.pack(f">{len(ids)}I", *crcs), struct.pack(f">{len(ids)}I", *offsets), checksum])
    return index + hashlib.sha1(index).digest()


def _store(directory: Path, builder: _Builder,
           before_visible: Callable[[str], None] | None = None, *,
           durable: bool = False, keep: bool = False) -> Written:
    """Write the pack, then its index under a temporary name renamed into place; with
    ``durable`` each file is fsynced before it is renamed (the index last), as git does
    for a pack under core.fsync / core.fsyncObjectFiles, so a crash cannot leave a ref
    naming objects whose bytes never reached the disk. With ``keep`` a ``.keep`` file
    of ours guards the pack from before its index appears (``release`` removes it)."""
    pack, index, name = builder.finish()
    return _store_pack(directory, pack, index, name, tuple(builder.entries), before_visible,
                       durable=durable, keep=keep)


def _store_pack(directory: Path, pack: bytes, index: bytes, name: str, ids: tuple[bytes, ...],
                before_visible: Callable[[str], None] | None = None, *,
                durable: bool = False, keep: bool = False) -> Written:
    if before_visible is not None:
        before_visible(name)
    if not keep:
        return _store_files(directory, pack, index, name, ids, durable)
    try:
        return _store_files(directory, pack, index, name, ids, durable, keep=True)
    except BaseException:
        release(directory, name)
        raise


# What an append's ``.keep`` file says (git's receive-pack writes "receive-pack PID on
# HOST"): a pack written before the ref names its objects is one `git repack -a -d`
# (which deletes every unkept pack it listed, whatever the refs reach by then) or
# `git gc` must leave alone until the ref moved; git guards its own such packs alike.
KEEP_MARKER = b"meridian append"


def _write_keep(path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0),
                 0o644)
    _write_fd(fd, KEEP_MARKER + b" %d\n" % os.getpid(), path)


_os_link = os.link  # (a test fills the disk here)
_NO_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK,
                       errno.EACCES})


def _keep(directory: Path, name: str, pack_path: str) -> None:
    """The ``.keep`` of pack ``name``, whose ``.pack`` is written and whose index is not:
    a hard link to the pack file itself (git only asks whether a ``.keep`` exists), one
    system call and no new file, where writing a marker file cost a file's creation;
    a keep found there is replaced (a link made beside it, renamed over it: nothing
    else's bytes are truncated). Where the filesystem has no hard links, the marker
    file (``KEEP_MARKER``). ``own_keep`` knows both."""
    keep = f"{directory}/{name}.keep"
    try:
        try:
            _os_link(pack_path, keep)
        except FileExistsError:
            temporary = f"{directory}/tmp_keep_meridian_{os.getpid()}_{next(_temporaries)}"
            _os_link(pack_path, temporary)
            os.replace(temporary, keep)
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        _write_keep(keep)


def own_keep(directory: Path, name: str) -> bool:
    """Whether pack ``name`` has a ``.keep`` file an append of Meridian wrote: a hard
    link to the pack file itself, or a file saying ``KEEP_MARKER``."""
    try:
        with open(f"{directory}/{name}.keep", "rb") as handle:
            if handle.read(len(KEEP_MARKER)) == KEEP_MARKER:
                return True
            kept = os.fstat(handle.fileno())
        packed = os.stat(f"{directory}/{name}.pack")
    except OSError:
        return False
    return (kept.st_ino, kept.st_dev) == (packed.st_ino, packed.st_dev)


def release(directory: Path, name: str) -> None:
    """Remove the ``.keep`` an append wrote for pack ``name`` (another's is left)."""
    if own_keep(directory, name):
        with contextlib.suppress(OSError):
            os.unlink(f"{directory}/{name}.keep")


_temporaries = itertools.count()


def _store_files(directory: Path, pack: bytes, index: bytes, name: str, ids: tuple[bytes, ...],
                 durable: bool, *, keep: bool = False) -> Written:
    """The pack, its ``.keep`` (with ``keep``: from before the index makes it visible),
    then its index. A failure after the pack file was created here removes it too."""
    pack_path = f"{directory}/{name}.pack"
    try:
        fd = os.open(pack_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    except FileExistsError:
        # the same name is the same checksum: these very bytes are (being) written by
        # another process; ours are written again under a name of our own
        fd = -1
    if fd == -1:
        temporary = f"{directory}/tmp_pack_meridian_{os.getpid()}_{next(_temporaries)}"
        _write_file(temporary, pack, durable)
        os.replace(temporary, pack_path)
    else:
        _write_fd(fd, pack, pack_path, durable)
    try:
        if keep:
            _keep(directory, name, pack_path)
        temporary = f"{directory}/tmp_idx_meridian_{os.getpid()}_{next(_temporaries)}"
        _write_file(temporary, index, durable)
        os.replace(temporary, f"{directory}/{name}.idx")
    except BaseException:
        if fd != -1:  # ours alone (another's copy of the same bytes may be in use)
            if keep:
                release(directory, name)  # (while the pack it links to is there)
            with contextlib.suppress(OSError):
                os.unlink(pack_path)
        raise
    return Written(name, ids, len(pack), len(index))


def _write_file(path: str, data: bytes, durable: bool = False) -> None:
    # created, never opened as found: what a crashed run (a reused pid) or an agent left
    # at the name is removed first, and no symlink is followed
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o444)
    except FileExistsError:
        os.unlink(path)
        fd = os.open(path, flags, 0o444)
    _write_fd(fd, data, path, durable)


_os_write = os.write  # (a test fills the disk here)
_os_fsync = os.fsync  # (a test records the calls here)


def _write_fd(fd: int, data: bytes, path: str | Path, durable: bool = False) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[_os_write(fd, view):]
        if durable:
            _os_fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)


def write(directory: Path, objects: Iterable[tuple[int, bytes, bytes]], *,
          durable: bool = False, keep: bool = False) -> Written:
    """One pack of ``objects`` ((type, data, id) each, stored full) in ``directory``.

    OSError (a full disk, say) leaves no pack behind: nothing of it is visible. Its
    entries, with their data, are kept in memory for ``read`` (the next pack merges it).
    """
    builder = _Builder()
    entries = []
    for kind, data, oid in objects:
        if oid not in builder.entries:
            head = _header(kind, len(data))
            small = kind != COMMIT and len(data) <= DELTA_MAX_BYTES  # merged, recompressed
            raw = head + zlib.compress(data, SMALL_PACK_LEVEL if small else LEVEL)
            entries.append(Entry(oid, builder.add(oid, raw), kind, raw, len(head), len(data),
                                 data=data))
    written = _store(directory, builder, durable=durable, keep=keep)
    _remember(directory, written, entries)
    return written


# Entries of the packs this process wrote lately, by path: the pack every PACK_EVERY-th
# append makes merges them, and reading them back from disk (two files each, parsed,
# every object inflated again) was a third of its cost. A pack's name is its checksum,
# so a pack on disk under that name with the sizes written holds these very bytes.
_WRITTEN: dict[str, tuple[int, int, list[Entry]]] = {}
_WRITTEN_LIMIT = 256


def _remember(directory: Path, written: Written, entries: list[Entry]) -> None:
    if len(_WRITTEN) >= _WRITTEN_LIMIT:
        for key in list(_WRITTEN)[:_WRITTEN_LIMIT // 4]:  # the oldest go
            del _WRITTEN[key]
    _WRITTEN[f"{directory}/{written.name}"] = (written.pack_size, written.idx_size, entries)


def _recalled(directory: Path, name: str) -> list[Entry] | None:
    """The entries of pack ``name`` as this process wrote it, when its files on disk
    still have the sizes written (None: read it from disk)."""
    where = f"{directory}/{name}"
    known = _WRITTEN.get(where)
    if known is None:
        return None
    try:
        if os.stat(where + ".pack").st_size != known[0] \
                or os.stat(where + ".idx").st_size != known[1]:
            return None
    except OSError:
        return None
    return list(known[2])


# --- reading --------------------------------------------------------------------------


@dataclass
class Entry:
    oid: bytes
    offset: int
    kind: int  # as stored: a delta type for a delta
    raw: bytes  # the whole entry as stored (header, base reference, compressed data)
    body: int  # where the compressed data starts in ``raw``
    size: int  # the size in the header (of the object, or of the delta)
    base: int | bytes | None = None  # OFS_DELTA: the base's offset; REF_DELTA: its id
    data: bytes | None = None  # the object's data, when known (a pack this process wrote)


def read(directory: Path, name: str) -> list[Entry] | None:
    """The entries of pack ``name`` in pack order, from its index; None when the pack or
    its index is not complete and readable as this module writes them (version 2, SHA-1,
    no large offsets) or they disagree."""
    recalled = _recalled(directory, name)
    if recalled is not None:
        return recalled
    try:
        data = (directory / f"{name}.pack").read_bytes()
        index = (directory / f"{name}.idx").read_bytes()
    except OSError:
        return None
    table_at = len(_IDX_MAGIC) + 256 * 4
    if not index.startswith(_IDX_MAGIC) or len(index) < table_at + 40:
        return None
    count = struct.unpack_from(">I", index, table_at - 4)[0]
    if len(index) != table_at + count * 28 + 40 or len(data) < 32 \
            or data[:4] != b"PACK" or struct.unpack_from(">II", data, 4) != (2, count) \
            or index[-40:-20] != data[-20:]:
        return None
    ids = [index[table_at + 20 * n:table_at + 20 * n + 20] for n in range(count)]
    offsets = struct.unpack_from(f">{count}I", index, table_at + count * 24)
    if any(offset & 0x80000000 for offset in offsets):
        return None
    order = sorted(range(count), key=lambda n: offsets[n])
    entries = []
    end = len(data) - 20
    for rank, n in enumerate(order):
        at = offsets[n]
        stop = offsets[order[rank + 1]] if rank + 1 < count else end
        if not 12 <= at < stop <= end:
            return None
        raw = data[at:stop]
        byte = raw[0]
        kind, size, shift, pos = (byte >> 4) & 7, byte & 0x0F, 4, 1
        while byte & 0x80:
            if pos >= len(raw):
                return None
            byte = raw[pos]
            size |= (byte & 0x7F) << shift
            shift += 7
            pos += 1
        base: int | bytes | None = None
        if kind == OFS_DELTA:
            byte = raw[pos]
            distance = byte & 0x7F
            pos += 1
            while byte & 0x80:
                byte = raw[pos]
                distance = ((distance + 1) << 7) | (byte & 0x7F)
                pos += 1
            base = at - distance
        elif kind == REF_DELTA:
            base = raw[pos:pos + 20]
            pos += 20
        elif kind not in TYPE_NAMES:
            return None
        entries.append(Entry(ids[n], at, kind, raw, pos, size, base))
    return entries


@dataclass(frozen=True)
class Loaded:
    """A pack's bytes and its index's tables (ids sorted, each one's CRC-32 and offset)."""

    name: str
    pack: bytes
    ids: list[bytes]
    crcs: tuple[int, ...]
    offsets: tuple[int, ...]


def load(directory: Path, name: str) -> Loaded | None:
    """Pack ``name`` as ``concatenate`` copies it: None when the pack or its index is not
    complete and readable as ``read`` reads them (version 2, SHA-1, no large offsets,
    every offset inside the pack) or either file's checksum is wrong."""
    try:
        data = (directory / f"{name}.pack").read_bytes()
        index = (directory / f"{name}.idx").read_bytes()
    except OSError:
        return None
    table_at = len(_IDX_MAGIC) + 256 * 4
    if not index.startswith(_IDX_MAGIC) or len(index) < table_at + 40:
        return None
    count = struct.unpack_from(">I", index, table_at - 4)[0]
    if len(index) != table_at + count * 28 + 40 or len(data) < 32 \
            or data[:4] != b"PACK" or struct.unpack_from(">II", data, 4) != (2, count) \
            or index[-40:-20] != data[-20:] \
            or hashlib.sha1(memoryview(index)[:-20]).digest() != index[-20:] \
            or hashlib.sha1(memoryview(data)[:-20]).digest() != data[-20:]:
        return None  # (copied bytes keep their CRCs: a damaged pack is not laundered)
    names = index[table_at:table_at + 20 * count]
    ids = [names[at:at + 20] for at in range(0, len(names), 20)]
    crcs = struct.unpack_from(f">{count}I", index, table_at + count * 20)
    offsets = struct.unpack_from(f">{count}I", index, table_at + count * 24)
    if count and (max(offsets) >= len(data) - 20 or min(offsets) < 12):
        return None  # (a large offset has its top bit set: past any pack read here)
    return Loaded(name, data, ids, crcs, offsets)


def concatenate(directory: Path, sources: Sequence[Loaded], *,
                before_visible: Callable[[str], None] | None = None,
                durable: bool = False) -> Written:
    """One pack holding every object of ``sources``: their entries copied as one block
    each, in order, so nothing is parsed, inflated or re-encoded. An OFS_DELTA names its
    base by its distance back, within its own pack, which a block copied whole keeps;
    a REF_DELTA names it by id; each entry keeps its CRC-32. The index is the sources'
    indexes merged, offsets moved by where each block lands. ValueError when two sources
    hold the same object (an index lists each id once: merge them with ``merge``) or the
    result would need the large-offset table."""
    parts: list[bytes | memoryview] = [b""]
    ids: list[bytes] = []
    crcs: list[int] = []
    offsets: list[int] = []
    at = 12
    for source in sources:
        shift = at - 12
        ids.extend(source.ids)
        crcs.extend(source.crcs)
        offsets.extend(offset + shift for offset in source.offsets)
        body = memoryview(source.pack)[12:-20]
        parts.append(body)
        at += len(body)
    if len(set(ids)) != len(ids):
        raise ValueError("an object is in two of the packs")
    parts[0] = b"PACK" + struct.pack(">II", 2, len(ids))
    digest = hashlib.sha1()
    for part in parts:
        digest.update(part)
    checksum = digest.digest()
    parts.append(checksum)
    order = sorted(range(len(ids)), key=ids.__getitem__)
    index = _index([ids[n] for n in order], [crcs[n] for n in order],
                   [offsets[n] for n in order], checksum)
    pack = b"".join(parts)
    return _store_pack(directory, pack, index, f"pack-{checksum.hex()}", tuple(ids),
                       before_visible, durable=durable)


def inflate(entry: Entry) -> bytes:
    if entry.data is not None:
        return entry.data
    return zlib.decompress(entry.raw[entry.body:])


# --- merging --------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _copy(offset: int, size: int) -> bytes:
    out = bytearray()
    while size:
        chunk = min(size, 0xFFFFFF)
        op, args = 0x80, bytearray()
        for n in range(4):
            byte = (offset >> (8 * n)) & 0xFF
            if byte:
                op |= 1 << n
                args.append(byte)
        for n in range(3):
            byte = (chunk >> (8 * n)) & 0xFF
            if byte:
                op |= 0x10 << n
                args.append(byte)
        out.append(op)
        out += args
        offset += chunk
        size -= chunk
    return bytes(out)


def _insert(data: bytes) -> bytes:
    out = bytearray()
    for at in range(0, len(data), 127):
        chunk = data[at:at + 127]
        out.append(len(chunk))
        out += chunk
    return bytes(out)


def _common_prefix(a: bytes, b: bytes) -> int:
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while low < high:  # a[:low] == b[:low], a[:high] != b[:high]
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def delta(base: bytes, target: bytes) -> bytes:
    """A git delta making ``target`` from ``base``: their common prefix and suffix copied,
    the rest inserted."""
    prefix = _common_prefix(base, target)
    limit = min(len(base), len(target)) - prefix
    suffix = _common_prefix(base[::-1][:limit], target[::-1][:limit]) if limit > 0 else 0
    ops = [_varint(len(base)), _varint(len(target))]
    if prefix:
        ops.append(_copy(0, prefix))
    if len(target) - prefix - suffix:
        ops.append(_insert(target[prefix:len(target) - suffix]))
    if suffix:
        ops.append(_copy(len(base) - suffix, suffix))
    return b"".join(ops)


def apply_delta(base: bytes, data: bytes) -> bytes:
    """``target`` from ``base`` and a git delta (to check what ``delta`` writes)."""
    pos = 0

    def number() -> int:
        nonlocal pos
        value, shift = 0, 0
        while True:
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    if number() != len(base):
        raise ValueError("delta base size mismatch")
    size = number()
    out = bytearray()
    while pos < len(data):
        op = data[pos]
        pos += 1
        if op & 0x80:
            offset = length = 0
            for n in range(4):
                if op & (1 << n):
                    offset |= data[pos] << (8 * n)
                    pos += 1
            for n in range(3):
                if op & (0x10 << n):
                    length |= data[pos] << (8 * n)
                    pos += 1
            out += base[offset:offset + (length or 0x10000)]
        elif op:
            out += data[pos:pos + op]
            pos += op
        else:
            raise ValueError("delta opcode 0")
    if len(out) != size:
        raise ValueError("delta result size mismatch")
    return bytes(out)


def _family(kind: int, data: bytes) -> tuple[int, bytes]:
    """Objects likely to be versions of one another: a blob's first line (a shard's first
    record), a tree's first entry name, a commit's nothing (never delta'd)."""
    if kind == BLOB:
        return kind, data[:data.find(b"\n") + 1][:512]
    if kind == TREE:
        return kind, data[:data.find(b"\0")]
    return kind, b""


def merge(directory: Path, sources: Sequence[tuple[str, list[Entry]]], *,
          regroup: bool = True, before_visible: Callable[[str], None] | None = None,
          durable: bool = False) -> Written:
    """One pack holding every object of ``sources`` ((name, entries) of packs read).

    With ``regroup`` (small packs of full objects), full objects are inflated and grouped
    by family; the largest of a family is stored full and every other member as a delta
    against it where that is smaller. Other entries (all of them without ``regroup``:
    packs merged before) are copied with their compressed bytes as they are: an
    OFS_DELTA's base offset is re-encoded, a REF_DELTA (git's own packs) names its base
    by id and needs nothing. ``before_visible`` is called with the new pack's name
    before any of its files exist.
    """
    builder = _Builder()
    full: list[tuple[Entry, bytes]] = []  # entries of full objects with their data, to group
    copied: list[tuple[Entry, bytes | None]] = []  # entries copied, with an OFS base's id
    for _, entries in sources:
        by_offset = {entry.offset: entry for entry in entries}
        has_delta = {entry.base for entry in entries if entry.kind == OFS_DELTA}
        for entry in entries:
            if entry.kind == OFS_DELTA:
                base = by_offset.get(entry.base)  # type: ignore[arg-type]
                if base is None:
                    raise ValueError("a delta whose base is not in its pack")
                copied.append((entry, base.oid))
            elif not regroup or entry.kind == REF_DELTA or entry.offset in has_delta \
                    or entry.size > DELTA_MAX_BYTES:
                copied.append((entry, None))
            elif entry.kind == COMMIT:
                copied.append((entry, None))  # never a delta: copied as it is
            else:
                full.append((entry, inflate(entry)))
    families: dict[tuple[int, bytes], list[tuple[Entry, bytes]]] = {}
    for entry, data in full:
        families.setdefault(_family(entry.kind, data), []).append((entry, data))
    for members in families.values():
        members.sort(key=lambda member: -len(member[1]))
        base, base_data = members[0]
        if base.oid in builder.entries:
            base_at = builder.entries[base.oid][0]
        else:
            # stored full, compressed at LEVEL (a small pack's copy may be level 0)
            base_at = builder.full(base.oid, base.kind, base_data)
        for member, data in members[1:]:
            oid = member.oid
            if oid in builder.entries:
                continue
            made = delta(base_data, data) if len(data) >= DELTA_MIN_BYTES else data
            if len(made) * 2 < len(data):
                at = builder.offset
                builder.add(oid, _header(OFS_DELTA, len(made)) + _ofs(at - base_at)
                            + zlib.compress(made, LEVEL))
            else:
                builder.full(oid, member.kind, data)
    # entries copied: bases (full or REF_DELTA) first, then OFS deltas against them
    for entry, base_oid in copied:
        if base_oid is None and entry.oid not in builder.entries:
            builder.add(entry.oid, entry.raw)
    for entry, base_oid in copied:
        if base_oid is None or entry.oid in builder.entries:
            continue
        found = builder.entries.get(base_oid)
        if found is None:
            raise ValueError("a delta's base was not copied")
        at = builder.offset
        head = _header(OFS_DELTA, entry.size)
        builder.add(entry.oid, head + _ofs(at - found[0]) + entry.raw[entry.body:])
    return _store(directory, builder, before_visible, durable=durable)


def remove(directory: Path, names: Iterable[str]) -> None:
    """Delete packs (index first: no reader finds an index without its pack). The files
    of each are found in one listing of the directory (an append's pack has two, where
    trying every suffix git may have added cost five system calls a pack)."""
    names = list(names)
    if not names:
        return
    try:
        present: set[str] | None = set(os.listdir(directory))
    except OSError:
        present = None
    for name in names:
        where = f"{directory}/{name}"
        _WRITTEN.pop(where, None)
        if present is None or f"{name}.keep" in present:
            release(directory, name)  # first: one of ours is known by the pack it links
        for suffix in (".idx", ".rev", ".bitmap", ".pack"):
            if present is None or name + suffix in present:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(where + suffix)
