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


def _belongs(record: Record, graph: Graph, gate: str) -> bool:
    if not record.kind.startswith("gate."):
        return False
    if record.gate is not None:
        return record.gate == gate
    files = record.data.get("files") if record.kind == ev.BLOCKED else None
    if not isinstance(files, list):
        return False
    return any(gate in graph.gate_for_path(str(f)) for f in files)


def gate_story(ledger: Ledger, graph: Graph, gate: str) -> list[tuple[Record, dict[str, Any] | None]]:
    """(event, verdict document for pass/fail events else None), oldest first."""
    if not ledger.exists():
        return []
    from meridian.gates.state import gate_events

    found = [r for r in gate_events(ledger, graph=graph) if _belongs(r, graph, gate)]
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
