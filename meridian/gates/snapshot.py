"""A cached fold of the gate events, keyed by the state branch tip.

Gate state is derived from events (``meridian.gates.state``). Folding every event on
every commit would make a commit's cost grow with the project's history, so the hooks
keep the fold in ``.git/meridian/gate-snapshot-<branch>.json``:

    {"version": 1, "tip": "<state commit>", "last_ts": "...", "fields": [...],
     "folds": {"<gate>": {<GateFold fields>}}, "checksum": "<sha256>"}

- tip unchanged: the cached fold is the answer (no ledger read, no pydantic import);
- tip moved by appends: ``Ledger.new_records(EVENTS, since=tip)`` returns only the new
  events, which are applied to the cached fold;
- anything else (no cache, a checksum mismatch, history that is not a pure append, an
  event older than the newest folded one, ``use_cache=False``): a full recompute with
  ``state.fold_events(state.gate_events(ledger))``, exactly what ``derive_states`` does.

The snapshot is never the source of truth: it can be deleted at any time, and a
recompute gives the same folds (a test checks incremental == full).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meridian import gitio

if TYPE_CHECKING:
    from meridian.gates.state import GateFold
    from meridian.ledger import Ledger

SNAPSHOT_VERSION = 1


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

    def phase(self, gate: str) -> str:
        """open, in_progress, submitted, passed or failed, from the events alone."""
        fold = self.folds.get(gate)
        return str(fold.get("phase", "open")) if fold else "open"

    def gate_folds(self) -> dict[str, GateFold]:
        """The folds as ``GateFold`` objects, for ``state.derive_states(folds=...)``."""
        from meridian.gates.state import GateFold

        if self.fields is not None and self.fields != _fold_fields() and self.origin:
            # A cache an older Meridian wrote, with other fields: fold the events again.
            repo, branch = self.origin
            return load_snapshot(repo, branch, use_cache=False).gate_folds()
        return {gate: GateFold(**fields) for gate, fields in self.folds.items()}


def cache_path(repo: gitio.Repository, branch: str) -> Path:
    return gitio.meridian_dir(repo) / f"gate-snapshot-{branch.replace('/', '__')}.json"


def _checksum(tip: str, last_ts: str | None, fields: list[str],
              folds: dict[str, dict[str, Any]]) -> str:
    body = json.dumps({"version": SNAPSHOT_VERSION, "tip": tip, "last_ts": last_ts,
                       "fields": fields, "folds": folds},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


def _read_cache(path: Path) -> dict[str, Any] | None:
    """The cached snapshot, or None when absent, unreadable or not matching its checksum."""
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(cached, dict) or cached.get("version") != SNAPSHOT_VERSION:
        return None
    try:
        expected = _checksum(cached["tip"], cached["last_ts"], cached["fields"], cached["folds"])
    except (KeyError, TypeError):
        return None
    return cached if cached.get("checksum") == expected else None


def _write_cache(path: Path, snapshot: Snapshot, fields: list[str]) -> None:
    assert snapshot.tip is not None
    document = {
        "version": SNAPSHOT_VERSION, "tip": snapshot.tip, "last_ts": snapshot.last_ts,
        "fields": fields, "folds": snapshot.folds,
        "checksum": _checksum(snapshot.tip, snapshot.last_ts, fields, snapshot.folds),
    }
    # Write then rename: two hooks running at once never see half a file.
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(document, sort_keys=True), encoding="utf-8")
    os.replace(temporary, path)


def _fold_fields() -> list[str]:
    from meridian.gates.state import GateFold

    return [field.name for field in dataclasses.fields(GateFold)]


def load_snapshot(repo: gitio.Repository, branch: str, *, use_cache: bool = True) -> Snapshot:
    """The gate folds at the tip of ``branch``, from the cache when it is still valid."""
    tip_oid = gitio.ref_target(repo, f"refs/heads/{branch}")
    if tip_oid is None:
        return Snapshot(tip=None, folds={}, last_ts=None, source="empty")
    tip = str(tip_oid)
    path = cache_path(repo, branch)
    cached = _read_cache(path) if use_cache else None
    if cached is not None and cached["tip"] == tip:
        return Snapshot(tip=tip, folds=cached["folds"], last_ts=cached["last_ts"], source="cache",
                        fields=cached["fields"], origin=(repo, branch))

    from meridian.ledger import Ledger

    ledger = Ledger(repo, branch)
    snapshot = None
    if cached is not None:
        snapshot = _catch_up(ledger, cached, tip_oid)
    if snapshot is None:
        snapshot = _recompute(ledger, tip_oid)
        _write_cache(path, snapshot, _fold_fields())
        return snapshot
    assert cached is not None  # a caught-up snapshot comes from the cache
    _write_cache(path, snapshot, cached["fields"])
    snapshot.fields, snapshot.origin = cached["fields"], (repo, branch)
    return snapshot


def _as_json(folds: dict[str, GateFold]) -> dict[str, dict[str, Any]]:
    return {gate: dataclasses.asdict(fold) for gate, fold in sorted(folds.items())}


def _recompute(ledger: Ledger, tip: gitio.Oid) -> Snapshot:
    from meridian.gates.state import fold_events, gate_events

    events = gate_events(ledger)
    return Snapshot(tip=str(tip), folds=_as_json(fold_events(events)),
                    last_ts=events[-1].ts if events else None, source="full")


def _catch_up(ledger: Ledger, cached: dict[str, Any], tip: gitio.Oid) -> Snapshot | None:
    """Apply the events appended since the cached tip; None when only a recompute is right."""
    from meridian.ledger import EVENTS

    try:
        since = gitio.Oid(hex=cached["tip"])
    except ValueError:
        return None
    new = ledger.new_records(EVENTS, since=since, at=tip)
    if new is None:
        return None
    # In ledger order (as appended), never by their timestamps.
    events = [r for r in new if r.kind.startswith("gate.") and r.gate]
    last_ts = cached["last_ts"]
    if not events:
        # Memory, runs, other events: the folds are unchanged (and the gates package,
        # with its models, need not even be imported).
        return Snapshot(tip=str(tip), folds=cached["folds"], last_ts=last_ts,
                        source="incremental")
    # derive_states folds events in time order; an appended event older than the newest
    # one already folded (a sync merge brought it) would land out of order: recompute.
    if last_ts is not None and events[0].ts < last_ts:
        return None
    # A pass counts only once its evidence is checked (meridian.gates.evidence), which
    # needs the commit that added it: the full fold does that.
    if any(r.kind == "gate.passed" for r in events):
        return None
    if cached["fields"] != _fold_fields():
        return None  # written by a Meridian whose GateFold had other fields
    from meridian.gates.state import GateFold, fold_events

    folds = fold_events(events, {gate: GateFold(**fields)
                                 for gate, fields in cached["folds"].items()})
    return Snapshot(tip=str(tip), folds=_as_json(folds),
                    last_ts=events[-1].ts if events else last_ts, source="incremental")
