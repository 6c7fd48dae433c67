"""How ``meridian status`` renders gates: the table and the summary line.

One renderer for the full path (``gates.report.status_lines``/``summary_line``, over
``GateStatus`` objects) and for the status view (``commands/status_view.py``, over the
JSON document, which checks that a view's lines are what its document renders to).
Only the standard library: the view's path imports no gate model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

FORGED_TEXT = "forged or inconsistent"  # how a forged pass is shown (gates.state imports it)


def state_label(state: str) -> str:
    """How a state is shown: a forged pass is never shown as anything like passed."""
    return FORGED_TEXT if state == "forged" else state


def table_lines(gates: Iterable[Mapping[str, Any]]) -> list[str]:
    """``#  gate  state  detail`` rows, one per gate (``gate``, ``state``, ``detail``)."""
    rows = [["#", "gate", "state", "detail"]]
    rows += [[str(n), g["gate"], state_label(g["state"]), g["detail"]]
             for n, g in enumerate(gates, start=1)]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return [("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1])
            .rstrip() for row in rows]


def summary_text(states: Iterable[str]) -> str:
    """``2 passed, 1 locked``: how many gates are in each state, in order of first sight."""
    counts: dict[str, int] = {}
    for state in states:
        label = state_label(state)
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{count} {state}" for state, count in counts.items())
