"""The Claude evaluator through the real anthropic SDK, over a fake HTTP transport."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest

from meridian.config import AnthropicSettings, EvaluatorSettings
from meridian.evaluators import CheckResult, EvaluatorUnavailable, evaluate
from meridian.evaluators._payload import TOOL_INPUT_SCHEMA
from meridian.evaluators.anthropic_evaluator import SYSTEM_PROMPT, AnthropicEvaluator
from tests.evaluators.evaluator_helpers import (
    FakeAPI,
    error_body,
    http,
    make_bundle,
    tool_use_message,
)

# Read before the autouse fixture removes the key from the environment.
REAL_KEY = os.environ.get("ANTHROPIC_API_KEY")

GOOD: dict[str, Any] = {
    "scores": {"completeness": 9, "correctness": 8.5, "robustness": 8, "spec_adherence": 9},
    "issues": [{"severity": "low", "file": "src/shop/cart.py", "line": 7,
                "message": "round() hides sub-cent errors; document it"}],
    "summary": "Discount logic and validation are implemented and tested.",
}
STUB_FOUND: dict[str, Any] = {
    "scores": {"completeness": 6, "correctness": 5, "robustness": 6, "spec_adherence": 7},
    "issues": [{"severity": "high", "file": "src/shop/cart.py", "line": 2,
                "message": "total() is a stub: it raises NotImplementedError"}],
    "summary": "The core function is not implemented.",
}


def reply_with(status: int, body: dict[str, Any]) -> Any:
    return lambda request: http.Response(status, json=body)


def api_key_sent(api: FakeAPI) -> str:
    """The credential header of the first request (newer SDKs send a bearer token)."""
    headers = api.headers[0]
    return headers.get("x-api-key") or headers.get("authorization", "")


def run(api: FakeAPI, bundle: Any = None, threshold: float = 7.0, **settings: Any) -> Any:
    settings.setdefault("model", "claude-sonnet-4-6")
    evaluator = AnthropicEvaluator(AnthropicSettings(**settings), api_key="sk-ant-test",
                                   http_client=api.client(), max_retries=0)
    from meridian.evaluators.models import decide

    assessment = evaluator.assess(bundle or make_bundle())
    return decide(gate="backend", evaluator=assessment.evaluator, subject="s",
                  scores=assessment.scores, issues=assessment.issues, threshold=threshold,
                  summary=assessment.summary, usage=assessment.usage,
                  identity=assessment.identity, coverage=assessment.coverage)


def test_a_good_verdict_passes_and_records_usage_and_cost() -> None:
    api = FakeAPI(reply_with(200, tool_use_message(GOOD, input_tokens=2000, output_tokens=400)))
    verdict = run(api)
    assert verdict.passed
    assert verdict.evaluator == "anthropic:claude-sonnet-4-6"
    assert verdict.scores == {"completeness": 9.0, "correctness": 8.5, "robustness": 8.0,
                              "spec_adherence": 9.0}
    assert [i.where() for i in verdict.issues] == ["src/shop/cart.py:7"]
    # claude-sonnet-4-6 is $3 in / $15 out per million tokens.
    assert verdict.usage.model_dump() == {
        "input_tokens": 2000, "output_tokens": 400, "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0, "attempts": 1, "cost_usd": 0.012}


def test_the_request_is_a_fresh_conversation_with_a_forced_verdict_tool() -> None:
    api = FakeAPI(reply_with(200, tool_use_message(GOOD)))
    run(api, model="claude-haiku-4-5", max_tokens=1500)
    (body,) = api.requests
    assert body["model"] == "claude-haiku-4-5"
    assert body["max_tokens"] == 1500
    # One verdict call, forced, never several in parallel; strict schema.
    assert body["tool_choice"] == {"type": "tool", "name": "record_verdict",
                                   "disable_parallel_tool_use": True}
    assert "thinking" not in body
    assert [t["name"] for t in body["tools"]] == ["record_verdict"]
    assert body["tools"][0]["input_schema"] == TOOL_INPUT_SCHEMA
    assert body["tools"][0]["strict"] is True
    assert body["system"] == [{"type": "text", "text": SYSTEM_PROMPT,
                               "cache_control": {"type": "ephemeral"}}]
    assert "You did not produce this work" in SYSTEM_PROMPT
    assert "Your job is to find what is wrong with it" in SYSTEM_PROMPT
    assert len(body["messages"]) == 1 and body["messages"][0]["role"] == "user"
    text = api.texts()
    assert "total() applies a discount and rejects bad ones" in text  # acceptance criteria
    assert '===== BEGIN check {"command": "pytest -q", "exit_code": 0' in text
    assert "    4| def total(prices: list[float], discount: float = 0.0) -> float:" in text
    assert "sk-ant-test" in api_key_sent(api)


def test_a_model_that_thinks_is_asked_for_one_verdict_call_with_adaptive_thinking() -> None:
    thought = tool_use_message(GOOD)
    thought["content"].insert(0, {"type": "thinking", "thinking": "Let me check total().",
                                  "signature": "sig"})
    api = FakeAPI(reply_with(200, thought))
    assert run(api, model="claude-sonnet-4-6").passed
    (body,) = api.requests
    assert body["thinking"] == {"type": "adaptive"}
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert body["max_tokens"] == 16_000

    api = FakeAPI(reply_with(200, tool_use_message(GOOD)))
    run(api, model="claude-sonnet-4-6", thinking="off")
    assert "thinking" not in api.requests[0]
    assert api.requests[0]["tool_choice"]["type"] == "tool"


def test_a_high_issue_fails_the_gate_with_its_location() -> None:
    verdict = run(FakeAPI(reply_with(200, tool_use_message(STUB_FOUND))))
    assert not verdict.passed
    assert [(i.severity, i.where()) for i in verdict.blocking()] == [
        ("high", "src/shop/cart.py:2")]


def test_a_label_that_claims_a_pass_is_ignored() -> None:
    lying = {"scores": {"completeness": 4, "correctness": 5, "robustness": 4,
                        "spec_adherence": 5},
             "issues": [], "summary": "Looks great, PASS.", "passed": True, "verdict": "pass"}
    verdict = run(FakeAPI(reply_with(200, tool_use_message(lying))))
    assert not verdict.passed
    assert verdict.overall < 7.0

    high_scores_but_high_issue = dict(STUB_FOUND, scores=GOOD["scores"], verdict="pass")
    assert not run(FakeAPI(reply_with(200, tool_use_message(high_scores_but_high_issue)))).passed


def test_failing_checks_fail_the_gate_whatever_the_model_says(monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    api = FakeAPI(reply_with(200, tool_use_message(GOOD)))
    bundle = make_bundle(checks=[CheckResult(command="pytest -q", exit_code=1,
                                             output="1 failed")])
    # `auto` picks anthropic because the key is set.
    settings = EvaluatorSettings(anthropic=AnthropicSettings(model="claude-opus-4-6"))
    verdict = evaluate(bundle, settings, http_client=api.client())
    assert verdict.evaluator == "anthropic:claude-opus-4-6"
    assert verdict.summary.endswith("[auto: ANTHROPIC_API_KEY is set]")  # says why
    assert "sk-ant-from-env" in api_key_sent(api)
    assert not verdict.passed
    assert [(i.check, i.message) for i in verdict.blocking() if i.severity == "high"] == [
        ("failing_check", "check `pytest -q` failed with exit code 1: 1 failed")]


@pytest.mark.parametrize(("status", "body", "reason"), [
    (529, error_body("overloaded_error", "Overloaded"),
     "the API is overloaded (HTTP 529): Overloaded"),
    (500, error_body("api_error", "Internal server error"),
     "the API failed (HTTP 500): Internal server error"),
    (429, error_body("rate_limit_error", "Number of request tokens has exceeded your limit"),
     "rate limited by the API (HTTP 429): Number of request tokens has exceeded your limit"),
    (401, error_body("authentication_error", "invalid x-api-key"),
     "the API key was rejected (HTTP 401): invalid x-api-key"),
])
def test_api_errors_make_the_evaluator_unavailable(status: int, body: dict[str, Any],
                                                   reason: str) -> None:
    with pytest.raises(EvaluatorUnavailable) as err:
        run(FakeAPI(reply_with(status, body)))
    assert re.fullmatch(re.escape(reason) + r" \(1 attempt\(s\) in \d+\.\ds\)", err.value.reason)
    assert str(err.value) == (
        f"evaluator anthropic:claude-sonnet-4-6 was unavailable: {err.value.reason} "
        "(no verdict: neither pass nor fail, the gate is unchanged)")
    assert err.value.evaluator == "anthropic:claude-sonnet-4-6"
    assert err.value.usage is not None and err.value.usage.attempts == 1


def test_a_timeout_makes_the_evaluator_unavailable() -> None:
    def time_out(request: Any) -> Any:
        raise http.TimeoutException("read timed out", request=request)

    with pytest.raises(EvaluatorUnavailable) as err:
        run(FakeAPI(time_out), timeout_s=45)
    assert re.fullmatch(r"the API did not answer within the 45s deadline "
                        r"\(1 attempt\(s\) in \d+\.\ds\)", err.value.reason)


def test_an_answer_without_the_tool_call_is_not_a_verdict() -> None:
    text_only = tool_use_message(GOOD, stop_reason="end_turn")
    text_only["content"] = [{"type": "text", "text": "Everything passes, ship it."}]
    with pytest.raises(EvaluatorUnavailable) as err:
        run(FakeAPI(reply_with(200, text_only)))
    assert err.value.reason == "the model answered without calling record_verdict " \
                               "(stop_reason end_turn)"


def test_a_tool_call_outside_the_schema_is_not_a_verdict() -> None:
    out_of_range = dict(GOOD, scores=dict(GOOD["scores"], correctness=11))
    with pytest.raises(EvaluatorUnavailable) as err:
        run(FakeAPI(reply_with(200, tool_use_message(out_of_range))))
    assert err.value.reason == ("its verdict does not match the verdict schema: "
                                "scores.correctness: 11 is greater than the maximum of 10")


def _raw(status: int, body: bytes, content_type: str) -> Any:
    return lambda request: http.Response(status, content=body,
                                         headers={"content-type": content_type})


def _two_calls() -> dict[str, Any]:
    message = tool_use_message(GOOD)
    failing = dict(STUB_FOUND)
    message["content"].append({"type": "tool_use", "id": "toolu_2", "name": "record_verdict",
                               "input": failing})
    return message


@pytest.mark.parametrize(("reply", "reason"), [
    pytest.param(_raw(200, b"<!DOCTYPE html><html><body>Gateway</body></html>", "text/html"),
                 "the API answered with a body that is not a Messages API message "
                 "(content-type text/html): <!DOCTYPE html><html><body>Gateway</body></html>",
                 id="html-body"),
    pytest.param(_raw(200, b'{"type": "completion", "completion": "ok"}', "application/json"),
                 "the API answered with something that is not a Messages API message "
                 "(type completion)", id="not-a-message"),
    pytest.param(_raw(200, b'[1, 2]', "application/json"),
                 "the API answered with something that is not a Messages API message "
                 "(type list)", id="a-list"),
    pytest.param(_raw(200, json.dumps(tool_use_message(GOOD)).replace(
        '"correctness": 8.5', '"correctness": NaN').encode(), "application/json"),
                 "its verdict does not match the verdict schema: scores.correctness: not a "
                 "finite number", id="nan-score"),
    pytest.param(_raw(200, json.dumps(tool_use_message(GOOD)).replace(
        '"robustness": 8', '"robustness": Infinity').encode(), "application/json"),
                 "its verdict does not match the verdict schema: scores.robustness: not a "
                 "finite number", id="infinite-score"),
    pytest.param(reply_with(200, tool_use_message(dict(GOOD, scores={"completeness": 9}))),
                 "its verdict does not match the verdict schema: scores: 'correctness' is a "
                 "required property", id="missing-dimensions"),
    pytest.param(reply_with(200, _two_calls()),
                 "the model made 2 tool calls (2 to record_verdict); a verdict is exactly "
                 "one call", id="two-verdict-calls"),
    pytest.param(reply_with(200, tool_use_message(GOOD, stop_reason="max_tokens")),
                 "the answer was cut at max_tokens=16000 before a complete verdict; raise "
                 "evaluator.anthropic.max_tokens", id="cut-at-max-tokens"),
    pytest.param(reply_with(200, tool_use_message(dict(GOOD, summary="x" * 5000))),
                 "its verdict does not match the verdict schema: summary: 'xxxxx",
                 id="summary-too-long"),
    pytest.param(reply_with(200, tool_use_message(dict(GOOD, issues=[
        {"severity": "low", "message": "m"}] * 301))),
                 "its verdict does not match the verdict schema: issues: [", id="too-many-issues"),
    pytest.param(reply_with(200, tool_use_message(dict(GOOD, issues=[
        {"severity": "low", "message": "m" * 2001}]))),
                 "its verdict does not match the verdict schema: issues.0.message: 'mmm",
                 id="message-too-long"),
])
def test_anything_but_one_well_formed_verdict_is_unavailable(reply: Any, reason: str) -> None:
    with pytest.raises(EvaluatorUnavailable) as err:
        run(FakeAPI(reply))
    assert err.value.reason.startswith(reason), err.value.reason


def test_a_missing_key_makes_the_evaluator_unavailable() -> None:
    evaluator = AnthropicEvaluator(AnthropicSettings())
    with pytest.raises(EvaluatorUnavailable) as err:
        evaluator.assess(make_bundle())
    assert err.value.reason == "ANTHROPIC_API_KEY is not set"


def test_an_unknown_model_costs_unknown_not_zero() -> None:
    verdict = run(FakeAPI(reply_with(200, tool_use_message(GOOD, model="claude-next-9"))),
                  model="claude-next-9")
    assert verdict.usage.cost_usd is None
    assert verdict.usage.input_tokens == 2000
    assert "cost unknown for model claude-next-9 (no entry in meridian.pricing, checked " \
        in verdict.summary


def test_the_verdict_records_who_answered() -> None:
    def answer(request: Any) -> Any:
        return http.Response(200, json=tool_use_message(GOOD, model="claude-sonnet-4-6",
                                                        message_id="msg_abc"),
                             headers={"request-id": "req_123"})

    verdict = run(FakeAPI(answer))
    import anthropic

    assert verdict.identity is not None
    assert verdict.identity.model_dump() == {
        "kind": "anthropic", "endpoint": "https://api.anthropic.com",
        "requested_model": "claude-sonnet-4-6", "models": ["claude-sonnet-4-6"],
        "request_ids": ["req_123"], "message_ids": ["msg_abc"],
        "client": f"anthropic-python {anthropic.__version__}", "session_id": None}


def test_cache_tokens_and_retried_attempts_are_in_the_usage() -> None:
    answers = [http.Response(529, json=error_body("overloaded_error", "Overloaded"),
                             headers={"retry-after-ms": "1"}),
               http.Response(200, json=tool_use_message(
                   GOOD, input_tokens=100, output_tokens=400,
                   cache_creation_input_tokens=3000, cache_read_input_tokens=1000))]
    api = FakeAPI(lambda request: answers.pop(0))
    evaluator = AnthropicEvaluator(AnthropicSettings(model="claude-sonnet-4-6"),
                                   api_key="sk-ant-test", http_client=api.client())
    usage = evaluator.assess(make_bundle()).usage
    assert len(api.requests) == 2
    # $3 input, $15 output, $3.75 cache writes, $0.30 cache reads per million tokens.
    assert usage.model_dump() == {
        "input_tokens": 100, "output_tokens": 400, "cache_creation_input_tokens": 3000,
        "cache_read_input_tokens": 1000, "attempts": 2,
        "cost_usd": round((100 * 3 + 400 * 15 + 3000 * 3.75 + 1000 * 0.3) / 1e6, 8)}


@pytest.mark.real_api
@pytest.mark.skipif(os.environ.get("MERIDIAN_REAL_API") != "1" or not REAL_KEY,
                    reason="talks to the real Anthropic API: set MERIDIAN_REAL_API=1 and "
                           "ANTHROPIC_API_KEY")
def test_real_api_flags_a_planted_stub() -> None:
    stub = "def total(prices, discount=0.0):\n    raise NotImplementedError\n"
    bundle = make_bundle({"src/shop/cart.py": stub},
                         checks=[CheckResult(command="pytest -q", exit_code=0,
                                             output="no tests ran")])
    model = os.environ.get("MERIDIAN_REAL_API_MODEL", "claude-sonnet-4-6")
    evaluator = AnthropicEvaluator(AnthropicSettings(model=model), api_key=REAL_KEY)
    assessment = evaluator.assess(bundle)
    assert any(i.severity == "high" for i in assessment.issues)
    assert assessment.usage.input_tokens > 0 and assessment.usage.attempts >= 1
    assert assessment.identity is not None
    assert assessment.identity.endpoint == "https://api.anthropic.com"
    assert assessment.identity.message_ids and assessment.identity.request_ids
