"""Graders an agent (or a careless suite) can game."""

from __future__ import annotations

from meridian.evals.graders import grade_task
from meridian.evals.types import GraderSpec, Step, Task, Trajectory


def _grade(expected: str, answer: str, **args: object) -> tuple[bool, str]:
    task = Task(id="n", input="q", expected=expected,
                graders=[GraderSpec(name="numeric_tolerance", args=dict(args))])
    result = grade_task(task, Trajectory(task_id="n", steps=[], final_output=answer,
                                         completed=True))
    score = result.scores[0]
    return score.passed, score.detail


def test_an_overflowing_expected_number_does_not_pass_every_answer() -> None:
    passed, detail = _grade("about 1e999", "7", rel=0.1)
    assert not passed and "not a number" in detail and "not finite" in detail


def test_an_overflowing_answer_fails_and_says_why() -> None:
    passed, detail = _grade("42", "it is 1e999")
    assert not passed and "not finite" in detail


def test_the_first_number_is_read_by_default_and_the_last_with_pick_last() -> None:
    assert _grade("42", "42 (that is 6 * 7)")[0]
    assert not _grade("42", "6 * 7 = 42")[0]
    assert _grade("42", "6 * 7 = 42", pick="last")[0]
    passed, detail = _grade("42", "41 42 43")  # a spray of guesses reads the first
    assert not passed and "first of 3 numbers" in detail


def test_a_retried_right_tool_is_not_a_wrong_choice_but_a_wrong_tool_is() -> None:
    def steps(*names: str) -> list[Step]:
        return [Step(index=i, kind="tool", name=n, error="timeout" if i == 0 else None)
                for i, n in enumerate(names)]

    task = Task(id="t", input="q", expected="x", expected_tools=["lookup"],
                graders=[GraderSpec(name="tool_choice_precision")])
    retried = grade_task(task, Trajectory(task_id="t", steps=steps("lookup", "lookup"),
                                          final_output="x", completed=True)).scores[0]
    assert retried.passed and retried.metadata["calls"] == 2
    wrong = grade_task(task, Trajectory(task_id="t", steps=steps("lookup", "search"),
                                        final_output="x", completed=True)).scores[0]
    assert not wrong.passed and "unexpected search" in wrong.detail
