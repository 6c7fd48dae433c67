"""The health report as rich tables (``meridian health``)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from meridian.console import make_console
from meridian.health.formatting import NONE, dollars, duration, number, percent
from meridian.health.models import Distribution, HealthReport

MAX_GATE_ROWS = 25
MAX_TREND_POINTS = 40
SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int = MAX_TREND_POINTS) -> str:
    """A one-line chart of the values (the last ``width`` of them)."""
    tail = list(values)[-width:]
    if not tail:
        return ""
    low, high = min(tail), max(tail)
    span = high - low
    return "".join(SPARKS[0 if span == 0 else round((v - low) / span * (len(SPARKS) - 1))]
                   for v in tail)


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", box=None, pad_edge=False,
                  title_style="bold")
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def render(report: HealthReport, console: Console | None = None) -> None:
    out = console or make_console()
    commit = (report.commit or "")[:12]
    out.print(f"[bold]Meridian health[/] {escape(report.branch)} at {commit or 'no commit'}, "
              f"{report.events} events")
    for note in report.notes:
        out.print(f"[yellow]note:[/] {escape(note)}")
    for section in (_gates, _calibration, _evaluator, _cost, _completion, _memory, _rules,
                    _evaluation, _harness):
        out.print()
        section(report, out)


def _gates(report: HealthReport, out: Console) -> None:
    gates = report.gates
    # Block sources come from the ledger as written (by hooks, or by hand): never markup.
    states = ", ".join(f"{escape(state)} {count}" for state, count in gates.by_state.items()) or "none"
    blocks = ", ".join(f"{escape(src)} {n}" for src, n in gates.blocks_by_source.items()) or "none"
    summary = _table("Gates", "figure", "value")
    summary.add_row("gates by state", f"{gates.total}: {states}")
    summary.add_row("first-try pass rate",
                    f"{percent(gates.first_try_pass_rate)} ({gates.first_try_passed} of "
                    f"{gates.with_verdict} gates with a verdict)")
    summary.add_row("evaluator fail rate",
                    f"{percent(gates.evaluator_fail_rate)} ({gates.failed_verdicts} of "
                    f"{gates.verdicts} verdicts)")
    summary.add_row("evaluator unavailable", str(gates.evaluator_unavailable))
    if gates.objective_only_verdicts:
        summary.add_row("offline verdicts",
                        f"{gates.objective_only_verdicts} of {gates.verdicts} (scope: objective "
                        "checks only; acceptance criteria not judged)")
    summary.add_row("inline exceptions",
                    f"{gates.suppressed} ({gates.suppressed_added} written during their gate); "
                    f"{gates.pre_existing_findings} pre-existing finding(s)")
    summary.add_row("blocks by source", f"{gates.blocks}: {blocks}")
    summary.add_row("mean time in progress",
                    f"{duration(gates.mean_hours_in_progress)} over {gates.intervals} pass(es)")
    out.print(summary)
    if not gates.gates:
        return
    # Gates still in flight first: they are what a reader acts on.
    ordered = sorted(gates.gates, key=lambda r: (r.state == "passed", r.gate))
    table = _table("", "gate", "state", "submissions", "verdicts", "failed", "first try",
                   "blocks", "in progress", "cost")
    for row in ordered[:MAX_GATE_ROWS]:
        first = NONE if row.first_verdict_passed is None else (
            "passed" if row.first_verdict_passed else "failed")
        table.add_row(escape(row.gate), row.state, str(row.submissions), str(row.verdicts),
                      str(row.failed_verdicts), first, str(row.blocks),
                      duration(row.hours_in_progress), dollars(row.cost_usd, row.cost_unknown))
    out.print(table)
    if len(ordered) > MAX_GATE_ROWS:
        out.print(f"... and {len(ordered) - MAX_GATE_ROWS} more gates (meridian health --json)")


def _calibration(report: HealthReport, out: Console) -> None:
    cal = report.calibration
    if not cal.corrections:
        out.print("[bold]Calibration[/]: no corrections yet (written when a gate passes)")
        return
    out.print(f"[bold]Calibration[/]: multiplier {number(cal.multiplier)} (median ratio of the "
              f"last {cal.sample} of window {cal.window}), median over all "
              f"{number(cal.median_ratio)}")
    trend = [p.multiplier for p in cal.corrections if p.multiplier is not None]
    if trend:
        out.print(f"multiplier over time {sparkline(trend)} ({number(trend[0])} -> {number(trend[-1])})")
    table = _table("", "when (UTC)", "gate", "predicted", "actual (active)", "ratio",
                   "multiplier")
    for point in cal.corrections[-10:]:
        table.add_row(point.ts[:16].replace("T", " "), escape(point.gate),
                      duration(point.predicted_hours), duration(point.actual_hours),
                      number(point.ratio), number(point.multiplier))
    out.print(table)


def _histogram(dist: Distribution) -> str:
    return sparkline([float(n) for n in dist.histogram]) if dist.count else ""


def _evaluator(report: HealthReport, out: Console) -> None:
    ev = report.evaluator
    table = _table(f"Evaluator scores ({ev.verdicts} verdicts, {ev.verdicts_read} documents read)",
                   "dimension", "n", "min", "q1", "median", "q3", "max", "mean", "0..10")
    rows = list(ev.dimensions.items()) + [("overall", ev.overall)]
    for name, dist in rows:
        table.add_row(escape(name), str(dist.count), number(dist.min), number(dist.q1),
                      number(dist.median), number(dist.q3), number(dist.max), number(dist.mean),
                      _histogram(dist))
    out.print(table)
    if not ev.gaps:
        out.print("self-assessment gap: no submission carried a self-score yet")
        return
    out.print(f"self-assessment gap (self-score - overall) over {len(ev.gaps)} submissions: "
              f"mean {number(ev.mean_gap)}, earlier half {number(ev.early_mean_gap)}, "
              f"recent half {number(ev.recent_mean_gap)}")
    out.print(f"rolling mean of {ev.gap_window} {sparkline([p.rolling_mean for p in ev.gaps])}")


def _cost(report: HealthReport, out: Console) -> None:
    cost = report.cost
    table = _table(f"Cost: {dollars(cost.total.cost_usd, cost.total.cost_unknown)}, {cost.total.tokens:,} tokens",
                   "source", "input tokens", "output tokens", "tokens", "dollars")
    for name, line in cost.by_source.items():
        table.add_row(name, f"{line.input_tokens:,}", f"{line.output_tokens:,}",
                      f"{line.tokens:,}", dollars(line.cost_usd, line.cost_unknown))
    out.print(table)
    if cost.by_week:
        weeks = _table("", "week", "evaluator", "llm_judge", "eval agents", "tokens", "total")
        for week in cost.by_week[-8:]:
            weeks.add_row(week.week, dollars(week.evaluator_usd), dollars(week.llm_judge_usd),
                          dollars(week.eval_agents_usd), f"{week.tokens:,}",
                          dollars(week.cost_usd, week.cost_unknown))
        out.print(weeks)
    if any(gate.cost_usd or gate.cost_unknown for gate in cost.by_gate):  # an offline evaluator costs nothing
        gates = _table("", "gate (costliest)", "verdicts", "tokens", "dollars")
        for gate in cost.by_gate[:10]:
            gates.add_row(escape(gate.gate), str(gate.verdicts), f"{gate.tokens:,}",
                          dollars(gate.cost_usd, gate.cost_unknown))
        out.print(gates)


def _completion(report: HealthReport, out: Console) -> None:
    done = report.completion
    if done is None:
        out.print("[bold]Completion[/]: not computed yet (meridian features --junit REPORT.xml)")
        return
    out.print(f"[bold]Completion[/]: working {done.working}/{done.total} ({done.working_pct:.1f}%), "
              f"hardened {done.hardened}/{done.total} ({done.hardened_pct:.1f}%) "
              f"from {escape(done.junit)} at {done.computed_at[:16].replace('T', ' ')}")


def _memory(report: HealthReport, out: Console) -> None:
    mem = report.memory
    kinds = ", ".join(f"{kind} {n}" for kind, n in mem.records.items())
    style = "red" if mem.invalid else "green"
    out.print(f"[bold]Memory[/]: {kinds}; [{style}]{mem.invalid} invalid[/]; "
              f"{mem.duplicates_prevented} duplicates prevented")
    for problem in mem.problems:
        out.print(f"  [red]{escape(problem)}[/]")


def _rules(report: HealthReport, out: Console) -> None:
    rules = report.rules
    out.print(f"[bold]Rules[/]: {rules.active} active of {rules.total}, {len(rules.due)} due for review")
    for rule in rules.due:
        out.print(f"  {escape(rule.id)} (review {rule.review_date or NONE}): {escape(rule.rule)}")


def _evaluation(report: HealthReport, out: Console) -> None:
    evaluation = report.evaluation
    if not evaluation.suites:
        out.print("[bold]Evaluation[/]: no runs yet (meridian eval run SUITE --agent NAME)")
        return
    table = _table(f"Evaluation ({evaluation.runs} runs; latest run per suite against its "
                   "pinned baseline)", "suite", "latest run", "agent", "passed", "baseline",
                   "baseline passed", "regressions", "fixes")
    for suite in evaluation.suites:
        regressions = NONE if suite.regressions is None else str(suite.regressions)
        style = "red" if suite.regressions else ""
        baseline = NONE if suite.baseline is None else (
            f"{escape(suite.baseline)} ({escape((suite.baseline_run or '')[:12])})")
        table.add_row(
            escape(suite.suite), escape(suite.latest_run[:12]), escape(suite.agent),
            f"{suite.passed}/{suite.passed + suite.failed} {percent(suite.pass_rate)}", baseline,
            NONE if suite.baseline_passed is None else
            f"{suite.baseline_passed} {percent(suite.baseline_pass_rate)}",
            f"[{style}]{regressions}[/]" if style else regressions,
            NONE if suite.fixes is None else str(suite.fixes),
        )
    out.print(table)


def _harness(report: HealthReport, out: Console) -> None:
    changes = report.harness
    weakening = sum(1 for c in changes if c.weakening)
    out.print(f"[bold]Harness changes[/] (latest {len(changes)}, newest first"
              + (f", [red]{weakening} weaken enforcement[/]" if weakening else "") + ")"
              if changes else "[bold]Harness changes[/]: none recorded")
    for change in changes:
        marks = (["[red]WEAKENS enforcement[/]"] if change.weakening else []) \
            + (["during an agent session"] if change.agent_session else [])
        where = f"commit {change.commit[:10]}" if change.commit else "staged"
        # Change texts quote the harness files as written: never markup.
        out.print(f"  {change.ts[:19]}  {where}  {escape('; '.join(change.changes))}"
                  + (f"  ({', '.join(marks)})" if marks else ""))
