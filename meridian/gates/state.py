"""Gate state, derived from the events on the state branch (event sourcing).

Nothing stores "the state of a gate": it is folded from ``gate.*`` events every time,
then checked against the work tree (a passed gate whose artifacts no longer hash to
its verdict's subject is stale). States:

    locked       never started, and a need has not passed
    open         never started, every need passed
    in_progress  started (or reopened), not submitted since
    submitted    a submission awaits its verdict, or (gates with approval) the
                 verdict passed and a human has not approved it yet
    passed       the latest verdict passed (and was approved, when required)
    failed       the latest verdict failed
    stale        passed, but the artifacts or the gate's definition (its gates.yaml
                 entry, its evaluator settings: ``meridian.gates.definition``)
                 changed since the verdict, or a gate it needs (transitively) was
                 reopened, failed or is forged since (``needs X reopened``)
    forged       the latest pass is not backed by consistent evidence
                 (``meridian.gates.evidence``): shown as "forged or inconsistent"

Events are folded in ledger order (the commits that added them), never by their
timestamps (``meridian.gates.evidence.gate_history``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from meridian import gitio
from meridian.errors import MeridianError
from meridian.gates import definition as gate_definition
from meridian.gates import events as ev
from meridian.gates.artifacts import snapshot
from meridian.gates.evidence import INCONSISTENT
from meridian.gates.globs import worktree_files
from meridian.gates.graph import GateSpec, Graph
from meridian.gates.status_text import FORGED_TEXT
from meridian.ledger import Ledger
from meridian.records import Record

STATES = ("locked", "open", "in_progress", "submitted", "passed", "failed", "stale", "forged")


@dataclass
class GateStatus:
    gate: str
    state: str
    detail: str
    needs: list[str]
    unmet_needs: list[str] = field(default_factory=list)
    started_at: str | None = None
    base_commit: str | None = None
    estimate_hours: float | None = None
    verdict: str | None = None  # path of the latest verdict document
    verdict_passed: bool | None = None
    overall: float | None = None
    threshold: float | None = None
    evaluator: str | None = None
    scope: str | None = None  # "objective checks only": the offline evaluator's verdict
    subject: str | None = None  # tree id the latest verdict read
    current_subject: str | None = None  # tree id of the artifacts now (passed gates)
    changed_files: list[str] | None = None  # stale gates, when both trees are known here
    spec_hash: str | None = None  # definition hash the latest verdict was decided under
    current_spec_hash: str | None = None  # the definition's hash now (passed gates)
    # Stale gates whose definition changed: the parts that differ (``checks``,
    # ``evaluator.threshold``, ...), [] when the verdict's definition is not on record.
    changed_definition: list[str] | None = None
    awaiting_approval: bool = False
    approver: str | None = None
    # Stale because a need was taken back after this gate passed: "needs impl reopened".
    stale_needs: str | None = None
    forged_reason: str | None = None  # state forged: what is inconsistent about the pass
    submissions: int = 0
    blocks: int = 0
    updated_at: str | None = None
    # Model evaluators: who answered the latest verdict (endpoint, request and message
    # ids, responding model, client version); None for the offline evaluator.
    identity: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Fold:
    """What the events of one gate add up to, before the work tree is consulted."""

    phase: str = "open"  # open, in_progress, submitted, passed, failed
    phase_before_submit: str = "open"
    started_at: str | None = None
    base_commit: str | None = None
    estimate_hours: float | None = None
    verdict: str | None = None
    verdict_passed: bool | None = None
    overall: float | None = None
    threshold: float | None = None
    evaluator: str | None = None
    scope: str | None = None  # the verdict's scope, e.g. "objective checks only"
    subject: str | None = None
    spec_hash: str | None = None
    identity: dict[str, Any] | None = None
    high_issues: int = 0
    approved_verdict: str | None = None
    approver: str | None = None
    submitted_at: str | None = None
    submissions: int = 0
    blocks: int = 0
    updated_at: str | None = None
    forged_reason: str | None = None
    # Positions in ledger order (never timestamps, which whoever wrote the record chose):
    # of the last event folded here, of the pass that made the phase passed, and of the
    # latest reopen, failure or forged pass. A gate that passed before a need was taken
    # back is stale ("needs X reopened") until it is submitted again.
    last_pos: int = -1
    passed_pos: int | None = None
    taken_back_pos: int | None = None
    taken_back: str | None = None

    def apply(self, record: Record, pos: int) -> None:
        """Fold ``record``, the ``pos``-th gate event in ledger order (0-based, over all
        gates: positions are compared across gates)."""
        data = record.data
        kind = record.kind
        self.updated_at = record.ts
        self.last_pos = pos
        if kind == ev.REOPENED:
            self.taken_back_pos, self.taken_back = pos, "reopened"
        elif kind == ev.FAILED:
            self.taken_back_pos, self.taken_back = pos, "failed"
        elif kind == INCONSISTENT:
            self.taken_back_pos, self.taken_back = pos, FORGED_TEXT
        elif kind == ev.PASSED:
            self.passed_pos = pos
        if kind in (ev.STARTED, ev.REOPENED):
            # A reopen after a pass starts new work from HEAD. A reopen of work that never
            # passed (failed, forged, refused) keeps the earlier base: otherwise an agent
            # commits its stub, fails, reopens, and the stub is "pre-existing" (issue 14).
            keep = kind == ev.REOPENED and self.phase != "passed" and self.base_commit
            self.phase = "in_progress"
            self.started_at = record.ts
            if not keep:
                self.base_commit = data.get("base_commit")
            if kind == ev.STARTED:
                self.estimate_hours = data.get("estimate_hours")
            self.approved_verdict = None
        elif kind == ev.SUBMITTED:
            if self.phase != "submitted":
                self.phase_before_submit = self.phase
            self.phase = "submitted"
            self.submitted_at = record.ts
            self.submissions += 1
        elif kind in (ev.PASSED, ev.FAILED, INCONSISTENT):
            self.phase = {ev.PASSED: "passed", ev.FAILED: "failed"}.get(kind, "forged")
            self.forged_reason = data.get("reason") if kind == INCONSISTENT else None
            self.verdict = data.get("verdict")
            self.verdict_passed = kind == ev.PASSED
            self.overall = data.get("overall")
            self.threshold = data.get("threshold")
            self.evaluator = data.get("evaluator")
            self.scope = data.get("scope")
            self.subject = data.get("subject")
            self.spec_hash = data.get("spec_hash")
            self.identity = data.get("identity")
            self.high_issues = int((data.get("issues") or {}).get("high", 0))
        elif kind == ev.EVALUATOR_UNAVAILABLE:
            if self.phase == "submitted":
                self.phase = self.phase_before_submit
        elif kind == ev.APPROVED:
            self.approved_verdict = data.get("verdict")
            self.approver = data.get("approver")
        elif kind == ev.BLOCKED:
            self.blocks += 1


def gate_events(ledger: Ledger, gate_ids: Iterable[str] | None = None,
                graph: Graph | None = None) -> list[Record]:
    """The ``gate.*`` events (optionally of some gates only) in ledger order.

    Each pass not backed by consistent evidence comes back as a ``gate.inconsistent``
    record (``meridian.gates.evidence``), which folds as ``forged``.
    """
    from meridian.gates.evidence import consistent_events

    wanted = None if gate_ids is None else set(gate_ids)
    if not ledger.exists():
        return []
    return [r for r in consistent_events(ledger, graph)
            if wanted is None or r.gate in wanted]


# Public name for what the events of one gate add up to: meridian.gates.snapshot caches
# these (as ``dataclasses.asdict``) and catches them up with new events.
GateFold = _Fold


def fold_events(records: Iterable[Record], folds: dict[str, _Fold] | None = None
                ) -> dict[str, _Fold]:
    """Fold ``records`` (gate events in ledger order) onto ``folds`` (default: none yet),
    numbering them after the last position already folded."""
    folds = {} if folds is None else folds
    pos = max((fold.last_pos for fold in folds.values()), default=-1)
    for record in records:
        if record.gate:
            pos += 1
            folds.setdefault(record.gate, _Fold()).apply(record, pos)
    return folds


def derive_states(ledger: Ledger, graph: Graph, *, check_stale: bool = True,
                  folds: dict[str, _Fold] | None = None) -> dict[str, GateStatus]:
    """Every gate's status, in dependency order.

    ``check_stale`` hashes the artifacts and the definition of passed gates to detect
    staleness; without it a passed gate is reported passed (cheaper, for callers that
    only need events).
    ``folds`` are already-folded events (``meridian.gates.snapshot``'s cache, caught up
    incrementally); without them every gate event is read and folded here.
    """
    if folds is None:
        folds = fold_events(gate_events(ledger, graph.specs, graph))
    listing: list[str] | None = None
    statuses: dict[str, GateStatus] = {}
    for spec in graph.ordered():
        fold = folds.get(spec.id, _Fold())
        status = _base_status(spec, fold)
        status.unmet_needs = [n for n in spec.needs if statuses[n].state != "passed"]
        if fold.phase == "passed" and spec.approval is not None and fold.approved_verdict != fold.verdict:
            status.state = "submitted"
            status.awaiting_approval = True
        elif fold.phase == "passed":
            status.state = "passed"
            taken_back = _taken_back_need(graph, spec, fold, folds, statuses)
            if taken_back is not None:
                status.state = "stale"
                status.stale_needs = taken_back
            if check_stale:
                if listing is None:
                    listing = worktree_files(ledger.repo, graph.root)
                _mark_stale(ledger, graph, spec, status, listing)
        elif fold.phase == "forged":
            status.state = "forged"
            status.forged_reason = fold.forged_reason
        elif fold.phase == "open":
            status.state = "locked" if status.unmet_needs else "open"
        else:
            status.state = fold.phase
        status.detail = _detail(status, fold, statuses)
        statuses[spec.id] = status
    return statuses


_TAKEN_BACK = {"in_progress": "reopened", "submitted": "reopened", "failed": "failed",
               "forged": FORGED_TEXT}


def _taken_back_need(graph: Graph, spec: GateSpec, fold: _Fold, folds: dict[str, _Fold],
                     statuses: dict[str, GateStatus]) -> str | None:
    """``needs X reopened`` when a gate this passed gate needs (transitively) no longer
    stands, or was reopened, failed or forged after this gate passed."""
    for need in spec.needs:
        status = statuses[need]
        if status.state in _TAKEN_BACK:
            return f"needs {need} {_TAKEN_BACK[status.state]}"
        if status.state == "stale" and status.stale_needs:
            return status.stale_needs
    seen: set[str] = set()
    pending = list(spec.needs)
    while pending:
        need = pending.pop(0)
        if need in seen:
            continue
        seen.add(need)
        upstream = folds.get(need)
        if upstream is not None and upstream.taken_back_pos is not None \
                and fold.passed_pos is not None and upstream.taken_back_pos > fold.passed_pos:
            return f"needs {need} {upstream.taken_back}"
        pending.extend(graph.gate(need).needs)
    return None


def _base_status(spec: GateSpec, fold: _Fold) -> GateStatus:
    return GateStatus(
        gate=spec.id, state=fold.phase, detail="", needs=list(spec.needs),
        started_at=fold.started_at, base_commit=fold.base_commit,
        estimate_hours=fold.estimate_hours if fold.estimate_hours is not None else spec.estimate_hours,
        verdict=fold.verdict, verdict_passed=fold.verdict_passed, overall=fold.overall,
        threshold=fold.threshold, evaluator=fold.evaluator, scope=fold.scope,
        subject=fold.subject, spec_hash=fold.spec_hash, identity=fold.identity,
        approver=fold.approver if fold.approved_verdict == fold.verdict else None,
        submissions=fold.submissions, blocks=fold.blocks, updated_at=fold.updated_at,
    )


def _mark_stale(ledger: Ledger, graph: Graph, spec: GateSpec, status: GateStatus,
                listing: list[str]) -> None:
    repo = ledger.repo
    current = snapshot(repo, graph.root, spec.artifacts, listing).subject
    status.current_subject = current
    if status.subject and current != status.subject:
        status.state = "stale"
        status.changed_files = gitio.tree_changed_files(repo, status.subject, current)
    now = gate_definition.definition(graph, spec.id)
    status.current_spec_hash = gate_definition.hash_definition(now)
    # A verdict recorded before definitions were hashed has nothing to compare with.
    if status.spec_hash and status.current_spec_hash != status.spec_hash:
        status.state = "stale"
        status.changed_definition = _changed_definition(ledger, status.verdict, now)


def _changed_definition(ledger: Ledger, verdict: str | None, now: dict[str, Any]) -> list[str]:
    """The parts of the definition that changed, from the one kept with the verdict's evidence."""
    if not verdict or not verdict.startswith("verdicts/"):
        return []
    try:
        evidence = ledger.read_json("evidence/" + verdict.removeprefix("verdicts/"))
    except (MeridianError, ValueError):
        return []
    before = evidence.get("definition") if isinstance(evidence, dict) else None
    return gate_definition.changed_parts(before, now) if isinstance(before, dict) else []


def stale_reason(status: GateStatus) -> str:
    """Why a stale gate is stale: its artifacts, its definition, or both changed."""
    reasons = []
    if status.stale_needs:
        reasons.append(status.stale_needs)
    if status.changed_definition is not None:
        parts = ", ".join(status.changed_definition) or "gates.yaml entry or evaluator settings"
        reasons.append(f"gate definition changed since the verdict ({parts})")
    if status.subject and status.current_subject and status.subject != status.current_subject:
        changed = status.changed_files
        what = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "") \
            if changed else "the artifact files"
        reasons.append(f"artifacts changed since the verdict ({what})")
    return "; ".join(reasons)


def _needs_text(names: list[str], statuses: dict[str, GateStatus]) -> str:
    return ", ".join(f"{n} ({statuses[n].state})" for n in names)


def _judged_by(fold: _Fold) -> str:
    """``heuristic, scope: objective checks only``: who judged, and what they could."""
    return f"{fold.evaluator}, scope: {fold.scope}" if fold.scope else str(fold.evaluator)


def _detail(status: GateStatus, fold: _Fold, statuses: dict[str, GateStatus]) -> str:
    gate = status.gate
    state = status.state
    if state == "locked":
        return f"needs {_needs_text(status.unmet_needs, statuses)}"
    if state == "open":
        return f"ready: meridian gate start {gate}"
    if state == "stale" and status.stale_needs and not (
            status.changed_definition is not None or status.changed_files is not None
            or (status.subject and status.current_subject
                and status.subject != status.current_subject)):
        return f"{status.stale_needs} since this gate passed; submit it again once that gate passes"
    if state == "stale":
        return stale_reason(status) + "; submit again"
    if state == "forged":
        return (f"{FORGED_TEXT}: the latest pass does not stand ({status.forged_reason}); "
                f"never counted as passed")
    if state == "passed":
        by = f", approved by {status.approver}" if status.approver else ""
        return f"overall {fold.overall} >= {fold.threshold} ({_judged_by(fold)}){by}"
    text = ""
    if state == "submitted" and status.awaiting_approval:
        text = (f"verdict passed (overall {fold.overall}); awaiting a human: "
                f"meridian gate approve {gate} --token TOKEN")
    elif state == "submitted":
        text = f"submitted {fold.submitted_at}, no verdict recorded yet"
    elif state == "failed":
        high = f", {fold.high_issues} high-severity issue(s)" if fold.high_issues else ""
        text = (f"overall {fold.overall} (threshold {fold.threshold}, {_judged_by(fold)}){high}: "
                f"meridian why {gate}")
    elif state == "in_progress":
        text = f"started {fold.started_at}"
    if status.unmet_needs:
        text += f"; waiting on {_needs_text(status.unmet_needs, statuses)}"
    return text
