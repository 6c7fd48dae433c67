"""One self-contained HTML file for a run: summary, per-task table, every trajectory.

No scripts, no external stylesheets, fonts or images: the file opens from an email
attachment or a CI artifact store exactly as it was written. Trajectories fold with
``<details>``. Every value from the run is HTML-escaped (agent output is untrusted).
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from meridian.evals.run import Run, TaskEntry
from meridian.evals.types import Step, TaskResult

# Failing tasks first: what a reader opens the report for.
_STATUS_ORDER = {"fail": 0, "flaky": 1, "infra_error": 2, "pass": 3}

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem;color:#1d232b}
h1{font-size:1.4rem;margin:0 0 .25rem}h2{font-size:1.1rem;margin:2rem 0 .5rem}
.meta{color:#5b6672}.grid{display:flex;flex-wrap:wrap;gap:.75rem;margin:1rem 0}
.card{border:1px solid #d8dee4;border-radius:6px;padding:.5rem .9rem;min-width:7rem}
.card b{display:block;font-size:1.2rem}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #e5e9ed;
padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f5f7f9}
.pass{color:#1a7f37;font-weight:600}.fail{color:#cf222e;font-weight:600}
.infra_error,.flaky{color:#9a6700;font-weight:600}
pre{background:#f5f7f9;padding:.5rem;overflow-x:auto;white-space:pre-wrap;margin:.25rem 0}
details{margin:.4rem 0}summary{cursor:pointer}.err{color:#cf222e}
"""


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def _card(label: str, value: str) -> str:
    return f'<div class="card">{escape(label)}<b>{escape(value)}</b></div>'


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _summary(run: Run) -> str:
    s = run.summary
    cards = [
        _card("task success", _pct(s.pass_rate)),
        _card("passed", str(s.passed)),
        _card("failed", str(s.failed)),
        _card("infra errors", str(s.infra_errors)),
        _card("cost", f"${s.cost_usd:.4f}"),
        _card("median steps", "n/a" if s.median_steps is None else f"{s.median_steps:.1f}"),
        _card("tool-error rate", _pct(s.tool_error_rate)),
        _card("p95 latency", "n/a" if s.p95_latency_s is None else f"{s.p95_latency_s:.2f}s"),
    ]
    for k, value in s.pass_at_k.items():
        if int(k) > 1:
            cards.append(_card(f"pass@{k}", _pct(value)))
            cards.append(_card(f"pass^{k}", _pct(s.pass_hat_k.get(k))))
    return f'<div class="grid">{"".join(cards)}</div>'


def _task_row(entry: TaskEntry) -> str:
    status = entry.status
    rate = entry.pass_rate
    trials = entry.trials
    steps = [len(t.trajectory.steps) for t in trials if t.trajectory]
    cost = sum(t.trajectory.cost_usd for t in trials if t.trajectory)
    failing = sorted({s.name for t in trials for s in t.scores if not s.passed})
    errors = sorted({t.error for t in trials if t.error})
    notes = ", ".join(failing) + ("; " if failing and errors else "") + "; ".join(errors)
    return (
        f'<tr><td><a href="#task-{escape(entry.task_id)}">{escape(entry.task_id)}</a></td>'
        f'<td class="{status}">{status}</td>'
        f"<td>{'n/a' if rate is None else f'{entry.passes}/{len(entry.graded)}'}</td>"
        f"<td>{'/'.join(str(n) for n in steps) or '-'}</td><td>${cost:.4f}</td>"
        f"<td>{escape(notes)}</td></tr>"
    )


def _step(step: Step, timings: bool) -> str:
    timing = f" {step.latency_s:.3f}s" if timings else ""
    error = f' <span class="err">{escape(step.error)}</span>' if step.error else ""
    return (
        f"<details><summary>#{step.index} {escape(step.kind)} <b>{escape(step.name)}</b>"
        f"{timing} ${step.cost_usd:.4f}{error}</summary>"
        f"<div>input</div><pre>{escape(_text(step.input))}</pre>"
        f"<div>output</div><pre>{escape(_text(step.output))}</pre></details>"
    )


def _trial(trial: TaskResult, timings: bool) -> str:
    parts = [f'<h3>epoch {trial.epoch}: <span class="{trial.status}">{trial.status}</span>'
             + (f" after {trial.attempts} attempts" if trial.attempts > 1 else "") + "</h3>"]
    if trial.error:
        parts.append(f'<p class="err">{escape(trial.error)}</p>')
    if trial.scores:
        rows = "".join(
            f'<tr><td>{escape(s.name)}</td><td class="{"pass" if s.passed else "fail"}">'
            f'{"pass" if s.passed else "fail"}</td><td>{s.value:.2f}</td>'
            f"<td>{escape(s.detail)}"
            + (f"<pre>{escape(_text(s.metadata))}</pre>" if s.metadata else "")
            + "</td></tr>" for s in trial.scores)
        parts.append(f"<table><tr><th>grader</th><th></th><th>value</th><th>detail</th></tr>"
                     f"{rows}</table>")
    if trial.trajectory is not None:
        traj = trial.trajectory
        parts.append("".join(_step(step, timings) for step in traj.steps))
        parts.append(f"<div>final output</div><pre>{escape(_text(traj.final_output))}</pre>")
    return "".join(parts)


def _baseline_diff(c: Any) -> str:
    """The comparison with a baseline: gate failures, then each list of tasks."""
    from meridian.evals import compare as cmp

    failures = cmp.gate_failures(c)
    parts = [f"<h2>Against baseline {escape(c.b_ref)} ({escape(c.b_agent)})</h2>"]
    if failures:
        parts.append('<ul class="fail">' + "".join(f"<li>{escape(r)}</li>" for r in failures)
                     + "</ul>")
    else:
        parts.append('<p class="pass">no regressions, nothing missing</p>')
    rows = "".join(f"<tr><td>{escape(name)}</td><td>{escape(a)}</td><td>{escape(b)}</td>"
                   f"<td>{escape(delta)}</td></tr>" for name, a, b, delta in cmp.metric_rows(c))
    parts.append(f"<table><tr><th>metric</th><th>this run</th><th>baseline</th><th>delta</th>"
                 f"</tr>{rows}</table>")
    for title, note, items in cmp._sections(c):
        if not items:
            continue
        parts.append(f"<h3>{escape(title)} ({len(items)})"
                     + (f" <span class=\"meta\">{escape(note)}</span>" if note else "") + "</h3>")
        parts.append("<ul>" + "".join(
            f'<li><a href="#task-{escape(task)}">{escape(task)}</a>: {escape(detail)}</li>'
            for task, detail in items) + "</ul>")
    return "".join(parts)


def render_html(run: Run, baseline: Any = None) -> str:
    """The report; ``baseline`` (a ``compare.Comparison`` of this run with another)
    adds a diff section. Failing tasks come first in the table and the trajectories."""
    title = f"{run.suite.name}: {run.agent.name}@{run.agent.version}"
    meta = [f"run {run.run_id or '(exported)'}", f"suite hash {run.suite.hash[:12]}"]
    if run.created_at:
        meta.append(run.created_at)
    if run.git is not None:
        meta.append(f"commit {(run.git.commit or 'none')[:12]}{' (dirty)' if run.git.dirty else ''}")
    if run.settings.epochs > 1:
        meta.append(f"{run.settings.epochs} epochs")
    if run.interrupted:
        meta.append("INTERRUPTED (partial run)")
    ordered = sorted(run.results, key=lambda e: (_STATUS_ORDER.get(e.status, 9), e.index))
    rows = "".join(_task_row(entry) for entry in ordered)
    tasks = "".join(
        f'<section id="task-{escape(entry.task_id)}"><h2>{escape(entry.task_id)}</h2>'
        f"<details><summary>input and expected</summary><pre>{escape(_text(entry.task.input))}"
        f"</pre><pre>{escape(_text(entry.task.expected))}</pre></details>"
        + "".join(_trial(trial, run.timings) for trial in entry.trials) + "</section>"
        for entry in ordered
    )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1><div class=\"meta\">{escape(' · '.join(meta))}</div>"
        f"{_summary(run)}{_baseline_diff(baseline) if baseline is not None else ''}<h2>Tasks</h2><table><tr><th>task</th><th>status</th><th>passed</th>"
        f"<th>steps</th><th>cost</th><th>failing graders / errors</th></tr>{rows}</table>"
        f"<h2>Trajectories</h2>{tasks}</body></html>\n"
    )
