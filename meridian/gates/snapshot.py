"""A cached fold of the gate events, keyed by the state branch tip.

Gate state is derived from events (``meridian.gates.state``). Folding every event on
every command would make its cost grow with the project's history, so the hooks and the
commands that read state (``status``, ``gate show``, ``why``, ``health``) keep the fold
in ``.git/meridian/gate-snapshot-<branch>.json``:

    {"version": 2, "tip": "<state commit>", "last_ts": "...", "fields": [...],
     "folds": {"<gate>": {<GateFold fields>}}, "checksum": "<sha256>",
     "aux": {"floors": ..., "claims": ..., "harness": ..., "ids": ..., "ids_tail": [...],
             "exact": ...},
     "aux_checksum": "<sha256>"}

and, beside it, ``gate-snapshot-<branch>.ids``: a sorted array of 64-bit hashes of
every event id the fold has seen (so a re-appended old line is noticed); the hashes
seen since that file was written are the document's ``ids_tail`` (a catch-up rewrites a
few bytes, not the file, until ``IDS_TAIL`` of them are merged into it).

- tip unchanged: the cached fold is the answer (no ledger read);
- tip moved by plain appends (a first-parent chain of commits from the cached tip, each
  only appending to event shards): the commits are walked oldest first, exactly as
  ``meridian.gates.evidence.gate_history`` orders events (commit order, then shard
  path, then line), each new pass checked on the commit that added it
  (``evidence.check_pass``), and applied to the cached fold;
- anything else (no cache, a key or checksum that does not match, a file that does not
  parse, a merge, an edited shard, an event id seen before, a record the walk cannot
  place, ``use_cache=False``): a full recompute, ``evidence.consistent_events`` over
  ``gate_history``, exactly what ``derive_states`` folds.

The fold is computed without a gate graph; the one graph-dependent rule of
``evidence`` (a verdict judged against a threshold below the gate's current one does
not count) is kept by ``floors``, the lowest threshold among each gate's counted
passes: ``gate_folds(graph)`` folds from the root again when a gate's threshold is now
above it.

The snapshot is a cache, never trust (docs/security.md): it can be deleted at any time,
and a recompute gives the same folds (tests/gates/test_snapshot_equivalence.py derives
state both ways over a history with forged passes, reopens and stale dependants). The
readers of state (``trusted_folds``) also re-check every pass and approval a cached fold
claims on the commit that added it, so a hand-written fold cannot make a gate that never
passed look passed; it could still hide a later reopen, which only a fold from the root
shows: pre-push and ``meridian ci`` derive from the root, never from this file.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import json
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meridian import gitio
from meridian.plainread import SNAPSHOT_VERSION, snapshot_aux_checksum, snapshot_checksum

if TYPE_CHECKING:
    from meridian.gates.graph import Graph
    from meridian.gates.state import GateFold
    from meridian.ledger import Ledger
    from meridian.records import Record

PASSED, APPROVED = "gate.passed", "gate.approved"
HARNESS_KIND = "harness.changed"  # meridian.harness.KIND (not imported: it loads config)
HARNESS_RECENT = 3  # harness changes kept newest first (what status shows)
MAX_CATCH_UP = 5000  # commits since the cached tip beyond which a recompute is cheaper
IDS_TAIL = 4096  # ids kept in the document before they are merged into the .ids file


@dataclass
class Snapshot:
    """The folded gate events at ``tip``; ``source`` says how they were obtained."""

    tip: str | None
    folds: dict[str, dict[str, Any]]  # gate -> GateFold fields (plain JSON values)
    last_ts: str | None
    source: str  # "empty", "cache", "incremental" or "full"
    # Read from the cache without importing the gates package: the GateFold fields the
    # cache was written with, and where to recompute from if they are not today's.
    fields: list[str] | None = None
    origin: tuple[gitio.Repository, str] | None = dataclasses.field(
        default=None, repr=False, compare=False)
    # gate -> the lowest threshold among the passes the fold counted
    floors: dict[str, float] = dataclasses.field(default_factory=dict)
    # gate -> {"pass": [record id, commit], "approval": [record id, commit]}: the events
    # behind the fold's latest pass and approval, re-checked by ``vouch``
    claims: dict[str, dict[str, list[str]]] = dataclasses.field(default_factory=dict)
    # the newest ``harness.changed`` records (raw, newest first, stored order), or None
    # when not known yet (``recent_harness`` reads them once)
    harness: list[dict[str, Any]] | None = None
    # False when a record could not be placed by the commit walk (``gate_history`` puts
    # it last whatever comes later): such a fold is never caught up, only recomputed
    exact: bool = True
    # the hashed ids of the events seen (None: unchanged since the cache was read)
    ids: array | None = dataclasses.field(default=None, repr=False, compare=False)
    ids_digest: str | None = dataclasses.field(default=None, repr=False, compare=False)
    # hashed ids seen since the .ids file was written (sorted; kept in the document, so a
    # catch-up rewrites only a few bytes until IDS_TAIL of them are merged into the file)
    ids_tail: list[int] = dataclasses.field(default_factory=list, repr=False, compare=False)

    def phase(self, gate: str) -> str:
        """open, in_progress, submitted, passed or failed, from the events alone."""
        fold = self.folds.get(gate)
        return str(fold.get("phase", "open")) if fold else "open"

    def gate_folds(self, graph: Graph | None = None) -> dict[str, GateFold]:
        """The folds as ``GateFold`` objects, for ``state.derive_states(folds=...)``.

        With ``graph``, exactly ``fold_events(gate_events(ledger, graph.specs, graph))``:
        when a gate's threshold is now above a pass the fold counted, that pass does not
        count, and the events are folded from the root with the graph (not cached).
        """
        from meridian.gates.state import GateFold

        if self.fields is not None and self.fields != _fold_fields() and self.origin:
            # A cache an older Meridian wrote, with other fields: fold the events again.
            repo, branch = self.origin
            return load_snapshot(repo, branch, use_cache=False).gate_folds(graph)
        if graph is not None and self.origin is not None and _below_floor(self, graph):
            from meridian.gates.state import fold_events, gate_events
            from meridian.ledger import Ledger

            repo, branch = self.origin
            return fold_events(gate_events(Ledger(repo, branch), graph.specs, graph))
        return {gate: GateFold(**fields) for gate, fields in self.folds.items()}


def _below_floor(snapshot: Snapshot, graph: Graph) -> bool:
    from meridian.gates.evidence import _current_threshold

    for gate in graph.specs:
        low = snapshot.floors.get(gate)
        if low is None:
            continue
        floor = _current_threshold(graph, gate)
        if floor is not None and low < floor:
            return True
    return False


def cache_path(repo: gitio.Repository, branch: str) -> Path:
    return gitio.meridian_dir(repo) / f"gate-snapshot-{branch.replace('/', '__')}.json"


def _ids_path(path: Path) -> Path:
    return path.with_suffix(".ids")


_checksum = snapshot_checksum  # shared with the plain re-check (``status_passes``)
_aux_checksum = snapshot_aux_checksum


def _id_hash(rid: str) -> int:
    return int.from_bytes(hashlib.blake2b(rid.encode(), digest_size=8).digest(), "big")


def _read_cache(path: Path) -> dict[str, Any] | None:
    """The cached snapshot, or None when absent, unreadable or not matching its checksums."""
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(cached, dict) or cached.get("version") != SNAPSHOT_VERSION:
        return None
    try:
        expected = _checksum(cached["tip"], cached["last_ts"], cached["fields"], cached["folds"])
        aux = cached["aux"]
        if cached.get("checksum") != expected \
                or cached.get("aux_checksum") != _aux_checksum(cached["tip"], aux):
            return None
        if not (isinstance(cached["tip"], str) and isinstance(cached["folds"], dict)
                and all(isinstance(f, dict) for f in cached["folds"].values())
                and isinstance(cached["fields"], list) and isinstance(aux["floors"], dict)
                and isinstance(aux["claims"], dict) and isinstance(aux["exact"], bool)
                and isinstance(aux["ids"], str)
                and isinstance(aux.get("ids_tail", []), list)
                and all(type(h) is int for h in aux.get("ids_tail", []))
                and (aux["harness"] is None or isinstance(aux["harness"], list))):
            return None
    except (KeyError, TypeError):
        return None
    return cached


def _read_ids(path: Path, digest: str) -> array | None:
    try:
        data = _ids_path(path).read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != digest or len(data) % 8:
        return None
    ids = array("Q")
    ids.frombytes(data)
    return ids


def _aux(snapshot: Snapshot, ids_digest: str) -> dict[str, Any]:
    return {"floors": snapshot.floors, "claims": snapshot.claims, "harness": snapshot.harness,
            "exact": snapshot.exact, "ids": ids_digest, "ids_tail": snapshot.ids_tail}


def _write_cache(path: Path, snapshot: Snapshot, fields: list[str]) -> None:
    """Write the snapshot (ids first, then the document naming them); a cache that
    cannot be written only makes the next read slower."""
    assert snapshot.tip is not None
    targets: list[tuple[Path, bytes]] = []
    if snapshot.ids is not None:
        data = snapshot.ids.tobytes()
        snapshot.ids_digest = hashlib.sha256(data).hexdigest()
        targets.append((_ids_path(path), data))
    assert snapshot.ids_digest is not None
    aux = _aux(snapshot, snapshot.ids_digest)
    document = {
        "version": SNAPSHOT_VERSION, "tip": snapshot.tip, "last_ts": snapshot.last_ts,
        "fields": fields, "folds": snapshot.folds,
        "checksum": _checksum(snapshot.tip, snapshot.last_ts, fields, snapshot.folds),
        "aux": aux, "aux_checksum": _aux_checksum(snapshot.tip, aux),
    }
    # Write then rename: two processes running at once never see half a file.
    from meridian.viewfile import replace_with

    targets.append((path, json.dumps(document, sort_keys=True).encode()))
    for target, content in targets:
        try:
            replace_with(target, content)
        except OSError:
            return


def _fold_fields() -> list[str]:
    from meridian.gates.state import GateFold

    return [field.name for field in dataclasses.fields(GateFold)]


def _from_cache(cached: dict[str, Any], source: str,
                origin: tuple[gitio.Repository, str]) -> Snapshot:
    aux = cached["aux"]
    return Snapshot(tip=cached["tip"], folds=cached["folds"], last_ts=cached["last_ts"],
                    source=source, fields=cached["fields"], origin=origin,
                    floors=aux["floors"], claims=aux["claims"], harness=aux["harness"],
                    exact=aux["exact"], ids_digest=aux["ids"],
                    ids_tail=list(aux.get("ids_tail", [])))


def load_snapshot(repo: gitio.Repository, branch: str, *, use_cache: bool = True) -> Snapshot:
    """The gate folds at the tip of ``branch``, from the cache when it is still valid."""
    tip_oid = gitio.ref_target(repo, f"refs/heads/{branch}")
    if tip_oid is None:
        return Snapshot(tip=None, folds={}, last_ts=None, source="empty")
    tip = str(tip_oid)
    path = cache_path(repo, branch)
    folded = None if use_cache else _FOLDED_HERE.get((str(path), tip))
    if folded is not None:  # folded from the root by this process, at this very tip
        return folded
    cached = _read_cache(path) if use_cache else None
    if cached is not None and cached["tip"] == tip:
        return _from_cache(cached, "cache", (repo, branch))

    from meridian.ledger import Ledger

    ledger = Ledger(repo, branch)
    snapshot = None
    if cached is not None and cached["aux"]["exact"]:
        snapshot = _catch_up(ledger, cached, path, tip_oid)
    recomputed = snapshot is None
    if snapshot is None:
        snapshot = _recompute(ledger, tip_oid)
        fields = _fold_fields()
    else:
        assert cached is not None  # a caught-up snapshot comes from the cache
        fields = cached["fields"]
    _write_cache(path, snapshot, fields)
    snapshot.fields, snapshot.origin = fields, (repo, branch)
    if recomputed and not use_cache:
        if len(_FOLDED_HERE) >= 8:
            _FOLDED_HERE.clear()
        _FOLDED_HERE[(str(path), tip)] = snapshot
    return snapshot


# Snapshots this process folded from the root, by cache path and tip: memory no other
# process can write, so a second ``load_snapshot(use_cache=False)`` at the same tip (the
# pre-push hook asks for the locked gates and for the stale ones) is not folded again.
_FOLDED_HERE: dict[tuple[str, str], Snapshot] = {}


def _as_json(folds: dict[str, GateFold]) -> dict[str, dict[str, Any]]:
    return {gate: dataclasses.asdict(fold) for gate, fold in sorted(folds.items())}


def _apply(records: Sequence[tuple[Record, str | None]], folds: dict[str, GateFold],
           snapshot: Snapshot) -> None:
    """Fold already-checked events (``evidence.checked_event``), noting the floors and
    the claims; ``records`` pairs each with the commit that added it. Positions in
    ledger order continue after the last one folded (``state.fold_events``)."""
    from meridian.gates.state import fold_events

    fold_events((record for record, _ in records), folds)
    for record, commit in records:
        gate = record.gate
        if not gate:
            continue
        if record.kind == PASSED:
            threshold = record.data.get("threshold")
            low = float(threshold) if isinstance(threshold, int | float) \
                and not isinstance(threshold, bool) else float("-inf")
            snapshot.floors[gate] = min(snapshot.floors.get(gate, low), low)
            snapshot.claims.setdefault(gate, {})["pass"] = [record.id, str(commit)]
        elif record.kind == APPROVED:
            snapshot.claims.setdefault(gate, {})["approval"] = [record.id, str(commit)]


def _recompute(ledger: Ledger, tip: gitio.Oid) -> Snapshot:
    from meridian.gates.evidence import consistent_events, gate_history

    history = gate_history(ledger)
    events = consistent_events(ledger, None, history)
    snapshot = Snapshot(tip=str(tip), folds={}, last_ts=events[-1].ts if events else None,
                        source="full")
    folds: dict[str, GateFold] = {}
    _apply([(r, history.commit_of.get(r.id)) for r in events], folds, snapshot)
    snapshot.folds = _as_json(folds)
    snapshot.exact = all(r.id in history.commit_of for r in history.events)
    snapshot.ids = array("Q", sorted({_id_hash(rid) for rid in history.commit_of}))
    return snapshot


def _linear_range(repo: gitio.Repository, since: gitio.Oid,
                  tip: gitio.Oid) -> list[tuple[gitio.Oid, gitio.Oid]] | None:
    """(commit, parent) from ``since`` (excluded) to ``tip``, oldest first, when ``tip``
    reaches ``since`` by single-parent commits; None otherwise (a merge, another history)."""
    chain: list[tuple[gitio.Oid, gitio.Oid]] = []
    commit = tip
    while commit != since:
        if len(chain) >= MAX_CATCH_UP:
            return None
        try:
            parents = gitio.commit_parents(repo, commit)
        except (KeyError, ValueError):
            return None
        if len(parents) != 1:
            return None
        chain.append((commit, parents[0]))
        commit = parents[0]
    chain.reverse()
    return chain


def _appended(ledger: Ledger, commit: gitio.Oid,
              parent: gitio.Oid) -> list[tuple[str, bytes]] | None:
    """(shard path, line) of the event lines ``commit`` appended, in the order
    ``gate_history`` gives them; None when it did anything but append."""
    from meridian.ledger import EVENTS

    repo = ledger.repo
    old = gitio.tree_entry(repo, gitio.commit_tree(repo, parent), EVENTS)
    new = gitio.tree_entry(repo, gitio.commit_tree(repo, commit), EVENTS)
    if new is None:
        return [] if old is None else None
    out: list[tuple[str, bytes]] = []
    for path, before, after in sorted(gitio.changed_paths(repo, old, new)):
        if after is None or not path.endswith(".jsonl"):
            return None
        old_data = gitio.read_blob(repo, before) if before is not None else b""
        new_data = gitio.read_blob(repo, after)
        if not new_data.startswith(old_data):
            return None
        out.extend((f"{EVENTS}/{path}", line)
                   for line in new_data[len(old_data):].splitlines() if line.strip())
    return out


def _catch_up(ledger: Ledger, cached: dict[str, Any], path: Path,
              tip: gitio.Oid) -> Snapshot | None:
    """Apply the events appended since the cached tip; None when only a recompute is right."""
    from meridian.errors import MeridianError

    try:
        since = gitio.Oid(hex=cached["tip"])
    except ValueError:
        return None
    chain = _linear_range(ledger.repo, since, tip)
    if chain is None:
        return None
    added: list[tuple[str, str, bytes]] = []  # (commit, shard path, line)
    for commit, parent in chain:
        lines = _appended(ledger, commit, parent)
        if lines is None:
            return None
        added.extend((str(commit), shard, line) for shard, line in lines)
    snapshot = _from_cache(cached, "incremental", (ledger.repo, ledger.branch))
    snapshot.tip = str(tip)
    handled, light = _catch_up_blocks(cached, path, added, snapshot)
    if handled:
        return light
    from meridian.gates.evidence import _line_id
    from meridian.records import record_id

    events: list[tuple[str, str, Record]] = []  # (commit, shard path, record)
    try:
        events = [(commit, shard, ledger._quick_record(line, shard))
                  for commit, shard, line in added]
    except MeridianError:
        return None  # a corrupt line: the recompute reports it as every reader does
    gate_records = [(commit, line, r) for (commit, _, r), (_, _, line) in zip(events, added,
                                                                               strict=True)
                    if r.kind.startswith("gate.")]
    if gate_records:
        if cached["fields"] != _fold_fields():
            return None  # written by a Meridian whose GateFold had other fields
        seen = _seen_ids(path, cached)
        if seen is None:
            return None
        for _, line, record in gate_records:
            rid = _line_id(line)
            # An id that is not the record's own (a hand-made line) could be any other
            # line's, and a line seen before keeps its first place in ledger order.
            if rid is None or rid != record.id or rid != record_id(
                    record.kind, record.ts, record.writer, record.data):
                return None
            if not seen.add(_id_hash(rid)):
                return None
        seen.keep(snapshot)
        from meridian.gates.evidence import checked_event
        from meridian.gates.state import GateFold

        folds = {gate: GateFold(**fields) for gate, fields in cached["folds"].items()}
        checked = [(checked_event(ledger, r, commit), commit) for commit, _, r in gate_records]
        _apply(checked, folds, snapshot)
        snapshot.folds = _as_json(folds)
        snapshot.last_ts = gate_records[-1][2].ts
    snapshot.harness = _harness_after(ledger, tip, snapshot.harness,
                                      [(shard, r) for _, shard, r in events])
    return snapshot


# ``dataclasses.fields(state.GateFold)`` by name, spelled out so a catch-up over blocks
# alone needs no gates package (its graph and config models); a test keeps them equal.
FOLD_FIELDS = ["phase", "phase_before_submit", "started_at", "base_commit", "estimate_hours",
               "verdict", "verdict_passed", "overall", "threshold", "evaluator", "scope",
               "subject", "spec_hash", "identity", "high_issues", "approved_verdict", "approver",
               "submitted_at", "submissions", "blocks", "updated_at", "forged_reason",
               "last_pos", "passed_pos", "taken_back_pos", "taken_back"]
BLOCKED = "gate.blocked"  # meridian.gates.events.BLOCKED


def _catch_up_blocks(cached: dict[str, Any], path: Path, added: list[tuple[str, str, bytes]],
                     snapshot: Snapshot) -> tuple[bool, Snapshot | None]:
    """The catch-up when the new event lines are ``gate.blocked`` events (of gates the
    fold knows) and kinds no fold reads: (True, the snapshot, or None for a recompute),
    decided exactly as ``_catch_up`` does but on the lines' JSON, without the record
    model or the gates package (a block only counts: ``GateFold.apply`` sets
    ``updated_at``, ``last_pos`` and ``blocks``). (False, None): anything else (a state
    event, a harness change, a gate the fold has not seen, other fold fields): the
    caller's general path."""
    from meridian.idindex import line_id
    from meridian.records import record_id

    lines: list[tuple[bytes, dict[str, Any]]] = []
    for _, _, line in added:
        try:
            raw = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            return True, None  # a corrupt line: the recompute reports it as every reader does
        if not isinstance(raw, dict) or not _RECORD_KEYS <= raw.keys() \
                or not isinstance(raw.get("data"), dict) or not isinstance(raw.get("kind"), str):
            return True, None
        kind = raw["kind"]
        if kind == HARNESS_KIND or (kind.startswith("gate.") and kind != BLOCKED):
            return False, None
        if kind == BLOCKED:
            gate = raw["data"].get("gate")
            if isinstance(gate, str) and gate and gate not in cached["folds"]:
                return False, None
            lines.append((line, raw))
    if not lines:
        return True, snapshot
    if cached["fields"] != FOLD_FIELDS:
        return False, None
    seen = _seen_ids(path, cached)
    if seen is None:
        return True, None
    for line, raw in lines:
        rid = line_id(line)
        if rid is None or rid != raw["id"] or rid != record_id(
                raw["kind"], raw["ts"], raw["writer"], raw["data"]):
            return True, None
        if not seen.add(_id_hash(rid)):
            return True, None
    seen.keep(snapshot)
    folds = {gate: dict(fields) for gate, fields in cached["folds"].items()}
    pos = max((f["last_pos"] for f in folds.values()), default=-1)
    for _, raw in lines:
        gate = raw["data"].get("gate")
        if isinstance(gate, str) and gate:
            pos += 1
            fold = folds[gate]
            fold["updated_at"], fold["last_pos"] = raw["ts"], pos
            fold["blocks"] += 1
    snapshot.folds = dict(sorted(folds.items()))
    snapshot.last_ts = lines[-1][1]["ts"]
    return True, snapshot


_RECORD_KEYS = frozenset({"id", "ts", "kind", "writer", "data"})


class _SeenIds:
    """The hashed ids a cached fold has seen: the .ids file and the document's tail."""

    def __init__(self, base: array, tail: list[int]) -> None:
        self.base, self.tail, self._tail = base, list(tail), set(tail)

    def add(self, hashed: int) -> bool:
        """Note ``hashed``; False when it was seen already."""
        if hashed in self._tail or _contains(self.base, hashed):
            return False
        self.tail.append(hashed)
        self._tail.add(hashed)
        return True

    def keep(self, snapshot: Snapshot) -> None:
        """Put them on ``snapshot``: the tail alone, or once it is long, a new file."""
        if len(self.tail) <= IDS_TAIL:
            snapshot.ids, snapshot.ids_tail = None, sorted(self.tail)
            return
        merged = self.base
        for hashed in sorted(self.tail):
            merged.insert(bisect.bisect_left(merged, hashed), hashed)
        snapshot.ids, snapshot.ids_tail = merged, []


def _seen_ids(path: Path, cached: dict[str, Any]) -> _SeenIds | None:
    base = _read_ids(path, cached["aux"]["ids"])
    return None if base is None else _SeenIds(base, cached["aux"].get("ids_tail", []))


def _contains(ids: array, value: int) -> bool:
    index = bisect.bisect_left(ids, value)
    return index < len(ids) and ids[index] == value


def _raw(record: Record) -> dict[str, Any]:
    return {"id": record.id, "ts": record.ts, "kind": record.kind, "writer": record.writer,
            "data": record.data}


def _harness_after(ledger: Ledger, tip: gitio.Oid, known: list[dict[str, Any]] | None,
                   new: list[tuple[str, Record]]) -> list[dict[str, Any]] | None:
    """The newest harness changes once ``new`` (shard, record) lines are appended: new
    ones in the newest shard come first; one appended to an older shard (a record dated
    in another month) sits among the old ones, so the list is read again (None)."""
    changes = [(shard, r) for shard, r in new if r.kind == HARNESS_KIND]
    if known is None or not changes:
        return known
    from meridian.ledger import EVENTS

    shards = ledger.shards(EVENTS, at=tip)
    if not shards or any(shard != shards[-1] for shard, _ in changes):
        return None
    return ([_raw(r) for _, r in reversed(changes)] + known)[:HARNESS_RECENT]


# --- for the commands that read state ---------------------------------------------------


def _added_record(ledger: Ledger, commit: str, rid: str) -> Record | None:
    """The record with id ``rid`` that ``commit`` appended to the events, or None."""
    from meridian.errors import MeridianError
    from meridian.gates.evidence import _line_id

    try:
        oid = gitio.Oid(hex=commit)
        parents = gitio.commit_parents(ledger.repo, oid)
        lines = _appended(ledger, oid, parents[0]) if parents else None
    except (ValueError, KeyError, IndexError):
        return None
    for shard, line in lines or ():
        if _line_id(line) == rid:
            try:
                return ledger._quick_record(line, shard)
            except MeridianError:
                return None
    return None


def vouch(ledger: Ledger, snapshot: Snapshot) -> bool:
    """Whether every pass and approval the fold counts is an event its commit added,
    consistent with its verdict (``evidence.check_pass``) and with the fold.

    A cached fold is a file anyone running as the user can rewrite (with checksums
    recomputed); this makes a gate that never passed impossible to show as passed. It
    cannot show that nothing came after the claimed pass (a reopen): that takes the
    fold from the root, which pre-push and ``meridian ci`` do."""
    from meridian.gates.evidence import check_pass

    for gate, fold in snapshot.folds.items():
        claims = snapshot.claims.get(gate) or {}
        if fold.get("phase") == "passed":
            claim = claims.get("pass")
            record = _claimed(ledger, claim, snapshot.tip)
            if record is None or record.kind != PASSED or record.gate != gate or any(
                        record.data.get(key) != fold.get(key)
                        for key in ("verdict", "subject", "spec_hash", "overall", "threshold")):
                return False
            assert claim is not None
            if check_pass(ledger, record, claim[1]) is not None:
                return False
        if fold.get("approved_verdict") is not None:
            record = _claimed(ledger, claims.get("approval"), snapshot.tip)
            if record is None or record.kind != APPROVED or record.gate != gate \
                    or record.data.get("verdict") != fold.get("approved_verdict") \
                    or record.data.get("approver") != fold.get("approver"):
                return False
    return True


def _claimed(ledger: Ledger, claim: Any, tip: Any) -> Record | None:
    """The record a claim names, when the commit it names is on the branch (the tip the
    snapshot is keyed by, or an ancestor of it) and added that record. A commit off the
    branch (a dangling one made with plumbing) vouches for nothing: verify, pre-push and
    ``meridian ci`` never see it."""
    if not (isinstance(claim, list) and len(claim) == 2
            and all(isinstance(part, str) for part in claim) and isinstance(tip, str)):
        return None
    try:
        if not gitio.is_ancestor(ledger.repo, gitio.Oid(hex=claim[1]), gitio.Oid(hex=tip)):
            return None
    except (ValueError, KeyError, gitio.GitError):
        return None
    return _added_record(ledger, claim[1], claim[0])


def trusted_snapshot(ledger: Ledger, *, use_cache: bool = True) -> Snapshot:
    """The snapshot, with a cached fold's passes and approvals re-checked (``vouch``);
    folded from the root again when one does not hold."""
    snapshot = load_snapshot(ledger.repo, ledger.branch, use_cache=use_cache)
    if snapshot.source in ("cache", "incremental") and not vouch(ledger, snapshot):
        snapshot = load_snapshot(ledger.repo, ledger.branch, use_cache=False)
    return snapshot


def trusted_folds(ledger: Ledger, graph: Graph, *, use_cache: bool = True) -> dict[str, GateFold]:
    """What ``derive_states(ledger, graph)`` folds, from the snapshot: pass it as
    ``derive_states(ledger, graph, folds=trusted_folds(ledger, graph))``."""
    return trusted_snapshot(ledger, use_cache=use_cache).gate_folds(graph)


def recent_harness(ledger: Ledger, snapshot: Snapshot | None = None) -> list[Record]:
    """``meridian.harness.recent(ledger)`` (the newest harness changes, newest first),
    from the snapshot when it knows them; read once and kept there otherwise."""
    from meridian.records import Record

    if snapshot is None:
        snapshot = load_snapshot(ledger.repo, ledger.branch)
    if snapshot.tip is None:
        return []
    if snapshot.harness is None:
        from meridian import harness

        found = harness.recent(ledger, limit=HARNESS_RECENT)
        if str(ledger.tip()) != snapshot.tip:
            return found  # the branch moved meanwhile: not this snapshot's answer
        snapshot.harness = [_raw(r) for r in found]
        _keep(ledger, snapshot)
    return [Record.model_construct(**raw) for raw in snapshot.harness]


def _keep(ledger: Ledger, snapshot: Snapshot) -> None:
    """Write ``snapshot`` (now knowing its harness changes) back, when the cache holds it."""
    path = cache_path(ledger.repo, ledger.branch)
    cached = _read_cache(path)
    if cached is None or cached["tip"] != snapshot.tip:
        return
    snapshot.ids, snapshot.ids_digest = None, cached["aux"]["ids"]
    _write_cache(path, snapshot, cached["fields"])
