"""The HTML report: self-contained, complete, and safe with hostile agent output."""

from __future__ import annotations

import re

from meridian.evals.report import render_html
from tests.evals.runs_support import make_run


def hostile_run():  # type: ignore[no-untyped-def]
    run = make_run({"good": "pass", "bad": "fail", "broken": "infra_error"}, run_id="1234abcd5678")
    entry = run.results[0]
    trajectory = entry.trials[0].trajectory
    assert trajectory is not None
    evil = trajectory.model_copy(update={"final_output": "<script>alert('x')</script>"})
    return run.model_copy(update={"results": [
        entry.model_copy(update={"trials": [entry.trials[0].model_copy(update={"trajectory": evil})]}),
        *run.results[1:]]})


def test_report_has_summary_task_table_and_trajectories() -> None:
    html = render_html(hostile_run())
    assert html.startswith("<!DOCTYPE html>")
    assert "<title>golden: demo-agent@v1</title>" in html
    assert "run 1234abcd5678" in html
    assert 'task success<b>50.0%</b>' in html
    for task_id in ("good", "bad", "broken"):
        assert f'<a href="#task-{task_id}">{task_id}</a>' in html
        assert f'<section id="task-{task_id}">' in html
    assert '<td class="fail">fail</td>' in html and '<td class="infra_error">infra_error</td>' in html
    assert "ValueError: boom" in html
    assert "#0 tool <b>lookup</b>" in html  # steps are listed
    assert "expected &#x27;42&#x27;, got &#x27;41&#x27;" in html  # grader detail, escaped


def test_report_is_self_contained_and_escapes_agent_output() -> None:
    html = render_html(hostile_run())
    assert "<script" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    assert "<link" not in html and "@import" not in html


def test_exported_runs_report_without_timings() -> None:
    html = render_html(hostile_run().portable())
    assert "run (exported)" in html
    assert "p95 latency<b>n/a</b>" in html


def test_failing_tasks_come_first_and_a_baseline_diff_is_shown() -> None:
    from meridian.evals import compare
    from meridian.evals.types import Score

    run = hostile_run()
    bad = run.results[1]
    scored = bad.trials[0].model_copy(update={"scores": [Score(
        name="exact_match", value=0.0, passed=False, detail="x",
        metadata={"read": "<b>41</b>"})]})
    run.results[1] = bad.model_copy(update={"trials": [scored]})
    baseline = make_run({"good": "pass", "bad": "pass", "broken": "pass"}, run_id="b" * 12)
    html = render_html(run, baseline=compare.compare(run, baseline, a_ref="cand",
                                                     b_ref="baseline:main"))
    table = html[html.index("<h2>Tasks</h2>"):]
    assert table.index("#task-bad") < table.index("#task-broken") < table.index("#task-good")
    assert "<h2>Against baseline baseline:main (demo-agent@v1)</h2>" in html
    assert "1 task(s) regressed: bad" in html and "REGRESSIONS (1)" in html
    assert "&lt;b&gt;41&lt;/b&gt;" in html and "<b>41</b>" not in html  # Score.metadata, escaped
