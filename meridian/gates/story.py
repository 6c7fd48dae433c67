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
    and its ``gate.inconsistent`` stand-in have the same gate, so belong alike)."""
    if not ledger.exists():
        return []
    from meridian.gates.evidence import checked_event, gate_history

    history = gate_history(ledger, keep=lambda raw: _belongs(raw["kind"], raw["data"],
                                                             graph, gate))
    found = [checked_event(ledger, r, history.commit_of.get(r.id), graph)
             for r in history.events]
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
