"""Where a stream's records live on the state branch: the one module that knows shard paths.

A stream (``events``, ``memory/semantic``, ...) is a directory of month directories;
each month holds numbered JSONL shards, closed at SHARD_BYTES. Shard ``n`` of a month:

    <stream>/<YYYY-MM>/<NNNN>.jsonl            n < 64: directly in the month
    <stream>/<YYYY-MM>/g<GGGG>/<KK>.jsonl      n >= 64: group G = n // 64, K = n % 64

So no tree on the append path holds more than 64 shards plus one group per 64 shards
(1 MiB of records): a month of 100,000 events is about 1,450 shards of 16 KiB, held as
64 + 22 entries and groups of at most 64. Shards were closed at 64 KiB before: an
append rewrites its whole shard (hash and deflate), and 16 KiB makes that blob cheap.
The size is the writer's choice only: readers, verify and merge take shards of any
size, so a branch written with 64 KiB shards is read, verified and extended as it is
(its open shard, over 16 KiB, is closed and the next number opened). The first 64
shards of a month keep the flat layout every earlier version wrote, so a branch
written before groups existed is read, verified, merged and extended as it is: a
month with more than 64 flat shards simply continues with the group of its next
number.

The newest shard is found by position, never by listing and sorting: names have a
fixed width and a git tree is sorted by name, so the last entry of a month is its
newest group (``g`` sorts after digits) or, with no group, its newest flat shard, and
the last entry of a group is its newest shard. Readers order a month's flat shards
numerically, then its groups, which is the order they were written in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

SHARD_BYTES = 16 * 1024  # 64 KiB before issue #17's append work (still read)
SHARDS_PER_GROUP = 64
FLAT_SHARDS = SHARDS_PER_GROUP  # shards 0..63 of a month sit directly in it
SUFFIX = ".jsonl"
_MONTH = re.compile(r"\d{4}-\d{2}")
_GROUP = re.compile(r"g(\d+)")
_FLAT_WIDTH = 4 + len(SUFFIX)  # 0000.jsonl (older versions numbered past 9999 too)
_GROUP_WIDTH = 5  # g0000
_GROUPED_WIDTH = 2 + len(SUFFIX)  # 00.jsonl


def shard_path(stream: str, month: str, number: int) -> str:
    """Path of shard ``number`` (0-based, counted per month) of ``stream``."""
    if number < FLAT_SHARDS:
        return f"{stream}/{month}/{number:04d}{SUFFIX}"
    group, index = divmod(number, SHARDS_PER_GROUP)
    return f"{stream}/{month}/g{group:04d}/{index:02d}{SUFFIX}"


def is_shard(path: str) -> bool:
    return path.endswith(SUFFIX)


def split_shard_path(path: str) -> tuple[str, str] | None:
    """(stream, month) of a shard path, flat or grouped; None if ``path`` is no shard."""
    if not is_shard(path):
        return None
    parts = path.split("/")
    if len(parts) >= 3 and _MONTH.fullmatch(parts[-2]):
        return "/".join(parts[:-2]), parts[-2]
    if len(parts) >= 4 and _GROUP.fullmatch(parts[-2]) and _MONTH.fullmatch(parts[-3]):
        return "/".join(parts[:-3]), parts[-3]
    return None


def stream_of(path: str) -> str | None:
    """The stream a ``.jsonl`` path belongs to (None for a document).

    A shard outside any month directory (never written by Meridian) still counts as a
    line store of the directory two levels up, so verify and merge treat it as records.
    """
    located = split_shard_path(path)
    if located is not None:
        return located[0]
    parts = path.split("/")
    return "/".join(parts[:-2]) if is_shard(path) and len(parts) >= 3 else None


def path_order(path: str) -> tuple[str, str, int, int, str]:
    """Sort key putting shard paths of any stream in the order they were written."""
    located = split_shard_path(path)
    if located is None:
        return path, "", -1, -1, path
    stream, month = located
    rest = path[len(stream) + len(month) + 2:]
    group, _, name = rest.rpartition("/")
    return stream, month, _number(group) if group else -1, _number(name), path


def order_paths(paths: Iterable[str]) -> list[str]:
    return sorted(paths, key=path_order)


def _number(name: str) -> int:
    stem = name.removesuffix(SUFFIX)
    stem = stem.removeprefix("g")
    return int(stem) if stem.isdigit() else -1


def _order(name: str) -> tuple[int, str]:
    return _number(name), name


def _is_group(entry: Any) -> bool:
    return entry.type_str == "tree" and _GROUP.fullmatch(entry.name) is not None


def _is_numbered_shard(entry: Any) -> bool:
    return entry.type_str == "blob" and entry.name.endswith(SUFFIX) \
        and entry.name.removesuffix(SUFFIX).isdigit()


def month_shards(repo: Any, month_tree: Any, prefix: str) -> list[str]:
    """Paths (``prefix/...``) of the shards in one month tree, in the order written."""
    flat: list[str] = []
    groups: list[Any] = []
    for entry in month_tree:
        if _is_group(entry):
            groups.append(entry)
        elif entry.type_str == "blob" and entry.name.endswith(SUFFIX):
            flat.append(entry.name)
    out = [f"{prefix}/{name}" for name in sorted(flat, key=_order)]
    for group in sorted(groups, key=lambda entry: _order(entry.name)):
        names = [entry.name for entry in repo[group.id]
                 if entry.type_str == "blob" and entry.name.endswith(SUFFIX)]
        out.extend(f"{prefix}/{group.name}/{name}" for name in sorted(names, key=_order))
    return out


def stream_shards(repo: Any, stream_tree: Any, stream: str) -> list[str]:
    """Paths of every shard of a stream tree, oldest month first."""
    out: list[str] = []
    for entry in sorted(stream_tree, key=lambda entry: entry.name):
        if entry.type_str == "tree" and _MONTH.fullmatch(entry.name):
            out.extend(month_shards(repo, repo[entry.id], f"{stream}/{entry.name}"))
    return out


def _last(tree: Any, wanted: Callable[[Any], bool], width: int) -> Any | None:
    """The entry ``wanted`` accepts with the greatest number: by position when the last
    entry is one of fixed width, by a scan otherwise (a name grown past its width, a
    stray entry sorting after ours)."""
    if len(tree) == 0:
        return None
    last = tree[len(tree) - 1]
    if wanted(last) and len(last.name) == width:
        return last
    return max((entry for entry in tree if wanted(entry)), key=lambda e: _number(e.name),
               default=None)


def open_shard(repo: Any, month_tree: Any | None) -> tuple[int, Any | None]:
    """(number, blob) of the newest shard of a month; (0, None) for a month with none."""
    number, entry = open_shard_entry(repo, month_tree)
    return number, None if entry is None else repo[entry.id]


def open_shard_entry(repo: Any, month_tree: Any | None) -> tuple[int, Any | None]:
    """(number, tree entry) of the newest shard of a month, its blob not read (a writer
    that wrote it last has its bytes); (0, None) for a month with none."""
    if month_tree is None or len(month_tree) == 0:
        return 0, None
    last = month_tree[len(month_tree) - 1]
    # Groups sort after every flat shard: a flat shard last means the month has no group.
    if not _is_numbered_shard(last):
        group = _last(month_tree, _is_group, _GROUP_WIDTH)
        if group is not None:
            base = _number(group.name) * SHARDS_PER_GROUP
            shard = _last(repo[group.id], _is_numbered_shard, _GROUPED_WIDTH)
            if shard is None:
                return base, None
            return base + _number(shard.name), shard
    shard = _last(month_tree, _is_numbered_shard, _FLAT_WIDTH)
    if shard is None:
        return 0, None
    return _number(shard.name), shard
