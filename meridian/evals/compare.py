"""Compare two runs: headline metrics side by side, then what changed task by task.

A is the candidate (the run under review), B the reference (a baseline or an earlier
run); deltas are A - B. The gate is deliberately narrow:

- a REGRESSION is a task that passed in B and fails in A. With one trial per task
  that is the whole rule. With epochs, a drop in a task's pass rate is a regression
  only on evidence: a one-sided Fisher exact test (A passes less often than B) at
  p < ALPHA. A drop without that evidence is labelled FLAKY, and so is a rise.
- FIXED is the mirror image (fail in B, pass in A; with epochs, Fisher p < ALPHA).
- infra errors (the agent raised, timed out, a grader could not judge) and tasks
  present in only one run are listed, and are never regressions: a gate that fires
  on a rate limit teaches a team to bypass it.

The suite-level paired test is McNemar's exact test over tasks present in both runs
(a task counts as passing when most of its graded trials pass). Runs of different
suite hashes are refused unless forced: their tasks may share ids but not meaning.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from meridian.errors import MeridianError
from meridian.evals import stats
from meridian.evals.run import Run, TaskEntry

ALPHA = 0.05

Label = Literal["regression", "fixed", "flaky"]


@dataclass(frozen=True)
class Metrics:
    tasks: int
    trials: int
    infra_errors: int
    success: float | None  # passed / graded trials
    median_steps: float | None
    cost_per_task: float | None
    p95_latency_s: float | None  # None when the run carries no timings
    tool_error_rate: float | None

    @classmethod
    def of(cls, run: Run) -> Metrics:
        """Headline figures over the run's graded trials (infra errors are not measured)."""
        summary = run.summary
        graded = [t for entry in run.results for t in entry.graded]
        costs = [t.trajectory.cost_usd for t in graded if t.trajectory is not None]
        return cls(
            tasks=summary.tasks,
            trials=summary.trials,
            infra_errors=summary.infra_errors,
            success=summary.pass_rate,
            median_steps=summary.median_steps,
            cost_per_task=round(sum(costs) / len(costs), 10) if costs else None,
            p95_latency_s=summary.p95_latency_s if run.timings else None,
            tool_error_rate=summary.tool_error_rate,
        )


@dataclass(frozen=True)
class TaskChange:
    task_id: str
    label: Label
    a_passed: int
    a_graded: int
    b_passed: int
    b_graded: int
    p_value: float | None  # Fisher exact (one-sided, in the direction of the change)

    def outcome(self, side: str, epochs: bool) -> str:
        passed, graded = (self.a_passed, self.a_graded) if side == "a" else (self.b_passed, self.b_graded)
        if epochs:
            return f"{passed}/{graded}"
        return "pass" if passed == graded else "fail"


@dataclass(frozen=True)
class InfraNote:
    task_id: str
    run: str  # "A" or "B"
    count: int
    error: str


@dataclass(frozen=True)
class Missing:
    task_id: str
    only_in: str  # "A" or "B"


@dataclass(frozen=True)
class McNemar:
    regressed: int
    fixed: int
    p_value: float


@dataclass
class Comparison:
    a_ref: str
    b_ref: str
    a_agent: str
    b_agent: str
    suite: str
    a_suite_hash: str
    b_suite_hash: str
    epochs: bool
    a: Metrics
    b: Metrics
    regressions: list[TaskChange] = field(default_factory=list)
    fixed: list[TaskChange] = field(default_factory=list)
    flaky: list[TaskChange] = field(default_factory=list)
    infra: list[InfraNote] = field(default_factory=list)
    missing: list[Missing] = field(default_factory=list)
    mcnemar: McNemar = field(default_factory=lambda: McNemar(0, 0, 1.0))
    interrupted: list[str] = field(default_factory=list)  # "A" / "B"

    @property
    def same_suite(self) -> bool:
        return self.a_suite_hash == self.b_suite_hash

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["same_suite"] = self.same_suite
        return data


def compare(a: Run, b: Run, *, a_ref: str | None = None, b_ref: str | None = None,
            force: bool = False) -> Comparison:
    """Compare candidate ``a`` with reference ``b`` (refs label them in the output)."""
    a_name = a_ref or a.run_id or "A"
    b_name = b_ref or b.run_id or "B"
    if a.suite.hash != b.suite.hash and not force:
        raise MeridianError(
            f"runs {a_name} and {b_name} are of different suites ({a.suite.name} "
            f"{a.suite.hash[:12]} vs {b.suite.name} {b.suite.hash[:12]}); their tasks may share "
            "ids but not meaning (pass --force to compare anyway)"
        )
    epochs = a.settings.epochs > 1 or b.settings.epochs > 1
    result = Comparison(
        a_ref=a_name, b_ref=b_name,
        a_agent=f"{a.agent.name}@{a.agent.version}", b_agent=f"{b.agent.name}@{b.agent.version}",
        suite=a.suite.name, a_suite_hash=a.suite.hash, b_suite_hash=b.suite.hash,
        epochs=epochs, a=Metrics.of(a), b=Metrics.of(b),
        interrupted=[side for side, run in (("A", a), ("B", b)) if run.interrupted],
    )
    b_entries = {entry.task_id: entry for entry in b.results}
    a_ids = {entry.task_id for entry in a.results}
    mcnemar_regressed = mcnemar_fixed = 0
    for entry in a.results:
        other = b_entries.get(entry.task_id)
        _note_infra(result, entry, "A")
        if other is None:
            result.missing.append(Missing(entry.task_id, only_in="A"))
            continue
        _note_infra(result, other, "B")
        if not entry.graded or not other.graded:
            continue
        a_majority = entry.passes * 2 > len(entry.graded)
        b_majority = other.passes * 2 > len(other.graded)
        mcnemar_regressed += b_majority and not a_majority
        mcnemar_fixed += a_majority and not b_majority
        change = _classify(entry, other, epochs)
        if change is not None:
            {"regression": result.regressions, "fixed": result.fixed,
             "flaky": result.flaky}[change.label].append(change)
    for entry in b.results:
        if entry.task_id not in a_ids:
            _note_infra(result, entry, "B")
            result.missing.append(Missing(entry.task_id, only_in="B"))
    result.mcnemar = McNemar(mcnemar_regressed, mcnemar_fixed,
                             stats.mcnemar_exact(mcnemar_regressed, mcnemar_fixed))
    return result


def _note_infra(result: Comparison, entry: TaskEntry, side: str) -> None:
    errors = [t.error or "infra error" for t in entry.trials if t.status == "infra_error"]
    if errors:
        result.infra.append(InfraNote(entry.task_id, side, len(errors), errors[0]))


def _classify(a: TaskEntry, b: TaskEntry, epochs: bool) -> TaskChange | None:
    a_pass, a_n = a.passes, len(a.graded)
    b_pass, b_n = b.passes, len(b.graded)
    a_rate, b_rate = a_pass / a_n, b_pass / b_n
    if a_rate == b_rate:
        return None
    if not epochs:
        label: Label = "regression" if a_rate < b_rate else "fixed"
        return TaskChange(a.task_id, label, a_pass, a_n, b_pass, b_n, None)
    if a_rate < b_rate:
        p = stats.fisher_exact_less(a_pass, a_n - a_pass, b_pass, b_n - b_pass)
        label = "regression" if p < ALPHA else "flaky"
    else:
        p = stats.fisher_exact_greater(a_pass, a_n - a_pass, b_pass, b_n - b_pass)
        label = "fixed" if p < ALPHA else "flaky"
    return TaskChange(a.task_id, label, a_pass, a_n, b_pass, b_n, round(p, 6))


# --- rendering ----------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _points(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None else f"{(a - b) * 100:+.1f}"


def _relative(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "n/a"
    if b == 0:
        return "0%" if a == 0 else "n/a"
    return f"{(a - b) / b * 100:+.0f}%"


def _seconds(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.1f}s" if value >= 0.1 else f"{value * 1000:.1f}ms"


def _num(value: float | None, fmt: str) -> str:
    return "n/a" if value is None else format(value, fmt)


def metric_rows(c: Comparison) -> list[tuple[str, str, str, str]]:
    a, b = c.a, c.b
    steps_delta = ("n/a" if a.median_steps is None or b.median_steps is None
                   else f"{a.median_steps - b.median_steps:+.1f}")
    return [
        ("task success", _pct(a.success), _pct(b.success), _points(a.success, b.success)),
        ("steps (median)", _num(a.median_steps, ".1f"), _num(b.median_steps, ".1f"), steps_delta),
        ("cost / task", "n/a" if a.cost_per_task is None else f"${a.cost_per_task:.4f}",
         "n/a" if b.cost_per_task is None else f"${b.cost_per_task:.4f}",
         _relative(a.cost_per_task, b.cost_per_task)),
        ("p95 latency", _seconds(a.p95_latency_s), _seconds(b.p95_latency_s),
         _relative(a.p95_latency_s, b.p95_latency_s)),
        ("tool-error rate", _pct(a.tool_error_rate), _pct(b.tool_error_rate),
         _points(a.tool_error_rate, b.tool_error_rate)),
        ("infra errors", str(a.infra_errors), str(b.infra_errors),
         f"{a.infra_errors - b.infra_errors:+d}"),
    ]


def _change_line(change: TaskChange, epochs: bool) -> str:
    text = f"{change.outcome('b', epochs)} -> {change.outcome('a', epochs)}"
    if change.p_value is not None:
        text += f"  (Fisher p={change.p_value:.3f})"
    return text


def _sections(c: Comparison) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(title, note, [(task, detail)]) in display order."""
    sections = [
        ("REGRESSIONS", "", [(ch.task_id, _change_line(ch, c.epochs)) for ch in c.regressions]),
        ("FIXED", "", [(ch.task_id, _change_line(ch, c.epochs)) for ch in c.fixed]),
    ]
    if c.epochs:
        sections.append(("FLAKY", "changed without evidence",
                         [(ch.task_id, _change_line(ch, c.epochs)) for ch in c.flaky]))
    sections.append(("INFRA ERRORS", "never regressions",
                     [(n.task_id, f"{n.run}: {n.count}x {n.error}") for n in c.infra]))
    sections.append(("MISSING", "never regressions",
                     [(m.task_id, f"only in {m.only_in}") for m in c.missing]))
    return sections


def _mcnemar_line(c: Comparison) -> str:
    m = c.mcnemar
    return (f"McNemar exact (paired by task): {m.regressed} regressed, {m.fixed} fixed, "
            f"p = {m.p_value:.4f}")


def render_text(c: Comparison) -> str:
    lines = [f"SUITE: {c.suite} ({c.a_suite_hash[:12]})"]
    if not c.same_suite:
        lines.append(f"WARNING: suites differ (B is {c.b_suite_hash[:12]}); compared by task id")
    lines.append(f"A: {c.a_ref}  {c.a_agent}")
    lines.append(f"B: {c.b_ref}  {c.b_agent}")
    for side in c.interrupted:
        lines.append(f"WARNING: run {side} was interrupted (partial)")
    lines.append("")
    lines.append(f"{'':<16}{'A':>10}{'B':>10}{'delta':>9}")
    for name, a, b, delta in metric_rows(c):
        lines.append(f"{name:<16}{a:>10}{b:>10}{delta:>9}")
    for title, note, items in _sections(c):
        lines.append("")
        lines.append(f"{title} ({len(items)})" + (f"  {note}" if note else ""))
        if not items:
            lines.append("  none")
        width = max((len(task) for task, _ in items), default=0)
        lines.extend(f"  {task:<{width}}  {detail}" for task, detail in items)
    lines.append("")
    lines.append(_mcnemar_line(c))
    return "\n".join(lines) + "\n"


def render_markdown(c: Comparison) -> str:
    verdict = (f"**{len(c.regressions)} regression(s)**" if c.regressions
               else "No regressions")
    lines = [
        f"### Meridian eval: {c.suite}: {verdict}",
        "",
        f"A: `{c.a_ref}` {c.a_agent} &nbsp; B: `{c.b_ref}` {c.b_agent}",
    ]
    if not c.same_suite:
        lines.append("")
        lines.append(f"> Suites differ ({c.a_suite_hash[:12]} vs {c.b_suite_hash[:12]}); "
                     "compared by task id.")
    lines += ["", "| metric | A | B | delta |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {name} | {a} | {b} | {delta} |" for name, a, b, delta in metric_rows(c)]
    for title, note, items in _sections(c):
        lines.append("")
        lines.append(f"**{title}: {len(items)}**" + (f" ({note})" if note else ""))
        if items:
            lines.append("")
            lines.extend(f"- `{task}`: {detail}" for task, detail in items)
    lines += ["", _mcnemar_line(c)]
    return "\n".join(lines) + "\n"


def render_json(c: Comparison) -> str:
    return json.dumps(c.to_json(), indent=2, sort_keys=True) + "\n"


def gate_failed(c: Comparison) -> bool:
    """What ``--fail-on-regression`` acts on: any regression, and nothing else."""
    return bool(c.regressions)
