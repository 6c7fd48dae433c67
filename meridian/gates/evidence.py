"""Which ledger commit added each gate event, and whether a pass is backed by evidence.

Layer: state derivation. A ``gate.passed`` record is only a claim; anyone who can run
git plumbing (or ``Ledger.emit``) can append one. It counts only when:

- the same ledger commit that added the event added the verdict document it names
  (``verdicts/<gate>/<id>.json``), so a pass cannot borrow another event's verdict;
- the document's gate, subject tree and definition hash equal the event's, and its
  threshold is not below the gate's current one;
- Meridian's own rule holds on the document (``models.decide``: weighted overall >=
  threshold and no high-severity issue), whatever labels it carries;
- the event's time is not later than its commit's time plus ``SKEW_SECONDS``.

Events are folded in ledger order: the order of the commits that added them (oldest
first, topologically), then their order within the commit, never by their own
timestamps, so a record stamped in 2099 cannot outlive a later ``gate reopen``.

A consistent pass whose verdict was simply made up (a fake document written with the
event) passes these checks; only ``meridian ci`` (re-running checks and the scan on the
verdict's subject, outside the agent's reach) catches it.

Finding the commit that added each event: shards only grow, so each version of a shard
holding gate events is a prefix of the tip's copy, identified by its size (an object
header) and proved by hashing the tip's bytes up to there into the version's blob id
(``_order_by_sizes``: no tree diff, no cache, nothing to poison). Where shards did not
only grow (a merge interleaved them, a shard was edited in place), the branch is walked
with one tree diff per commit; that walk's result is cached in
``.git/meridian/gate-history-<branch>.json`` keyed by the tip and extended from a cached
tip that is still an ancestor. That cache is a plain file an agent can rewrite with the
right tip (folding a pass after the reopen that took it back, say), so it is used only
once shown true for every gate event (listed by the commit that added it, commits in walk
order, a commit's events in stored order: ``_order_holds``), else the branch is walked
again; and each pass's claim (this commit added this event and this verdict) is
re-checked on the commit itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from meridian import gitio
from meridian.idindex import line_id as _line_id  # the one reader: a decoy first id is parsed
from meridian.records import Record, parse_ts

if TYPE_CHECKING:
    from meridian.gates.graph import Graph
    from meridian.ledger import Ledger

SKEW_SECONDS = 300
HISTORY_VERSION = 1
PASSED = "gate.passed"
INCONSISTENT = "gate.inconsistent"  # never stored: what an inconsistent pass folds as


@dataclass
class GateHistory:
    """The gate events in ledger order, each with the commit that added it."""

    tip: str | None
    events: list[Record] = field(default_factory=list)
    commit_of: dict[str, str] = field(default_factory=dict)  # record id -> commit


def _cache_path(ledger: Ledger) -> Any:
    return ledger.local_dir / f"gate-history-{ledger.branch.replace('/', '__')}.json"


def _read_order_cache(ledger: Ledger) -> dict[str, Any] | None:
    try:
        cached = json.loads(_cache_path(ledger).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(cached, dict) or cached.get("version") != HISTORY_VERSION \
            or not isinstance(cached.get("tip"), str) or not isinstance(cached.get("order"), list):
        return None
    return cached


def _write_order_cache(ledger: Ledger, tip: str, order: list[list[str]]) -> None:
    from meridian.viewfile import replace_with

    body = json.dumps({"version": HISTORY_VERSION, "tip": tip, "order": order})
    try:
        replace_with(_cache_path(ledger), body.encode())
    except OSError:
        pass  # a cache that cannot be written is only slower


def _added_lines(repo: gitio.Repository, old_tree: Any, new_tree: Any) -> list[bytes]:
    """Event lines a commit added (relative to ``old_tree``), in stored order."""
    old_events = gitio.tree_entry(repo, old_tree, "events") if old_tree is not None else None
    new_events = gitio.tree_entry(repo, new_tree, "events")
    out: list[bytes] = []
    if new_events is None:
        return out
    for _path, old, new in sorted(gitio.changed_paths(repo, old_events, new_events)):
        if new is None:
            continue
        old_data = gitio.read_blob(repo, old) if old is not None else b""
        new_data = gitio.read_blob(repo, new)
        if new_data.startswith(old_data):
            out.extend(line for line in new_data[len(old_data):].splitlines() if line.strip())
        else:  # edited in place (tampering, or a merge re-sharding): every line not there before
            before = set(old_data.splitlines())
            out.extend(line for line in new_data.splitlines() if line.strip() and line not in before)
    return out


def _walk_order(ledger: Ledger, tip: gitio.Oid, hide: list[gitio.Oid],
                seen: set[str]) -> list[list[str]]:
    """[record id, commit] for every event line first added by a commit after ``hide``."""
    repo = ledger.repo
    order: list[list[str]] = []
    for info in gitio.walk(repo, tip, oldest_first=True, hide=hide):
        commit = str(info.oid)
        new_tree = gitio.commit_tree(repo, info.oid)
        # A merge adds what neither parent had; what came from the second parent was
        # already attributed to the commit on that side that added it.
        old_tree = gitio.commit_tree(repo, info.parents[0]) if info.parents else None
        for line in _added_lines(repo, old_tree, new_tree):
            rid = _line_id(line)
            if rid is not None and rid not in seen:
                seen.add(rid)
                order.append([rid, commit])
    return order




def _gate_lines(ledger: Ledger, tip: gitio.Oid,
                keep: Callable[[dict[str, Any]], bool] | None
                ) -> tuple[list[str], list[Record]]:
    """(the id of every ``gate.*`` event in stored order, the records of those ``keep``
    accepts, in stored order). Lines are checked exactly as ``Ledger.records`` checks
    them (a corrupt one raises its error, naming the shard and line), but only the kept
    gate events become ``Record`` objects."""
    from meridian.ledger import EVENTS, RECORD_FIELDS

    ids: list[str] = []
    kept: list[Record] = []
    loads = json.loads
    for path, number, line in ledger.lines(EVENTS, at=tip):
        try:
            raw = loads(line)
        except (ValueError, UnicodeDecodeError):
            raw = None
        if raw.__class__ is not dict or not RECORD_FIELDS <= raw.keys() \
                or raw["data"].__class__ is not dict or raw["kind"].__class__ is not str:
            ledger._quick_record(line, f"{path}:{number}")  # raises the ledger's error
            raw = loads(line)  # a subclass the checks above were strict about: as it was
        if not raw["kind"].startswith("gate."):
            continue
        ids.append(raw["id"])
        if keep is None or keep(raw):
            kept.append(Record.model_construct(**{k: raw[k] for k in RECORD_FIELDS}))
    return ids, kept


def gate_history(ledger: Ledger, keep: Callable[[dict[str, Any]], bool] | None = None
                 ) -> GateHistory:
    """Every ``gate.*`` event on the branch in ledger order, with the commit that added it.

    ``keep`` (a test on the raw record: ``{"id", "ts", "kind", "writer", "data"}``)
    limits ``events`` to the records it accepts (``meridian why``: one gate's story);
    the order and ``commit_of`` are established over every gate event all the same."""
    tip = ledger.tip()
    if tip is None:
        return GateHistory(tip=None)
    tip_hex = str(tip)
    all_ids, found = _gate_lines(ledger, tip, keep)
    fast = _order_by_sizes(ledger, tip)
    if fast is not None:
        places, added_by = fast
        by_place = sorted(enumerate(found), key=lambda item: (
            places.get(item[1].id, len(places)), item[0]))
        return GateHistory(tip=tip_hex, events=[r for _, r in by_place], commit_of=added_by)
    cached = _read_order_cache(ledger)
    order: list[list[str]] | None = None
    if cached is not None:
        if cached["tip"] == tip_hex:
            order = cached["order"]
        else:
            try:
                since = gitio.Oid(hex=cached["tip"])
                extendable = gitio.is_ancestor(ledger.repo, since, tip)
            except (ValueError, KeyError):
                extendable = False
            if extendable:
                old = cached["order"]
                seen = {entry[0] for entry in old if isinstance(entry, list) and entry}
                order = old + _walk_order(ledger, tip, [since], seen)
        # A cache is a plain file the agent can rewrite with the right tip: its order is
        # used only once it is shown true for every gate event (else: walk again).
        if order is not None and not _order_holds(ledger, tip, order, all_ids):
            order = None
    fresh = order is None
    if order is None:
        order = _walk_order(ledger, tip, [], set())
    if fresh or cached is None or cached["tip"] != tip_hex:
        _write_order_cache(ledger, tip_hex, order)
    position: dict[str, int] = {}
    commit_of: dict[str, str] = {}
    for index, entry in enumerate(order):
        if isinstance(entry, list) and len(entry) == 2:
            position.setdefault(entry[0], index)
            commit_of.setdefault(entry[0], entry[1])
    # Stored order breaks ties (and places anything the walk did not see last).
    ranked = sorted(enumerate(found), key=lambda item: (position.get(item[1].id, len(order)),
                                                        item[0]))
    return GateHistory(tip=tip_hex, events=[r for _, r in ranked], commit_of=commit_of)


def _order_by_sizes(ledger: Ledger, tip: gitio.Oid
                    ) -> tuple[dict[str, int], dict[str, str]] | None:
    """(record id -> place, record id -> the commit that first added it) for every gate
    event, computed without a tree diff, or None when the shards holding gate events did
    not only grow (a merge interleaved them, a shard was edited): walk them then.

    Shards only grow, so each version of a shard is a prefix of the tip's copy: which
    prefix is told by the version's size (an object header read, no inflate), and that
    it *is* that prefix by hashing the tip's bytes up to there into the version's blob id
    (nothing read from the object database). The lines a commit added to a shard are the
    ones between its first parent's prefix and its own, as ``_walk_order`` finds by
    diffing. Nothing here is cached, so nothing can be poisoned."""
    import hashlib

    repo = ledger.repo
    tree = gitio.commit_tree(repo, tip)
    from meridian.ledger import EVENTS

    shards: dict[str, tuple[bytes, dict[int, int], list[str | None]]] = {}
    for path in ledger.shards(EVENTS, tip):
        data = gitio.blob_data(gitio.tree_entry(repo, tree, path)) or b""
        if b'"kind":"gate.' not in data:
            continue
        ends: dict[int, int] = {0: 0}  # prefix size -> lines in it
        ids: list[str | None] = []
        offset = 0
        for line in data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"):
            offset += len(line) + 1
            ids.append(_line_id(line) if b'"kind":"gate.' in line else None)
            ends[offset] = len(ids)
        if not data.endswith(b"\n"):
            return None  # not a shard as the ledger writes them
        shards[path] = (data, ends, ids)
    if not shards:
        return {}, {}
    counted: dict[str, int] = {}  # blob id -> lines, for versions shown to be prefixes

    def lines_in(path: str, oid: Any) -> int | None:
        if oid is None:
            return 0
        key = str(oid)
        if key in counted:
            return counted[key]
        data, ends, _ = shards[path]
        size = gitio.object_size(repo, oid)
        count = ends.get(size)
        if count is None or len(key) != 40 or hashlib.sha1(
                b"blob %d\0" % size + data[:size], usedforsecurity=False).hexdigest() != key:
            return None
        counted[key] = count
        return count

    def shard_oid(commit_tree: Any, path: str) -> Any:
        try:
            return commit_tree[path].id
        except KeyError:
            return None

    added_by: dict[str, list[str | None]] = {path: [None] * len(ids)
                                             for path, (_, _, ids) in shards.items()}
    order: list[tuple[int, str, int]] = []
    for rank, info in enumerate(gitio.walk(repo, tip, oldest_first=True)):
        now_tree = gitio.commit_tree(repo, info.oid)
        parent_tree = gitio.commit_tree(repo, info.parents[0]) if info.parents else None
        for path in sorted(shards):
            now = shard_oid(now_tree, path)
            before = shard_oid(parent_tree, path) if parent_tree is not None else None
            if now == before:
                continue
            count, previous = lines_in(path, now), lines_in(path, before)
            if count is None or previous is None or count < previous:
                return None
            owners = added_by[path]
            for index in range(previous, count):
                if owners[index] is None:
                    owners[index] = str(info.oid)
                    order.append((rank, path, index))
    position: dict[str, int] = {}
    commit_of: dict[str, str] = {}
    for place, (_, path, index) in enumerate(sorted(order)):
        rid = shards[path][2][index]
        if rid is not None and rid not in position:
            position[rid] = place
            commit_of[rid] = str(added_by[path][index])
    if any(owner is None for owners in added_by.values() for owner in owners):
        return None
    return position, commit_of


def _order_holds(ledger: Ledger, tip: gitio.Oid, order: list[Any],
                 found: list[str]) -> bool:
    """Whether a cached order is the ledger order for every gate event: each is listed,
    by the commit that really added it, commits in the walk's order, and the events of
    one commit in the order that commit stored them. Costs a commit walk (no diffs) and
    one diff per commit that added gate events; the cache still saves the rest."""
    wanted = set(found)  # the ids of every gate event
    listed: list[tuple[str, str]] = []
    for entry in order:
        if not (isinstance(entry, list) and len(entry) == 2
                and all(isinstance(part, str) for part in entry)):
            return False
        if entry[0] in wanted:
            listed.append((entry[0], entry[1]))
    if {rid for rid, _ in listed} != wanted or len(listed) != len(wanted):
        return False
    repo = ledger.repo
    rank = {str(info.oid): (index, info) for index, info in
            enumerate(gitio.walk(repo, tip, oldest_first=True))}
    previous = -1
    by_commit: dict[str, list[str]] = {}
    for rid, commit in listed:
        placed = rank.get(commit)
        if placed is None or placed[0] < previous:
            return False
        previous = placed[0]
        by_commit.setdefault(commit, []).append(rid)
    for commit, rids in by_commit.items():
        info = rank[commit][1]
        parent = gitio.commit_tree(repo, info.parents[0]) if info.parents else None
        ids = (_line_id(line) for line in _added_lines(repo, parent,
                                                        gitio.commit_tree(repo, info.oid)))
        added = [rid for rid in ids if rid is not None and rid in wanted]
        if added != rids:
            return False
    return True


# --- the consistency of one pass ------------------------------------------------------


def check_pass(ledger: Ledger, record: Record, commit: str | None,
               graph: Graph | None = None) -> str | None:
    """Why the ``gate.passed`` ``record`` added by ``commit`` is not backed by its verdict
    (None when it is). ``graph`` adds the check against the gate's current threshold."""
    repo = ledger.repo
    gate = record.gate or ""
    verdict_path = record.data.get("verdict")
    if commit is None:
        return "no ledger commit added this event"
    try:
        oid = gitio.Oid(hex=commit)
        info = gitio.commit_info(repo, oid)
    except (ValueError, KeyError):
        return f"the commit {commit[:12]} that added it is not in this repository"
    tree = gitio.commit_tree(repo, oid)
    parent_tree = gitio.commit_tree(repo, info.parents[0]) if info.parents else None
    # The cache named this commit: check that it really added the event.
    if not _adds_record(repo, parent_tree, tree, record.id):
        return f"commit {commit[:12]} did not add this event"
    try:
        stamped = parse_ts(record.ts).timestamp()
    except ValueError:
        return f"its time {record.ts} is not a timestamp"
    if stamped > info.time + SKEW_SECONDS:
        return (f"stamped {record.ts}, after the time of the commit that added it "
                f"(more than {SKEW_SECONDS}s later)")
    if not isinstance(verdict_path, str) or not verdict_path.startswith(f"verdicts/{gate}/"):
        return f"it names no verdict document of gate {gate} ({verdict_path!r})"
    blob = gitio.tree_entry(repo, tree, verdict_path)
    if blob is None:
        return f"its verdict {verdict_path} is not on the branch"
    if parent_tree is not None and gitio.tree_entry(repo, parent_tree, verdict_path) is not None:
        return f"its verdict {verdict_path} was written by an earlier commit, not with the event"
    try:
        document = json.loads(gitio.blob_data(blob) or b"")
    except ValueError:
        return f"its verdict {verdict_path} is not JSON"
    if not isinstance(document, dict):
        return f"its verdict {verdict_path} is not a verdict"
    return _check_document(record, verdict_path, document, graph)


def _adds_record(repo: gitio.Repository, parent_tree: Any, tree: Any, rid: str) -> bool:
    return rid in _added_ids(repo, parent_tree, tree)


_ADDED_IDS: dict[tuple[str, str, str | None], frozenset[str]] = {}


def _added_ids(repo: gitio.Repository, parent_tree: Any, tree: Any) -> frozenset[str]:
    """Ids of the event lines ``tree`` adds to ``parent_tree``, computed once per pair of
    trees in a process (trees are content-addressed): checking every pass of a commit
    that added many costs one diff, not one per pass."""
    key = (str(repo.path), str(tree.id), None if parent_tree is None else str(parent_tree.id))
    found = _ADDED_IDS.get(key)
    if found is None:
        found = frozenset(rid for rid in map(_line_id, _added_lines(repo, parent_tree, tree))
                          if rid is not None)
        if len(_ADDED_IDS) > 256:
            _ADDED_IDS.clear()
        _ADDED_IDS[key] = found
    return found


def _check_document(record: Record, path: str, document: dict[str, Any],
                    graph: Graph | None) -> str | None:
    from pydantic import ValidationError

    from meridian.evaluators.models import Verdict, decide

    data = record.data
    for key in ("gate", "subject"):
        if document.get(key) != data.get(key):
            return (f"its verdict {path} is for {key} {document.get(key)!r}, "
                    f"the event says {data.get(key)!r}")
    if document.get("spec_hash") != data.get("spec_hash"):
        return f"its verdict {path} was decided under another gate definition than the event says"
    try:
        verdict = Verdict.model_validate(document)
        decided = decide(gate=verdict.gate, evaluator=verdict.evaluator, subject=verdict.subject,
                         scores=verdict.scores, issues=verdict.issues,
                         threshold=verdict.threshold, weights=verdict.weights,
                         coverage=verdict.coverage, not_judged=verdict.not_judged,
                         block_pre_existing=verdict.block_pre_existing)
    except (ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0]
        return f"its verdict {path} is not a valid verdict ({first})"
    if not decided.passed:
        high = sum(1 for issue in verdict.issues if issue.severity == "high")
        return (f"its verdict {path} does not pass Meridian's rule (overall {decided.overall} "
                f"vs threshold {decided.threshold}, {high} high-severity issue(s))")
    if data.get("threshold") != verdict.threshold or data.get("overall") != decided.overall:
        return f"the event's overall or threshold differs from its verdict {path}"
    if graph is not None:
        floor = _current_threshold(graph, record.gate or "")
        if floor is not None and verdict.threshold < floor:
            return (f"its verdict {path} was judged against threshold {verdict.threshold}, "
                    f"below the gate's {floor}")
    return None


def _current_threshold(graph: Graph, gate: str) -> float | None:
    from meridian.gates.definition import definition

    if gate not in graph:
        return None  # a gate removed or renamed since: no current threshold to hold it to
    try:
        threshold = definition(graph, gate)["evaluator"]["threshold"]
    except (KeyError, TypeError):
        return None
    return float(threshold) if isinstance(threshold, int | float) else None


def consistent_events(ledger: Ledger, graph: Graph | None = None,
                      history: GateHistory | None = None) -> list[Record]:
    """The gate events in ledger order, each inconsistent pass replaced by a
    ``gate.inconsistent`` record (same id, time and gate; ``reason`` says what is wrong),
    which folds as the state ``forged``. ``history``: ``gate_history(ledger)``, when the
    caller has it already."""
    if history is None:
        history = gate_history(ledger)
    return [checked_event(ledger, record, history.commit_of.get(record.id), graph)
            for record in history.events]


def checked_event(ledger: Ledger, record: Record, commit: str | None,
                  graph: Graph | None = None) -> Record:
    """``record`` itself, or for a pass ``check_pass`` refuses, its ``gate.inconsistent``
    stand-in (what ``consistent_events`` yields for it)."""
    if record.kind != PASSED:
        return record
    reason = check_pass(ledger, record, commit, graph)
    if reason is None:
        return record
    return Record.model_construct(id=record.id, ts=record.ts, kind=INCONSISTENT,
                                  writer=record.writer, data={**record.data, "reason": reason})
