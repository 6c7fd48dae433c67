"""Calibration: how long gates really take compared with their estimates.

When a gate passes, the gate lifecycle calls ``record_gate_pass`` and a correction is
written without anyone remembering to: predicted hours, actual hours (time in
progress) and ratio = actual / predicted (below 1: faster than predicted). The
project's multiplier is the median ratio of the last N corrections; an open gate's
suggested estimate is its estimate times the multiplier.

A gate that passes without a prediction still gets a correction: its actual hours
are evidence, the ratio is left out (not zero, not guessed), and the record does not
count towards the multiplier until an amendment supplies ``predicted_hours``.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from meridian import records
from meridian.ledger import EVENTS, Ledger
from meridian.memory import store
from meridian.memory.schemas import KINDS, significant
from meridian.records import Record

DEFAULT_WINDOW = 10


@dataclass
class Correction:
    """A correction with its amendments applied (later values win)."""

    id: str
    ts: str
    gate: str
    predicted_hours: float | None
    actual_hours: float | None
    ratio: float | None
    root_cause: str | None
    next_action: str | None
    source: str
    amended_by: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def record_gate_pass(ledger: Ledger, gate: str, predicted_hours: float | None,
                     actual_hours: float, session: str | None = None) -> Record | None:
    """Write the correction for a gate that just passed; return it.

    Returns None, writing nothing, when ``actual_hours`` is not a positive number
    (no measurable time in progress, e.g. a clock that went backwards). A missing or
    non-positive prediction is recorded as unknown: actual hours without a ratio.
    """
    if not (isinstance(actual_hours, int | float) and math.isfinite(actual_hours)
            and actual_hours > 0):
        return None
    data: dict[str, Any] = {"gate": gate, "actual_hours": float(actual_hours),
                            "source": "gate_pass", "at": records.now_ts()}
    if predicted_hours is not None and math.isfinite(predicted_hours) and predicted_hours > 0:
        data["predicted_hours"] = float(predicted_hours)
    if session:
        data["session"] = session
    return store.add(ledger, KINDS["corrections"], data).record


def effective_corrections(ledger: Ledger, gate: str | None = None) -> list[Correction]:
    """Original corrections, oldest first, each with its amendments folded in."""
    originals: dict[str, Correction] = {}
    for record in store.iter_records(ledger, KINDS["corrections"], gate=gate):
        data = record.data
        target = originals.get(data.get("amends", ""))
        if target is None:
            originals[record.id] = Correction(
                id=record.id, ts=record.ts, gate=data["gate"],
                predicted_hours=data.get("predicted_hours"),
                actual_hours=data.get("actual_hours"), ratio=data.get("ratio"),
                root_cause=data.get("root_cause"), next_action=data.get("next_action"),
                source=data.get("source", "user"),
            )
            continue
        for key in ("predicted_hours", "actual_hours", "root_cause", "next_action"):
            if data.get(key) is not None:
                setattr(target, key, data[key])
        if target.predicted_hours and target.actual_hours:
            target.ratio = significant(target.actual_hours / target.predicted_hours)
        target.amended_by.append(record.id)
    return list(originals.values())


def multiplier(corrections: list[Correction], last: int = DEFAULT_WINDOW) -> tuple[float | None, int]:
    """(median ratio of the last ``last`` corrections that have one, how many were used)."""
    ratios = [c.ratio for c in corrections if c.ratio is not None][-last:] if last > 0 else []
    if not ratios:
        return None, 0
    return significant(statistics.median(ratios)), len(ratios)


def gate_estimates(root: Path | None) -> dict[str, float]:
    """``estimate_hours`` of each gate in the gate graph, in dependency order ({} if none)."""
    if root is None:
        return {}
    from meridian.gates.graph import gates_path, load_graph

    if not gates_path(root).is_file():
        return {}
    return {spec.id: spec.estimate_hours for spec in load_graph(root).ordered()
            if spec.estimate_hours is not None}


@dataclass
class GateProgress:
    """What the events say about each gate: latest estimate, passed or not."""

    started_estimates: dict[str, float] = field(default_factory=dict)
    passed: set[str] = field(default_factory=set)


def gate_progress(ledger: Ledger) -> GateProgress:
    progress = GateProgress()
    for event in ledger.records(EVENTS):
        gate = event.data.get("gate") if isinstance(event.data, dict) else None
        if not isinstance(gate, str):
            continue
        if event.kind == "gate.started":
            estimate = event.data.get("estimate_hours")
            if isinstance(estimate, int | float) and estimate > 0:
                progress.started_estimates[gate] = float(estimate)
        elif event.kind == "gate.passed":
            progress.passed.add(gate)
        elif event.kind == "gate.reopened":
            progress.passed.discard(gate)
    return progress


@dataclass
class Suggestion:
    gate: str
    estimate_hours: float
    estimate_source: str  # "gate start" or the gates file
    suggested_hours: float | None  # None until there is a multiplier


@dataclass
class Report:
    corrections: list[Correction]
    multiplier: float | None
    window: int
    sample: int
    suggestions: list[Suggestion]

    def to_json(self) -> dict[str, Any]:
        return {
            "corrections": [c.to_json() for c in self.corrections],
            "multiplier": self.multiplier,
            "window": self.window,
            "sample": self.sample,
            "suggestions": [asdict(s) for s in self.suggestions],
        }


def build_report(ledger: Ledger, root: Path | None, last: int = DEFAULT_WINDOW) -> Report:
    corrections = effective_corrections(ledger)
    factor, sample = multiplier(corrections, last)
    progress = gate_progress(ledger)
    estimates = {gate: (hours, "gates.yaml") for gate, hours in gate_estimates(root).items()}
    estimates.update({gate: (hours, "gate start")
                      for gate, hours in progress.started_estimates.items()})
    suggestions = [
        Suggestion(gate, hours, source,
                   None if factor is None else round(hours * factor, 2))
        for gate, (hours, source) in estimates.items() if gate not in progress.passed
    ]
    return Report(corrections, factor, last, sample, suggestions)
