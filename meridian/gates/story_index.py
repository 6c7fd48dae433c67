"""A per-gate index of the gate events, so ``meridian why GATE`` does not read every event.

``story.gate_story`` needs one gate's events in ledger order, each with the commit that
added it (a pass is checked on that commit). Finding them by reading the branch parses
every event line and walks every commit (``evidence.gate_history``): its cost grows
with the whole history, whatever the gate. The index keeps them per gate, in
``.git/meridian/gate-story-<branch>/``:

- ``index.json``: ``{"version", "tip", "count", "gates": {gate: [file, sha256]},
  "unassigned": [file, sha256], "ids": sha256, "checksum"}``, the tip it is true at,
  how many gate events it placed, and the digest of each file below;
- one file per gate (``g-<sha of the name>.jsonl``) of ``[place, commit, record]``
  lines: every ``gate.*`` event naming that gate (``data.gate``), in ledger order;
- ``unassigned.jsonl``: the blocks that name files but no gate (a pre-commit refusal),
  which belong to the story of a gate whose artifacts cover one of their files (the
  graph decides, when read);
- ``ids``: the sorted 64-bit hashes of every gate event id placed (a re-appended old
  line keeps its first place in ledger order: the index is then built again).

Keyed and caught up the way the gate snapshot is (``gates/snapshot.py``): at the tip,
the index is the answer; when the tip moved by plain appends (a first-parent chain of
single-parent commits from the index's tip, each only appending lines to event
shards: ``snapshot._linear_range``/``_appended``), the new gate events are placed
after the others; anything else (no index, a checksum or digest that does not match,
a merge, an edit, a corrupt line, an id seen before, a record whose id is not the one
``gate_history`` reads) builds it again from ``gate_history``, exactly the order the
story had before.

A cache, never trust: anyone running as the user can rewrite these files (checksums
recomputed). Every pass the story shows is still checked on the commit the index
names (``evidence.checked_event``: that commit must add that event and its verdict),
so a forged index can misshow or hide non-pass events of one gate's story (as a forged
snapshot can misshow non-passed gates), never show a pass its commit does not back.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meridian import gitio

if TYPE_CHECKING:
    from meridian.gates.graph import Graph
    from meridian.ledger import Ledger
    from meridian.records import Record

INDEX_VERSION = 1
BLOCKED = "gate.blocked"
UNASSIGNED = "unassigned.jsonl"
_RECORD_FIELDS = frozenset({"id", "ts", "kind", "writer", "data"})  # ledger.RECORD_FIELDS

Entry = tuple[int, str | None, dict[str, Any]]  # (place, commit, raw record)


def index_dir(ledger: Ledger) -> Path:
    return gitio.meridian_dir(ledger.repo) / f"gate-story-{ledger.branch.replace('/', '__')}"


def _gate_file(gate: str) -> str:
    return "g-" + hashlib.sha256(gate.encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".jsonl"


def _checksum(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"))
                          .encode()).hexdigest()


def _raw(record: Record) -> dict[str, Any]:
    return {"id": record.id, "ts": record.ts, "kind": record.kind, "writer": record.writer,
            "data": record.data}


class _Index:
    """The index in memory: entries per gate and unassigned, the hashed ids placed."""

    def __init__(self, tip: str, count: int, gates: dict[str, list[Entry]],
                 unassigned: list[Entry], ids: array) -> None:
        self.tip, self.count, self.gates, self.unassigned, self.ids = (
            tip, count, gates, unassigned, ids)

    def place(self, commit: str | None, raw: dict[str, Any]) -> None:
        gate = raw["data"].get("gate")
        entry: Entry = (self.count, commit, raw)
        self.count += 1
        if isinstance(gate, str):
            if gate:
                self.gates.setdefault(gate, []).append(entry)
        elif raw["kind"] == BLOCKED and isinstance(raw["data"].get("files"), list):
            self.unassigned.append(entry)


def _build(ledger: Ledger) -> _Index | None:
    """From ``gate_history``: None when a record could not be placed by the commit walk
    (the story's own order puts it last, whatever comes later: never caught up)."""
    from meridian.gates.evidence import gate_history
    from meridian.gates.snapshot import _id_hash

    history = gate_history(ledger)
    if history.tip is None or not all(r.id in history.commit_of for r in history.events):
        return None
    index = _Index(history.tip, 0, {}, [], array("Q"))
    for record in history.events:
        index.place(history.commit_of.get(record.id), _raw(record))
    index.ids = array("Q", sorted({_id_hash(r.id) for r in history.events}))
    return index


MAX_FILE_BYTES = 512 * 1024 * 1024  # far above a gate's events at 100k (~30 MB)


def _read_file(path: Path) -> bytes:
    """The bytes of the index file at ``path``: a regular file only (a FIFO would block
    ``why`` forever, a symlink to ``/dev/zero`` fill memory), at most ``MAX_FILE_BYTES``;
    ``OSError`` otherwise (the caller builds the index again)."""
    from meridian.errors import MeridianError
    from meridian.userfiles import read_bounded

    try:
        return read_bounded(path, limit=MAX_FILE_BYTES)
    except MeridianError as exc:
        raise OSError(str(exc)) from None


def _read_lines(path: Path, digest: Any) -> list[Entry] | None:
    try:
        data = _read_file(path)
    except OSError:
        return None
    if not isinstance(digest, str) or hashlib.sha256(data).hexdigest() != digest:
        return None
    out: list[Entry] = []
    for line in data.splitlines():
        place, commit, raw = json.loads(line)
        if not (type(place) is int and (commit is None or isinstance(commit, str))
                and isinstance(raw, dict) and raw.keys() == _RECORD_FIELDS
                and isinstance(raw["data"], dict) and isinstance(raw["kind"], str)):
            raise ValueError("not an index entry")
        out.append((place, commit, raw))
    return out


def _read_index(directory: Path) -> dict[str, Any] | None:
    try:
        document = json.loads(_read_file(directory / "index.json"))
        body = document["body"]
        if document.get("checksum") != _checksum(body) or body.get("version") != INDEX_VERSION:
            return None
        if not (isinstance(body["tip"], str) and type(body["count"]) is int
                and isinstance(body["gates"], dict) and isinstance(body["unassigned"], str)
                and isinstance(body["ids"], str)):
            return None
        return dict(body)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(directory: Path, index: _Index) -> None:
    """Files first, then the index naming their digests; a cache that cannot be written
    only makes the next ``why`` slower."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        body = {"version": INDEX_VERSION, "tip": index.tip, "count": index.count,
                "gates": {gate: _put(directory, _gate_file(gate), _lines(entries))
                          for gate, entries in sorted(index.gates.items())},
                "unassigned": _put(directory, UNASSIGNED, _lines(index.unassigned)),
                "ids": _put(directory, "ids", index.ids.tobytes())}
    except OSError:
        return
    _write_body(directory, body)


def _new_gate_records(ledger: Ledger, since: str, tip: gitio.Oid
                      ) -> list[tuple[str, dict[str, Any]]] | None:
    """(commit, raw record) of each gate event the commits since ``since`` appended, in
    ledger order; None when they did anything but append well-formed lines."""
    from meridian.gates.evidence import _line_id
    from meridian.gates.snapshot import _appended, _linear_range
    from meridian.ledger import RECORD_FIELDS

    try:
        chain = _linear_range(ledger.repo, gitio.Oid(hex=since), tip)
    except ValueError:
        return None
    if chain is None:
        return None
    new: list[tuple[str, dict[str, Any]]] = []
    for commit, parent in chain:
        lines = _appended(ledger, commit, parent)
        if lines is None:
            return None
        for _, line in lines:
            try:
                raw = json.loads(line)
            except ValueError:
                return None  # a corrupt line: the full path reports it as every reader does
            if raw.__class__ is not dict or not RECORD_FIELDS <= raw.keys() \
                    or raw["data"].__class__ is not dict or raw["kind"].__class__ is not str:
                return None
            if raw["kind"].startswith("gate."):
                if not isinstance(raw["id"], str) or _line_id(line) != raw["id"]:
                    return None
                new.append((str(commit), {k: raw[k] for k in RECORD_FIELDS}))
    return new


def _advance(ledger: Ledger, directory: Path, body: dict[str, Any], tip: gitio.Oid
             ) -> dict[str, Any] | None:
    """The index brought from its tip to ``tip`` (its new document), reading and
    rewriting only the files of the gates that got events; None: build it again."""
    import bisect

    from meridian.gates.snapshot import _id_hash

    new = _new_gate_records(ledger, body["tip"], tip)
    if new is None:
        return None
    moved = {**body, "tip": str(tip), "gates": dict(body["gates"])}
    if new:
        try:
            data = _read_file(directory / "ids")
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() != body["ids"] or len(data) % 8:
            return None
        ids = array("Q")
        ids.frombytes(data)
        index = _Index(str(tip), body["count"], {}, [], ids)
        seen: set[int] = set()
        for commit, raw in new:
            hashed = _id_hash(raw["id"])
            at = bisect.bisect_left(ids, hashed)
            if hashed in seen or (at < len(ids) and ids[at] == hashed):
                return None  # an old line appended again keeps its first place: build again
            seen.add(hashed)
            index.place(commit, raw)
        for hashed in sorted(seen):
            ids.insert(bisect.bisect_left(ids, hashed), hashed)
        try:
            for gate, entries in index.gates.items():
                old = b""
                if gate in body["gates"]:
                    old = _checked_bytes(directory / _gate_file(gate), body["gates"][gate])
                moved["gates"][gate] = _put(directory, _gate_file(gate), old + _lines(entries))
            if index.unassigned:
                old = _checked_bytes(directory / UNASSIGNED, body["unassigned"])
                moved["unassigned"] = _put(directory, UNASSIGNED,
                                           old + _lines(index.unassigned))
            moved["ids"] = _put(directory, "ids", ids.tobytes())
        except (OSError, ValueError):
            return None
        moved["count"] = index.count
    _write_body(directory, moved)
    return moved


def _checked_bytes(path: Path, digest: Any) -> bytes:
    data = _read_file(path)
    if not isinstance(digest, str) or hashlib.sha256(data).hexdigest() != digest:
        raise ValueError(f"{path.name}: not the file the index names")
    return data


def _put(directory: Path, name: str, content: bytes) -> str:
    """Write ``name`` (write then rename); its sha256."""
    from meridian.viewfile import replace_with

    replace_with(directory / name, content)  # a planted FIFO or symlink is never opened
    return hashlib.sha256(content).hexdigest()


def _lines(entries: list[Entry]) -> bytes:
    return b"".join(json.dumps(list(entry), sort_keys=True, separators=(",", ":")).encode()
                    + b"\n" for entry in entries)


def _read_gate(directory: Path, body: dict[str, Any], gate: str
               ) -> tuple[list[Entry], list[Entry]] | None:
    try:
        digest = body["gates"].get(gate)
        entries = [] if digest is None else _read_lines(directory / _gate_file(gate), digest)
        unassigned = _read_lines(directory / UNASSIGNED, body["unassigned"])
    except (ValueError, TypeError):
        return None
    if entries is None or unassigned is None:
        return None
    return entries, unassigned


def story(ledger: Ledger, graph: Graph, gate: str) -> list[tuple[Record, str | None]] | None:
    """``gate``'s events in ledger order with the commit that added each, from the index
    (caught up or built as needed); None when it cannot say (then read the branch)."""
    tip = ledger.tip()
    if tip is None:
        return []
    directory = index_dir(ledger)
    body = _read_index(directory)
    if body is not None and body["tip"] != str(tip):
        body = _advance(ledger, directory, body, tip)
    if body is not None:
        found = _read_gate(directory, body, gate)
        if found is not None:
            return _entries_of(*found, graph, gate)
    index = _build(ledger)
    if index is None:
        return None
    _write(directory, index)
    return _entries_of(index.gates.get(gate, []), index.unassigned, graph, gate)


def _write_body(directory: Path, body: dict[str, Any]) -> None:
    from meridian.viewfile import replace_with

    try:
        replace_with(directory / "index.json",
                     json.dumps({"body": body, "checksum": _checksum(body)}).encode())
    except OSError:
        pass  # a cache that cannot be written only makes the next ``why`` slower


def _entries_of(entries: list[Entry], unassigned: list[Entry], graph: Graph, gate: str
                ) -> list[tuple[Record, str | None]]:
    """The gate's own entries and the unassigned blocks of its files, in ledger order."""
    from meridian.records import Record

    own = [e for e in unassigned if isinstance(e[2]["data"].get("files"), list)
           and any(gate in graph.gate_for_path(str(f)) for f in e[2]["data"]["files"])]
    mine = [e for e in entries if e[2]["data"].get("gate") == gate]  # a forged file: dropped
    return [(Record.model_construct(**raw), commit) for _, commit, raw
            in sorted(mine + own, key=lambda e: e[0])]
