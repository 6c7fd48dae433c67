"""Merge two state-branch trees by record id, never by git's line merge.

The merged tree is a pure function of the two inputs, symmetric in them: the same
records in the same order whichever clone merges. Streams that are identical on both
sides are kept as they are; a stream that differs is rebuilt as the union of its
records by id, ordered by (ts, id), and re-sharded by month and size (two lines
with one id, possible only for content-addressed memory, resolve to ``preferred``). Documents
(runs, verdicts) are unioned by path; one path with two contents is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from meridian import gitio, layout
from meridian.errors import MeridianError


def _split(repo: gitio.Repository, tree: object) -> tuple[dict[str, dict[str, gitio.Oid]],
                                                          dict[str, gitio.Oid]]:
    """(stream -> {shard path: blob}, document path -> blob) of a tree."""
    streams: dict[str, dict[str, gitio.Oid]] = {}
    documents: dict[str, gitio.Oid] = {}
    if tree is None:
        return streams, documents
    for path, oid in gitio.iter_files(repo, tree):  # type: ignore[arg-type]
        stream = layout.stream_of(path)
        if stream is not None:
            streams.setdefault(stream, {})[path] = oid
        else:
            documents[path] = oid
    return streams, documents


def _sort_key(line: bytes) -> tuple[str, str]:
    raw = json.loads(line)
    return str(raw.get("ts", "")), str(raw["id"])


def preferred(a: bytes, b: bytes) -> bytes:
    """Of two lines with one id, the one every merge keeps: the earliest, then bytewise.

    Only content-addressed records (``memory.*``) can share an id with different
    bytes (the same memory written by two clones at different times). Choosing by a
    total order keeps merges symmetric, and ``verify`` checks the same choice.
    """
    return min(a, b, key=lambda line: (_sort_key(line), line))


def stream_lines(repo: gitio.Repository, shards: dict[str, gitio.Oid]) -> dict[str, bytes]:
    """{record id: line} of a stream's shards, refusing corrupt lines."""
    by_id: dict[str, bytes] = {}
    for path in layout.order_paths(shards):
        for line in gitio.read_blob(repo, shards[path]).splitlines():
            try:
                rid = json.loads(line)["id"]
                if not isinstance(rid, str):
                    raise TypeError(rid)
            except (ValueError, KeyError, TypeError):
                raise MeridianError(f"cannot merge: {path} holds a corrupt line; "
                                    "run `meridian verify`") from None
            by_id[rid] = preferred(by_id[rid], line) if rid in by_id else line
    return by_id


def shard_lines(stream: str, lines: Iterable[bytes]) -> dict[str, bytes]:
    """Deterministic shards (path -> content) for ``lines`` already in order."""
    out: dict[str, bytes] = {}
    month_counts: dict[str, int] = {}
    current: dict[str, bytearray] = {}
    for line in lines:
        month = json.loads(line)["ts"][:7]
        buffer = current.setdefault(month, bytearray())
        if buffer and len(buffer) + len(line) + 1 > layout.SHARD_BYTES:
            out[layout.shard_path(stream, month, month_counts.get(month, 0))] = bytes(buffer)
            month_counts[month] = month_counts.get(month, 0) + 1
            buffer.clear()
        buffer.extend(line + b"\n")
    for month, buffer in current.items():
        if buffer:
            out[layout.shard_path(stream, month, month_counts.get(month, 0))] = bytes(buffer)
    return out


def merge_trees(repo: gitio.Repository, ours: object, theirs: object) -> tuple[gitio.Oid, int]:
    """The merged tree and the number of records the union added to ``ours``."""
    our_streams, our_docs = _split(repo, ours)
    their_streams, their_docs = _split(repo, theirs)
    files: dict[str, gitio.Oid] = {}
    added = 0
    for stream in sorted(set(our_streams) | set(their_streams)):
        mine, other = our_streams.get(stream, {}), their_streams.get(stream, {})
        if mine == other:
            files.update(mine)
            continue
        union = stream_lines(repo, mine)
        before = len(union)
        for rid, line in stream_lines(repo, other).items():
            union[rid] = preferred(union[rid], line) if rid in union else line
        added += len(union) - before
        ordered = sorted(union.values(), key=_sort_key)
        for path, content in shard_lines(stream, ordered).items():
            files[path] = gitio.write_blob(repo, content)
    for path in sorted(set(our_docs) | set(their_docs)):
        a, b = our_docs.get(path), their_docs.get(path)
        if a is not None and b is not None and a != b:
            raise MeridianError(f"cannot merge: {path} differs between the two histories")
        files[path] = a if a is not None else b  # type: ignore[assignment]
    return gitio.update_tree(repo, None, files), added
