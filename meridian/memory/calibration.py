"""Calibration: how long gates really take compared with their estimates.

When a gate passes, the gate lifecycle calls ``record_pass`` and a correction is
written without anyone remembering to: predicted hours, actual hours and ratio =
actual / predicted (below 1: faster than predicted). The project's multiplier is the
median ratio of the last N corrections; an open gate's suggested estimate is its
estimate times the multiplier.

**Actual hours are active time**, not the wall time from start to pass (which counts
nights and weekends, or a few seconds for a gate passed at once). Within the gate's
window (its latest start or reopen to the pass), activity is:

- each Claude Code session: its SessionStart, every Stop and SessionEnd (episodic
  memories ``session_started`` / ``session_ended``, at the time they were written, not
  the ``at`` they claim) and every block the Claude hooks recorded for it;
- the gate's own work: its lifecycle events (started, submitted, verdicts), the
  commits touching its artifacts (author time) and the pass itself.

Each series (one per session, one for the gate's work) is cut into intervals wherever
two consecutive points are further apart than the idle cut (``calibration.
idle_cut_minutes``, default 30); the actual hours are the length of the union of all
intervals, clipped to the window. Wall hours are kept beside it (``wall_hours``) and
the correction says how it was measured (``measured``); an amendment can replace the
figure (``meridian memory add corrections`` with ``amends``).

A gate that passes without a prediction still gets a correction: its actual hours
are evidence, the ratio is left out (not zero, not guessed), and the record does not
count towards the multiplier until an amendment supplies ``predicted_hours``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from meridian import records
from meridian.ledger import EVENTS, Ledger
from meridian.memory import store
from meridian.memory.schemas import KINDS, significant
from meridian.records import Record

DEFAULT_WINDOW = 10
DEFAULT_IDLE_CUT_MINUTES = 30.0


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
    wall_hours: float | None = None
    measured: str | None = None
    amended_by: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def record_gate_pass(ledger: Ledger, gate: str, predicted_hours: float | None,
                     actual_hours: float, session: str | None = None, *,
                     wall_hours: float | None = None,
                     measured: str | None = None) -> Record | None:
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
    if wall_hours is not None and math.isfinite(wall_hours) and wall_hours > 0:
        data["wall_hours"] = float(wall_hours)
    if measured:
        data["measured"] = measured
    return store.add(ledger, KINDS["corrections"], data).record


# --- active time -----------------------------------------------------------------------

Interval = tuple[datetime, datetime]


def intervals(points: Iterable[datetime], idle_cut: timedelta) -> list[Interval]:
    """Consecutive points no further apart than ``idle_cut`` joined into intervals (a
    lone point is an interval of length zero)."""
    out: list[Interval] = []
    for point in sorted(points):
        if out and point - out[-1][1] <= idle_cut:
            out[-1] = (out[-1][0], point)
        else:
            out.append((point, point))
    return out


def union_hours(spans: Iterable[Interval], start: datetime, end: datetime) -> float:
    """Length in hours of the union of ``spans`` clipped to [start, end]."""
    clipped = sorted((max(a, start), min(b, end)) for a, b in spans if b >= start and a <= end)
    total = timedelta(0)
    current: Interval | None = None
    for a, b in clipped:
        if current is not None and a <= current[1]:
            current = (current[0], max(current[1], b))
            continue
        if current is not None:
            total += current[1] - current[0]
        current = (a, b)
    if current is not None:
        total += current[1] - current[0]
    return total.total_seconds() / 3600


@dataclass(frozen=True)
class Measurement:
    """How long a gate took: active hours, wall hours, and what they were made of."""

    active_hours: float
    wall_hours: float
    sessions: int  # Claude Code sessions with activity in the window
    commits: int  # commits touching the gate's artifacts in the window
    idle_cut_minutes: float

    @property
    def method(self) -> str:
        from meridian.durations import human_hours

        cut = f"{self.idle_cut_minutes:g} min"
        return (f"active time: union of {self.sessions} Claude session(s) and the gate's "
                f"work ({self.commits} commit(s) touching its artifacts, its lifecycle "
                f"events), gaps over {cut} cut; wall time {human_hours(self.wall_hours)}")


def _when(value: Any) -> datetime | None:
    from meridian.records import parse_ts

    try:
        return parse_ts(value) if isinstance(value, str) else None
    except ValueError:
        return None


def session_points(ledger: Ledger) -> dict[str, list[datetime]]:
    """session id -> the moments it was seen active (start, stops, end, its blocks)."""
    points: dict[str, list[datetime]] = {}
    for record in store.iter_records(ledger, KINDS["episodic"]):
        data = record.data
        if data.get("event") in ("session_started", "session_ended"):
            # When the record was written, never the ``at`` it claims: anyone may add a
            # back-dated episode (`meridian memory add episodic`), and a session's hooks
            # write theirs as it happens.
            when = _when(record.ts)
            if when is not None:
                points.setdefault(str(data["session"]), []).append(when)
    for event in ledger.records(EVENTS):
        data = event.data if isinstance(event.data, dict) else {}
        if event.kind == "gate.blocked" and data.get("source") == "claude" \
                and isinstance(data.get("session"), str):
            when = _when(event.ts)
            if when is not None:
                points.setdefault(data["session"], []).append(when)
    return points


def measure(ledger: Ledger, gate: str, start: datetime, end: datetime, *,
            commit_times: Iterable[datetime] = (),
            idle_cut_minutes: float = DEFAULT_IDLE_CUT_MINUTES) -> Measurement:
    """Active and wall hours of ``gate`` between ``start`` and ``end`` (see the module
    docstring); ``commit_times`` are the commits touching its artifacts."""
    cut = timedelta(minutes=idle_cut_minutes)
    spans: list[Interval] = []
    sessions = 0
    for moments in session_points(ledger).values():
        own = intervals(moments, cut)
        if union_hours(own, start, end) > 0 or any(start <= m <= end for m in moments):
            sessions += 1
        spans += own
    commits = [c for c in commit_times if start <= c <= end]
    work = [start, end, *commits]
    for event in ledger.records(EVENTS):
        if event.kind.startswith("gate.") and event.kind != "gate.blocked" \
                and isinstance(event.data, dict) and event.data.get("gate") == gate:
            when = _when(event.ts)
            if when is not None and start <= when <= end:
                work.append(when)
    spans += intervals(work, cut)
    return Measurement(active_hours=union_hours(spans, start, end),
                       wall_hours=(end - start).total_seconds() / 3600,
                       sessions=sessions, commits=len(commits), idle_cut_minutes=idle_cut_minutes)


def artifact_commit_times(repo: Any, patterns: Iterable[str], start: datetime,
                          end: datetime) -> list[datetime]:
    """When the commits touching ``patterns`` were authored, within [start, end]."""
    from datetime import UTC

    from meridian import gitio
    from meridian.gates import globs

    globs_ = tuple(patterns)
    matcher: Callable[[str], bool] = lambda path: globs.matches_any(globs_, path)
    return [datetime.fromtimestamp(t, UTC) for t in gitio.commits_touching(
        repo, int(start.timestamp()), int(end.timestamp()) + 1, matcher)]


def record_pass(ledger: Ledger, gate: str, patterns: Iterable[str], predicted: float | None,
                started_at: str, passed_at: str, *,
                idle_cut_minutes: float = DEFAULT_IDLE_CUT_MINUTES) -> Record | None:
    """Measure the gate that just passed and write its correction."""
    start, end = _when(started_at), _when(passed_at)
    if start is None or end is None or end <= start:
        return None
    commits = artifact_commit_times(ledger.repo, patterns, start, end)
    measured = measure(ledger, gate, start, end, commit_times=commits,
                       idle_cut_minutes=idle_cut_minutes)
    return record_gate_pass(ledger, gate, predicted, measured.active_hours,
                            wall_hours=measured.wall_hours, measured=measured.method)


def check_gate(root: Path | None, gate: Any) -> None:
    """Refuse a correction for a gate the project's graph does not have (when it has one)."""
    from meridian.errors import MeridianError

    if root is None or not isinstance(gate, str):
        return
    from meridian.gates.graph import gates_path, load_graph

    if not gates_path(root).is_file():
        return
    known = load_graph(root).order
    if gate not in known:
        raise MeridianError(f"corrections.gate: unknown gate {gate!r} "
                            f"(gates: {', '.join(known)})")


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
                source=data.get("source", "user"), wall_hours=data.get("wall_hours"),
                measured=data.get("measured"),
            )
            continue
        for key in ("predicted_hours", "actual_hours", "root_cause", "next_action"):
            if data.get(key) is not None:
                setattr(target, key, data[key])
        if data.get("actual_hours") is not None:
            target.measured = data.get("measured") or "amended by the user"
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
