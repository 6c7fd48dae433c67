"""The context a Claude Code session starts with (the SessionStart hook).

Plain text, one fact per line, because the reader is a model: the gate it should be
working on and what that gate must satisfy, what the last verdict found, the patterns
memory holds that bear on it, and how earlier estimates compared with reality.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meridian import gitio
from meridian.durations import human_hours, human_ratio
from meridian.hooks.project import ProjectFacts

CURRENT_STATES = ("failed", "in_progress", "submitted")
MAX_PATTERNS = 5
MAX_CORRECTIONS = 5


def _patterns(records: list[Any], gate: str | None) -> list[str]:
    def relevant(record: Any) -> bool:
        data = record.data
        return gate is not None and (gate in (data.get("source_gates") or [])
                                     or gate in (data.get("tags") or []))

    chosen = [r for r in records if relevant(r)]
    others = sorted((r for r in records if not relevant(r)),
                    key=lambda r: float(r.data.get("confidence") or 0), reverse=True)
    lines = []
    for record in (chosen + others)[:MAX_PATTERNS]:
        data = record.data
        where = f" (applies to: {data['context']})" if data.get("context") else ""
        lines.append(f"- {data.get('text')}{where} [confidence {data.get('confidence')}]")
    return lines


def _corrections(corrections: list[Any], gate: str | None) -> list[str]:
    """Recent corrections (amendments folded in), the current gate's first; hours rounded
    to what a reader needs (``durations.human_hours``)."""
    mine = [c for c in corrections if gate is not None and c.gate == gate]
    recent = mine[-MAX_CORRECTIONS:] + [c for c in reversed(corrections) if c not in mine]
    lines = []
    for correction in recent[:MAX_CORRECTIONS]:
        parts = [f"gate {correction.gate}"]
        if correction.actual_hours is not None:
            took = f"took {human_hours(correction.actual_hours)}"
            if correction.source == "gate_pass" and not correction.amended_by:
                took += " of active time" + (
                    f" ({human_hours(correction.wall_hours)} wall)" if correction.wall_hours
                    else "")
            if correction.predicted_hours is not None:
                took = (f"predicted {human_hours(correction.predicted_hours)}, {took} "
                        f"(ratio {human_ratio(correction.ratio)})")
            parts.append(took)
        if correction.root_cause:
            parts.append(f"root cause: {correction.root_cause}")
        if correction.next_action:
            parts.append(f"next time: {correction.next_action}")
        lines.append("- " + "; ".join(parts))
    return lines


def _shown_path(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix() if path.is_absolute() else path.as_posix()
    except ValueError:
        return str(path)


def session_context(repo: gitio.Repository, facts: ProjectFacts) -> tuple[str, str | None]:
    """(context text, the current gate or None); empty text when there is nothing to say."""
    if not facts.has_graph:
        return "", None
    from meridian.gates.graph import load_graph
    from meridian.gates.snapshot import load_snapshot
    from meridian.gates.state import derive_states
    from meridian.hooks.gate_view import issue_lines
    from meridian.ledger import Ledger
    from meridian.memory.store import iter_records

    ledger = Ledger(repo, facts.branch)
    graph = load_graph(facts.root)
    snapshot = load_snapshot(repo, facts.branch)
    statuses = derive_states(ledger, graph, folds=snapshot.gate_folds(), check_stale=False)
    current = next((s for s in statuses.values() if s.state in CURRENT_STATES), None)
    lines = [(f"Meridian gates this repository ({_shown_path(graph.path, facts.root)}): a gate "
             "advances only when an independent evaluator passes its artifacts. Files of locked "
             "gates are refused; do not stop while your gate's verdict has failed.")]
    gate = current.gate if current else None
    if current is None:
        ready = [s.gate for s in statuses.values() if s.state == "open"]
        lines.append("No gate is in progress." + (
            f" Ready to start: {', '.join(ready)} (meridian gate start {ready[0]})." if ready else ""))
    else:
        spec = graph.gate(current.gate)
        lines.append(f"Current gate: {current.gate} ({current.state}): {current.detail}")
        if spec.description:
            lines.append(f"Description: {spec.description.strip()}")
        if spec.acceptance:
            lines.append("Acceptance criteria:")
            lines += [f"  {line}" for line in spec.acceptance.strip().splitlines()]
        if spec.artifacts:
            lines.append(f"Artifacts: {', '.join(spec.artifacts)}")
        if current.scope:
            lines.append(f"The last verdict's scope: {current.scope} (the offline evaluator did "
                         "not judge the acceptance criteria; meet them anyway)")
        if current.verdict and current.verdict_passed is False:
            issues = issue_lines(ledger.read_json(current.verdict))
            lines.append(f"Open issues of the last verdict ({current.verdict}):")
            lines += issues or ["- (none listed: the overall score was below the threshold)"]
        lines.append(f"When the work is done: meridian gate submit {current.gate}")
    patterns = _patterns(list(iter_records(ledger, "semantic")), gate)
    if patterns:
        lines.append("Patterns from memory:")
        lines += patterns
    from meridian.memory.calibration import effective_corrections

    corrections = _corrections(effective_corrections(ledger), gate)
    if corrections:
        lines.append("Recent corrections (estimates vs reality):")
        lines += corrections
    return "\n".join(lines) + "\n", gate
