"""The story of one gate: its events in ledger order, verdicts expanded.

A pass not backed by consistent evidence appears as ``gate.inconsistent`` (with what is
wrong), never as a pass (``meridian.gates.evidence``).

Blocks recorded by hooks without a gate (a pre-commit refusal names files, not gates)
belong to a gate's story when one of their files is among its artifacts.
"""

from __future__ import annotations

from typing import Any

from meridian.gates import events as ev
from meridian.gates.graph import Graph
from meridian.ledger import Ledger
from meridian.records import Record


def _belongs(kind: str, data: dict[str, Any], graph: Graph, gate: str) -> bool:
    """Whether the event (``kind``, ``data``) is part of ``gate``'s story."""
    if not kind.startswith("gate."):
        return False
    named = data.get("gate")
    if isinstance(named, str):
        return named == gate
    files = data.get("files") if kind == ev.BLOCKED else None
    if not isinstance(files, list):
        return False
    return any(gate in graph.gate_for_path(str(f)) for f in files)


def gate_story(ledger: Ledger, graph: Graph, gate: str) -> list[tuple[Record, dict[str, Any] | None]]:
    """(event, verdict document for pass/fail events else None), oldest first.

    What ``consistent_events`` gives, limited to this gate's events: only they become
    records and only this gate's passes are checked against their verdicts (a pass
    and its ``gate.inconsistent`` stand-in have the same gate, so belong alike). The
    events and the commits that added them come from the per-gate index
    (``story_index``: caught up over appends, built again otherwise), or when it cannot
    say, from reading the branch."""
    if not ledger.exists():
        return []
    from meridian.gates import story_index
    from meridian.gates.evidence import checked_event

    placed = story_index.story(ledger, graph, gate)
    if placed is None:
        placed = placed_from_branch(ledger, graph, gate)
    found = [checked_event(ledger, r, commit, graph) for r, commit in placed]
    out: list[tuple[Record, dict[str, Any] | None]] = []
    for record in found:
        document = None
        if record.kind in (ev.PASSED, ev.FAILED) and record.data.get("verdict"):
            try:
                document = ledger.read_json(str(record.data["verdict"]))
            except ValueError:
                document = None
        out.append((record, document))
    return out


def placed_from_branch(ledger: Ledger, graph: Graph, gate: str) -> list[tuple[Record, str | None]]:
    """``gate``'s events in ledger order with the commit that added each, read from the
    branch (every event line parsed, the commits walked): what the index must equal."""
    from meridian.gates.evidence import gate_history

    history = gate_history(ledger, keep=lambda raw: _belongs(raw["kind"], raw["data"],
                                                             graph, gate))
    return [(r, history.commit_of.get(r.id)) for r in history.events]
