"""The members of an archive a Bash command extracts, listed before the command runs.

``bash_writes`` judges ``tar -xf x.tar`` and ``unzip x.zip`` by the files they would
write: the archive's member names (and where its links point). Listing is bounded, so
the PreToolUse hook never hangs or slows much on it: the archive must be a regular file
(opened non-blocking and checked with fstat, so a FIFO or device is never read from),
hold at most ``MEMBER_LIMIT`` members, and be walked within ``READ_LIMIT`` bytes read
through a decompressor and ``TIME_LIMIT`` seconds. Past any bound, or in a format it
cannot read (zstd, 7z, rar), the archive is ``Unlisted`` with the reason in words.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import IO, Any, NamedTuple

MEMBER_LIMIT = 10_000
READ_LIMIT = 64 * 1024 * 1024  # bytes read through a decompressor (a compressed tar)
DIRECTORY_LIMIT = 16 * 1024 * 1024  # a zip's central directory
TIME_LIMIT = 1.0
LINK_LIMIT = 4096  # a zip's symlink target is stored as the member's data


class Unlisted(Exception):
    """The archive's members cannot be told now; the message says why (``it does not
    exist yet``, ``it is not a regular file``, ...)."""


class Member(NamedTuple):
    name: str
    link: str | None = None  # where a symbolic or hard link member points
    hard: bool = False  # a hard link: ``link`` is a member name, relative to the top
    folder: bool = False  # a directory entry


class _Bounded:
    """A read-only stream that stops (``Unlisted``) past ``limit`` bytes or a deadline."""

    def __init__(self, stream: IO[bytes], limit: int, deadline: float) -> None:
        self.stream, self.left, self.deadline = stream, limit, deadline

    def read(self, size: int = -1) -> bytes:
        if time.monotonic() > self.deadline:
            raise Unlisted(f"listing it takes longer than {TIME_LIMIT:g} s")
        want = self.left + 1 if size is None or size < 0 else min(size, self.left + 1)
        data = self.stream.read(want)
        self.left -= len(data)
        if self.left < 0:
            raise Unlisted(f"it unpacks to more than {READ_LIMIT // (1024 * 1024)} MiB before "
                           "its last member")
        return data


def members(path: Path) -> list[Member]:
    """The members of the tar (plain, gzip, bzip2 or xz) or zip archive at ``path``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise Unlisted("it does not exist yet") from None
    except OSError as exc:
        raise Unlisted(f"it cannot be read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise Unlisted("it is not a regular file")
        # (one hook call judges a command more than once: the harness, then the gates)
        key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
        if key in _LISTED:
            known = _LISTED[key]
            if isinstance(known, str):
                raise Unlisted(known)
            return known
        try:
            with os.fdopen(os.dup(descriptor), "rb") as raw:
                _LISTED[key] = _members(raw, time.monotonic() + TIME_LIMIT)
        except Unlisted as exc:
            _LISTED[key] = str(exc)
            raise
        except (OSError, EOFError, ValueError, LookupError, RuntimeError) as exc:
            _LISTED[key] = f"it cannot be read as an archive ({type(exc).__name__})"
            raise Unlisted(_LISTED[key]) from None
        return _LISTED[key]  # type: ignore[return-value]
    finally:
        os.close(descriptor)


_LISTED: dict[tuple[int, int, int, int], list[Member] | str] = {}


def _members(raw: IO[bytes], deadline: float) -> list[Member]:
    head = raw.read(512)
    raw.seek(0)
    if head[:2] == b"\x1f\x8b":
        import gzip

        return _tar_stream(gzip.GzipFile(fileobj=raw), deadline)
    if head[:3] == b"BZh":
        import bz2

        return _tar_stream(bz2.BZ2File(raw), deadline)
    if head[:6] == b"\xfd7zXZ\x00":
        import lzma

        return _tar_stream(lzma.LZMAFile(raw), deadline)
    if head[257:262] == b"ustar" or (len(head) == 512 and _v7_header(head)):
        return _tar_seekable(raw, deadline)
    if head[:2] == b"PK":
        return _zip(raw, deadline)
    if head[:4] == b"\x28\xb5\x2f\xfd":
        raise Unlisted("it is zstd-compressed, which Meridian cannot read")
    raise Unlisted("it is not a tar or zip archive Meridian can read")


def _v7_header(head: bytes) -> bool:
    """Whether a block is an old (pre-POSIX) tar header: its checksum adds up."""
    try:
        stored = int(head[148:156].split(b"\0", 1)[0].strip() or b"-1", 8)
    except ValueError:
        return False
    return stored == sum(head[:148]) + 8 * 32 + sum(head[156:])


def _tar_members(archive: object, deadline: float) -> list[Member]:
    out: list[Member] = []
    for member in archive:  # type: ignore[attr-defined]
        if len(out) >= MEMBER_LIMIT:
            raise Unlisted(f"it holds more than {MEMBER_LIMIT} members")
        if time.monotonic() > deadline:
            raise Unlisted(f"listing it takes longer than {TIME_LIMIT:g} s")
        link = member.linkname if (member.issym() or member.islnk()) else None
        out.append(Member(member.name, link, member.islnk(), member.isdir()))
    return out


def _tar_stream(stream: IO[bytes] | Any, deadline: float) -> list[Member]:
    """A compressed tar, read once from the start (skipping a member's data reads it)."""
    import tarfile

    bounded = _Bounded(stream, READ_LIMIT, deadline)
    try:
        with tarfile.open(fileobj=bounded, mode="r|") as archive:  # type: ignore[call-overload]
            return _tar_members(archive, deadline)
    except tarfile.TarError:
        raise Unlisted("it is not a tar archive Meridian can read") from None


def _tar_seekable(raw: IO[bytes], deadline: float) -> list[Member]:
    """A plain tar: the walk seeks from header to header, its data is never read."""
    import tarfile

    try:
        with tarfile.open(fileobj=raw, mode="r:") as archive:
            return _tar_members(archive, deadline)
    except tarfile.TarError:
        raise Unlisted("it is not a tar archive Meridian can read") from None


def _zip(raw: IO[bytes], deadline: float) -> list[Member]:
    import zipfile

    # the count and size of the central directory first, from its end record
    end = getattr(zipfile, "_EndRecData", None)
    record = end(raw) if end is not None else None
    if record is None:
        raise Unlisted("it is not a zip archive Meridian can read")
    if record[getattr(zipfile, "_ECD_ENTRIES_TOTAL", 4)] > MEMBER_LIMIT:
        raise Unlisted(f"it holds more than {MEMBER_LIMIT} members")
    if record[getattr(zipfile, "_ECD_SIZE", 5)] > DIRECTORY_LIMIT:
        raise Unlisted("its list of members is larger than "
                       f"{DIRECTORY_LIMIT // (1024 * 1024)} MiB")
    raw.seek(0)
    out: list[Member] = []
    try:
        with zipfile.ZipFile(raw) as archive:
            for info in archive.infolist():
                if len(out) >= MEMBER_LIMIT:
                    raise Unlisted(f"it holds more than {MEMBER_LIMIT} members")
                if time.monotonic() > deadline:
                    raise Unlisted(f"listing it takes longer than {TIME_LIMIT:g} s")
                link = None
                if stat.S_ISLNK(info.external_attr >> 16):
                    # unzip makes it a symbolic link to the member's text
                    if info.file_size > LINK_LIMIT:
                        raise Unlisted("a link member in it is too long to read")
                    with archive.open(info) as member:
                        link = member.read(LINK_LIMIT + 1)[:LINK_LIMIT].decode(
                            "utf-8", "replace")
                out.append(Member(info.filename, link, folder=info.is_dir()))
    except zipfile.BadZipFile:
        raise Unlisted("it is not a zip archive Meridian can read") from None
    return out
