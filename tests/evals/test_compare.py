"""Compare: metrics, regressions both ways, infra and missing never regress, epochs, golden."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from meridian.errors import MeridianError
from meridian.evals import compare as cmp
from meridian.evals.run import Run
from tests.evals.runs_support import make_run

GOLDEN = Path(__file__).parent / "golden"

ORDER = ["arith", "lookup", "reverse", "json_out", "rate_limited", "new_task", "old_task"]


def baseline_and_candidate() -> tuple[Run, Run]:
    """v1 (baseline) and v2 (candidate) of a small suite, with every kind of change."""
    v1 = make_run(
        {"arith": "fail", "lookup": "pass", "reverse": "fail", "json_out": "pass",
         "rate_limited": "pass", "old_task": "pass"},
        run_id="b1b1b1b1b1b1", agent_version="v1", order=ORDER,
        arith={"steps": 5, "cost": 0.045, "latency": 0.9, "tool_errors": 2},
        lookup={"steps": 4, "cost": 0.03, "latency": 0.6, "tool_errors": 1},
        reverse={"steps": 4, "cost": 0.035, "latency": 0.5, "tool_errors": 2},
        json_out={"steps": 3, "cost": 0.03, "latency": 0.4},
        rate_limited={"steps": 3, "cost": 0.02, "latency": 0.3},
        old_task={"steps": 2, "cost": 0.01, "latency": 0.2},
    )
    v2 = make_run(
        {"arith": "pass", "lookup": "pass", "reverse": "pass", "json_out": "fail",
         "rate_limited": "infra_error", "new_task": "pass"},
        run_id="a2a2a2a2a2a2", agent_version="v2", order=ORDER,
        arith={"steps": 2, "cost": 0.018, "latency": 0.3},
        lookup={"steps": 2, "cost": 0.02, "latency": 0.2},
        reverse={"steps": 3, "cost": 0.025, "latency": 0.4, "tool_errors": 1},
        json_out={"steps": 2, "cost": 0.015, "latency": 0.2},
        new_task={"steps": 1, "cost": 0.005, "latency": 0.1},
    )
    fix_error = v2.model_copy(update={"results": [
        e if e.task_id != "rate_limited" else e.model_copy(update={"trials": [
            e.trials[0].model_copy(update={"error": "RateLimitError: 429 Too Many Requests"})]})
        for e in v2.results]})
    return v1, fix_error


def test_text_output_matches_the_golden_file() -> None:
    v1, v2 = baseline_and_candidate()
    text = cmp.render_text(cmp.compare(v2, v1))
    golden = GOLDEN / "compare.txt"
    if os.environ.get("MERIDIAN_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_regressions_and_fixes_in_both_directions() -> None:
    v1, v2 = baseline_and_candidate()
    forward = cmp.compare(v2, v1)
    assert [c.task_id for c in forward.regressions] == ["json_out"]
    assert [c.task_id for c in forward.fixed] == ["arith", "reverse"]
    backward = cmp.compare(v1, v2)
    assert [c.task_id for c in backward.regressions] == ["arith", "reverse"]
    assert [c.task_id for c in backward.fixed] == ["json_out"]
    assert cmp.gate_failed(forward) and cmp.gate_failed(backward)
    assert not cmp.gate_failed(cmp.compare(v1, v1))


def test_infra_errors_and_missing_tasks_are_listed_never_regressions() -> None:
    v1, v2 = baseline_and_candidate()
    result = cmp.compare(v2, v1)
    assert "rate_limited" not in [c.task_id for c in result.regressions]
    assert [(n.task_id, n.run, n.error) for n in result.infra] == [
        ("rate_limited", "A", "RateLimitError: 429 Too Many Requests")]
    assert [(m.task_id, m.only_in) for m in result.missing] == [("new_task", "A"), ("old_task", "B")]
    only_infra = make_run({"a": "infra_error"}, run_id="c" * 12)
    passing = make_run({"a": "pass"}, run_id="d" * 12)
    assert not cmp.gate_failed(cmp.compare(only_infra, passing))


def test_a_task_that_starts_hanging_is_a_regression() -> None:
    """The runner records a timeout as a failing `completed` score, so compare sees it."""
    from meridian.evals.runner import Job, timed_out

    before = make_run({"a": "pass", "b": "pass"}, run_id="e" * 12)
    after = make_run({"a": "pass", "b": "pass"}, run_id="f" * 12)
    entry = after.results[1]
    hung = timed_out(Job(number=1, index=1, task=entry.task, epoch=0), attempts=1)
    after.results[1] = entry.model_copy(update={"trials": [hung]})
    result = cmp.compare(after, before)
    assert [c.task_id for c in result.regressions] == ["b"] and result.infra == []
    assert cmp.gate_failed(result)


def test_metrics_side_by_side() -> None:
    v1, v2 = baseline_and_candidate()
    result = cmp.compare(v2, v1)
    assert result.a.success == pytest.approx(4 / 5)  # the infra error is not graded
    assert result.b.success == pytest.approx(4 / 6)
    assert result.a.median_steps == 2.0 and result.b.median_steps == 3.5
    assert result.a.cost_per_task == pytest.approx((0.018 + 0.02 + 0.025 + 0.015 + 0.005) / 5)
    assert result.a.p95_latency_s == 0.4 and result.b.p95_latency_s == 0.9
    assert result.a.tool_error_rate == pytest.approx(1 / 10)
    rows = {name: (a, b, delta) for name, a, b, delta in cmp.metric_rows(result)}
    assert rows["task success"] == ("80.0%", "66.7%", "+13.3")
    assert rows["p95 latency"] == ("0.4s", "0.9s", "-56%")
    assert rows["infra errors"] == ("1", "0", "+1")


def test_runs_without_timings_show_no_latency() -> None:
    v1, v2 = baseline_and_candidate()
    result = cmp.compare(v2.portable(), v1)
    rows = {name: (a, b, delta) for name, a, b, delta in cmp.metric_rows(result)}
    assert rows["p95 latency"] == ("n/a", "0.9s", "n/a")


def test_different_suites_are_refused_unless_forced() -> None:
    v1, v2 = baseline_and_candidate()
    other = v2.model_copy(update={"suite": v2.suite.model_copy(update={"hash": "f" * 64})})
    with pytest.raises(MeridianError) as info:
        cmp.compare(other, v1)
    assert str(info.value) == (
        "runs a2a2a2a2a2a2 and b1b1b1b1b1b1 are of different suites (golden ffffffffffff vs "
        "golden aaaaaaaaaaaa); their tasks may share ids but not meaning "
        "(pass --force to compare anyway)")
    forced = cmp.compare(other, v1, force=True)
    assert not forced.same_suite
    assert "WARNING: suites differ" in cmp.render_text(forced)


def test_with_epochs_a_regression_needs_evidence() -> None:
    before = make_run({"solid": ["pass"] * 5, "wobbly": ["pass"] * 5, "better": ["fail"] * 5,
                       "same": ["pass", "fail", "pass", "fail", "pass"]}, run_id="e" * 12)
    after = make_run({"solid": ["fail"] * 5, "wobbly": ["pass", "fail", "pass", "fail", "pass"],
                      "better": ["pass"] * 5, "same": ["fail", "pass", "pass", "pass", "fail"]},
                     run_id="f" * 12)
    result = cmp.compare(after, before)
    [regression] = result.regressions
    assert regression.task_id == "solid" and regression.p_value == pytest.approx(1 / 252, abs=1e-6)
    assert [(c.task_id, c.label) for c in result.flaky] == [("wobbly", "flaky")]
    assert result.flaky[0].p_value is not None and result.flaky[0].p_value >= 0.05
    assert [c.task_id for c in result.fixed] == ["better"]
    assert (result.mcnemar.regressed, result.mcnemar.fixed) == (1, 1)
    text = cmp.render_text(result)
    assert "  solid  5/5 -> 0/5  (Fisher p=0.004)" in text
    assert "FLAKY (1)  changed without evidence" in text


def test_mcnemar_over_tasks() -> None:
    before = make_run({f"t{i}": "fail" for i in range(10)}, run_id="e" * 12)
    after = make_run({f"t{i}": ("pass" if i < 9 else "fail") for i in range(10)}, run_id="f" * 12)
    result = cmp.compare(after, before)
    assert (result.mcnemar.regressed, result.mcnemar.fixed) == (0, 9)
    assert result.mcnemar.p_value == pytest.approx(2 / 512)


def test_json_and_markdown_formats() -> None:
    v1, v2 = baseline_and_candidate()
    result = cmp.compare(v2, v1)
    data = json.loads(cmp.render_json(result))
    assert [c["task_id"] for c in data["regressions"]] == ["json_out"]
    assert data["a"]["success"] == pytest.approx(0.8) and data["same_suite"] is True
    markdown = cmp.render_markdown(result)
    assert markdown.startswith("### Meridian eval: golden: **1 regression(s)**\n")
    assert "| task success | 80.0% | 66.7% | +13.3 |" in markdown
    assert "- `json_out`: pass -> fail" in markdown
