"""Compute the health report from the state branch in one pass over the events.

Speed matters (a long build has 100,000 events; ``benchmarks/health.py`` measures it),
so the events are read shard by shard at one commit, each shard parsed with a single
``json.loads`` and never validated record by record: ``meridian verify`` is the
place that proves records valid. Only the ``gate.*`` events are kept (as plain
tuples) and sorted by time, because after a sync merge the stored order is not
time order. Everything else the report needs lives in small streams (memory, the
run index) or in a bounded number of documents.

The pass is kept (``_FiguresKept``: ``.git/meridian/health-<branch>.json``, a display
cache checked by its checksum, never trusted for a gate state): a report at the same
state tree takes its figures from it, and one after new events goes on from it with
the lines appended since (``_resume``), so the cost follows what is new, not the
history. Anything but appends in time order (an edited shard, a line added to an older
month) reads every shard again.

Each source whose shape belongs to another module is read through that module's
public functions: gate states (``meridian.gates.snapshot``, the consistent fold, plus the graph),
corrections (``meridian.memory.calibration``), stored memory (``meridian.memory.verify``),
rules (``meridian.rules``) and runs and baselines (``meridian.evals.store``).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import statistics
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from meridian import records
from meridian.errors import MeridianError
from meridian.health.models import (
    CalibrationHealth,
    CompletionHealth,
    CorrectionPoint,
    CostHealth,
    CostLine,
    Distribution,
    DueRule,
    EvaluationHealth,
    EvaluatorHealth,
    GapPoint,
    GateCost,
    GateHealth,
    GateRow,
    HarnessChange,
    HealthReport,
    MemoryHealth,
    RulesHealth,
    SuiteHealth,
    WeekCost,
)
from meridian.ledger import EVENTS, Ledger

if TYPE_CHECKING:  # pydantic models of the run store: imported where runs are read
    from meridian.evals.store import RunFigures

STARTED, SUBMITTED, PASSED, FAILED = "gate.started", "gate.submitted", "gate.passed", "gate.failed"
REOPENED, BLOCKED, UNAVAILABLE = "gate.reopened", "gate.blocked", "gate.evaluator_unavailable"
FEATURES_COMPUTED = "features.computed"
# Memory writes that were refused as duplicates leave these events behind.
DUPLICATE_KINDS = frozenset({"pattern.validated", "memory.duplicate"})
DIMENSIONS = ("completeness", "correctness", "robustness", "spec_adherence")
# Verdict events carry their per-dimension scores (``scores``); only events written
# before they did send the distribution to the verdict documents: at most this many,
# the newest, so the cost does not grow with history.
MAX_VERDICT_DOCUMENTS = 500
GAP_WINDOW = 5
MAX_MEMORY_PROBLEMS = 20


# --- the one pass over the events -----------------------------------------------------


GateEvent = tuple[str, str, dict[str, Any]]  # (ts, kind, data)


@dataclass
class EventScan:
    """What one pass over the events keeps."""

    events: int = 0
    corrupt: list[str] = field(default_factory=list)
    gate_events: list[GateEvent] = field(default_factory=list)
    latest_features: tuple[str, dict[str, Any]] | None = None
    duplicates_prevented: int = 0
    harness: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # stored order


BLANK = object()  # an empty line in a shard: not a record, not corrupt either


def shard_records(ledger: Ledger, stream: str, at: Any) -> Iterator[tuple[str, list[Any]]]:
    """(shard path, one item per line) for each shard: the parsed JSON, None for a line
    that does not parse, BLANK for an empty one (so positions are line numbers - 1)."""
    for path in ledger.shards(stream, at=at):
        blob = ledger.read(path, at=at)
        if not blob:
            continue
        body = blob.decode("utf-8", errors="replace").rstrip("\n")
        try:
            # One parse per shard: lines never hold a raw newline (JSON escapes it).
            yield path, json.loads("[" + body.replace("\n", ",") + "]")
        except ValueError:
            yield path, [_parse_line(line) for line in body.split("\n")]


def _parse_line(line: str) -> Any:
    if not line.strip():
        return BLANK
    try:
        return json.loads(line)
    except ValueError:
        return None


def scan_events(ledger: Ledger, at: Any) -> EventScan:
    scan = EventScan()
    for path, items in shard_records(ledger, EVENTS, at):
        scan_items(scan, path, items)
    scan.gate_events.sort(key=lambda event: event[0])
    return scan


def scan_items(scan: EventScan, path: str, items: list[Any], first: int = 1) -> None:
    """Add one shard's parsed lines (``shard_records`` items, the first being line
    ``first``) to ``scan``, in stored order; the gate events are sorted by the caller."""
    gate_events = scan.gate_events
    for number, item in enumerate(items, start=first):
        if item is BLANK:
            continue
        try:
            kind = item["kind"]
            ts = item["ts"]
            data = item["data"]
            if kind.__class__ is not str or data.__class__ is not dict or not _is_ts(ts):
                raise TypeError
        except (TypeError, KeyError):
            scan.corrupt.append(f"{path}:{number}")
            continue
        scan.events += 1
        if kind.startswith("gate."):
            gate_events.append((ts, kind, data))
        elif kind == FEATURES_COMPUTED:
            if scan.latest_features is None or ts >= scan.latest_features[0]:
                scan.latest_features = (ts, data)
        elif kind in DUPLICATE_KINDS:
            scan.duplicates_prevented += 1
        elif kind == HARNESS_CHANGED:
            scan.harness.append((ts, data))


# --- small helpers --------------------------------------------------------------------


HARNESS_CHANGED = "harness.changed"
MAX_HARNESS_CHANGES = 5


def harness_health(scan: EventScan) -> list[HarnessChange]:
    """The latest harness changes in ledger order, newest first (weakening ones marked)."""
    out = []
    for ts, data in reversed(scan.harness[-MAX_HARNESS_CHANGES:]):
        changes = data.get("changes")
        out.append(HarnessChange(
            ts=ts, changes=[str(c) for c in changes] if isinstance(changes, list) else [],
            weakening=data.get("weakening") is True, agent_session=data.get("agent_session") is True,
            commit=data.get("commit") if isinstance(data.get("commit"), str) else None,
            source=data.get("source") if isinstance(data.get("source"), str) else None))
    return out


def _is_ts(value: Any) -> bool:
    """A record timestamp as the ledger writes it (2026-11-30T10:00:00.000000Z), cheaply."""
    return value.__class__ is str and len(value) >= 20 and value[-1] == "Z" and value[10] == "T"


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _number(value: Any) -> float | None:
    """A finite number from JSON (bools and NaN, which json.loads accepts, are not)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


_WEEKS: dict[str, str] = {}


def iso_week(ts: str) -> str:
    """``2026-W48`` for a record timestamp (cached per day: called once per verdict)."""
    day = ts[:10]
    week = _WEEKS.get(day)
    if week is None:
        try:
            year, number, _ = date.fromisoformat(day).isocalendar()
            week = f"{year}-W{number:02d}"
        except ValueError:
            week = "unknown"
        _WEEKS[day] = week
    return week


def _hours(value: float) -> float:
    """Hours to 4 significant digits: a gate done in seconds is not 0.0 hours."""
    return float(f"{value:.4g}")


def _hours_between(start: str, end: str) -> float | None:
    try:
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() / 3600
    except ValueError:
        return None  # a hand-edited timestamp; `meridian verify` reports the record


def distribution(values: list[float]) -> Distribution:
    if not values:
        return Distribution()
    ordered = sorted(values)
    histogram = [0] * 10
    for value in ordered:
        histogram[min(9, max(0, int(value)))] += 1
    if len(ordered) > 1:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return Distribution(
        count=len(ordered), min=ordered[0], q1=round(q1, 2), median=round(statistics.median(ordered), 2),
        q3=round(q3, 2), max=ordered[-1], mean=round(statistics.fmean(ordered), 2), histogram=histogram,
    )


# --- gates, evaluator and evaluator cost (from the gate events) --------------------------


@dataclass(slots=True)
class _Verdict:
    ts: str
    gate: str
    path: str | None
    overall: float | None
    scores: dict[str, Any] | None


@dataclass(slots=True)
class _GateTally:
    """Per-gate counters (plain attributes: this is the hot loop, no pydantic here)."""

    submissions: int = 0
    verdicts: int = 0
    failed: int = 0
    first_passed: bool | None = None
    blocks: int = 0
    hours: float | None = None
    last_overall: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    cost_unknown: int = 0


@dataclass(slots=True)
class _WeekTally:
    evaluator: float = 0.0
    llm_judge: float = 0.0
    agents: float = 0.0
    tokens: int = 0
    cost_unknown: int = 0


@dataclass
class _Costs:
    """Evaluator spend per gate (in the gate tallies) and every source's spend per week."""

    weeks: dict[str, _WeekTally] = field(default_factory=dict)

    def week(self, ts: str) -> _WeekTally:
        return self.week_of(iso_week(ts))

    def week_of(self, key: str) -> _WeekTally:
        tally = self.weeks.get(key)
        if tally is None:
            tally = self.weeks[key] = _WeekTally()
        return tally


def _usage(usage: Any) -> tuple[int, int, float | None]:
    """(input tokens, output tokens, dollars) of a ``usage`` mapping; zeros when absent.

    Dollars are None when the record says its cost is unknown (``cost_usd: null``: a
    model with no price), never 0; a record without ``cost_usd`` cost nothing. Cache
    writes and reads are input tokens too."""
    if not isinstance(usage, dict):
        return 0, 0, 0.0
    try:
        tokens_in = sum(int(usage.get(key) or 0) for key in (
            "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
        spent = usage.get("cost_usd", 0.0)
        unknown = spent is None or usage.get("cost_unknown") is True
        return (tokens_in, int(usage.get("output_tokens") or 0),
                None if unknown else float(spent or 0.0))
    except (TypeError, ValueError):
        return 0, 0, 0.0


def fold_gates(scan: EventScan, costs: _Costs) -> tuple[GateHealth, list[_Verdict], list[GapPoint],
                                                       dict[str, _GateTally]]:
    """Gate figures, the verdicts and self-assessment gaps in time order, per-gate tallies."""
    fold = GateFold()
    fold_into(fold, scan.gate_events, costs)
    return gate_health(fold), fold.verdicts, _gap_points(fold.gap_rows), fold.tallies


@dataclass
class GateFold:
    """What the gate events in time order add up to so far: ``fold_into`` goes on from
    here with later events (``_FiguresKept`` keeps it between reports)."""

    tallies: dict[str, _GateTally] = field(default_factory=dict)
    started: dict[str, str] = field(default_factory=dict)
    pending_self: dict[str, float] = field(default_factory=dict)
    verdicts: list[_Verdict] = field(default_factory=list)
    gap_rows: list[tuple[str, str, float, float]] = field(default_factory=list)
    intervals: list[float] = field(default_factory=list)
    blocks: Counter[str] = field(default_factory=Counter)
    unavailable: int = 0
    # objective-only verdicts, suppressions, pre-existing findings
    judged: Counter[str] = field(default_factory=Counter)


def fold_into(fold: GateFold, events: list[GateEvent], costs: _Costs) -> None:
    """Fold ``events`` (after every event already in ``fold``, in time order)."""
    tallies, started, pending_self = fold.tallies, fold.started, fold.pending_self
    verdicts, gap_rows, intervals = fold.verdicts, fold.gap_rows, fold.intervals
    blocks, judged = fold.blocks, fold.judged
    unavailable = 0

    for ts, kind, data in events:
        gate = data.get("gate")
        if kind == BLOCKED:
            blocks[str(data.get("source", "unknown"))] += 1
            if isinstance(gate, str):
                tally = tallies.get(gate) or tallies.setdefault(gate, _GateTally())
                tally.blocks += 1
            continue
        if not isinstance(gate, str):
            continue
        tally = tallies.get(gate) or tallies.setdefault(gate, _GateTally())
        if kind == PASSED or kind == FAILED:
            passed = kind == PASSED
            overall = _number(data.get("overall"))
            tally.verdicts += 1
            if not passed:
                tally.failed += 1
                # A failed verdict is the evaluator's block (the submit exits 2); the
                # lifecycle records it as gate.failed, not as a separate gate.blocked.
                blocks["evaluator"] += 1
                tally.blocks += 1
            if tally.first_passed is None:
                tally.first_passed = passed
            tally.last_overall = overall
            if data.get("scope"):
                judged["objective_only"] += 1
            for key in ("suppressed", "suppressed_added", "pre_existing"):
                judged[key] += int(_number(data.get(key)) or 0)
            tokens_in, tokens_out, spent = _usage(data.get("usage"))
            tally.tokens_in += tokens_in
            tally.tokens_out += tokens_out
            week = costs.week(ts)
            if spent is None:
                tally.cost_unknown += 1
                week.cost_unknown += 1
            else:
                tally.cost += spent
                week.evaluator += spent
            week.tokens += tokens_in + tokens_out
            # The self-score is on the verdict event, or on the submission before it.
            self_score = _number(data.get("self_score"))
            earlier = pending_self.pop(gate, None)
            if self_score is None:
                self_score = earlier
            if self_score is not None and overall is not None:
                gap_rows.append((ts, gate, self_score, overall))
            if passed and gate in started:
                hours = _hours_between(started.pop(gate), ts)
                if hours is not None and hours >= 0:
                    intervals.append(hours)
                    tally.hours = (tally.hours or 0.0) + hours
            scores = data.get("scores")
            path = data.get("verdict")
            verdicts.append(_Verdict(ts, gate, path if isinstance(path, str) else None, overall,
                                     scores if isinstance(scores, dict) else None))
        elif kind == SUBMITTED:
            tally.submissions += 1
            self_score = _number(data.get("self_score"))
            if self_score is not None:
                pending_self[gate] = self_score
            else:
                pending_self.pop(gate, None)
        elif kind == STARTED or kind == REOPENED:
            started[gate] = ts
        elif kind == UNAVAILABLE:
            unavailable += 1
    fold.unavailable += unavailable


def gate_health(fold: GateFold) -> GateHealth:
    """The gates section (states still "open": ``gate_states`` fills them in)."""
    tallies, blocks, judged, intervals = fold.tallies, fold.blocks, fold.judged, fold.intervals
    unavailable = fold.unavailable
    with_verdict = sum(1 for t in tallies.values() if t.first_passed is not None)
    first_try = sum(1 for t in tallies.values() if t.first_passed)
    verdict_count = sum(t.verdicts for t in tallies.values())
    failed_count = sum(t.failed for t in tallies.values())
    health = GateHealth(
        with_verdict=with_verdict, first_try_passed=first_try,
        first_try_pass_rate=_rate(first_try, with_verdict), verdicts=verdict_count,
        failed_verdicts=failed_count, evaluator_fail_rate=_rate(failed_count, verdict_count),
        evaluator_unavailable=unavailable, objective_only_verdicts=judged["objective_only"],
        suppressed=judged["suppressed"], suppressed_added=judged["suppressed_added"],
        pre_existing_findings=judged["pre_existing"], blocks=sum(blocks.values()),
        blocks_by_source=dict(sorted(blocks.items())), intervals=len(intervals),
        mean_hours_in_progress=_hours(statistics.fmean(intervals)) if intervals else None,
        gates=[GateRow(gate=gate, state="open", submissions=t.submissions, verdicts=t.verdicts,
                       failed_verdicts=t.failed, first_verdict_passed=t.first_passed,
                       blocks=t.blocks, hours_in_progress=None if t.hours is None else _hours(t.hours),
                       last_overall=t.last_overall, cost_usd=round(t.cost, 6),
                       cost_unknown=t.cost_unknown)
               for gate, t in sorted(tallies.items())],
    )
    return health


def _gap_points(rows: list[tuple[str, str, float, float]]) -> list[GapPoint]:
    """Gap per submission with the rolling mean of the last GAP_WINDOW gaps."""
    points = []
    window_sum = 0.0
    gaps: list[float] = []
    for ts, gate, self_score, overall in rows:
        gap = self_score - overall
        gaps.append(gap)
        window_sum += gap
        if len(gaps) > GAP_WINDOW:
            window_sum -= gaps[-GAP_WINDOW - 1]
        size = min(len(gaps), GAP_WINDOW)
        points.append({"ts": ts, "gate": gate, "self_score": self_score, "overall": overall,
                       "gap": round(gap, 4), "rolling_mean": round(window_sum / size, 4)})
    # Thousands of points: validated as one list (pydantic-core builds them about twice
    # as fast as a ``model_construct`` call each; every field is a str or float already).
    return _gap_list().validate_python(points)


_GAP_LIST: Any = None


def _gap_list() -> Any:
    global _GAP_LIST
    if _GAP_LIST is None:
        from pydantic import TypeAdapter

        _GAP_LIST = TypeAdapter(list[GapPoint])
    return _GAP_LIST


class _EventView:
    """A gate event shaped like a ``Record`` for ``gates.state.fold_events`` (no validation)."""

    __slots__ = ("data", "kind", "ts")

    def __init__(self, ts: str, kind: str, data: dict[str, Any]) -> None:
        self.ts, self.kind, self.data = ts, kind, data

    @property
    def gate(self) -> str | None:
        value = self.data.get("gate")
        return value if isinstance(value, str) else None


def gate_states(scan: EventScan | None, root: Path | None, notes: list[str],
                ledger: Ledger | None = None) -> dict[str, str]:
    """Each gate's state, exactly as ``meridian status`` derives it (stale included):
    from the gate snapshot (``meridian.gates.snapshot``: the consistent fold in ledger
    order, caught up with what is new), never by folding every event again here.
    ``scan`` None: the events are scanned only if the snapshot cannot be folded."""
    from meridian.gates.state import derive_states, fold_events

    folds = None
    if ledger is not None:
        from meridian.gates.snapshot import trusted_snapshot

        try:
            snapshot = trusted_snapshot(ledger)
        except MeridianError:
            # A corrupt line stops the consistent fold; the scan skipped it (and the
            # report says so: run `meridian verify`), so states come from the scan.
            snapshot = None
    else:
        snapshot = None
    graph = None
    if root is not None:
        try:
            from meridian.gates.graph import gates_path, load_graph

            if gates_path(root).is_file():
                graph = load_graph(root)
        except MeridianError as exc:
            notes.append(f"gates: states from events only: {exc}")
    if snapshot is not None:
        folds = snapshot.gate_folds(graph)
        if graph is not None:
            # gate_folds(graph) folds only the graph's gates when it refolds: keep the
            # others' phases from the snapshot ("removed" below either way).
            folds = {**snapshot.gate_folds(), **folds}
    else:
        if scan is None:
            assert ledger is not None
            scan = scan_events(ledger, ledger.tip())
        folds = fold_events(cast(Any, _EventView(*event)) for event in scan.gate_events)
    states: dict[str, str] = {}
    if graph is not None and ledger is not None:
        try:
            statuses = derive_states(ledger, graph, folds=folds, check_stale=True)
        except MeridianError as exc:
            notes.append(f"gates: stale check skipped: {exc}")
            statuses = derive_states(ledger, graph, folds=folds, check_stale=False)
        states = {gate: status.state for gate, status in statuses.items()}
    for gate, fold in folds.items():
        # With a graph, events of a gate it no longer lists are history, not a state.
        states.setdefault(gate, "removed" if graph is not None else fold.phase)
    return states


def evaluator_health(ledger: Ledger, at: Any, verdicts: list[_Verdict], gaps: list[GapPoint],
                     notes: list[str]) -> EvaluatorHealth:
    health = EvaluatorHealth(verdicts=len(verdicts), gap_window=GAP_WINDOW)
    per_dimension: dict[str, list[float]] = {d: [] for d in DIMENSIONS}
    without = [v for v in verdicts if v.scores is None and v.path]
    to_read = {id(v) for v in without[-MAX_VERDICT_DOCUMENTS:]}
    for verdict in verdicts:
        scores = verdict.scores
        if scores is None and id(verdict) in to_read:
            scores = _verdict_scores(ledger, at, cast(str, verdict.path))
            health.verdicts_read += 1
        for name, value in (scores or {}).items():
            number = _number(value)
            if number is not None:
                per_dimension.setdefault(name, []).append(number)
    if len(without) > MAX_VERDICT_DOCUMENTS:
        notes.append(f"evaluator: per-dimension scores from the newest {MAX_VERDICT_DOCUMENTS} "
                     f"of {len(without)} older verdicts (their events carry no scores)")
    health.dimensions = {name: distribution(values) for name, values in per_dimension.items()}
    health.overall = distribution([v.overall for v in verdicts if v.overall is not None])
    health.gaps = gaps
    if gaps:
        values = [p.gap for p in gaps]
        half = len(values) // 2
        health.mean_gap = round(statistics.fmean(values), 4)
        health.early_mean_gap = round(statistics.fmean(values[:half]), 4) if half else None
        health.recent_mean_gap = round(statistics.fmean(values[half:]), 4)
    return health


def _verdict_scores(ledger: Ledger, at: Any, path: str) -> dict[str, Any] | None:
    """The ``scores`` of one verdict document (``meridian.evaluators.models.Verdict``)."""
    raw = ledger.read(path, at=at)
    if raw is None:
        return None
    try:
        scores = json.loads(raw).get("scores")
    except (ValueError, AttributeError):
        return None
    return scores if isinstance(scores, dict) else None


# --- calibration -------------------------------------------------------------------------


def calibration_health(ledger: Ledger) -> CalibrationHealth:
    from meridian.memory import calibration
    from meridian.memory.schemas import significant

    corrections = sorted(calibration.effective_corrections(ledger), key=lambda c: c.ts)
    window = calibration.DEFAULT_WINDOW
    factor, sample = calibration.multiplier(corrections, window)
    points = []
    ratios: list[float] = []
    for correction in corrections:
        if correction.ratio is not None:
            ratios.append(correction.ratio)
        # The multiplier as `meridian calibration` would have printed it at this point.
        points.append(CorrectionPoint(
            ts=correction.ts, gate=correction.gate, predicted_hours=correction.predicted_hours,
            actual_hours=correction.actual_hours, ratio=correction.ratio,
            multiplier=significant(statistics.median(ratios[-window:])) if ratios else None,
        ))
    return CalibrationHealth(
        corrections=points, multiplier=factor, window=window, sample=sample,
        median_ratio=significant(statistics.median(ratios)) if ratios else None,
    )


# --- evaluation runs: their cost, and the latest per suite against its baseline ----------------


def run_figures(ledger: Ledger, at: Any, path: str) -> RunFigures:
    """Read one run document raw (``meridian.evals.run`` format) for what the index lacks
    (runs saved before the index record carried ``figures``): the index record's own
    ``RunFigures`` (``meridian.evals.store``, the one definition of these fields)."""
    from meridian.evals.store import RunFigures

    figures = RunFigures()
    raw = ledger.read(path, at=at)
    if raw is None:
        return figures
    try:
        document = json.loads(raw)
    except ValueError:
        return figures
    figures.tokens = int(_number((document.get("summary") or {}).get("tokens")) or 0)
    for entry in document.get("results") or []:
        trials = entry.get("trials") or []
        for trial in trials:
            trajectory = trial.get("trajectory") if isinstance(trial, dict) else None
            if isinstance(trajectory, dict):
                figures.agent_in += int(_number(trajectory.get("tokens_in")) or 0)
                figures.agent_out += int(_number(trajectory.get("tokens_out")) or 0)
            for score in trial.get("scores") or []:
                usage = score.get("usage") if isinstance(score, dict) else None
                if isinstance(usage, dict):
                    tokens_in, tokens_out, spent = _usage({
                        "input_tokens": usage.get("tokens_in"),
                        "output_tokens": usage.get("tokens_out"),
                        **{k: usage[k] for k in ("cost_usd", "cost_unknown") if k in usage}})
                    figures.judge_in += tokens_in
                    figures.judge_out += tokens_out
                    if spent is None:
                        figures.judge_unknown += 1
                    else:
                        figures.judge_usd += spent
    return figures


class _FiguresCache:
    """Figures of runs whose index record has none, read from their documents once and
    kept in ``.git/meridian/run-figures-<branch>.json``, keyed by the document's blob id
    (content-addressed: a key that does not match is read again). A display cache: the
    cost lines of health, never a gate decision."""

    VERSION = 1

    def __init__(self, ledger: Ledger, at: Any) -> None:
        self.ledger, self.at = ledger, at
        self.path = ledger.local_dir / f"run-figures-{ledger.branch.replace('/', '__')}.json"
        self.runs: dict[str, Any] = {}
        self.changed = False
        try:
            cached = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(cached, dict) and cached.get("version") == self.VERSION \
                    and isinstance(cached.get("runs"), dict):
                self.runs = cached["runs"]
        except (OSError, ValueError):
            pass
        self.tree = ledger.tree(at)

    def figures(self, path: str) -> RunFigures:
        from meridian.evals.store import RunFigures

        try:
            blob = str(self.tree[path].id)
        except (KeyError, TypeError):
            return RunFigures()
        kept = self.runs.get(path)
        if isinstance(kept, dict) and kept.get("blob") == blob and isinstance(kept.get("figures"), dict):
            try:
                return RunFigures(**kept["figures"])
            except (TypeError, ValueError):  # pydantic's ValidationError is a ValueError
                pass
        figures = run_figures(self.ledger, self.at, path)
        self.runs[path] = {"blob": blob, "figures": figures.model_dump()}
        self.changed = True
        return figures

    def save(self) -> None:
        if not self.changed:
            return
        from meridian.viewfile import replace_with

        try:
            replace_with(self.path, json.dumps({"version": self.VERSION, "runs": self.runs}).encode())
        except OSError:
            pass


def evaluation_health(ledger: Ledger, at: Any, costs: _Costs,
                      notes: list[str]) -> tuple[EvaluationHealth, CostLine, CostLine]:
    """Latest run per suite vs its baseline, and what every run cost (agents, judges).

    Taken from ``_RunsKept`` when nothing under ``runs/`` and no baseline tag changed
    since it was kept (an event, a verdict or a memory record changes neither): then
    the cost does not grow with the number of stored runs."""
    kept = _RunsKept(ledger)
    answer = kept.load()
    if answer is None:
        answer = _evaluation_answer(ledger, at)
        kept.save(answer)
    for key, (agents_usd, judge_usd, unknown, tokens) in answer.weeks.items():
        week = costs.week_of(key)
        week.agents += agents_usd
        week.llm_judge += judge_usd
        week.cost_unknown += unknown
        week.tokens += tokens
    notes.extend(answer.notes)
    return answer.health, answer.agents, answer.judges


@dataclass
class _RunsAnswer:
    """What the runs give the report: their health, their cost lines, their share of
    each week's spend (agents, judges, unknown costs, tokens) and notes."""

    health: EvaluationHealth
    agents: CostLine
    judges: CostLine
    weeks: dict[str, tuple[float, float, int, int]]
    notes: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"health": self.health.model_dump(mode="json"),
                "agents": self.agents.model_dump(mode="json"),
                "judges": self.judges.model_dump(mode="json"),
                "weeks": {key: list(value) for key, value in self.weeks.items()},
                "notes": list(self.notes)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _RunsAnswer:
        weeks = {}
        for key, value in data["weeks"].items():
            agents_usd, judge_usd, unknown, tokens = value
            if not (isinstance(key, str) and all(type(v) in (int, float) for v in value)
                    and type(unknown) is int and type(tokens) is int):
                raise ValueError("weeks")
            weeks[key] = (float(agents_usd), float(judge_usd), unknown, tokens)
        notes = data["notes"]
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise ValueError("notes")
        return cls(health=EvaluationHealth.model_validate(data["health"]),
                   agents=CostLine.model_validate(data["agents"]),
                   judges=CostLine.model_validate(data["judges"]), weeks=weeks, notes=notes)


class _RunsKept:
    """``evaluation_health``'s answer kept in ``.git/meridian/runs-health-<branch>.json``,
    keyed by the id of the state tree's ``runs`` directory (every run document, the run
    index and the prune records: content-addressed) and the baseline tags' targets.

    A display cache like ``_FiguresKept`` (same checksum, same refusals: a file that
    does not match, parse or validate is ignored and the runs read again); compare and
    the pre-push gate never read it."""

    VERSION = 1
    LIMIT = 64 * 1024 * 1024

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.path = ledger.local_dir / f"runs-health-{ledger.branch.replace('/', '__')}.json"
        self.key = self._key()

    def _key(self) -> dict[str, Any] | None:
        from meridian import __version__
        from meridian.evals import store

        tree = self.ledger.tree()
        try:
            runs = str(tree[store.RUNS_DIR].id) if tree is not None else None
            tags = {name: str(commit)
                    for name, commit in self.ledger.tags(store.BASELINE_PREFIX).items()}
        except (KeyError, MeridianError):
            return None  # no runs (nothing to keep), or unreadable: read as before
        return {"version": self.VERSION, "meridian": __version__, "runs": runs, "tags": tags}

    def load(self) -> _RunsAnswer | None:
        import hashlib

        from meridian.userfiles import read_bounded

        if self.key is None:
            return None
        try:
            data = read_bounded(self.path, limit=self.LIMIT)  # never blocks on a FIFO
            digest, _, body_bytes = data.partition(b"\n")
            if hashlib.sha256(body_bytes).hexdigest().encode() != digest:
                return None
            body = json.loads(body_bytes)
            if body["key"] != self.key:
                return None
            return _RunsAnswer.from_json(body["answer"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError, MeridianError):
            return None  # pydantic's ValidationError is a ValueError

    def save(self, answer: _RunsAnswer) -> None:
        import hashlib

        # Only an answer read from the tree of its key: a run saved while it was read
        # would be kept under the key of the tree before it.
        if self.key is None or self._key() != self.key:
            return
        body = json.dumps({"key": self.key, "answer": answer.to_json()},
                          separators=(",", ":")).encode()
        from meridian.viewfile import replace_with

        try:
            replace_with(self.path, hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        except OSError:
            pass  # a cache that cannot be written is only slower


def _evaluation_answer(ledger: Ledger, at: Any) -> _RunsAnswer:
    from meridian.evals import store

    agents, judges = CostLine(), CostLine()
    notes: list[str] = []
    weeks: dict[str, list[Any]] = {}
    try:
        entries = store.index(ledger, include_pruned=True)
        baselines = store.baselines(ledger)
    except MeridianError as exc:
        notes.append(f"evaluation: {exc}")
        return _RunsAnswer(EvaluationHealth(), agents, judges, {}, notes)
    backfill: _FiguresCache | None = None
    for entry in entries:
        data = entry.data
        if data.figures is not None:
            run = data.figures
        else:
            backfill = backfill or _FiguresCache(ledger, at)
            run = backfill.figures(data.path)
        agents.cost_usd += data.cost_usd
        agents.input_tokens += run.agent_in
        agents.output_tokens += run.agent_out
        agents.tokens += run.tokens
        judges.input_tokens += run.judge_in
        judges.output_tokens += run.judge_out
        judges.tokens += run.judge_in + run.judge_out
        judges.cost_usd += run.judge_usd
        judges.cost_unknown += run.judge_unknown
        week = weeks.setdefault(iso_week(entry.ts), [0.0, 0.0, 0, 0])
        week[0] += data.cost_usd
        week[1] += run.judge_usd
        week[2] += run.judge_unknown
        week[3] += run.tokens + run.judge_in + run.judge_out
    if backfill is not None:
        backfill.save()

    visible = [e for e in entries if not e.pruned]
    by_id = {e.run_id: e for e in entries}
    health = EvaluationHealth(runs=len(visible))
    for suite in sorted({e.data.suite for e in visible}):
        runs = [e for e in visible if e.data.suite == suite]
        latest = runs[-1]
        row = SuiteHealth(
            suite=suite, runs=len(runs), latest_run=latest.run_id, latest_at=latest.ts,
            agent=f"{latest.data.agent}@{latest.data.agent_version}", tasks=latest.data.tasks,
            passed=latest.data.passed, failed=latest.data.failed,
            infra_errors=latest.data.infra_errors, pass_rate=latest.data.pass_rate,
        )
        pinned = [b for b in baselines if b.run_id in by_id and by_id[b.run_id].data.suite == suite]
        if pinned:
            # Several baselines of one suite: compare with the one pinning the newest run.
            order = {e.run_id: i for i, e in enumerate(entries)}
            baseline = max(pinned, key=lambda b: (order[cast(str, b.run_id)], b.name))
            base = by_id[cast(str, baseline.run_id)]
            row.baseline, row.baseline_run = baseline.name, base.run_id
            row.baseline_passed, row.baseline_pass_rate = base.data.passed, base.data.pass_rate
            _compare_with_baseline(ledger, row, notes)
        health.suites.append(row)
    return _RunsAnswer(health, agents, judges,
                       {key: (w[0], w[1], w[2], w[3]) for key, w in weeks.items()}, notes)


def _compare_with_baseline(ledger: Ledger, row: SuiteHealth, notes: list[str]) -> None:
    """Regressions and fixes as `meridian eval compare LATEST BASELINE` counts them."""
    from meridian.evals import compare, store

    if row.baseline_run == row.latest_run:
        row.regressions, row.fixes = 0, 0
        return
    try:
        # read as `eval compare` reads them (checked as the models check them, without
        # building a model per task: two 10k-task runs in full took ~2 s)
        latest = store.load_for_compare(ledger, row.latest_run)
        base = store.load_for_compare(ledger, cast(str, row.baseline_run))
        result = compare.compare(latest, base)
    except MeridianError as exc:
        notes.append(f"evaluation: {row.suite}: cannot compare with baseline {row.baseline}: {exc}")
        return
    row.regressions, row.fixes = len(result.regressions), len(result.fixed)


# --- memory, rules, completion ------------------------------------------------------------


def memory_health(ledger: Ledger, at: Any, scan: EventScan) -> MemoryHealth:
    from meridian.memory.schemas import KINDS
    from meridian.memory.verify import check_memory

    counts = {}
    for label, spec in KINDS.items():
        counts[label] = sum(sum(1 for item in items if item is not BLANK)
                            for _, items in shard_records(ledger, spec.stream, at))
    problems = check_memory(ledger)
    return MemoryHealth(records=counts, invalid=len(problems),
                        problems=problems[:MAX_MEMORY_PROBLEMS],
                        duplicates_prevented=scan.duplicates_prevented)


def rules_health(root: Path | None, today: date | None, notes: list[str]) -> RulesHealth:
    if root is None:
        return RulesHealth()
    from meridian import rules as rules_module

    try:
        rules = rules_module.load_rules(root)
    except MeridianError as exc:
        notes.append(f"rules: {exc}")
        return RulesHealth()
    day = today or date.today()
    return RulesHealth(
        total=len(rules), active=sum(1 for r in rules if r.active),
        due=[DueRule(id=r.id, rule=r.rule,
                     review_date=r.review.date.isoformat() if r.review.date else None)
             for r in rules if r.due(day)],
    )


def completion_health(scan: EventScan) -> CompletionHealth | None:
    if scan.latest_features is None:
        return None
    ts, data = scan.latest_features
    try:
        return CompletionHealth(computed_at=ts, junit=str(data.get("junit", "")),
                                total=int(data["total"]), working=int(data["working"]),
                                hardened=int(data["hardened"]),
                                working_pct=float(data["working_pct"]),
                                hardened_pct=float(data["hardened_pct"]))
    except (KeyError, TypeError, ValueError):
        return None


# --- the report -----------------------------------------------------------------------------


def build_report(ledger: Ledger, root: Path | None = None, *,
                 today: date | None = None) -> HealthReport:
    """The health report of ``ledger``'s state branch at its current tip."""
    # The aggregation allocates a dict per event and creates no reference cycles; left
    # on, the cyclic collector rescans those dicts over and over (a third of the time).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build_report(ledger, root, today)
    finally:
        if collecting:
            gc.enable()


def _build_report(ledger: Ledger, root: Path | None, today: date | None) -> HealthReport:
    tip = ledger.tip()
    report = HealthReport(branch=ledger.branch, commit=None if tip is None else str(tip),
                          generated_at=records.now_ts())
    notes = report.notes
    report.rules = rules_health(root, today, notes)
    if tip is None:
        notes.append(f"no state branch {ledger.branch} yet: run `meridian init`")
        return report

    events, scan = _event_figures(ledger, tip)
    if scan is not None and scan.corrupt:
        notes.append(f"{len(scan.corrupt)} event line(s) could not be read (first: "
                     f"{ledger.branch}:{scan.corrupt[0]}); run `meridian verify`")
    gates = events.gates
    costs = _Costs(weeks={key: dataclasses.replace(w) for key, w in events.weeks.items()})
    tallies = events.tallies
    states = gate_states(scan, root, notes, ledger)
    report.events = events.events
    for row in gates.gates:
        row.state = states.get(row.gate, row.state)
    known = {row.gate for row in gates.gates}
    gates.gates += [GateRow(gate=g, state=s) for g, s in states.items() if g not in known]
    gates.gates.sort(key=lambda r: r.gate)
    gates.total = len(gates.gates)
    gates.by_state = dict(sorted(Counter(r.state for r in gates.gates).items()))
    report.gates = gates
    report.evaluator = events.evaluator
    notes.extend(events.evaluator_notes)
    report.calibration = calibration_health(ledger)
    report.evaluation, agents, judges = evaluation_health(ledger, tip, costs, notes)
    report.cost = _cost_health(costs, tallies, agents, judges)
    report.completion = events.completion
    report.memory = events.memory
    report.harness = events.harness
    return report


@dataclass
class _EventFigures:
    """What the report takes from the events, the verdict documents and the memory
    streams: everything but the gate states (always derived from the trusted snapshot),
    the rules (a work-tree file and today's date), calibration and the runs."""

    events: int
    gates: GateHealth  # as ``fold_gates`` returns it, before the states are merged in
    evaluator: EvaluatorHealth
    evaluator_notes: list[str]
    tallies: dict[str, _GateTally]
    weeks: dict[str, _WeekTally]  # the gate events' spend, before the runs add theirs
    completion: CompletionHealth | None
    memory: MemoryHealth
    harness: list[HarnessChange]


@dataclass
class _Progress:
    """Where the one pass over the events got to: enough to go on with lines appended
    since (``_resume``) instead of reading every shard again. Kept beside the figures."""

    shards: list[list[Any]]  # [path, blob id, size] of each event shard, stored order
    events: int
    latest_features: list[Any] | None  # [ts, data]
    duplicates: int
    harness: list[list[Any]]  # [ts, data], stored order
    last_gate_ts: str | None  # the latest gate event folded (time order)
    fold: GateFold
    weeks: dict[str, _WeekTally]  # the gate events' spend
    memory_trees: list[list[Any]]  # [stream, tree id]: what ``memory`` was computed from
    memory: MemoryHealth
    evaluated: int  # verdicts ``evaluator`` was computed from
    evaluator: EvaluatorHealth
    evaluator_notes: list[str]

    def scan(self) -> EventScan:
        """The scan these figures stand for, without its gate events."""
        latest = self.latest_features
        return EventScan(events=self.events, duplicates_prevented=self.duplicates,
                         latest_features=None if latest is None else (latest[0], latest[1]),
                         harness=[(ts, data) for ts, data in self.harness])

    def to_json(self) -> dict[str, Any]:
        fold = self.fold
        return {
            "shards": self.shards, "events": self.events,
            "latest_features": self.latest_features, "duplicates": self.duplicates,
            "harness": self.harness, "last_gate_ts": self.last_gate_ts,
            "fold": {
                "tallies": {g: dataclasses.asdict(t) for g, t in fold.tallies.items()},
                "started": fold.started, "pending_self": fold.pending_self,
                "verdicts": [[v.ts, v.gate, v.path, v.overall, v.scores] for v in fold.verdicts],
                "gap_rows": [list(row) for row in fold.gap_rows],
                "intervals": fold.intervals, "blocks": dict(fold.blocks),
                "unavailable": fold.unavailable, "judged": dict(fold.judged),
            },
            "weeks": {k: dataclasses.asdict(w) for k, w in self.weeks.items()},
            "memory_trees": self.memory_trees, "memory": self.memory.model_dump(mode="json"),
            "evaluated": self.evaluated, "evaluator": self.evaluator.model_dump(mode="json"),
            "evaluator_notes": self.evaluator_notes,
        }

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> _Progress:
        raw = body["fold"]
        fold = GateFold(
            tallies={str(g): _GateTally(**t) for g, t in raw["tallies"].items()},
            started={str(g): str(ts) for g, ts in raw["started"].items()},
            pending_self={str(g): float(v) for g, v in raw["pending_self"].items()},
            verdicts=[_Verdict(str(ts), str(gate), path, overall, scores)
                      for ts, gate, path, overall, scores in raw["verdicts"]],
            gap_rows=[(str(ts), str(gate), float(a), float(b))
                      for ts, gate, a, b in raw["gap_rows"]],
            intervals=[float(v) for v in raw["intervals"]],
            blocks=Counter({str(k): int(v) for k, v in raw["blocks"].items()}),
            unavailable=int(raw["unavailable"]),
            judged=Counter({str(k): int(v) for k, v in raw["judged"].items()}))
        shards = body["shards"]
        if not all(isinstance(e, list) and len(e) == 3 and isinstance(e[0], str)
                   and isinstance(e[1], str) and isinstance(e[2], int) for e in shards):
            raise TypeError("shards")
        latest = body["latest_features"]
        if latest is not None and not (isinstance(latest, list) and len(latest) == 2
                                       and isinstance(latest[1], dict)):
            raise TypeError("latest_features")
        if not all(isinstance(h, list) and len(h) == 2 and isinstance(h[1], dict)
                   for h in body["harness"]):
            raise TypeError("harness")
        return cls(
            shards=shards, events=int(body["events"]), latest_features=latest,
            duplicates=int(body["duplicates"]), harness=body["harness"],
            last_gate_ts=body["last_gate_ts"], fold=fold,
            weeks={str(k): _WeekTally(**w) for k, w in body["weeks"].items()},
            memory_trees=body["memory_trees"],
            memory=MemoryHealth.model_validate(body["memory"]),
            evaluated=int(body["evaluated"]),
            evaluator=EvaluatorHealth.model_validate(body["evaluator"]),
            evaluator_notes=[str(n) for n in body["evaluator_notes"]])


def _memory_trees(ledger: Ledger, tree: Any) -> list[list[Any]]:
    from meridian import gitio
    from meridian.memory.schemas import KINDS

    out: list[list[Any]] = []
    for spec in KINDS.values():
        entry = gitio.tree_entry(ledger.repo, tree, spec.stream)
        out.append([spec.stream, None if entry is None else str(entry.id)])
    return out


def _parse_part(path: str, blob: bytes) -> list[Any]:
    """``shard_records``' items for ``blob`` (whole lines of one shard)."""
    body = blob.decode("utf-8", errors="replace").rstrip("\n")
    if not body:
        return []
    try:
        return cast(list[Any], json.loads("[" + body.replace("\n", ",") + "]"))
    except ValueError:
        return [_parse_line(line) for line in body.split("\n")]


def _event_figures(ledger: Ledger, tip: Any) -> tuple[_EventFigures, EventScan | None]:
    """The event figures at ``tip``: from the kept progress when it is of this tree, or
    goes on cleanly with the lines appended since (``_resume``); else from one pass over
    every shard (then the scan is returned too: its notes, and the states' fallback,
    need it)."""
    kept = _FiguresKept(ledger, tip)
    tree = ledger.tree(tip)
    tree_id = str(tree.id)
    loaded = kept.load()
    resumed = None
    if loaded is not None:
        try:
            resumed = loaded[1] if loaded[0] == tree_id else _resume(ledger, tip, tree,
                                                                     loaded[1])
        except (KeyError, ValueError, TypeError):
            resumed = None  # a kept shard no longer there, an id that is not one
    scan: EventScan | None = None
    if resumed is None:
        scan = EventScan()
        shards: list[list[Any]] = []
        for path in ledger.shards(EVENTS, at=tip):
            blob = gitio_blob(ledger, tree, path)
            if blob is None:
                continue
            shards.append([path, blob[0], len(blob[1])])
            if blob[1]:
                scan_items(scan, path, _parse_part(path, blob[1]))
        scan.gate_events.sort(key=lambda event: event[0])
        costs = _Costs()
        fold = GateFold()
        fold_into(fold, scan.gate_events, costs)
        resumed = _Progress(
            shards=shards, events=scan.events,
            latest_features=None if scan.latest_features is None else list(scan.latest_features),
            duplicates=scan.duplicates_prevented,
            harness=[[ts, data] for ts, data in scan.harness],
            last_gate_ts=scan.gate_events[-1][0] if scan.gate_events else None,
            fold=fold, weeks=costs.weeks, memory_trees=[], memory=MemoryHealth(),
            evaluated=-1, evaluator=EvaluatorHealth(), evaluator_notes=[])
    changed = _finish(ledger, tip, tree, resumed, scan)
    figures = _EventFigures(
        events=resumed.events, gates=gate_health(resumed.fold), evaluator=resumed.evaluator,
        evaluator_notes=resumed.evaluator_notes, tallies=resumed.fold.tallies,
        weeks={key: dataclasses.replace(w) for key, w in resumed.weeks.items()},
        completion=completion_health(resumed.scan()), memory=resumed.memory,
        harness=harness_health(resumed.scan()))
    if (loaded is None or loaded[0] != tree_id or changed) and (scan is None or not scan.corrupt):
        # A corrupt line sends the gate states to the scan (``gate_states``): such a
        # history is aggregated every time (``meridian verify`` says what to repair).
        kept.save(tree_id, resumed)
    return figures, scan


def gitio_blob(ledger: Ledger, tree: Any, path: str) -> tuple[str, bytes] | None:
    """(blob id, bytes) of ``path`` in ``tree``, None when it is not a blob there."""
    from meridian import gitio

    obj = gitio.tree_entry(ledger.repo, tree, path)
    if obj is None:
        return None
    data = gitio.blob_data(obj)
    return None if data is None else (str(obj.id), data)


def _finish(ledger: Ledger, tip: Any, tree: Any, progress: _Progress,
            scan: EventScan | None) -> bool:
    """Bring the memory and evaluator figures up to date with the events folded;
    whether anything had to be computed."""
    changed = False
    trees = _memory_trees(ledger, tree)
    if trees != progress.memory_trees:
        progress.memory = memory_health(ledger, tip, scan or progress.scan())
        progress.memory_trees = trees
        changed = True
    progress.memory.duplicates_prevented = progress.duplicates
    fold = progress.fold
    if progress.evaluated != len(fold.verdicts):
        notes: list[str] = []
        progress.evaluator = evaluator_health(ledger, tip, fold.verdicts,
                                              _gap_points(fold.gap_rows), notes)
        progress.evaluator_notes = notes
        progress.evaluated = len(fold.verdicts)
        changed = True
    return changed


def _resume(ledger: Ledger, tip: Any, tree: Any, progress: _Progress) -> _Progress | None:
    """``progress`` gone on with the event lines appended since it was kept, or None when
    the history did not only grow that way (a shard edited or gone, lines added before
    the last kept shard, a corrupt line, a gate event older than the latest folded):
    then every shard is read again. The result equals one pass over every shard: the
    new lines come after the old in stored order, and their gate events after the old
    in time order (the pass's sort is stable)."""
    import hashlib

    paths = ledger.shards(EVENTS, at=tip)
    old = progress.shards
    if len(paths) < len(old):
        return None
    for index, (path, blob, _size) in enumerate(old[:-1]):
        if paths[index] != path or str(tree[path].id) != blob:
            return None
    parts: list[tuple[str, bytes]] = []
    shards = [list(entry) for entry in old]
    if old:
        path, blob, size = old[-1]
        if paths[len(old) - 1] != path:
            return None
        if str(tree[path].id) != blob:
            now = gitio_blob(ledger, tree, path)
            if now is None or len(now[1]) < size or (size and now[1][size - 1:size] != b"\n"):
                return None
            prefix = now[1][:size]
            if hashlib.sha1(b"blob %d\0" % size + prefix,
                            usedforsecurity=False).hexdigest() != blob:
                return None
            parts.append((path, now[1][size:]))
            shards[-1] = [path, now[0], len(now[1])]
    for path in paths[len(old):]:
        now = gitio_blob(ledger, tree, path)
        if now is None:
            return None
        parts.append((path, now[1]))
        shards.append([path, now[0], len(now[1])])
    delta = EventScan()
    for path, data in parts:
        scan_items(delta, path, _parse_part(path, data))
    if delta.corrupt:
        return None
    delta.gate_events.sort(key=lambda event: event[0])
    if delta.gate_events and progress.last_gate_ts is not None \
            and delta.gate_events[0][0] < progress.last_gate_ts:
        return None
    costs = _Costs(weeks=progress.weeks)
    fold_into(progress.fold, delta.gate_events, costs)
    progress.shards = shards
    progress.events += delta.events
    if delta.latest_features is not None and (
            progress.latest_features is None
            or delta.latest_features[0] >= progress.latest_features[0]):
        progress.latest_features = list(delta.latest_features)
    progress.duplicates += delta.duplicates_prevented
    progress.harness.extend([ts, data] for ts, data in delta.harness)
    if delta.gate_events:
        progress.last_gate_ts = delta.gate_events[-1][0]
    return progress


class _FiguresKept:
    """The progress of the pass over the events (``_Progress``), kept in
    ``.git/meridian/health-<branch>.json`` with the tree it was computed at. A report at
    that same tree (content-addressed: the events, verdict documents and memory) takes
    its figures from it; one after new events goes on from it with the appended lines
    (``_resume``), so ``health`` costs its start-up and what is new, not a pass over
    every event.

    A display cache, never trust (docs/security.md): a file whose first line is not the
    sha256 of the rest, that does not parse, of another format or Meridian version, or
    that does not validate as the report's models is ignored and every shard read
    again; ``_resume`` goes on only from a history that only grew after it. Gate states
    are never taken from it (``gate_states`` re-derives them from the snapshot, whose
    passes are re-checked on their commits); a forged file (checksum recomputed) can
    change the figures shown, never a gate's state."""

    VERSION = 1
    LIMIT = 256 * 1024 * 1024  # far above a 100k-event history's; larger: read the shards

    def __init__(self, ledger: Ledger, tip: Any) -> None:
        from meridian import __version__

        self.key = {"version": self.VERSION, "meridian": __version__}
        self.path = ledger.local_dir / f"health-{ledger.branch.replace('/', '__')}.json"

    def load(self) -> tuple[str, _Progress] | None:
        """(the tree id it was computed at, the progress), or None."""
        import hashlib

        from meridian.errors import MeridianError
        from meridian.userfiles import read_bounded

        try:
            # Never blocks on a FIFO or device (a plain read would, for ever), and a file
            # larger than any kept pass is not read whole.
            data = read_bounded(self.path, limit=self.LIMIT)
            digest, _, body_bytes = data.partition(b"\n")
            if hashlib.sha256(body_bytes).hexdigest().encode() != digest:
                return None
            body = json.loads(body_bytes)
            if body["key"] != self.key or not isinstance(body["tree"], str):
                return None
            return body["tree"], _Progress.from_json(body["progress"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError, MeridianError):
            return None  # pydantic's ValidationError is a ValueError

    def save(self, tree: str, progress: _Progress) -> None:
        import hashlib

        body = json.dumps({"key": self.key, "tree": tree, "progress": progress.to_json()},
                          separators=(",", ":")).encode()
        from meridian.viewfile import replace_with

        try:
            replace_with(self.path, hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        except OSError:
            pass  # a cache that cannot be written is only slower


def _cost_health(costs: _Costs, tallies: dict[str, _GateTally], agents: CostLine,
                 judges: CostLine) -> CostHealth:
    evaluator = CostLine(input_tokens=sum(t.tokens_in for t in tallies.values()),
                         output_tokens=sum(t.tokens_out for t in tallies.values()),
                         cost_usd=sum(t.cost for t in tallies.values()),
                         cost_unknown=sum(t.cost_unknown for t in tallies.values()))
    evaluator.tokens = evaluator.input_tokens + evaluator.output_tokens
    by_source = {"evaluator": evaluator, "llm_judge": judges, "eval_agents": agents}
    total = CostLine()
    for line in by_source.values():
        line.cost_usd = round(line.cost_usd, 6)
        total.input_tokens += line.input_tokens
        total.output_tokens += line.output_tokens
        total.tokens += line.tokens
        total.cost_usd += line.cost_usd
        total.cost_unknown += line.cost_unknown
    total.cost_usd = round(total.cost_usd, 6)
    weeks = [WeekCost(week=key, evaluator_usd=round(w.evaluator, 6), llm_judge_usd=round(w.llm_judge, 6),
                      eval_agents_usd=round(w.agents, 6), tokens=w.tokens,
                      cost_usd=round(w.evaluator + w.llm_judge + w.agents, 6),
                      cost_unknown=w.cost_unknown)
             for key, w in sorted(costs.weeks.items())]
    by_gate = [GateCost(gate=gate, verdicts=t.verdicts, input_tokens=t.tokens_in,
                        output_tokens=t.tokens_out, tokens=t.tokens_in + t.tokens_out,
                        cost_usd=round(t.cost, 6), cost_unknown=t.cost_unknown)
               for gate, t in tallies.items() if t.verdicts]
    by_gate.sort(key=lambda g: (-g.cost_usd, g.gate))
    return CostHealth(total=total, by_source=by_source, by_gate=by_gate, by_week=weeks)
