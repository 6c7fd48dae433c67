"""The data model: strict input, deterministic JSON, totals, status."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from meridian.evals.types import (
    DEFAULT_TIMEOUT_S,
    GraderSpec,
    Score,
    Step,
    Task,
    TaskResult,
    Trajectory,
    task_status,
)


def test_task_rejects_unknown_keys_and_bad_values() -> None:
    with pytest.raises(ValidationError, match="extra_forbidden|Extra inputs"):
        Task.model_validate({"id": "a", "input": "q", "grader": "exact_match"})
    with pytest.raises(ValidationError, match="greater than 0"):
        Task(id="a", input="q", timeout_s=0)
    with pytest.raises(ValidationError, match="at least 1 character"):
        Task(id="", input="q")


def test_task_timeout_falls_back_to_the_default() -> None:
    assert Task(id="a", input="q").effective_timeout_s() == DEFAULT_TIMEOUT_S
    assert Task(id="a", input="q", timeout_s=2.5).effective_timeout_s() == 2.5


def test_grader_spec_label() -> None:
    assert GraderSpec(name="exact_match").label() == "exact_match"
    spec = GraderSpec(name="numeric_tolerance", args={"rel": 0.01, "abs": 1})
    assert spec.label() == "numeric_tolerance(abs=1, rel=0.01)"


def test_trajectory_totals_default_to_the_sums_over_steps() -> None:
    raw = {"task_id": "a", "steps": [
        {"index": 0, "kind": "llm", "name": "plan", "tokens_in": 10, "tokens_out": 2, "cost_usd": 0.25},
        {"index": 1, "kind": "tool", "name": "calc", "tokens_in": 5, "cost_usd": 0.5},
    ]}
    traj = Trajectory.model_validate(raw)
    assert (traj.cost_usd, traj.tokens_in, traj.tokens_out, traj.tokens) == (0.75, 15, 2, 17)
    explicit = Trajectory.model_validate({**raw, "cost_usd": 2.0})
    assert explicit.cost_usd == 2.0
    assert [s.name for s in traj.tool_steps] == ["calc"]


def test_trajectory_reports_a_malformed_step_by_field() -> None:
    with pytest.raises(ValidationError) as err:
        Trajectory.model_validate({"task_id": "a", "steps": [{"index": 0, "kind": "tool"}]})
    assert err.value.errors()[0]["loc"] == ("steps", 0, "name")
    with pytest.raises(ValidationError):
        Trajectory.model_validate({"task_id": "a", "steps": [{"index": 0, "kind": "tool", "name": "x",
                                                              "cost_usd": "lots"}]})


def test_json_round_trip_is_byte_stable() -> None:
    traj = Trajectory(task_id="a", final_output={"b": 1, "a": [1.5, None]}, completed=True,
                      steps=[Step(index=0, kind="tool", name="x", input={"q": 1}, latency_s=0.001)])
    result = TaskResult(task_id="a", status="pass", trajectory=traj,
                        scores=[Score(name="completed", value=1.0, passed=True)])
    text = result.model_dump_json()
    again = TaskResult.model_validate_json(text)
    assert again == result
    assert again.model_dump_json() == text
    assert list(json.loads(text)) == ["task_id", "epoch", "status", "scores", "trajectory", "error",
                                      "attempts"]


def test_score_value_is_bounded() -> None:
    with pytest.raises(ValidationError):
        Score(name="x", value=1.5, passed=True)


def test_task_status() -> None:
    ok = Score(name="a", value=1.0, passed=True)
    bad = Score(name="b", value=0.0, passed=False)
    broken = Score(name="c", value=0.0, passed=False, infra_error=True)
    assert task_status([ok]) == "pass"
    assert task_status([ok, bad]) == "fail"
    assert task_status([bad, broken]) == "infra_error"
    assert task_status([ok], error="agent raised") == "infra_error"
    assert task_status([]) == "fail"
