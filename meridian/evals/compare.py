"""Compare two runs: headline metrics side by side, then what changed task by task.

A is the candidate (the run under review), B the reference (a baseline or an earlier
run); deltas are A - B.

Tasks are matched by id AND definition hash (``Task.definition_hash``: input,
target, graders, budgets...). So a suite can evolve without breaking the gate:

- a task in both runs with the same definition is COMPARED;
- a task whose definition differs is listed ``changed (not compared)``;
- a task only the candidate's suite has is ``added``; one only the baseline's suite
  has is ``removed``; one the candidate ran but the baseline run skipped is ``not in
  baseline run``. These three and the changed tasks are what the baseline no longer
  covers (``Comparison.uncovered``): pin a new baseline to cover them;
- a task the candidate's suite still has (unchanged) and the baseline ran, but the
  candidate did not run, is MISSING from the candidate: a gate failure (a ``--limit``
  or interrupted run cannot pass for a full one).

The suite hash is informational. Runs of differently NAMED suites are refused
unless forced.

Classification of a compared task (the documented rule, for any epoch counts; an
infra-error trial is no verdict and is left out of both counts):

1. every baseline trial passed and every candidate trial failed: REGRESSION,
   whatever the p-value (3/3 -> 0/3 has Fisher p = 0.05, 1/1 -> 0/1 p = 0.5: at
   small epoch counts no test can reach significance, and a task that went from
   always passing to always failing is the regression a gate exists for). The
   mirror image (all fail -> all pass) is FIXED;
2. otherwise, pass rates that differ are judged by a one-sided Fisher exact test
   (candidate passes less / more often): REGRESSION / FIXED at p < ALPHA, FLAKY
   when not significant;
3. equal pass rates: no change.

So with mixed epoch counts (a 5-epoch baseline, a 1-epoch candidate), 5/5 -> 0/1 is a
regression by rule 1 and 4/5 -> 0/1 is flaky by rule 2.

The suite-level paired test is McNemar's exact test over compared tasks (a task
counts as passing when most of its graded trials pass).

The gate (``gate_failures``) fails on any regression, on tasks missing from the
candidate, on an interrupted or partial (sharded) candidate, on more infra errors in
the candidate than ``max_infra_errors`` (default 0), and on a pass rate below
``min_pass_rate`` when one is set. Infra errors are never regressions.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from meridian.errors import MeridianError
from meridian.evals import stats
from meridian.evals.run import Run, TaskEntry
from meridian.evals.runview import EntryView, RunView

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
    usage_unreported: int = 0  # graded trials whose agent reported no tokens and no cost

    @classmethod
    def of(cls, run: Run | RunView) -> Metrics:
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
            usage_unreported=summary.usage_unreported,
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
    why: str = ""  # missing | added | removed | not_in_baseline_run | changed


@dataclass(frozen=True)
class GatePolicy:
    """What ``--fail-on-regression`` fails on besides regressions."""

    max_infra_errors: int = 0
    min_pass_rate: float | None = None
    # Baseline tasks whose definition changed (or that left the suite) are not compared;
    # the gate fails on them unless a human accepts them (--accept-changed-tasks).
    accept_changed_tasks: bool = False


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
    missing: list[Missing] = field(default_factory=list)  # in the candidate's suite, not run
    changed: list[str] = field(default_factory=list)  # definition differs: not compared
    added: list[str] = field(default_factory=list)  # only in the candidate's suite
    removed: list[str] = field(default_factory=list)  # only in the baseline's suite
    not_in_baseline: list[str] = field(default_factory=list)  # the baseline run skipped it
    mcnemar: McNemar = field(default_factory=lambda: McNemar(0, 0, 1.0))
    interrupted: list[str] = field(default_factory=list)  # "A" / "B"
    a_partial: str | None = None  # why the candidate is partial (a shard), if it is
    a_infra_trials: int = 0
    a_pass_rate: float | None = None
    compared: int = 0  # tasks of the candidate compared with the baseline
    b_tasks: int = 0  # tasks the baseline run ran
    # tasks the baseline ran that are not compared: definition changed, or removed
    baseline_uncompared: list[str] = field(default_factory=list)

    @property
    def not_compared(self) -> int:
        """Tasks of either suite left out of the comparison (changed, added, removed,
        not in the baseline run): a regression renamed or edited away lands here."""
        return len({*self.uncovered, *self.removed})

    @property
    def same_suite(self) -> bool:
        return self.a_suite_hash == self.b_suite_hash

    @property
    def uncovered(self) -> list[str]:
        """Candidate tasks the baseline does not cover (changed, added, not in its run)."""
        return sorted({*self.changed, *self.added, *self.not_in_baseline})

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["same_suite"] = self.same_suite
        data["uncovered"] = self.uncovered
        return data


def _manifest(run: Run | RunView) -> dict[str, str]:
    """task id -> definition hash of the run's whole suite (older files: its results)."""
    if run.suite.tasks:
        return dict(run.suite.tasks)
    return {entry.task_id: entry.task.definition_hash() for entry in run.results}


def compare(a: Run | RunView, b: Run | RunView, *, a_ref: str | None = None,
            b_ref: str | None = None, force: bool = False) -> Comparison:
    """Compare candidate ``a`` with reference ``b`` (refs label them in the output).

    Either may be a ``RunView`` (``store.load_for_compare``): the same answers from
    the fields compare reads."""
    from meridian.evals import nogc

    with nogc.paused():
        return _compare(a, b, a_ref=a_ref, b_ref=b_ref, force=force)


def _compare(a: Run | RunView, b: Run | RunView, *, a_ref: str | None, b_ref: str | None,
             force: bool) -> Comparison:
    a_name = a_ref or a.run_id or "A"
    b_name = b_ref or b.run_id or "B"
    if a.suite.name != b.suite.name and not force:
        raise MeridianError(
            f"runs {a_name} and {b_name} are of different suites ({a.suite.name} vs "
            f"{b.suite.name}); their tasks may share ids but not meaning "
            "(pass --force to compare anyway)"
        )
    epochs = a.settings.epochs > 1 or b.settings.epochs > 1
    result = Comparison(
        a_ref=a_name, b_ref=b_name,
        a_agent=f"{a.agent.name}@{a.agent.version}", b_agent=f"{b.agent.name}@{b.agent.version}",
        suite=a.suite.name, a_suite_hash=a.suite.hash, b_suite_hash=b.suite.hash,
        epochs=epochs, a=Metrics.of(a), b=Metrics.of(b),
        interrupted=[side for side, run in (("A", a), ("B", b)) if run.interrupted],
        a_partial=(f"shard {a.settings.shard.label()}" if a.settings.shard else None),
        a_infra_trials=a.summary.infra_errors, a_pass_rate=a.summary.pass_rate,
        b_tasks=len(b.results),
    )
    a_suite, b_suite = _manifest(a), _manifest(b)
    b_entries = {entry.task_id: entry for entry in b.results}
    a_ids = {entry.task_id for entry in a.results}
    mcnemar_regressed = mcnemar_fixed = 0
    for entry in a.results:
        other = b_entries.get(entry.task_id)
        _note_infra(result, entry, "A")
        if other is None:
            if entry.task_id not in b_suite:
                result.added.append(entry.task_id)
            elif b_suite[entry.task_id] != entry.task.definition_hash():
                result.changed.append(entry.task_id)
            else:
                result.not_in_baseline.append(entry.task_id)
            continue
        _note_infra(result, other, "B")
        if not _same_definition(entry, other):
            result.changed.append(entry.task_id)
            result.baseline_uncompared.append(entry.task_id)
            continue
        result.compared += 1
        if not entry.graded or not other.graded:
            continue
        a_majority = entry.passes * 2 > len(entry.graded)
        b_majority = other.passes * 2 > len(other.graded)
        mcnemar_regressed += b_majority and not a_majority
        mcnemar_fixed += a_majority and not b_majority
        change = classify(entry.passes, len(entry.graded), other.passes, len(other.graded))
        if change is not None:
            label, p = change
            item = TaskChange(entry.task_id, label, entry.passes, len(entry.graded), other.passes,
                              len(other.graded), p)
            {"regression": result.regressions, "fixed": result.fixed,
             "flaky": result.flaky}[label].append(item)
    for entry in b.results:
        if entry.task_id in a_ids:
            continue
        if entry.task_id not in a_suite:
            result.removed.append(entry.task_id)
            result.baseline_uncompared.append(entry.task_id)
        elif a_suite[entry.task_id] != entry.task.definition_hash():
            result.changed.append(entry.task_id)
            result.baseline_uncompared.append(entry.task_id)
        else:
            _note_infra(result, entry, "B")
            result.missing.append(Missing(entry.task_id, only_in="B", why="missing"))
    result.mcnemar = McNemar(mcnemar_regressed, mcnemar_fixed,
                             stats.mcnemar_exact(mcnemar_regressed, mcnemar_fixed))
    return result


def _same_definition(a: TaskEntry | EntryView, b: TaskEntry | EntryView) -> bool:
    """Whether the two tasks have the same definition hash."""
    if isinstance(a, EntryView) and isinstance(b, EntryView):
        return a.task.same_definition(b.task)
    return a.task.definition_hash() == b.task.definition_hash()


def _note_infra(result: Comparison, entry: TaskEntry | EntryView, side: str) -> None:
    errors = [t.error or "infra error" for t in entry.trials if t.status == "infra_error"]
    if errors:
        result.infra.append(InfraNote(entry.task_id, side, len(errors), errors[0]))


def classify(a_pass: int, a_n: int, b_pass: int, b_n: int) -> tuple[Label, float | None] | None:
    """(label, Fisher p or None) for a task with ``a_pass``/``a_n`` graded trials passing
    in the candidate and ``b_pass``/``b_n`` in the baseline; None when unchanged.
    The rule is in the module docstring."""
    if a_n < 1 or b_n < 1:
        return None
    a_rate, b_rate = a_pass / a_n, b_pass / b_n
    if a_rate == b_rate:
        return None
    deterministic = a_n == 1 and b_n == 1
    if a_rate < b_rate:
        p = stats.fisher_exact_less(a_pass, a_n - a_pass, b_pass, b_n - b_pass)
        if b_pass == b_n and a_pass == 0:
            return "regression", None if deterministic else round(p, 6)
        return ("regression" if p < ALPHA else "flaky"), round(p, 6)
    p = stats.fisher_exact_greater(a_pass, a_n - a_pass, b_pass, b_n - b_pass)
    if b_pass == 0 and a_pass == a_n:
        return "fixed", None if deterministic else round(p, 6)
    return ("fixed" if p < ALPHA else "flaky"), round(p, 6)


def gate_failures(c: Comparison, policy: GatePolicy | None = None) -> list[str]:
    """Why ``--fail-on-regression`` fails (empty: the gate passes)."""
    policy = policy or GatePolicy()
    reasons: list[str] = []
    if c.regressions:
        reasons.append(f"{len(c.regressions)} task(s) regressed: "
                       + ", ".join(ch.task_id for ch in c.regressions[:10]))
    if c.missing:
        reasons.append(f"{len(c.missing)} task(s) of the suite missing from the candidate run: "
                       + ", ".join(m.task_id for m in c.missing[:10])
                       + (" ..." if len(c.missing) > 10 else ""))
    if c.b_tasks and c.compared == 0:
        # Nothing was compared: "no regressions" would be a claim about no task at all,
        # so no flag accepts it (pin a baseline of this suite instead).
        reasons.append(f"no task compared: all {c.b_tasks} task(s) of the baseline run changed "
                       "definition or left the suite (pin a new baseline from a run of this "
                       "suite: `meridian baseline pin NAME RUN`)")
    elif c.baseline_uncompared and not policy.accept_changed_tasks:
        ids = sorted(c.baseline_uncompared)
        reasons.append(f"{len(ids)} of the baseline run's {c.b_tasks} task(s) not compared "
                       "(definition changed or removed since B): " + ", ".join(ids[:10])
                       + (" ..." if len(ids) > 10 else "")
                       + "; accept with --accept-changed-tasks, or pin a new baseline")
    if "A" in c.interrupted:
        reasons.append("the candidate run was interrupted (partial)")
    if c.a_partial:
        reasons.append(f"the candidate run is partial ({c.a_partial}; merge the shards first)")
    if c.a_infra_trials > policy.max_infra_errors:
        reasons.append(f"{c.a_infra_trials} infra error(s) in the candidate run "
                       f"(at most {policy.max_infra_errors} allowed: --max-infra-errors)")
    if policy.min_pass_rate is not None and (c.a_pass_rate is None
                                             or c.a_pass_rate < policy.min_pass_rate):
        got = "n/a" if c.a_pass_rate is None else f"{c.a_pass_rate * 100:.1f}%"
        reasons.append(f"pass rate {got} is below --min-pass-rate {policy.min_pass_rate * 100:.1f}%")
    return reasons


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
    """(title, note, [(task, detail)]) in display order; empty optional ones dropped."""
    sections = [
        ("REGRESSIONS", "", [(ch.task_id, _change_line(ch, c.epochs)) for ch in c.regressions]),
        ("FIXED", "", [(ch.task_id, _change_line(ch, c.epochs)) for ch in c.fixed]),
    ]
    if c.epochs:
        sections.append(("FLAKY", "changed without evidence",
                         [(ch.task_id, _change_line(ch, c.epochs)) for ch in c.flaky]))
    sections.append(("INFRA ERRORS", "never regressions",
                     [(n.task_id, f"{n.run}: {n.count}x {n.error}") for n in c.infra]))
    sections.append(("MISSING", "in the suite, not run by the candidate: fails the gate",
                     [(m.task_id, "not run by A") for m in c.missing]))
    optional = [
        ("CHANGED", "definition differs: not compared", [(t, "changed (not compared)") for t in c.changed]),
        ("ADDED", "new in A's suite: not in the baseline", [(t, "only in A") for t in c.added]),
        ("REMOVED", "no longer in A's suite", [(t, "only in B") for t in c.removed]),
        ("NOT IN BASELINE RUN", "B's suite has it, B did not run it",
         [(t, "only run by A") for t in c.not_in_baseline]),
    ]
    sections += [section for section in optional if section[2]]
    return sections


def _mcnemar_line(c: Comparison) -> str:
    m = c.mcnemar
    return (f"McNemar exact (paired by task): {m.regressed} regressed, {m.fixed} fixed, "
            f"p = {m.p_value:.4f}")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _no_newlines(text: str) -> str:
    """Agent text on one line (a message with newlines cannot forge report lines)."""
    return re.sub(r"[\r\n\x0b\x0c\x1b]+", " ", str(text))


def render_text(c: Comparison) -> str:
    lines = [f"SUITE: {c.suite} ({c.a_suite_hash[:12]})"]
    if not c.same_suite:
        lines.append(f"note: suite edited since B ({c.b_suite_hash[:12]}); tasks matched by id "
                     "and definition")
    if c.not_compared:
        lines.append(f"note: {c.compared} task(s) compared; {c.not_compared} not compared "
                     "(changed, added or removed since B)")
    lines.append(f"A: {c.a_ref}  {_one_line(c.a_agent)}")
    lines.append(f"B: {c.b_ref}  {_one_line(c.b_agent)}")
    for side in c.interrupted:
        lines.append(f"WARNING: run {side} was interrupted (partial)")
    for side, metrics in (("A", c.a), ("B", c.b)):
        if metrics.usage_unreported:
            lines.append(f"note: {metrics.usage_unreported} trial(s) of {side} reported no usage "
                         "(their cost is unknown, counted as $0)")
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
        lines.extend(f"  {task:<{width}}  {_no_newlines(detail)}" for task, detail in items)
    lines.append("")
    lines.append(_mcnemar_line(c))
    return "\n".join(lines) + "\n"


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def md_escape(text: str) -> str:
    """``text`` as inert markdown: one line, HTML-escaped, every markdown punctuation
    character backslash-escaped, so agent output (an exception message, a task id
    from a dataset) can neither start a heading nor inject a link, image or tag, and
    an ``@name`` in it mentions nobody (a zero-width space follows the ``@``)."""
    import html

    flat = _one_line(text)
    # Quotes stay quotes (they are inert in text, and an escaped entity's '#' would be
    # backslashed into a visible "&#x27;"); an '@' cannot mention a user or team.
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(flat, quote=False))
    return escaped.replace("@", "@\u200b")


def render_markdown(c: Comparison, policy: GatePolicy | None = None) -> str:
    failures = gate_failures(c, policy)
    verdict = (f"**{len(c.regressions)} regression(s)**" if c.regressions
               else "gate FAILED" if failures else "No regressions")
    if c.not_compared:
        # "No regressions" over 2 compared tasks while 20 were renamed or edited is
        # not the same claim: the headline says how much was compared.
        verdict += (f" among {c.compared} compared task(s); **{c.not_compared} not "
                    "compared** (changed, added or removed)")
    lines = [
        f"### Meridian eval: {md_escape(c.suite)}: {verdict}",
        "",
        (f"A: {md_escape(c.a_ref)} {md_escape(c.a_agent)} &nbsp; "
         f"B: {md_escape(c.b_ref)} {md_escape(c.b_agent)}"),
    ]
    if failures:
        lines += ["", "**Gate failures:**", ""] + [f"- {md_escape(r)}" for r in failures]
    if policy is not None and policy.accept_changed_tasks and c.baseline_uncompared:
        lines += ["", f"**Accepted by --accept-changed-tasks:** {len(c.baseline_uncompared)} "
                      "task(s) of B not compared (definition changed or removed): "
                      + md_escape(", ".join(sorted(c.baseline_uncompared)[:10]))]
    if not c.same_suite:
        lines.append("")
        lines.append(f"> Suite edited since B ({c.a_suite_hash[:12]} vs {c.b_suite_hash[:12]}); "
                     "tasks matched by id and definition.")
    lines += ["", "| metric | A | B | delta |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {name} | {a} | {b} | {delta} |"
              for name, a, b, delta in metric_rows(c)]
    for title, note, items in _sections(c):
        lines.append("")
        lines.append(f"**{title}: {len(items)}**" + (f" ({note})" if note else ""))
        if items:
            lines.append("")
            lines.extend(f"- {md_escape(task)}: {md_escape(detail)}" for task, detail in items)
    lines += ["", _mcnemar_line(c)]
    return "\n".join(lines) + "\n"


def render_json(c: Comparison) -> str:
    return json.dumps(c.to_json(), indent=2, sort_keys=True) + "\n"


def gate_failed(c: Comparison, policy: GatePolicy | None = None) -> bool:
    """Whether ``--fail-on-regression`` fails (see ``gate_failures`` for why)."""
    return bool(gate_failures(c, policy))
