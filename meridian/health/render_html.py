"""The health report as one self-contained HTML page (``meridian health --html FILE``).

Everything is inline: CSS, SVG charts and one small script (sortable tables). A
Content-Security-Policy forbids loading anything from anywhere, so the file shows
the same offline, attached to an issue or opened years later. Every value from the
ledger is HTML-escaped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, timedelta
from html import escape

from meridian.health.formatting import dollars, duration, number, percent
from meridian.health.models import Distribution, HealthReport, WeekCost

MAX_POINTS = 400  # longer series are averaged into this many points
MAX_OPEN_ROWS = 25  # a longer table starts folded
MAX_WEEKS = 26  # the cost chart shows the last half year
WIDTH, HEIGHT, PAD = 640, 200, 36
COLORS = {"a": "#2563eb", "b": "#dc2626", "c": "#059669", "d": "#d97706", "muted": "#9ca3af"}
STATE_COLORS = {"passed": "#059669", "failed": "#dc2626", "submitted": "#d97706",
                "in_progress": "#2563eb", "open": "#6b7280", "locked": "#9ca3af",
                "stale": "#7c3aed", "removed": "#d1d5db"}

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0 auto;max-width:1000px;
padding:24px;color:#111827;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb;
padding-bottom:4px}.sub{color:#6b7280}.note{background:#fef3c7;padding:6px 10px;border-radius:4px;
margin:6px 0}.tiles{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}.tile{border:1px solid #e5e7eb;
border-radius:6px;padding:8px 12px;min-width:150px}.tile b{display:block;font-size:20px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{padding:3px 10px 3px 0;
text-align:left;vertical-align:top}th{border-bottom:1px solid #d1d5db;cursor:pointer;user-select:none}
td.n,th.n{text-align:right}svg{display:block;margin:6px 0;max-width:100%;height:auto}
svg text{font:11px system-ui,sans-serif;fill:#374151}.legend span{margin-right:14px}
.bar{height:14px;background:#e5e7eb;border-radius:3px;width:320px;display:inline-block;
vertical-align:middle}.bar i{display:block;height:100%;border-radius:3px;background:#059669}
.bad{color:#dc2626}.good{color:#059669}summary{cursor:pointer;margin:8px 0}
"""

# Sort a table by the clicked column (numbers numerically); marks the page as rendered.
SCRIPT = """
(function () {
  function key(cell) {
    var text = cell.getAttribute('data-v') || cell.textContent.trim();
    var num = parseFloat(text.replace(/[$,%]/g, ''));
    return isNaN(num) ? text.toLowerCase() : num;
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('th').forEach(function (th, index) {
      th.addEventListener('click', function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var down = th.getAttribute('data-dir') !== 'asc';
        rows.sort(function (x, y) {
          var a = key(x.cells[index]), b = key(y.cells[index]);
          return (a < b ? -1 : a > b ? 1 : 0) * (down ? -1 : 1);
        });
        rows.forEach(function (row) { body.appendChild(row); });
        th.setAttribute('data-dir', down ? 'desc' : 'asc');
      });
    });
  });
  var charts = document.querySelectorAll('svg').length;
  document.body.setAttribute('data-rendered', 'ok');
  document.getElementById('rendered').textContent = 'rendered ' + charts + ' charts';
})();
"""


def downsample(values: Sequence[float], limit: int = MAX_POINTS) -> list[float]:
    """At most ``limit`` points: consecutive values averaged into equal buckets."""
    if len(values) <= limit:
        return list(values)
    size = len(values) / limit
    out = []
    for bucket in range(limit):
        chunk = values[int(bucket * size): max(int(bucket * size) + 1, int((bucket + 1) * size))]
        out.append(sum(chunk) / len(chunk))
    return out


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[int] | None = None) -> str:
    numeric = numeric or set()
    head = "".join(f'<th class="n">{escape(h)}</th>' if i in numeric else f"<th>{escape(h)}</th>"
                   for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f'<td class="n">{escape(c)}</td>' if i in numeric else f"<td>{escape(c)}</td>"
                         for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _svg(width: float, height: float, label: str) -> str:
    return (f'<svg viewBox="0 0 {width:g} {height:g}" width="{width:g}" height="{height:g}" '
            f'role="img" aria-label="{escape(label)}">')


def bar_chart(title: str, items: Sequence[tuple[str, float, str]], unit: str = "") -> str:
    """Horizontal bars: (label, value, colour)."""
    if not items:
        return f'<p class="sub">{escape(title)}: nothing recorded yet</p>'
    row_h, label_w, bar_w = 22, 130, 380
    top = max(value for _, value, _ in items) or 1.0
    parts = [_svg(label_w + bar_w + 90, row_h * len(items) + 24, title),
             f'<text x="0" y="12">{escape(title)}</text>']
    for index, (label, value, color) in enumerate(items):
        y = 20 + index * row_h
        width = max(1.0, bar_w * value / top)
        shown = f"{value:g}{unit}"
        parts.append(f'<text x="0" y="{y + 13}">{escape(label)}</text>'
                     f'<rect x="{label_w}" y="{y + 2}" width="{width:.1f}" height="14" fill="{color}">'
                     f'<title>{escape(label)}: {escape(shown)}</title></rect>'
                     f'<text x="{label_w + width + 6:.1f}" y="{y + 13}">{escape(shown)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def line_chart(title: str, series: Sequence[tuple[str, Sequence[float], str, bool]],
               reference: float | None = None) -> str:
    """Lines (or dots) over submission order: (name, values, colour, as_dots)."""
    values = [v for _, vals, _, _ in series for v in vals]
    if not values:
        return f'<p class="sub">{escape(title)}: nothing recorded yet</p>'
    low = min(values + ([reference] if reference is not None else []))
    high = max(values + ([reference] if reference is not None else []))
    if high == low:
        high, low = high + 1, low - 1
    plot_w, plot_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD

    def y_of(value: float) -> float:
        return PAD + plot_h * (1 - (value - low) / (high - low))

    parts = [_svg(WIDTH, HEIGHT, title), f'<text x="{PAD}" y="14">{escape(title)}</text>',
             (f'<line x1="{PAD}" y1="{PAD + plot_h}" x2="{PAD + plot_w}" y2="{PAD + plot_h}" '
              'stroke="#d1d5db"/>'),
             f'<text x="2" y="{y_of(high) + 4:.1f}">{high:.2f}</text>',
             f'<text x="2" y="{y_of(low) + 4:.1f}">{low:.2f}</text>']
    if reference is not None:
        parts.append(f'<line x1="{PAD}" y1="{y_of(reference):.1f}" x2="{PAD + plot_w}" '
                     f'y2="{y_of(reference):.1f}" stroke="{COLORS["muted"]}" stroke-dasharray="4 3">'
                     f'<title>{reference:g}</title></line>')
    legend = []
    for name, raw, color, as_dots in series:
        points = downsample(raw)
        if not points:
            continue
        step = plot_w / max(1, len(points) - 1)
        coords = [(PAD + i * step, y_of(v)) for i, v in enumerate(points)]
        if as_dots:
            parts.extend(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{color}">'
                         f'<title>{escape(name)} {v:.2f}</title></circle>'
                         for (x, y), v in zip(coords, points, strict=True))
        else:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        note = f" ({len(raw)} points, averaged into {len(points)})" if len(points) < len(raw) else ""
        legend.append(f'<span style="color:{color}">&#9632; {escape(name)}{escape(note)}</span>')
    parts.append("</svg>")
    return "".join(parts) + f'<div class="legend">{"".join(legend)}</div>'


def box_plot(title: str, rows: Sequence[tuple[str, Distribution]]) -> str:
    """min / q1 / median / q3 / max of 0-10 scores, one row per dimension."""
    shown = [(name, d) for name, d in rows if d.count]
    if not shown:
        return f'<p class="sub">{escape(title)}: no verdicts yet</p>'
    label_w, plot_w, row_h = 120, 440, 26

    def x_of(score: float) -> float:
        return label_w + plot_w * score / 10

    parts = [_svg(label_w + plot_w + 20, row_h * len(shown) + 40, title),
             f'<text x="0" y="12">{escape(title)}</text>']
    for tick in range(0, 11, 2):
        x = x_of(tick)
        parts.append(f'<line x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{20 + row_h * len(shown)}" '
                     f'stroke="#f3f4f6"/><text x="{x - 3:.1f}" y="{34 + row_h * len(shown)}">{tick}</text>')
    for index, (name, d) in enumerate(shown):
        y = 20 + index * row_h
        assert d.min is not None and d.q1 is not None and d.median is not None
        assert d.q3 is not None and d.max is not None
        tip = (f"{name}: n={d.count} min {d.min:g} q1 {d.q1:g} median {d.median:g} "
               f"q3 {d.q3:g} max {d.max:g}")
        parts.append(
            f'<text x="0" y="{y + 16}">{escape(name)}</text>'
            f'<line x1="{x_of(d.min):.1f}" y1="{y + 12}" x2="{x_of(d.max):.1f}" y2="{y + 12}" stroke="#6b7280"/>'
            f'<rect x="{x_of(d.q1):.1f}" y="{y + 4}" width="{max(1.0, x_of(d.q3) - x_of(d.q1)):.1f}" '
            f'height="16" fill="#bfdbfe" stroke="#2563eb"><title>{escape(tip)}</title></rect>'
            f'<line x1="{x_of(d.median):.1f}" y1="{y + 4}" x2="{x_of(d.median):.1f}" y2="{y + 20}" '
            f'stroke="#1e3a8a" stroke-width="2"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def week_window(by_week: Sequence[WeekCost], count: int = MAX_WEEKS) -> list[WeekCost]:
    """The ``count`` ISO weeks ending with the newest one that has spending, every week
    present: a week that spent nothing is a zero column, not a gap the axis hides."""
    known = {w.week: w for w in by_week if re.fullmatch(r"\d{4}-W\d{2}", w.week)}
    if not known:
        return []
    year, number = (int(part) for part in max(known).split("-W"))
    newest = date.fromisocalendar(year, number, 1)
    window = []
    for back in range(count - 1, -1, -1):
        iso = (newest - timedelta(weeks=back)).isocalendar()
        key = f"{iso.year}-W{iso.week:02d}"
        window.append(known.get(key) or WeekCost(week=key))
    # Drop the empty weeks before the first spending, so a young project's chart is not
    # mostly blank.
    while len(window) > 1 and not (window[0].cost_usd or window[0].cost_unknown):
        window.pop(0)
    return window


def stacked_weeks(report: HealthReport) -> str:
    weeks = week_window(report.cost.by_week)
    if not weeks:
        return '<p class="sub">cost per week: nothing spent yet</p>'
    layers = (("evaluator", "evaluator_usd", COLORS["a"]), ("llm_judge", "llm_judge_usd", COLORS["d"]),
              ("eval agents", "eval_agents_usd", COLORS["c"]))
    top = max(w.cost_usd for w in weeks) or 1.0
    plot_h, col_w = HEIGHT - 2 * PAD, min(60.0, (WIDTH - 2 * PAD) / len(weeks))
    label_every = 1 if col_w >= 28 else 2  # "W07" needs about 24 px at 11 px type
    span = weeks[0].week if len(weeks) == 1 else f"{weeks[0].week} to {weeks[-1].week}"
    parts = [_svg(WIDTH, HEIGHT, "cost per week"),
             f'<text x="{PAD}" y="14">cost per ISO week, {escape(span)} (max {dollars(top)})</text>']
    for index, week in enumerate(weeks):
        x = PAD + index * col_w
        base = float(PAD + plot_h)
        for name, attr, color in layers:
            value = float(getattr(week, attr))
            height = plot_h * value / top
            if height <= 0:
                continue
            base -= height
            parts.append(f'<rect x="{x:.1f}" y="{base:.1f}" width="{col_w * 0.8:.1f}" '
                         f'height="{height:.1f}" fill="{color}"><title>{escape(week.week)} '
                         f'{escape(name)} {dollars(value)}</title></rect>')
        if (len(weeks) - 1 - index) % label_every == 0:
            parts.append(f'<text x="{x:.1f}" y="{HEIGHT - 8}">{escape(week.week[-3:])}</text>')
    parts.append("</svg>")
    legend = "".join(f'<span style="color:{c}">&#9632; {n}</span>' for n, _, c in layers)
    return "".join(parts) + f'<div class="legend">{legend}</div>'


def _folded(summary: str, content: str, rows: int) -> str:
    """``content`` as is, or folded when it has more than MAX_OPEN_ROWS rows: hundreds of
    rows would push every chart below far down the page."""
    if rows <= MAX_OPEN_ROWS:
        return content
    return f"<details><summary>{escape(summary)}</summary>{content}</details>"


def _tiles(items: Sequence[tuple[str, str]]) -> str:
    return '<div class="tiles">' + "".join(
        f'<div class="tile"><b>{escape(value)}</b>{escape(label)}</div>' for label, value in items
    ) + "</div>"


def _progress(label: str, pct: float) -> str:
    return (f'<p>{escape(label)} <span class="bar"><i style="width:{max(0.0, min(100.0, pct)):.1f}%">'
            f'</i></span> {pct:.1f}%</p>')


def _gates(report: HealthReport) -> str:
    gates = report.gates
    out = ["<h2>Gates</h2>", _tiles([
        ("gates", str(gates.total)),
        ("first-try pass rate", percent(gates.first_try_pass_rate)),
        ("evaluator fail rate", percent(gates.evaluator_fail_rate)),
        ("mean time in progress", duration(gates.mean_hours_in_progress)),
        ("blocks", str(gates.blocks)),
        ("evaluator unavailable", str(gates.evaluator_unavailable)),
        ("scope: objective checks only", str(gates.objective_only_verdicts)),
        ("inline exceptions", f"{gates.suppressed} ({gates.suppressed_added} new)"),
    ])]
    out.append(bar_chart("gates by state", [(s, float(n), STATE_COLORS.get(s, COLORS["muted"]))
                                            for s, n in gates.by_state.items()]))
    out.append(bar_chart("blocks by source", [(s, float(n), COLORS["b"])
                                              for s, n in gates.blocks_by_source.items()]))
    rows = [(r.gate, r.state, str(r.submissions), str(r.verdicts), str(r.failed_verdicts),
             "-" if r.first_verdict_passed is None else ("passed" if r.first_verdict_passed else "failed"),
             str(r.blocks), duration(r.hours_in_progress), dollars(r.cost_usd, r.cost_unknown)) for r in gates.gates]
    gate_table = table(["gate", "state", "submissions", "verdicts", "failed", "first verdict",
                        "blocks", "time in progress", "cost"], rows, {2, 3, 4, 6, 7, 8})
    out.append(_folded(f"every gate ({len(rows)})", gate_table, len(rows)))
    return "".join(out)


def _calibration(report: HealthReport) -> str:
    cal = report.calibration
    out = ["<h2>Calibration</h2>", _tiles([
        (f"multiplier (median of last {cal.sample})" if cal.sample else "multiplier",
         number(cal.multiplier)),
        ("median ratio, all corrections", number(cal.median_ratio)),
        ("corrections", str(len(cal.corrections))),
    ])]
    ratios = [p.ratio for p in cal.corrections if p.ratio is not None]
    trend = [p.multiplier for p in cal.corrections if p.multiplier is not None]
    out.append(line_chart("actual / predicted hours per correction, and the multiplier over time",
                          [("ratio", ratios, COLORS["a"], True),
                           ("multiplier", trend, COLORS["b"], False)], reference=1.0))
    shown = cal.corrections[-50:]
    out.append(_folded(f"the last {len(shown)} corrections",
                       table(["when (UTC)", "gate", "predicted", "actual (active)", "ratio", "multiplier"],
                             [(p.ts[:16].replace("T", " "), p.gate, duration(p.predicted_hours),
                               duration(p.actual_hours), number(p.ratio), number(p.multiplier))
                              for p in shown], {2, 3, 4, 5}), len(shown)))
    return "".join(out)


def _evaluator(report: HealthReport) -> str:
    ev = report.evaluator
    rows = list(ev.dimensions.items()) + [("overall", ev.overall)]
    out = ["<h2>Evaluator</h2>",
           (f'<p class="sub">{ev.verdicts} verdicts; per-dimension scores from {ev.verdicts_read} '
            "verdict documents</p>"), box_plot("score distribution (0-10)", rows)]
    out.append(table(["dimension", "n", "min", "q1", "median", "q3", "max", "mean"],
                     [(name, str(d.count), number(d.min), number(d.q1), number(d.median), number(d.q3),
                       number(d.max), number(d.mean)) for name, d in rows], {1, 2, 3, 4, 5, 6, 7}))
    out.append(_tiles([("mean self-assessment gap", number(ev.mean_gap)),
                       ("earlier half", number(ev.early_mean_gap)),
                       ("recent half", number(ev.recent_mean_gap))]))
    out.append(line_chart("self-score minus evaluator overall, per submission",
                          [("gap", [p.gap for p in ev.gaps], COLORS["a"], True),
                           (f"rolling mean of {ev.gap_window}", [p.rolling_mean for p in ev.gaps],
                            COLORS["b"], False)], reference=0.0))
    return "".join(out)


def _cost(report: HealthReport) -> str:
    cost = report.cost
    out = ["<h2>Cost</h2>", _tiles([("total", dollars(cost.total.cost_usd, cost.total.cost_unknown)),
                                    ("tokens", f"{cost.total.tokens:,}")])]
    out.append(table(["source", "input tokens", "output tokens", "tokens", "dollars"],
                     [(name, f"{line.input_tokens:,}", f"{line.output_tokens:,}", f"{line.tokens:,}",
                       dollars(line.cost_usd, line.cost_unknown))
                      for name, line in cost.by_source.items()], {1, 2, 3, 4}))
    out.append(stacked_weeks(report))
    if any(g.cost_usd or g.cost_unknown for g in cost.by_gate):  # an offline evaluator costs nothing
        out.append(_folded(f"evaluator cost per gate ({len(cost.by_gate)} gates, costliest first)",
                           table(["gate", "verdicts", "tokens", "dollars"],
                                 [(g.gate, str(g.verdicts), f"{g.tokens:,}", dollars(g.cost_usd, g.cost_unknown))
                                  for g in cost.by_gate], {1, 2, 3}), len(cost.by_gate)))
    return "".join(out)


def _completion(report: HealthReport) -> str:
    done = report.completion
    if done is None:
        return ("<h2>Completion</h2><p class=\"sub\">not computed yet: "
                "<code>meridian features --junit REPORT.xml</code></p>")
    return (f"<h2>Completion</h2><p class=\"sub\">{done.total} features, from "
            f"{escape(done.junit)} at {escape(done.computed_at[:16].replace('T', ' '))} UTC</p>"
            + _progress(f"working {done.working}/{done.total}", done.working_pct)
            + _progress(f"hardened {done.hardened}/{done.total}", done.hardened_pct))


def _memory_and_rules(report: HealthReport) -> str:
    mem, rules = report.memory, report.rules
    out = ["<h2>Memory and rules</h2>", _tiles(
        [(f"{kind} records", str(n)) for kind, n in mem.records.items()]
        + [("invalid records", str(mem.invalid)), ("duplicates prevented", str(mem.duplicates_prevented)),
           ("rules due for review", f"{len(rules.due)} of {rules.active} active")])]
    out.extend(f'<p class="bad">{escape(problem)}</p>' for problem in mem.problems)
    if rules.due:
        out.append(table(["rule", "review date", "text"],
                         [(r.id, r.review_date or "-", r.rule) for r in rules.due]))
    return "".join(out)


def _evaluation(report: HealthReport) -> str:
    evaluation = report.evaluation
    if not evaluation.suites:
        return "<h2>Evaluation</h2><p class=\"sub\">no evaluation runs yet</p>"
    rows = [(s.suite, s.latest_run, s.agent, f"{s.passed}/{s.passed + s.failed}", percent(s.pass_rate),
             s.baseline or "-", "-" if s.baseline_passed is None else str(s.baseline_passed),
             "-" if s.regressions is None else str(s.regressions),
             "-" if s.fixes is None else str(s.fixes)) for s in evaluation.suites]
    return (f"<h2>Evaluation</h2><p class=\"sub\">{evaluation.runs} runs; latest run per suite "
            "against its pinned baseline</p>"
            + table(["suite", "latest run", "agent", "passed", "pass rate", "baseline",
                     "baseline passed", "regressions", "fixes"], rows, {4, 6, 7, 8}))


def render(report: HealthReport) -> str:
    notes = "".join(f'<p class="note">{escape(note)}</p>' for note in report.notes)
    body = "".join(section(report) for section in (
        _gates, _calibration, _evaluator, _cost, _completion, _memory_and_rules, _evaluation))
    commit = (report.commit or "no commit")[:12]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>Meridian health: {escape(report.branch)}</title><style>{CSS}</style></head><body>"
        f"<h1>Meridian health</h1><p class=\"sub\">{escape(report.branch)} at {escape(commit)}, "
        f"{report.events} events, generated {escape(report.generated_at[:19].replace('T', ' '))} UTC "
        f"<span id=\"rendered\" hidden></span></p>{notes}{body}"
        f"<script>{SCRIPT}</script></body></html>\n"
    )
