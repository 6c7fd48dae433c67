"""The Claude evaluator through the real anthropic SDK, over a fake HTTP transport."""

from __future__ import annotations

import os
from typing import Any

import pytest

from meridian.config import AnthropicSettings, EvaluatorSettings
from meridian.evaluators import CheckResult, EvaluatorUnavailable, evaluate
from meridian.evaluators._payload import VERDICT_SCHEMA
from meridian.evaluators.anthropic_evaluator import SYSTEM_PROMPT, AnthropicEvaluator
from tests.evaluators.evaluator_helpers import (
    REAL_CODE,
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
                  summary=assessment.summary, usage=assessment.usage)


def test_a_good_verdict_passes_and_records_usage_and_cost() -> None:
    api = FakeAPI(reply_with(200, tool_use_message(GOOD, input_tokens=2000, output_tokens=400)))
    verdict = run(api)
    assert verdict.passed
    assert verdict.evaluator == "anthropic:claude-sonnet-4-6"
    assert verdict.scores == {"completeness": 9.0, "correctness": 8.5, "robustness": 8.0,
                              "spec_adherence": 9.0}
    assert [i.where() for i in verdict.issues] == ["src/shop/cart.py:7"]
    # claude-sonnet-4-6 is $3 in / $15 out per million tokens.
    assert verdict.usage.model_dump() == {"input_tokens": 2000, "output_tokens": 400,
                                          "cost_usd": 0.012}


def test_the_request_is_a_fresh_conversation_with_a_forced_verdict_tool() -> None:
    api = FakeAPI(reply_with(200, tool_use_message(GOOD)))
    run(api, model="claude-haiku-4-5", max_tokens=1500)
    (body,) = api.requests
    assert body["model"] == "claude-haiku-4-5"
    assert body["max_tokens"] == 1500
    assert body["tool_choice"] == {"type": "tool", "name": "record_verdict"}
    assert [t["name"] for t in body["tools"]] == ["record_verdict"]
    assert body["tools"][0]["input_schema"] == VERDICT_SCHEMA
    assert body["system"] == SYSTEM_PROMPT
    assert "You did not produce this work" in body["system"]
    assert "Your job is to find what is wrong with it" in body["system"]
    assert len(body["messages"]) == 1 and body["messages"][0]["role"] == "user"
    text = body["messages"][0]["content"]
    assert "total() applies a discount and rejects bad ones" in text  # acceptance criteria
    assert '<check command="pytest -q" exit_code="0"' in text
    assert "    4| def total(prices: list[float], discount: float = 0.0) -> float:" in text
    assert "sk-ant-test" in api_key_sent(api)


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
    assert err.value.reason == reason
    assert str(err.value) == (
        f"evaluator anthropic:claude-sonnet-4-6 was unavailable: {reason} "
        "(no verdict: neither pass nor fail, the gate is unchanged)")
    assert err.value.evaluator == "anthropic:claude-sonnet-4-6"


def test_a_timeout_makes_the_evaluator_unavailable() -> None:
    def time_out(request: Any) -> Any:
        raise http.TimeoutException("read timed out", request=request)

    with pytest.raises(EvaluatorUnavailable) as err:
        run(FakeAPI(time_out), timeout_s=45)
    assert err.value.reason == "the API did not answer within 45s"


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

    cut = {"scores": {"completeness": 9}}
    with pytest.raises(EvaluatorUnavailable) as err:
        run(FakeAPI(reply_with(200, tool_use_message(cut, stop_reason="max_tokens"))))
    assert err.value.reason.endswith("(the answer was cut at max_tokens=4096)")


def test_a_missing_key_makes_the_evaluator_unavailable() -> None:
    evaluator = AnthropicEvaluator(AnthropicSettings())
    with pytest.raises(EvaluatorUnavailable) as err:
        evaluator.assess(make_bundle())
    assert err.value.reason == "ANTHROPIC_API_KEY is not set"


def test_an_oversized_bundle_is_trimmed_largest_first_with_a_note() -> None:
    big = "".join(f"value_{n} = {n} * 2  # generated table row\n" for n in range(1, 2001))
    bundle = make_bundle({"src/shop/cart.py": REAL_CODE, "src/shop/table.py": big})
    api = FakeAPI(reply_with(200, tool_use_message(GOOD)))
    verdict = run(api, bundle, max_bundle_chars=6000)
    text = api.requests[0]["messages"][0]["content"]
    assert len(text) <= 6000
    assert REAL_CODE.splitlines()[-1] in text  # the small file is whole
    notes = [line for line in text.splitlines() if line.startswith("- src/shop/table.py:")]
    assert len(notes) == 1
    shown = int(notes[0].split("showed lines 1-")[1].split(" ")[0])
    assert 10 < shown < 2000
    numbered = [f"{n:>5}| {line}" for n, line in enumerate(big.splitlines(), 1)]
    omitted = sum(len(line) + 1 for line in numbered[shown:])
    assert notes[0] == (f"- src/shop/table.py: showed lines 1-{shown} of 2000; lines "
                        f"{shown + 1}-2000 left out ({omitted} characters)")
    assert f"{shown:>5}| value_{shown} = " in text
    assert f"value_{shown + 1} = " not in text
    assert "trimmed to fit 6000 characters: src/shop/table.py: showed lines" in verdict.summary


def test_an_unknown_model_costs_zero_with_a_note() -> None:
    verdict = run(FakeAPI(reply_with(200, tool_use_message(GOOD))), model="claude-next-9")
    assert verdict.usage.cost_usd == 0.0
    assert verdict.usage.input_tokens == 2000
    assert "cost unknown for model claude-next-9 (no price entry); recorded as 0" \
        in verdict.summary


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
    evaluator = AnthropicEvaluator(AnthropicSettings(model=model, max_tokens=2048),
                                   api_key=REAL_KEY)
    assessment = evaluator.assess(bundle)
    assert any(i.severity == "high" for i in assessment.issues)
    assert assessment.usage.input_tokens > 0
