"""A suite in caliper's format (as its README documents it; written for this test) loads
and grades as caliper grades it: its argument names, its slack multiplier, set-based
tool precision, empty trajectories failing step_efficiency."""

from __future__ import annotations

from typing import Any

from meridian.evals.graders import grade_task
from meridian.evals.suite import parse_suite
from meridian.evals.types import Step, Trajectory

CALIPER_SUITE = """
suite: caliper-style
defaults:
  timeout_s: 15
  cost_budget_usd: 0.025
tasks:
  - id: reverse_looked_up_fact
    input: "Reverse the capital of Japan."
    expected: "oykoT"
    grader:
      - exact_match: {case_sensitive: true}
      - tool_choice_precision
      - step_efficiency
    expected_tools: [lookup, string_op]
    reference_steps: 3
    tags: [composite]
  - id: list_colours
    input: "Name the colours of the French flag."
    expected: [blue, white, red]
    grader:
      - contains_all: {terms: [blue, white, red]}
  - id: shout
    input: "Say hello in capitals."
    expected: "HELLO"
    grader:
      - regex_match: {pattern: "hello", fullmatch: true}
  - id: slack_multiplier
    input: "Look something up."
    expected: "x"
    grader:
      - step_efficiency: {slack: 1.5}
      - no_redundant_calls: {allow: 0}
      - cost_budget
    reference_steps: 2
  - id: first_number
    input: "What is 6 * 7?"
    expected: 42
    grader: [numeric_tolerance]
"""


def step(index: int, name: str, *, kind: str = "tool", error: str | None = None,
         arg: Any = None, cost: float = 0.001) -> Step:
    return Step(index=index, kind=kind, name=name, input=arg or {"i": index}, error=error,
                cost_usd=cost)


def verdicts(task_id: str, steps: list[Step], output: Any) -> dict[str, bool]:
    suite = parse_suite(CALIPER_SUITE, "caliper.yaml")
    trajectory = Trajectory(task_id=task_id, steps=steps, final_output=output, completed=True)
    return {s.name: s.passed for s in grade_task(suite.task(task_id), trajectory).scores}


def test_the_suite_loads_with_caliper_argument_names() -> None:
    suite = parse_suite(CALIPER_SUITE, "caliper.yaml")
    assert [t.id for t in suite.tasks][:2] == ["reverse_looked_up_fact", "list_colours"]
    assert suite.task("list_colours").graders[0].args == {"terms": ["blue", "white", "red"]}


def test_a_retried_right_tool_is_not_a_wrong_choice() -> None:
    steps = [step(0, "lookup", error="TimeoutError"), step(1, "lookup"), step(2, "string_op")]
    assert verdicts("reverse_looked_up_fact", steps, "oykoT") == {
        "exact_match": True, "tool_choice_precision": True, "step_efficiency": True}
    assert verdicts("reverse_looked_up_fact", steps, "OYKOT")["exact_match"] is False


def test_an_empty_trajectory_fails_step_efficiency() -> None:
    assert verdicts("reverse_looked_up_fact", [], "oykoT")["step_efficiency"] is False


def test_terms_and_fullmatch_and_case_insensitive_regex_by_default() -> None:
    assert verdicts("list_colours", [], "Blue, white and RED") == {"contains_all": True}
    assert verdicts("list_colours", [], "blue and white") == {"contains_all": False}
    assert verdicts("shout", [], "HELLO") == {"regex_match": True}
    assert verdicts("shout", [], "HELLO there") == {"regex_match": False}


def test_a_float_slack_multiplies_the_reference() -> None:
    three = [step(0, "lookup", arg={"q": 1}), step(1, "lookup", arg={"q": 2}),
             step(2, "string_op", arg={"q": 3})]
    assert verdicts("slack_multiplier", three, "x")["step_efficiency"] is True  # 3 <= 2 x 1.5
    four = [*three, step(3, "string_op", arg={"q": 4})]
    assert verdicts("slack_multiplier", four, "x")["step_efficiency"] is False
    repeated = [step(0, "kb", kind="retrieval", arg={"q": 1}),
                step(1, "kb", kind="retrieval", arg={"q": 1})]
    assert verdicts("slack_multiplier", repeated, "x")["no_redundant_calls"] is False


def test_numeric_tolerance_reads_the_first_number() -> None:
    assert verdicts("first_number", [], "42 (that is 6 * 7)") == {"numeric_tolerance": True}
