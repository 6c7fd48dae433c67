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
    # The runs carry no suite manifest: each suite is what its run holds.
    assert (result.added, result.removed, result.missing) == (["new_task"], ["old_task"], [])
    only_infra = make_run({"a": "infra_error"}, run_id="c" * 12)
    passing = make_run({"a": "pass"}, run_id="d" * 12)
    only_infra_result = cmp.compare(only_infra, passing)
    assert not only_infra_result.regressions
    # Not a regression, but the gate counts infra errors (at most 0 by default).
    assert cmp.gate_failures(only_infra_result) == [
        "1 infra error(s) in the candidate run (at most 0 allowed: --max-infra-errors)"]
    assert not cmp.gate_failed(only_infra_result, cmp.GatePolicy(max_infra_errors=1))


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


def test_differently_named_suites_are_refused_unless_forced() -> None:
    v1, v2 = baseline_and_candidate()
    other = v2.model_copy(update={"suite": v2.suite.model_copy(update={"name": "other",
                                                                       "hash": "f" * 64})})
    with pytest.raises(MeridianError) as info:
        cmp.compare(other, v1)
    assert str(info.value) == (
        "runs a2a2a2a2a2a2 and b1b1b1b1b1b1 are of different suites (other vs golden); their "
        "tasks may share ids but not meaning (pass --force to compare anyway)")
    forced = cmp.compare(other, v1, force=True)
    assert not forced.same_suite
    assert "note: suite edited since B (aaaaaaaaaaaa)" in cmp.render_text(forced)
    # An edited suite (same name, another hash) compares without --force.
    edited = v2.model_copy(update={"suite": v2.suite.model_copy(update={"hash": "f" * 64})})
    assert [c.task_id for c in cmp.compare(edited, v1).regressions] == ["json_out"]


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
    assert markdown.startswith("### Meridian eval: golden: **1 regression(s)** among 5 compared "
                               "task(s); **2 not compared** (changed, added or removed)\n")
    assert "| task success | 80.0% | 66.7% | +13.3 |" in markdown
    assert "- json\\_out: pass \\-&gt; fail" in markdown


# ------------------------------------------------------------------ suites that evolve


def with_manifest(run: Run, **tasks: str) -> Run:
    """``run`` whose suite manifest is its results plus ``tasks`` (id -> hash)."""
    manifest = {e.task_id: e.task.definition_hash() for e in run.results} | tasks
    return run.model_copy(update={"suite": run.suite.model_copy(update={"tasks": manifest})})


def edited(run: Run, task_id: str, expected: str) -> Run:
    results = [e if e.task_id != task_id else e.model_copy(update={
        "task": e.task.model_copy(update={"expected": expected})}) for e in run.results]
    return run.model_copy(update={"results": results})


def test_a_suite_with_one_added_and_one_edited_task_compares_the_rest() -> None:
    base = with_manifest(make_run({"a": "pass", "b": "pass", "c": "pass"}, run_id="b" * 12))
    cand = make_run({"a": "fail", "b": "fail", "c": "pass", "d": "pass"}, run_id="a" * 12,
                    suite_hash="f" * 64)
    cand = with_manifest(edited(cand, "b", "43"))
    result = cmp.compare(cand, base)
    assert [c.task_id for c in result.regressions] == ["a"]  # unchanged tasks still gate
    assert result.changed == ["b"] and result.added == ["d"] and result.uncovered == ["b", "d"]
    text = cmp.render_text(result)
    assert "CHANGED (1)  definition differs: not compared\n  b  changed (not compared)\n" in text
    assert "ADDED (1)  new in A's suite: not in the baseline\n  d  only in A\n" in text


def test_tasks_missing_from_the_candidate_and_interrupted_runs_fail_the_gate() -> None:
    base = with_manifest(make_run({f"t{i}": "pass" for i in range(6)}, run_id="b" * 12))
    limited = make_run({"t0": "pass"}, run_id="a" * 12)
    limited = limited.model_copy(update={"suite": base.suite})  # its suite has all six
    result = cmp.compare(limited, base)
    assert not result.regressions and [m.task_id for m in result.missing] == [
        "t1", "t2", "t3", "t4", "t5"]
    assert cmp.gate_failures(result) == [
        "5 task(s) of the suite missing from the candidate run: t1, t2, t3, t4, t5"]
    stopped = limited.model_copy(update={"interrupted": True})
    assert "the candidate run was interrupted (partial)" in cmp.gate_failures(cmp.compare(stopped, base))
    # A task the suite dropped is listed as removed: the baseline ran it and it is not
    # compared, so the gate fails unless a human accepts it (rt4 F6).
    shrunk = limited.model_copy(update={"suite": limited.suite.model_copy(update={
        "tasks": {"t0": base.suite.tasks["t0"]}})})
    shrunk_result = cmp.compare(shrunk, base)
    assert shrunk_result.removed == ["t1", "t2", "t3", "t4", "t5"]
    assert cmp.gate_failures(shrunk_result) == [(
        "5 of the baseline run's 6 task(s) not compared (definition changed or removed since "
        "B): t1, t2, t3, t4, t5; accept with --accept-changed-tasks, or pin a new baseline")]
    assert not cmp.gate_failed(shrunk_result, cmp.GatePolicy(accept_changed_tasks=True))


def test_min_pass_rate_gates_on_the_rate() -> None:
    run = make_run({"a": "pass", "b": "fail"}, run_id="a" * 12)
    result = cmp.compare(run, run)
    assert not cmp.gate_failed(result, cmp.GatePolicy(min_pass_rate=0.5))
    assert cmp.gate_failures(result, cmp.GatePolicy(min_pass_rate=0.75)) == [
        "pass rate 50.0% is below --min-pass-rate 75.0%"]


# ------------------------------------------------------------------ epochs that decide


@pytest.mark.parametrize("epochs", [1, 2, 3, 5])
def test_all_pass_to_all_fail_regresses_at_any_epoch_count(epochs: int) -> None:
    base = make_run({"t": ["pass"] * epochs}, run_id="b" * 12)
    cand = make_run({"t": ["fail"] * epochs}, run_id="a" * 12)
    result = cmp.compare(cand, base)
    assert [c.task_id for c in result.regressions] == ["t"] and cmp.gate_failed(result)
    assert [c.task_id for c in cmp.compare(base, cand).fixed] == ["t"]


@pytest.mark.parametrize(("baseline", "candidate", "label"), [
    (["pass"] * 5, ["fail"], "regression"),  # 5/5 -> 0/1: rule 1, whatever p
    (["pass"], ["fail"] * 5, "regression"),
    (["pass"] * 4 + ["fail"], ["fail"], "flaky"),  # 4/5 -> 0/1: Fisher p = 0.333
    (["pass", "pass", "fail"], ["fail", "fail"], "flaky"),  # mixed: exact test, p = 0.3
    (["pass"] * 5, ["pass", "fail", "fail", "fail", "fail"], "regression"),  # p = 0.024
    (["pass", "fail"], ["pass", "fail", "pass"], "flaky"),
])
def test_mixed_epoch_counts(baseline: list[str], candidate: list[str], label: str) -> None:
    result = cmp.compare(make_run({"t": candidate}, run_id="a" * 12),
                         make_run({"t": baseline}, run_id="b" * 12))
    labels = [c.label for c in result.regressions + result.fixed + result.flaky]
    assert labels == [label]


def test_infra_error_trials_are_no_verdict_in_either_count() -> None:
    base = make_run({"t": ["pass", "pass", "pass"]}, run_id="b" * 12)
    cand = make_run({"t": ["fail", "infra_error", "fail"]}, run_id="a" * 12)
    [change] = cmp.compare(cand, base).regressions
    assert (change.a_passed, change.a_graded, change.b_passed, change.b_graded) == (0, 2, 3, 3)


# ------------------------------------------------------------------ escaping


def test_markdown_escapes_everything_an_agent_wrote() -> None:
    base = make_run({"t": "pass"}, run_id="b" * 12)
    cand = make_run({"t": "infra_error"}, run_id="a" * 12,
                    t={"error": "boom\n### injected heading\n<img src=x onerror=alert(1)> [x](http://e)"})
    markdown = cmp.render_markdown(cmp.compare(cand, base))
    assert "\n### injected" not in markdown and "<img" not in markdown and "](http" not in markdown
    assert "boom \\#\\#\\# injected heading &lt;img src=x onerror=alert\\(1\\)&gt; \\[x\\]" in markdown
    text = cmp.render_text(cmp.compare(cand, base))
    assert "\n### injected" not in text
