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
