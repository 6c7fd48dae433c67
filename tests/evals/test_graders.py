"""Every grader: passing, failing, empty trajectories and zero denominators."""

from __future__ import annotations

from typing import Any

import pytest

from meridian.evals import graders
from meridian.evals.graders import registry
from meridian.evals.graders.final_answer import parse_number, strip_code_fence
from meridian.evals.graders.trajectory import canonical_arguments
from meridian.evals.types import GraderSpec, Score, Step, Task, Trajectory
from tests.evaluators.evaluator_helpers import http as httpx  # the installed SDK's HTTP library


def make_task(**fields: Any) -> Task:
    fields.setdefault("id", "t")
    fields.setdefault("input", "question")
    return Task(**fields)


def tool(index: int, name: str, input: Any = None, *, error: str | None = None,
         kind: str = "tool", cost: float = 0.0) -> Step:
    return Step(index=index, kind=kind, name=name, input=input, error=error, cost_usd=cost)


def trajectory(*steps: Step, output: Any = "answer", completed: bool = True,
               error: str | None = None, latency: float = 0.1) -> Trajectory:
    return Trajectory(task_id="t", steps=list(steps), final_output=output, completed=completed,
                      error=error, latency_s=latency)


EMPTY = Trajectory(task_id="t")


def run(name: str, task: Task, traj: Trajectory, **kwargs: Any) -> Score:
    return graders.get(name).fn(task, traj, **kwargs)


# ------------------------------------------------------------------ registry


def test_every_builtin_grader_is_registered_with_a_description() -> None:
    assert graders.names() == sorted([
        "completed", "contains_all", "cost_budget", "exact_match", "json_schema_match",
        "latency_budget", "llm_judge", "no_redundant_calls", "numeric_tolerance",
        "recovered_from_error", "regex_match", "step_efficiency", "tool_choice_precision",
    ])
    for name, description in graders.describe():
        assert description and "\n" not in description, name


def test_unknown_grader_lists_the_known_ones() -> None:
    with pytest.raises(graders.UnknownGrader) as err:
        graders.get("exact")
    assert str(err.value).startswith("unknown grader 'exact' (known: completed, contains_all, ")


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Graders a test registers vanish after it."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


def test_adding_a_grader_is_one_decorated_function(scratch_registry: None) -> None:
    @graders.grader("test_short_answer", kind="final_answer")
    def short_answer(task: Task, trajectory: Trajectory, *, max_words: int = 3) -> Score:
        """At most `max_words` words."""
        n = len(str(trajectory.final_output).split())
        return Score(name="test_short_answer", value=float(n <= max_words), passed=n <= max_words)

    assert graders.get("test_short_answer").description == "At most `max_words` words."
    task = make_task(graders=[GraderSpec(name="test_short_answer", args={"max_words": 1})])
    [score] = graders.grade(task, trajectory(output="two words"))
    assert not score.passed


@pytest.mark.parametrize(("name", "args", "message"), [
    ("numeric_tolerance", {"rell": 0.1},
     "grader 'numeric_tolerance' has no argument 'rell' (accepted: abs, pick, rel)"),
    ("numeric_tolerance", {"rel": "small"},
     "grader 'numeric_tolerance' argument 'rel': input should be a valid number, got 'small'"),
    ("regex_match", {"flags": "ix"},
     "grader 'regex_match' argument 'flags': unknown regex flag(s) 'x' (known: i, m, s), got 'ix'"),
    ("regex_match", {"pattern": "("},
     ("grader 'regex_match' argument 'pattern': invalid regular expression: "
      "missing ), unterminated subpattern at position 0, got '('")),
    ("regex_match", {"pattern": "a", "mode": "match"},
     "grader 'regex_match' argument 'mode': input should be 'search' or 'fullmatch', got 'match'"),
    ("llm_judge", {"n_samples": 0},
     "grader 'llm_judge' argument 'n_samples': input should be greater than or equal to 1, got 0"),
    ("numeric_tolerance", {"rel": -0.1},
     "grader 'numeric_tolerance' argument 'rel': input should be greater than or equal to 0, got -0.1"),
    ("exact_match", {"case_sensitive": "yes"},
     "grader 'exact_match' argument 'case_sensitive': input should be a valid boolean, got 'yes'"),
    ("llm_judge", {"api_key": "sk-x"},
     ("grader 'llm_judge' has no argument 'api_key' "
      "(accepted: max_retries, max_tokens, model, n_samples, rubric, threshold)")),
])
def test_arguments_are_checked_against_the_signature(name: str, args: dict[str, Any], message: str) -> None:
    with pytest.raises(graders.GraderArgumentError) as err:
        graders.check_arguments(name, args)
    assert str(err.value) == message


def test_int_is_accepted_where_a_float_is_expected() -> None:
    assert graders.check_arguments("numeric_tolerance", {"abs": 1}) == {"abs": 1.0}


def test_grade_turns_a_raising_grader_into_an_infra_error(scratch_registry: None) -> None:
    @graders.grader("test_explodes", kind="trajectory")
    def explodes(task: Task, trajectory: Trajectory) -> Score:
        """Always raises."""
        raise RuntimeError("boom")

    task = make_task(graders=[GraderSpec(name="test_explodes"), GraderSpec(name="completed")])
    result = graders.grade_task(task, trajectory())
    assert result.status == "infra_error"
    assert result.scores[0].detail == "grader raised RuntimeError: boom"
    assert result.scores[1].passed
    assert result.error == "test_explodes: grader raised RuntimeError: boom"


def test_offline_grading_skips_network_graders_as_infra_errors() -> None:
    task = make_task(expected="x", graders=[GraderSpec(name="llm_judge")])
    [score] = graders.grade(task, trajectory(output="x"), offline=True)
    assert score.infra_error and not score.passed
    assert score.detail == "skipped: llm_judge needs the network and the run is offline"


def test_grade_reports_a_missing_task_field_as_infra_error() -> None:
    task = make_task(graders=[GraderSpec(name="step_efficiency")])
    [score] = graders.grade(task, trajectory())
    assert score.infra_error
    assert score.detail == "task 't' has no reference_steps, which step_efficiency needs"


def test_status_passes_only_when_every_grader_passed() -> None:
    task = make_task(expected="a", graders=[GraderSpec(name="exact_match"),
                                            GraderSpec(name="completed")])
    assert graders.grade_task(task, trajectory(output="a")).status == "pass"
    assert graders.grade_task(task, trajectory(output="b")).status == "fail"
    assert graders.task_status([]) == "fail"
    passing = graders.grade(task, trajectory(output="a"))
    assert graders.task_status(passing, error="agent raised ValueError: x") == "infra_error"


# ------------------------------------------------------------------ exact_match


def test_exact_match_normalises_whitespace_and_case_by_default() -> None:
    task = make_task(expected="New  York")
    assert run("exact_match", task, trajectory(output="  new york\n")).passed
    strict = run("exact_match", task, trajectory(output="new york"), case_sensitive=True)
    assert not strict.passed
    assert strict.detail == "got 'new york', expected 'New York'"


def test_exact_match_accepts_any_of_a_list_and_compares_numbers_as_text() -> None:
    assert run("exact_match", make_task(expected=["NYC", "New York"]), trajectory(output="nyc")).passed
    assert run("exact_match", make_task(expected=42), trajectory(output="42")).passed


def test_final_answer_graders_fail_an_empty_trajectory_cleanly() -> None:
    task = make_task(expected="x")
    cases: list[tuple[str, dict[str, Any]]] = [
        ("exact_match", {}), ("numeric_tolerance", {}), ("regex_match", {"pattern": "x"}),
        ("json_schema_match", {"schema": {"type": "object"}}),
    ]
    for name, kwargs in cases:
        score = run(name, task, EMPTY, **kwargs)
        assert (score.passed, score.value, score.detail) == (False, 0.0, "no final output"), name


# ------------------------------------------------------------------ numeric_tolerance


@pytest.mark.parametrize(("text", "number"), [
    ("42", 42.0), ("The answer is 42.", 42.0), ("1,234,567.5", 1234567.5), ("-3.5e2", -350.0),
    ("\u22127", -7.0), ("2 + 2 = 4", 2.0), ("42 (that is 6 * 7)", 42.0), (".5", 0.5), ("costs $1,200 total", 1200.0),
    (7, 7.0), (2.5, 2.5),
])
def test_parse_number_finds_the_stated_number(text: Any, number: float) -> None:
    assert parse_number(text)[0] == number


@pytest.mark.parametrize("text", ["no digits here", "", None, True, float("nan"), [1, 2], {"n": 1}])
def test_parse_number_refuses_non_numbers(text: Any) -> None:
    assert parse_number(text)[0] is None


def test_numeric_tolerance_relative_absolute_and_default() -> None:
    task = make_task(expected=100)
    assert run("numeric_tolerance", task, trajectory(output="100.0")).passed
    assert not run("numeric_tolerance", task, trajectory(output="100.5")).passed
    assert run("numeric_tolerance", task, trajectory(output="100.5"), rel=0.01).passed
    assert run("numeric_tolerance", task, trajectory(output="100.5"), abs=0.5).passed
    assert not run("numeric_tolerance", task, trajectory(output="102"), rel=0.01, abs=1.0).passed
    score = run("numeric_tolerance", task, trajectory(output="about 102"), rel=0.01, abs=1.5)
    assert score.detail == "read 102, expected 100, |diff| 2 > tolerance 1.5"


def test_numeric_tolerance_reads_the_first_number_unless_told_last() -> None:
    task = make_task(expected=42)
    score = run("numeric_tolerance", task, trajectory(output="42 (that is 6 * 7)"))
    assert score.passed and score.detail.startswith("read 42 (first of 3 numbers)")
    assert score.metadata["read"] == 42.0 and score.metadata["pick"] == "first"
    assert not run("numeric_tolerance", task, trajectory(output="42 (that is 6 * 7)"),
                   pick="last").passed
    assert run("numeric_tolerance", task, trajectory(output="6 * 7 = 42"), pick="last").passed


def test_numeric_tolerance_zero_expected_with_relative_tolerance() -> None:
    task = make_task(expected=0)
    assert run("numeric_tolerance", task, trajectory(output="0"), rel=0.1).passed
    assert not run("numeric_tolerance", task, trajectory(output="0.001"), rel=0.1).passed


def test_numeric_tolerance_non_numeric_expected_and_answer() -> None:
    score = run("numeric_tolerance", make_task(expected="many"), trajectory(output="3"))
    assert score.detail == "expected value is not a number: no number in 'many'"
    score = run("numeric_tolerance", make_task(expected=3), trajectory(output="three"))
    assert (score.passed, score.detail) == (False, "no number in 'three'")


# ------------------------------------------------------------------ contains_all


def test_contains_all_gives_partial_credit() -> None:
    task = make_task(expected=["Paris", "Berlin", "Rome"])
    score = run("contains_all", task, trajectory(output="paris and rome"))
    assert (score.value, score.passed) == (pytest.approx(2 / 3), False)
    assert score.detail == "2/3 present; missing 'Berlin'"
    assert run("contains_all", task, trajectory(output="paris and rome"), threshold=0.6).passed
    assert not run("contains_all", task, trajectory(output="paris rome berlin"),
                   case_sensitive=True).passed


def test_contains_all_required_argument_overrides_expected_and_empty_is_vacuous() -> None:
    task = make_task(expected="ignored")
    assert run("contains_all", task, trajectory(output="a b"), required=["a", "b"]).passed
    score = run("contains_all", task, EMPTY, required=[])
    assert (score.passed, score.detail) == (True, "nothing required (vacuous pass)")
    assert run("contains_all", task, EMPTY, required=["a"]).value == 0.0


# ------------------------------------------------------------------ regex_match


def test_regex_match_search_and_fullmatch() -> None:
    task = make_task()
    assert run("regex_match", task, trajectory(output="The total is 42."), pattern=r"\d+").passed
    assert not run("regex_match", task, trajectory(output="The total is 42."), pattern=r"\d+",
                   mode="fullmatch").passed
    assert run("regex_match", task, trajectory(output=" 42 \n"), pattern=r"\d+", mode="fullmatch").passed
    assert run("regex_match", task, trajectory(output="YES"), pattern="yes", ignore_case=True).passed


# ------------------------------------------------------------------ json_schema_match

SCHEMA = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}},
          "additionalProperties": False}


def test_json_schema_match_strips_a_code_fence() -> None:
    fenced = 'Here you go:\n```json\n{"n": 3}\n```\nanything else'
    assert strip_code_fence(fenced) == '{"n": 3}'
    assert run("json_schema_match", make_task(), trajectory(output=fenced), schema=SCHEMA).passed


@pytest.mark.parametrize(("text", "body"), [
    ("```true```", "true"), ("```42```", "42"), ('```{"n": 3}```', '{"n": 3}'),
    ('```json {"n": 3}```', '{"n": 3}'), ('```JSON\r\n{"n": 3}\r\n```', '{"n": 3}'),
    ('```\n[1]\n```', "[1]"), ('cut off: ```json\n{"n": 3}', '{"n": 3}'),
    ('no fence {"n": 3} ', 'no fence {"n": 3}'),
])
def test_strip_code_fence_keeps_the_body(text: str, body: str) -> None:
    assert strip_code_fence(text) == body


def test_json_schema_match_inline_fence_without_language() -> None:
    assert run("json_schema_match", make_task(), trajectory(output="```7```"),
               schema={"type": "integer"}).passed


def test_json_schema_match_uses_full_json_schema() -> None:
    score = run("json_schema_match", make_task(), trajectory(output='{"n": "3"}'), schema=SCHEMA)
    assert score.detail == "schema violation at n: '3' is not of type 'integer'"
    score = run("json_schema_match", make_task(), trajectory(output='{"n": 3, "x": 1}'), schema=SCHEMA)
    assert not score.passed and "Additional properties" in score.detail
    ref = {"$defs": {"pos": {"type": "number", "exclusiveMinimum": 0}}, "$ref": "#/$defs/pos"}
    assert not run("json_schema_match", make_task(), trajectory(output="0"), schema=ref).passed
    assert run("json_schema_match", make_task(), trajectory(output={"n": 1}), schema=SCHEMA).passed


def test_json_schema_match_reports_invalid_json() -> None:
    score = run("json_schema_match", make_task(), trajectory(output="{n: 3}"), schema=SCHEMA)
    assert score.detail == "not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"


def test_json_schema_match_rejects_an_invalid_schema_when_checked() -> None:
    with pytest.raises(graders.GraderArgumentError, match="invalid JSON Schema"):
        graders.check_arguments("json_schema_match", {"schema": {"type": 5}})


# ------------------------------------------------------------------ step_efficiency


def test_step_efficiency_against_reference_with_slack() -> None:
    task = make_task(reference_steps=2)
    five = trajectory(*[tool(i, "calculator") for i in range(5)])
    score = run("step_efficiency", task, five)
    assert (score.passed, score.value, score.detail) == (False, 0.4, "5 step(s), reference 2")
    assert run("step_efficiency", task, five, slack=3).passed
    assert run("step_efficiency", task, trajectory(tool(0, "a"), tool(1, "b"))).value == 1.0
    # A float slack is caliper's multiplier: 2 x 2.5 = 5 steps allowed, 2 x 1.5 = 3 not.
    assert run("step_efficiency", task, five, slack=2.5).passed
    score = run("step_efficiency", task, five, slack=1.5)
    assert (score.passed, score.detail) == (False, "5 step(s), reference 2 x slack 1.5")
    assert run("step_efficiency", make_task(), five, reference_steps=5).passed
    llm_only = trajectory(tool(0, "plan", kind="llm"), *[tool(i, "c") for i in range(1, 3)])
    assert run("step_efficiency", task, llm_only, kinds=["tool"]).passed


def test_step_efficiency_empty_trajectory_fails_and_zero_reference() -> None:
    score = run("step_efficiency", make_task(reference_steps=2), EMPTY)
    assert (score.passed, score.value, score.detail) == (False, 0.0, "no steps recorded (reference 2)")
    score = run("step_efficiency", make_task(reference_steps=0), EMPTY)
    assert not score.passed
    score = run("step_efficiency", make_task(reference_steps=0), trajectory(tool(0, "a")))
    assert (score.passed, score.value) == (False, 0.0)


# ------------------------------------------------------------------ tool_choice_precision


def test_tool_choice_precision_and_recall() -> None:
    task = make_task(expected_tools=["lookup", "string_op"])
    score = run("tool_choice_precision", task,
                trajectory(tool(0, "lookup"), tool(1, "lookup"), tool(2, "string_op")))
    # A retried right tool is not a wrong choice: distinct tools are judged.
    assert score.detail == "precision 1.00 (2/2 distinct tools), recall 1.00 (2/2)"
    assert score.passed
    wrong = run("tool_choice_precision", task,
                trajectory(tool(0, "lookup"), tool(1, "search"), tool(2, "string_op")))
    assert wrong.detail == "precision 0.67 (2/3 distinct tools), recall 1.00 (2/2); unexpected search"
    assert not wrong.passed
    assert run("tool_choice_precision", task,
               trajectory(tool(0, "lookup"), tool(1, "search"), tool(2, "string_op")),
               min_precision=0.6).passed
    recall = run("tool_choice_precision", task, trajectory(tool(0, "lookup")))
    assert recall.detail == "precision 1.00 (1/1 distinct tools), recall 0.50 (1/2); not called string_op"
    assert not recall.passed
    assert run("tool_choice_precision", task, trajectory(tool(0, "lookup")), require_recall=False).passed


def test_tool_choice_precision_judges_the_set_of_tools() -> None:
    task = make_task(expected_tools=["lookup", "lookup", "calculator"])
    steps = [tool(0, "lookup"), tool(1, "lookup"), tool(2, "lookup"), tool(3, "calculator")]
    score = run("tool_choice_precision", task, trajectory(*steps))
    assert score.detail.startswith("precision 1.00 (2/2 distinct tools), recall 1.00 (2/2)")
    # Order does not matter, and llm steps are not tool calls.
    steps = [tool(0, "plan", kind="llm"), tool(1, "calculator"), tool(2, "lookup"), tool(3, "lookup")]
    assert run("tool_choice_precision", task, trajectory(*steps)).value == 1.0


def test_tool_choice_precision_zero_denominators() -> None:
    score = run("tool_choice_precision", make_task(expected_tools=["lookup"]), EMPTY)
    assert (score.passed, score.value) == (False, 0.0)
    assert score.detail == "precision 0.00 (0/0 distinct tools), recall 0.00 (0/1); not called lookup; no tool calls"
    score = run("tool_choice_precision", make_task(), EMPTY)
    assert (score.passed, score.value) == (True, 1.0)


# ------------------------------------------------------------------ no_redundant_calls


def test_canonical_arguments_equate_int_and_float_and_ignore_key_order() -> None:
    assert canonical_arguments({"a": 1, "b": [2.0, {"c": 3}]}) == canonical_arguments({"b": [2, {"c": 3.0}], "a": 1.0})
    assert canonical_arguments({"a": True}) != canonical_arguments({"a": 1})
    assert canonical_arguments("1") != canonical_arguments(1)
    # Integers compare exactly (no float rounding) and never overflow.
    assert canonical_arguments(2**53 + 1) != canonical_arguments(2**53)
    assert canonical_arguments(10**400) == str(10**400)
    assert canonical_arguments(1e15) == canonical_arguments(10**15)


def test_no_redundant_calls_flags_same_tool_same_arguments() -> None:
    steps = [tool(0, "calculator", {"x": 1, "y": 2}), tool(1, "calculator", {"y": 2.0, "x": 1.0}),
             tool(2, "lookup", {"x": 1, "y": 2})]
    score = run("no_redundant_calls", make_task(), trajectory(*steps))
    assert (score.passed, score.value) == (False, pytest.approx(2 / 3))
    assert score.detail == '1 redundant of 3 call(s): #1 calculator({"x":1,"y":2})'
    assert run("no_redundant_calls", make_task(), trajectory(*steps), max_redundant=1).passed
    assert run("no_redundant_calls", make_task(), trajectory(*steps), allow=1).passed


def test_no_redundant_calls_covers_retrieval_steps() -> None:
    steps = [tool(0, "kb", {"q": "x"}, kind="retrieval"), tool(1, "kb", {"q": "x"}, kind="retrieval")]
    score = run("no_redundant_calls", make_task(), trajectory(*steps))
    assert not score.passed and score.detail.startswith("1 redundant of 2 call(s)")
    assert run("no_redundant_calls", make_task(), trajectory(*steps), kinds=["tool"]).passed


def test_no_redundant_calls_allows_a_retry_after_an_error() -> None:
    steps = [tool(0, "lookup", {"q": "k"}, error="TimeoutError"), tool(1, "lookup", {"q": "k"})]
    assert run("no_redundant_calls", make_task(), trajectory(*steps)).passed
    assert not run("no_redundant_calls", make_task(), trajectory(*steps), count_retries=True).passed


def test_no_redundant_calls_empty_trajectory_is_vacuous() -> None:
    score = run("no_redundant_calls", make_task(), EMPTY)
    assert (score.passed, score.value, score.detail) == (True, 1.0,
                                                         "no tool/retrieval calls (vacuous pass)")


# ------------------------------------------------------------------ recovered_from_error


def test_recovered_from_error_needs_a_later_success_and_completion() -> None:
    recovered = trajectory(tool(0, "lookup", error="TimeoutError"), tool(1, "lookup"))
    assert run("recovered_from_error", make_task(), recovered).passed
    stuck = trajectory(tool(0, "lookup"), tool(1, "lookup", error="TimeoutError"), completed=False)
    score = run("recovered_from_error", make_task(), stuck)
    assert (score.passed, score.value) == (False, 0.0)
    assert score.detail == "0/1 errored step(s) followed by a success; the agent did not complete"
    gave_up = trajectory(tool(0, "lookup", error="E"), tool(1, "lookup"), completed=False)
    assert not run("recovered_from_error", make_task(), gave_up).passed


def test_recovered_from_error_without_errors_passes_vacuously() -> None:
    for traj in (EMPTY, trajectory(tool(0, "lookup"))):
        score = run("recovered_from_error", make_task(), traj)
        assert (score.passed, score.detail) == (True, "no errored steps (vacuous pass)")


# ------------------------------------------------------------------ budgets and completion


def test_cost_budget() -> None:
    task = make_task(cost_budget_usd=0.01)
    assert run("cost_budget", task, trajectory(tool(0, "a", cost=0.004), tool(1, "b", cost=0.004))).passed
    score = run("cost_budget", task, trajectory(tool(0, "a", cost=0.02)))
    assert (score.passed, score.value, score.detail) == (False, 0.5, "$0.0200 of $0.0100 budget (over)")
    assert run("cost_budget", task, EMPTY).passed


def test_budgets_of_zero_do_not_divide_by_zero() -> None:
    task = make_task(cost_budget_usd=0.0, latency_budget_s=0.001)
    assert run("cost_budget", task, EMPTY).passed
    score = run("cost_budget", task, trajectory(tool(0, "a", cost=0.01)))
    assert (score.passed, score.value) == (False, 0.0)
    assert run("latency_budget", task, EMPTY).passed


def test_latency_budget() -> None:
    task = make_task(latency_budget_s=1.0)
    assert run("latency_budget", task, trajectory(latency=0.5)).detail == "0.500s of 1.000s budget"
    score = run("latency_budget", task, trajectory(latency=4.0))
    assert (score.passed, score.value) == (False, 0.25)


def test_completed() -> None:
    assert run("completed", make_task(), trajectory()).passed
    score = run("completed", make_task(), trajectory(completed=False, error="ValueError: x"))
    assert score.detail == "not completed: ValueError: x"
    assert run("completed", make_task(), EMPTY).detail == "not completed: the agent did not report completion"


# ------------------------------------------------------------------ llm_judge


def judge_reply(text: str, tokens_in: int = 100, tokens_out: int = 20) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}


def fake_anthropic(*replies: Any) -> tuple[httpx.Client, list[dict[str, Any]]]:
    """A client whose transport answers with ``replies`` in turn and records requests."""
    requests: list[dict[str, Any]] = []
    queue = list(replies)

    def handler(request: httpx.Request) -> httpx.Response:
        import json
        requests.append(json.loads(request.content))
        reply = queue.pop(0)
        if isinstance(reply, httpx.Response):
            return reply
        return httpx.Response(200, json=judge_reply(reply))

    return httpx.Client(transport=httpx.MockTransport(handler)), requests


JUDGED = make_task(input="Capital of Peru?", expected="Lima")


def judge(traj: Trajectory, *replies: Any, **kwargs: Any) -> tuple[Score, list[dict[str, Any]]]:
    client, requests = fake_anthropic(*replies)
    score = graders.get("llm_judge").fn(JUDGED, traj, http_client=client, api_key="sk-test",
                                         max_retries=0, **kwargs)
    return score, requests


def test_llm_judge_scores_and_records_usage() -> None:
    score, requests = judge(trajectory(output="Lima"), '{"score": 5, "reason": "Names Lima."}',
                            rubric="Names Lima.")
    assert (score.passed, score.value, score.infra_error) == (True, 1.0, False)
    assert score.detail == "score 5/5, agreement 1/1: Names Lima."
    assert score.usage is not None
    assert (score.usage.tokens_in, score.usage.tokens_out) == (100, 20)
    assert score.usage.cost_usd == pytest.approx(100 * 3e-6 + 20 * 15e-6)  # sonnet: $3/$15 per Mtok
    [request] = requests
    assert request["model"] == "claude-sonnet-4-6"
    # API version 2026-10-21 rejects sampling parameters with HTTP 400.
    assert not {"temperature", "top_p", "top_k"} & set(request)
    prompt = request["messages"][0]["content"]
    assert "Rubric:\nNames Lima." in prompt and "Reference answer:\nLima" in prompt
    assert prompt.endswith("Agent's final answer:\nLima")


def test_llm_judge_majority_vote_reports_agreement() -> None:
    score, requests = judge(trajectory(output="Lima"), '{"score": 4, "reason": "ok"}',
                            'Sure: {"score": 2, "reason": "bad"}', '{"score": 4, "reason": "fine"}',
                            n_samples=3)
    assert len(requests) == 3
    assert (score.value, score.passed) == (0.75, True)
    assert score.detail == "score 4/5, agreement 2/3 (votes 2:1, 4:2): ok"
    assert score.usage is not None and score.usage.tokens_in == 300


def test_llm_judge_tie_goes_to_the_lower_score() -> None:
    score, _ = judge(trajectory(output="Lima"), '{"score": 5}', '{"score": 3}', n_samples=2)
    assert (score.value, score.passed) == (0.5, False)
    assert score.detail == "score 3/5, agreement 1/2 (votes 3:1, 5:1)"


def test_llm_judge_api_failure_is_an_infra_error_not_a_failing_grade() -> None:
    overloaded = httpx.Response(529, json={"type": "error", "error": {"type": "overloaded_error",
                                                                      "message": "Overloaded"}})
    score, _ = judge(trajectory(output="Lima"), overloaded)
    assert score.infra_error and not score.passed
    assert score.detail == "judge unavailable: HTTP 529: Overloaded"
    task = JUDGED.model_copy(update={"graders": [GraderSpec(name="llm_judge")]})
    result = graders.grade_task(task, trajectory(output="Lima"))  # no API key in the environment
    assert result.status == "infra_error"
    assert result.scores[0].detail == "judge unavailable: ANTHROPIC_API_KEY is not set"


def test_llm_judge_connection_failure_is_an_infra_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = httpx.Client(transport=httpx.MockTransport(refuse))
    score = graders.get("llm_judge").fn(JUDGED, trajectory(output="Lima"), http_client=client,
                                         api_key="sk-test", max_retries=0)
    assert score.infra_error
    assert score.detail == "judge unavailable: APIConnectionError: Connection error."


def test_llm_judge_unusable_reply_is_an_infra_error() -> None:
    score, _ = judge(trajectory(output="Lima"), "I would rate this highly.")
    assert score.infra_error
    assert score.detail == "judge reply unusable: judge reply has no JSON object: 'I would rate this highly.'"
    score, _ = judge(trajectory(output="Lima"), '{"score": 9}')
    assert score.detail == "judge reply unusable: judge score 9 is outside 1-5"


def test_llm_judge_without_an_answer_fails_without_calling_the_model() -> None:
    score, requests = judge(EMPTY)
    assert (score.passed, score.infra_error, score.detail) == (False, False, "no final output to judge")
    assert requests == []
