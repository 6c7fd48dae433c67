"""Plain-text rendering of gate status, verdicts and a gate's story.

Kept as plain aligned text (no colour, no wrapping) because the main reader is often
an agent parsing a terminal transcript: every issue is one line starting with its
severity and ``file:line``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from meridian.gates import events as ev
from meridian.gates.evidence import INCONSISTENT
from meridian.gates.state import GateStatus
from meridian.gates.status_text import FORGED_TEXT, state_label
from meridian.records import Record

if TYPE_CHECKING:
    # The verdict models (pydantic) load only where a verdict is shown: `meridian status`
    # lists states and never needs them.
    from meridian.evaluators.models import (
        CheckResult,
        Issue,
        MutationReport,
        SuppressedIssue,
        Verdict,
    )


def status_lines(statuses: Iterable[GateStatus]) -> list[str]:
    from meridian.gates.status_text import table_lines

    return table_lines({"gate": s.gate, "state": s.state, "detail": s.detail} for s in statuses)


def identity_text(identity: dict[str, Any]) -> str:
    """Who answered a model evaluator's verdict, in one line."""
    from meridian.evaluators.models import EvaluatorIdentity

    try:
        return EvaluatorIdentity.model_validate(identity).describe()
    except ValueError:
        return str(identity)[:300]


def identity_lines(statuses: Iterable[GateStatus]) -> list[str]:
    return [f"  {s.gate}: verdict by {identity_text(s.identity)}" for s in statuses
            if s.identity]


def summary_line(statuses: Iterable[GateStatus]) -> str:
    from meridian.gates.status_text import summary_text

    return summary_text(status.state for status in statuses)


def issue_line(issue: Issue) -> str:
    check = f" [{issue.check}]" if issue.check else ""
    older = " (pre-existing: outside the change, not blocking)" if issue.pre_existing else ""
    return f"{issue.severity:<6}  {issue.where()}  {issue.message}{check}{older}"


def suppressed_line(item: SuppressedIssue) -> str:
    added = " (written during this gate)" if item.added else ""
    at = f" line {item.finding_line}" if item.finding_line else ""
    return f"allowed {item.where()}  {item.kind}{at}: {item.message} -- {item.reason}{added}"


def judged_lines(verdict: Verdict, indent: str = "  ") -> list[str]:
    """What the verdict judged: its scope, the dimensions it could not, why auto fell
    back, the inline exceptions and the files excluded."""
    lines = []
    if verdict.scope:
        lines.append(f"{indent}scope: {verdict.scope}")
    if verdict.not_judged:
        lines.append(f"{indent}not judged: {', '.join(verdict.not_judged)} (the overall is "
                     f"computed from {', '.join(verdict.judged())})")
    if verdict.fallback:
        lines.append(f"{indent}evaluator: {verdict.fallback}")
    if verdict.suppressed:
        lines.append(f"{indent}inline exceptions ({len(verdict.suppressed)}):")
        lines += [f"{indent}  {suppressed_line(s)}" for s in verdict.suppressed]
    if verdict.excluded:
        shown = ", ".join(verdict.excluded[:5]) + (" ..." if len(verdict.excluded) > 5 else "")
        lines.append(f"{indent}excluded from the scan (exclude:): {shown}")
    if verdict.exclude_added:
        lines.append(f"{indent}exclude globs added during this gate: "
                     + ", ".join(verdict.exclude_added))
    if verdict.mutation is not None:
        lines += mutation_lines(verdict.mutation, indent)
    return lines


def mutation_lines(report: MutationReport, indent: str = "  ") -> list[str]:
    """The mutation smoke check: what it tried and how each mutant fared."""
    counts = report.counts()
    said = ", ".join(f"{counts[k]} {k.replace('_', ' ')}" for k in
                     ("killed", "survived", "timeout", "error", "not_tried") if k in counts)
    head = (f"{indent}mutation smoke check: {said or 'no mutant'}"
            + (f" in {report.duration_s:g}s, {report.workers} at a time" if report.duration_s
               else "")
            + f" (budget {report.max_functions} functions, {report.timeout_s:g}s)")
    lines = [head]
    if report.note:
        lines.append(f"{indent}  {report.note}")
    if report.control is not None:
        control = report.control
        lines.append(f"{indent}  control   {control.where()}  {control.function} rewritten, "
                     "behaviour unchanged: "
                     + ("the checks still pass (as they should)" if control.outcome == "survived"
                        else f"{control.outcome.replace('_', ' ')}: {control.detail}"))
    for mutant in report.mutants:
        took = "" if mutant.outcome == "not_tried" else f"  ({mutant.duration_s:g}s)"
        lines.append(f"{indent}  {mutant.outcome.replace('_', ' '):<9} {mutant.where()}  "
                     f"{mutant.function}{took}"
                     + (f": {mutant.detail}" if mutant.detail and mutant.outcome != "survived"
                        else ""))
    return lines


def check_line(result: CheckResult) -> str:
    if result.passed:
        return f"ok    {result.command}  ({result.duration_s:g}s)"
    how = ("timed out" if result.timed_out else
           "could not start" if result.exit_code is None else f"exit {result.exit_code}")
    return f"FAIL  {result.command}  ({how}, {result.duration_s:g}s)"


def verdict_lines(verdict: Verdict, *, verdict_path: str, branch: str,
                  checks: list[CheckResult] | None = None, approval_needed: bool = False) -> list[str]:
    gate = verdict.gate
    outcome = "PASSED" if verdict.passed else "FAILED"
    lines = [
        (f"gate {gate}: {outcome}  overall {verdict.overall} "
         f"(threshold {verdict.threshold}, evaluator {verdict.evaluator})"),
        "  scores: " + ", ".join(f"{name} {value:g}" for name, value in verdict.scores.items()),
        *judged_lines(verdict),
    ]
    if verdict.self_score is not None:
        lines.append(f"  self-score: {verdict.self_score:g} (evaluator overall {verdict.overall})")
    if verdict.identity is not None:
        usage = verdict.usage
        cost = "unknown" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
        lines.append(f"  evaluator: {verdict.identity.describe()}")
        lines.append(f"  cost: {cost} ({usage.input_tokens} input, "
                     f"{usage.cache_creation_input_tokens} cache-write, "
                     f"{usage.cache_read_input_tokens} cache-read, {usage.output_tokens} "
                     f"output tokens; {usage.attempts} request(s))")
    if verdict.coverage is not None:
        lines.append(f"  coverage: {verdict.coverage.describe()}")
    if verdict.summary:
        lines.append(f"  summary: {verdict.summary}")
    from meridian.evaluators.models import blocks, ordered_issues

    issues = ordered_issues(verdict.issues)
    if issues:
        lines.append("  issues, highest severity first:")
        lines += [f"    {issue_line(i)}" for i in issues]
    if checks:
        lines.append("  checks:")
        for result in checks:
            lines.append(f"    {check_line(result)}")
            if not result.passed:
                tail = [ln for ln in result.output.splitlines() if ln.strip()][-5:]
                lines += [f"          {ln}" for ln in tail]
    lines.append(f"  verdict: {branch}:{verdict_path}")
    if not verdict.passed:
        high = sum(1 for i in issues if blocks(i, block_pre_existing=verdict.block_pre_existing))
        reason = (f"overall {verdict.overall} is below {verdict.threshold}"
                  if verdict.overall < verdict.threshold else f"overall {verdict.overall} is enough")
        if high:
            reason += f"; {high} high-severity issue(s) block a pass whatever the score"
        lines.append(f"  why it failed: {reason}")
        lines.append(f"  next: fix the issues above, then: meridian gate submit {gate}")
    elif approval_needed:
        lines.append(f"  next: a human approves it from a terminal: meridian gate approve {gate}")
    return lines


def _event_text(record: Record) -> str:
    data = record.data
    kind = record.kind
    if kind == ev.STARTED or kind == ev.REOPENED:
        parts = []
        if kind == ev.REOPENED:
            parts.append(f"reason: {data.get('reason')}")
        if data.get("estimate_hours") is not None:
            from meridian.durations import human_hours

            parts.append(f"estimate {human_hours(data['estimate_hours'])}")
        if data.get("base_commit"):
            parts.append(f"base {str(data['base_commit'])[:10]}")
        return ", ".join(parts)
    if kind == ev.SUBMITTED:
        score = data.get("self_score")
        return (f"self-score {score:g}, " if score is not None else "") + \
            f"artifacts {str(data.get('subject'))[:10]}"
    if kind in (ev.PASSED, ev.FAILED):
        counts = data.get("issues") or {}
        issues = ", ".join(f"{n} {sev}" for sev, n in counts.items())
        scope = f", scope: {data['scope']}" if data.get("scope") else ""
        text = (f"overall {data.get('overall')} vs {data.get('threshold')} "
                f"({data.get('evaluator')}{scope})" + (f"; issues: {issues}" if issues else ""))
        if data.get("pre_existing"):
            text += f" ({data['pre_existing']} pre-existing)"
        if data.get("suppressed"):
            text += f"; {data['suppressed']} allowed by inline exceptions"
            if data.get("suppressed_added"):
                text += f" ({data['suppressed_added']} written during the gate)"
        if isinstance(data.get("identity"), dict):
            text += f"; {identity_text(data['identity'])}"
        coverage = data.get("coverage")
        if isinstance(coverage, dict) and coverage.get("changed_lines_total") is not None:
            text += (f"; saw {coverage.get('changed_lines_seen')}/"
                     f"{coverage.get('changed_lines_total')} changed lines")
        return text
    if kind == INCONSISTENT:
        return f"{FORGED_TEXT}, not counted: {data.get('reason')}"
    if kind == ev.EVALUATOR_UNAVAILABLE:
        return f"{data.get('evaluator')}: {data.get('reason')} (no verdict)"
    if kind == ev.APPROVED:
        return f"by {data.get('approver')}"
    if kind == ev.BLOCKED:
        files = data.get("files")
        # a hand-written block may carry anything there: shown, never a crash
        names = [str(f) for f in files[:5]] if isinstance(files, list) else []
        where = f" ({', '.join(names)})" if names else ""
        return f"by {data.get('source')}: {data.get('reason')}{where}"
    return ""


def story_lines(gate: str, status: GateStatus, entries: list[tuple[Record, dict[str, Any] | None]],
                branch: str) -> list[str]:
    lines = [f"{gate}: {state_label(status.state)} ({status.detail})"]
    if not entries:
        lines.append("  no events yet")
        return lines
    for record, verdict in entries:
        label = record.kind.removeprefix("gate.")
        lines.append(f"  {record.ts}  {label:<22} {_event_text(record)}")
        if verdict is None:
            continue
        from meridian.evaluators.models import Issue, Verdict, ordered_issues

        issues = ordered_issues(Issue.model_validate(i) for i in verdict.get("issues", []))
        for issue in issues:
            lines.append(f"      {issue_line(issue)}")
        try:
            lines += judged_lines(Verdict.model_validate(verdict), indent="      ")
        except ValueError:
            pass  # a document this version cannot read whole: its issues were shown
        path = record.data.get("verdict")
        if path:
            lines.append(f"      verdict: {branch}:{path}")
    last_bad = next((r for r, _ in reversed(entries)
                     if r.kind in (ev.FAILED, ev.BLOCKED, ev.EVALUATOR_UNAVAILABLE)), None)
    if last_bad is not None:
        lines.append(f"last setback: {last_bad.kind} at {last_bad.ts}: {_event_text(last_bad)}")
    return lines
