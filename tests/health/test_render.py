"""`meridian health`: terminal tables, --json, and the HTML page in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.health import build_report, render_html
from meridian.health.models import HealthReport
from meridian.health.render_terminal import sparkline

from .conftest import Crafted

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or (
    "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


def test_json_is_the_report_model(crafted: Crafted, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["health", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    report = HealthReport.model_validate(printed)
    assert report.gates.first_try_pass_rate == 0.3333
    assert report.calibration.multiplier == 1.0
    assert report.commit == str(crafted.ledger.tip())


def test_terminal_tables(crafted: Crafted, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["health"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for expected in (
        "first-try pass rate 33.3% (1 of 3 gates with a verdict)",
        "evaluator fail rate 50.0% (2 of 4 verdicts)",
        "blocks by source 6: claude 1, evaluator 2, gate 1, pre-commit 2",
        "mean time in progress 2.5 h over 2 pass(es)",
        "Calibration: multiplier 1.00",
        "mean 0.73, earlier half 3.15, recent half -0.47",
        "Completion: working 3/4 (75.0%), hardened 1/4 (25.0%) from report.xml",
        "Memory: semantic 1, episodic 1, corrections 3; 0 invalid; 1 duplicates prevented",
        "no-stub-code (review 2026-01-31)",
    ):
        assert expected in out, expected


def test_no_state_branch_is_one_line(repo_with_commit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["health"]) == 2
    assert capsys.readouterr().err == "meridian: no state branch meridian/state: run `meridian init` first\n"


def test_unwritable_html_target(crafted: Crafted, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["health", "--html", "no/such/dir/report.html"]) == 2
    assert capsys.readouterr().err.startswith("meridian: --html no/such/dir/report.html: cannot write: ")


def test_html_is_self_contained_and_escaped(crafted: Crafted) -> None:
    ledger = crafted.ledger
    ledger.emit("gate.blocked", {"gate": "<script>alert(1)</script>", "source": "claude",
                                 "reason": "x"})
    page = render_html.render(build_report(ledger, crafted.root))
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # nothing is fetched: no src/href to anything, and the CSP forbids it anyway
    assert not re.search(r"""\b(src|href)\s*=""", page)
    assert "default-src 'none'" in page
    assert page.count("<svg") == 6


def test_downsampled_series_say_so() -> None:
    assert render_html.downsample(list(range(10)), 5) == [0.5, 2.5, 4.5, 6.5, 8.5]
    chart = render_html.line_chart("t", [("gap", [float(i % 7) for i in range(1000)], "#000", False)])
    assert "(1000 points, averaged into 400)" in chart


def test_sparkline() -> None:
    assert sparkline([0, 1, 2, 3, 4, 5, 6, 7]) == "▁▂▃▄▅▆▇█"
    assert sparkline([2, 2]) == "▁▁" and sparkline([]) == ""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_html_opens_in_headless_chromium_without_console_errors(
        crafted: Crafted, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "health.html"
    assert main(["health", "--html", str(page)]) == 0
    # the file is the report: the terminal gets one line, not the tables as well
    assert capsys.readouterr().out == f"wrote {page} (22 events, 4 gates; open it in a browser)\n"
    proc = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", f"--user-data-dir={tmp_path / 'chromium-profile'}",
         "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    # The page's inline script writes this marker only if it ran to the end.
    assert 'data-rendered="ok"' in proc.stdout
    assert 'id="rendered" hidden="">rendered 6 charts<' in proc.stdout
    console = [line for line in proc.stderr.splitlines()
               if ":CONSOLE" in line or "Uncaught" in line or "Content Security Policy" in line]
    assert console == []


def test_every_recorded_string_is_escaped_in_html_and_terminal(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Names and messages come from the ledger (synced from other clones, or hand-edited):
    markup in any of them is shown as text, in the page and in rich's markup alike."""
    from meridian.health import render_terminal
    from meridian.health.models import (
        CompletionHealth,
        CorrectionPoint,
        Distribution,
        DueRule,
        GapPoint,
        GateRow,
        SuiteHealth,
    )

    bad = '<img src=x onerror=alert(1)>[bold red][/i]'  # [/i] alone: a rich MarkupError
    report = HealthReport(branch=bad, commit=None, generated_at="2026-11-30T10:00:00.000000Z",
                          notes=[bad])
    report.gates.gates = [GateRow(gate=bad, state="open")]
    report.gates.by_state = {bad: 1}
    report.gates.blocks_by_source = {bad: 1}
    report.calibration.corrections = [CorrectionPoint(
        ts="2026-11-30T10:00:00Z", gate=bad, predicted_hours=1, actual_hours=2, ratio=2,
        multiplier=2)]
    report.evaluator.dimensions = {bad: Distribution(count=1, min=5, q1=5, median=5, q3=5, max=5,
                                                     mean=5)}
    report.evaluator.gaps = [GapPoint(ts="2026-11-30T10:00:00Z", gate=bad, self_score=9,
                                      overall=5, gap=4, rolling_mean=4)]
    report.completion = CompletionHealth(computed_at="2026-11-30T10:00:00Z", junit=bad, total=1,
                                         working=1, hardened=0, working_pct=100, hardened_pct=0)
    report.memory.problems = [bad]
    report.rules.due = [DueRule(id=bad, rule=bad, review_date=None)]
    report.evaluation.suites = [SuiteHealth(
        suite=bad, runs=1, latest_run=bad, latest_at="2026-11-30T10:00:00Z", agent=bad, tasks=1,
        passed=1, failed=0, infra_errors=0, pass_rate=1.0, baseline=bad, baseline_run=bad)]
    page = render_html.render(report)
    assert "<img" not in page
    assert page.count("&lt;img src=x onerror=alert(1)&gt;") >= 12

    render_terminal.render(report, render_terminal.Console(width=200, color_system=None))
    out = capsys.readouterr().out
    assert "blocks by source       0: <img src=x onerror=alert(1)>[bold red][/i] 1" in out
    assert out.count("[bold red][/i]") == 14  # every string shown as text, not as a style


def test_time_in_progress_reads_in_a_unit_a_person_uses() -> None:
    from meridian.health.formatting import duration, number

    # a gate done in seconds (the demo's) is neither 0.00 h nor 9.2e-06 h
    assert [duration(h) for h in (9.2e-6, 0.0025, 0.2, 2.5, None)] == [
        "<1 s", "9 s", "12 min", "2.5 h", "-"]
    assert (number(9.2e-6), number(0.0), number(1.5)) == ("9.2e-06", "0.00", "1.50")


def test_a_long_gate_table_starts_folded_so_the_charts_stay_in_view() -> None:
    from meridian.health.models import GateRow

    report = HealthReport(branch="b", commit=None, generated_at="2026-11-30T10:00:00.000000Z")
    report.gates.gates = [GateRow(gate=f"g{n:02d}", state="open") for n in range(25)]
    assert "<details>" not in render_html.render(report)
    report.gates.gates.append(GateRow(gate="g25", state="open"))
    page = render_html.render(report)
    assert "<details><summary>every gate (26)</summary><table" in page
    assert page.count("<tr><td>g") == 26


def test_cost_weeks_without_spending_are_zero_columns_not_hidden() -> None:
    from meridian.health.models import WeekCost

    weeks = [WeekCost(week="2026-W51", cost_usd=1.0, evaluator_usd=1.0),
             WeekCost(week="2027-W02", cost_usd=2.0, evaluator_usd=2.0),
             WeekCost(week="unknown", cost_usd=5.0)]
    window = render_html.week_window(weeks)
    # ISO 2026 has 53 weeks; the empty weeks between are there, at zero
    assert [(w.week, w.cost_usd) for w in window] == [
        ("2026-W51", 1.0), ("2026-W52", 0.0), ("2026-W53", 0.0), ("2027-W01", 0.0),
        ("2027-W02", 2.0)]
    # two weeks back from the newest: W01 spent nothing before the first spending shown
    assert [w.week for w in render_html.week_window(weeks, count=2)] == ["2027-W02"]
    assert render_html.week_window([]) == []
