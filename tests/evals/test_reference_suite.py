"""The shipped reference suite: loads, covers every grader, and v2 clearly beats v1.

Graded directly (agent -> graders), without the runner, so this pins the suite and
the reference agent independently of run files and workers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from meridian.evals import graders
from meridian.evals.agents import ReferenceAgent
from meridian.evals.suite import Suite, load_suite, needs_network
from meridian.evals.types import TaskResult

SUITE_PATH = Path(__file__).resolve().parents[2] / "suites" / "reference.yaml"


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(SUITE_PATH)


def grade_all(suite: Suite, version: str) -> dict[str, TaskResult]:
    agent = ReferenceAgent(version, simulate_latency=False)  # type: ignore[arg-type]
    return {task.id: graders.grade_task(task, agent.run(task), offline=True)
            for task in suite.select(offline=True)}


@pytest.fixture(scope="module")
def v1(suite: Suite) -> dict[str, TaskResult]:
    return grade_all(suite, "v1")


@pytest.fixture(scope="module")
def v2(suite: Suite) -> dict[str, TaskResult]:
    return grade_all(suite, "v2")


def test_the_suite_has_25_tasks_using_every_grader(suite: Suite) -> None:
    assert suite.name == "reference"
    assert len(suite.tasks) == 25
    used = {spec.name for task in suite.tasks for spec in task.graders}
    assert used == set(graders.names())


def test_model_judged_tasks_are_tagged_llm(suite: Suite) -> None:
    judged = {task.id for task in suite.tasks if needs_network(task)}
    tagged = {task.id for task in suite.tasks if "llm" in task.tags}
    assert judged == tagged == {"judged_capital_of_peru", "judged_reversal"}
    assert len(suite.select(offline=True)) == 23


def test_v2_passes_clearly_more_tasks_than_v1(v1: dict[str, TaskResult], v2: dict[str, TaskResult]) -> None:
    passed_v1 = {task_id for task_id, r in v1.items() if r.passed}
    passed_v2 = {task_id for task_id, r in v2.items() if r.passed}
    assert passed_v2 == set(v2) - {"two_decimal_places"}
    assert passed_v1 == {"one_third", "square_root_of_two", "speed_of_light", "author_of_hamlet",
                         "uppercase_literal", "count_vowels", "length_of_looked_up_fact"}
    assert passed_v1 < passed_v2
    assert all(r.status != "infra_error" for r in [*v1.values(), *v2.values()])


def test_same_answer_different_verdict_is_the_point(v1: dict[str, TaskResult],
                                                    v2: dict[str, TaskResult]) -> None:
    """Tasks both versions answer identically, that v1 fails only on its trajectory."""
    trajectory_only: dict[str, set[str]] = {"final_answer": set(), "trajectory": set()}
    for task_id, result in v1.items():
        mine, theirs = result.trajectory, v2[task_id].trajectory
        assert mine is not None and theirs is not None
        same_answer = mine.final_output == theirs.final_output
        if same_answer and not result.passed and v2[task_id].passed:
            for score in result.scores:
                if not score.passed:
                    trajectory_only[graders.get(score.name).kind].add(task_id)
    assert trajectory_only["final_answer"] == set()
    assert trajectory_only["trajectory"] == {
        "multiply", "average_two_numbers", "power_of_two", "capital_of_france", "list_capitals",
        "reverse_literal", "length_of_literal", "reverse_looked_up_fact", "planets_times_twelve",
    }
    multiply = {s.name: s for s in v1["multiply"].scores}
    assert multiply["numeric_tolerance"].passed
    assert multiply["step_efficiency"].detail == "5 step(s), reference 2"
    assert not multiply["no_redundant_calls"].passed


def test_v1_costs_more_and_errors_more(v1: dict[str, TaskResult], v2: dict[str, TaskResult]) -> None:
    def totals(results: dict[str, TaskResult]) -> tuple[float, int, int]:
        trajectories = [r.trajectory for r in results.values() if r.trajectory]
        tool_steps = [s for t in trajectories for s in t.tool_steps]
        return (sum(t.cost_usd for t in trajectories), len(tool_steps),
                sum(1 for s in tool_steps if s.failed))

    cost_v1, calls_v1, errors_v1 = totals(v1)
    cost_v2, calls_v2, errors_v2 = totals(v2)
    assert cost_v1 > 1.3 * cost_v2
    assert errors_v1 / calls_v1 > 2 * (errors_v2 / calls_v2)
