"""llm_judge: a Claude model grades the answer against a rubric.

A fixed five-point scale and ``n_samples`` > 1 with a majority vote (agreement
reported in the detail) keep the judge as steady as a model can be. There is no
temperature setting: the installed SDK (anthropic 2.x, API version 2026-10-21) has
no sampling parameters and the API answers HTTP 400 to a request that carries one,
so asking for temperature 0 would only turn every judgement into an outage.

When the judge cannot be reached or answers nonsense the score is an
infrastructure error, never a failing grade: an outage says nothing about the agent.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from typing import Annotated, Any

from pydantic import Field

from meridian.evals.graders.final_answer import answer_text
from meridian.evals.graders.registry import grader
from meridian.evals.types import Score, Task, Trajectory, Usage
from meridian.pricing import cost_usd

# Not claude-sonnet-4-5: the SDK lists it as deprecated (end of life 2026-11-30).
DEFAULT_MODEL = "claude-sonnet-4-6"

SYSTEM_PROMPT = """\
You grade the final answer of an AI agent against a rubric. Judge only the answer.
Reply with a single JSON object and nothing else:
{"score": <integer 1-5>, "reason": "<one sentence>"}
Scale: 5 fully meets the rubric; 4 meets it with a minor flaw; 3 partially meets it;
2 mostly fails it; 1 fails it or does not answer."""

DEFAULT_RUBRIC = "The answer is correct and agrees with the reference answer."


def build_prompt(task: Task, trajectory: Trajectory, rubric: str) -> str:
    parts = [f"Task:\n{answer_text(task.input)}"]
    if task.expected is not None:
        parts.append(f"Reference answer:\n{answer_text(task.expected)}")
    parts.append(f"Rubric:\n{rubric}")
    parts.append(f"Agent's final answer:\n{answer_text(trajectory.final_output)}")
    return "\n\n".join(parts)


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_verdict(text: str) -> tuple[int, str]:
    """``(score 1-5, reason)`` from the judge's reply; ValueError when it has none."""
    match = _JSON_OBJECT.search(text)
    if not match:
        raise ValueError(f"judge reply has no JSON object: {text[:80]!r}")
    try:
        payload = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise ValueError(f"judge reply is not valid JSON: {exc.msg}") from None
    score = payload.get("score") if isinstance(payload, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float) or score != int(score):
        raise ValueError(f"judge reply has no integer score: {match.group(0)[:80]!r}")
    if not 1 <= int(score) <= 5:
        raise ValueError(f"judge score {score} is outside 1-5")
    return int(score), str(payload.get("reason", "")).strip()


def _infra(detail: str, usage: Usage | None = None) -> Score:
    return Score(name="llm_judge", value=0.0, passed=False, detail=detail, infra_error=True,
                 usage=usage)


@grader(
    "llm_judge",
    kind="final_answer",
    requires=("rubric|expected",),
    network=True,
    internal_args=("http_client", "api_key"),
)
def llm_judge(
    task: Task,
    trajectory: Trajectory,
    *,
    rubric: str | None = None,
    model: str = DEFAULT_MODEL,
    n_samples: Annotated[int, Field(ge=1)] = 1,
    threshold: float = 0.75,
    max_tokens: int = 300,
    max_retries: int = 2,
    http_client: Any = None,
    api_key: str | None = None,
) -> Score:
    """A Claude model scores the answer 1-5 on a rubric; `n_samples` majority vote.

    ``http_client`` (programmatic callers only) replaces the SDK's HTTP client, e.g.
    one with a fake transport; it must be the class the installed SDK is built on.
    """
    if trajectory.final_output is None or answer_text(trajectory.final_output).strip() == "":
        return Score(name="llm_judge", value=0.0, passed=False, detail="no final output to judge")
    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        return _infra("judge unavailable: ANTHROPIC_API_KEY is not set")
    import anthropic  # heavy; only graders that call a model pay for it

    client = anthropic.Anthropic(api_key=key, http_client=http_client,
                                 max_retries=max(max_retries, 0))
    prompt = build_prompt(task, trajectory, rubric or DEFAULT_RUBRIC)
    verdicts: list[tuple[int, str]] = []
    tokens_in = tokens_out = 0
    for _ in range(n_samples):
        try:
            response = client.messages.create(
                model=model,
                max_tokens=max_tokens,
                system=SYSTEM_PROMPT,
                messages=[{"role": "user", "content": prompt}],
            )
        except anthropic.APIError as exc:
            return _infra(f"judge unavailable: {_api_failure(exc)}", _usage(model, tokens_in, tokens_out))
        tokens_in += response.usage.input_tokens
        tokens_out += response.usage.output_tokens
        text = "".join(getattr(block, "text", "") for block in response.content)
        try:
            verdicts.append(parse_verdict(text))
        except ValueError as exc:
            return _infra(f"judge reply unusable: {exc}", _usage(model, tokens_in, tokens_out))
    return _vote(verdicts, threshold, _usage(model, tokens_in, tokens_out), model)


def _api_failure(exc: Any) -> str:
    """One line on why the API call failed: HTTP status and the API's own message."""
    status = getattr(exc, "status_code", None)
    if status is not None:
        body = getattr(exc, "body", None)
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        return f"HTTP {status}" + (f": {message}" if message else "")
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:160] if text else 'no message'}"


def _usage(model: str, tokens_in: int, tokens_out: int) -> Usage:
    return Usage(tokens_in=tokens_in, tokens_out=tokens_out,
                 cost_usd=cost_usd(model, tokens_in, tokens_out) or 0.0)


def _vote(verdicts: list[tuple[int, str]], threshold: float, usage: Usage, model: str) -> Score:
    counts = Counter(score for score, _ in verdicts)
    top = max(counts.values())
    # On a tie the lower score wins: a judge that cannot agree has not shown a pass.
    winner = min(score for score, count in counts.items() if count == top)
    reason = next(reason for score, reason in verdicts if score == winner)
    value = (winner - 1) / 4
    detail = f"score {winner}/5, agreement {top}/{len(verdicts)}"
    if len(counts) > 1:
        detail += " (votes " + ", ".join(f"{s}:{c}" for s, c in sorted(counts.items())) + ")"
    if reason:
        detail += f": {reason}"
    if cost_usd(model, 0, 0) is None:
        detail += f" [no price known for {model}; cost counted as 0]"
    return Score(name="llm_judge", value=value, passed=value >= threshold, detail=detail, usage=usage)

