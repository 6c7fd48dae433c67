"""What a Claude call costs, and what a model can do: the one table, shared by the gate
evaluators and the eval harness's llm_judge grader.

USD per million tokens for standard use (not batch): base input, output, 5-minute
cache writes and cache reads (hits and refreshes). A model matches its family name, a
dated snapshot of it (``claude-opus-4-1-20250805``) or ``-latest``. A model not listed
has no price (None): callers record the cost as unknown, because a guessed price would
be worse than an admitted unknown.

Source: Anthropic's pricing page and model overview pages
(https://platform.claude.com/docs/en/about-claude/pricing and
https://platform.claude.com/docs/en/models/<model>/overview), checked 2026-12-01
(``PRICES_CHECKED``). Two rates there are not a flat multiple of the input price: the
Sonnet 5.5 cache-read cut of 2026-10-07 ($0.10) and Claude Haiku 5.5's price bands (a
request whose prompt, cache reads and writes included, exceeds 100,000 tokens pays the
higher band on every token of that request). ``claude-mythos-5-2`` is not priced: its
rate was not published where it was checked.

``adaptive`` marks the models that take ``thinking: {type: adaptive}``; on them a
forced tool choice is refused (thinking is on by default or always on), so the
evaluator lets them think and asks for exactly one verdict call instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PRICES_SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing"
PRICES_CHECKED = "2026-12-01"


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_write: float  # 5-minute cache writes (what Meridian's cache_control asks for)
    cache_read: float
    long_prompt: Price | None = None  # the band above LONG_PROMPT_TOKENS, where one exists


@dataclass(frozen=True)
class ModelInfo:
    price: Price
    adaptive: bool = False  # takes adaptive thinking; refuses a forced tool choice


LONG_PROMPT_TOKENS = 100_000


def _p(i: float, o: float, w: float, r: float, long: Price | None = None) -> Price:
    return Price(i, o, w, r, long)


MODELS: dict[str, ModelInfo] = {
    "claude-fable-5-2": ModelInfo(_p(8.0, 40.0, 10.0, 0.20), adaptive=True),
    "claude-fable-5-1": ModelInfo(_p(10.0, 50.0, 12.5, 0.25), adaptive=True),
    "claude-mythos-5-1": ModelInfo(_p(10.0, 50.0, 12.5, 0.25), adaptive=True),
    "claude-fable-5": ModelInfo(_p(10.0, 50.0, 12.5, 1.0), adaptive=True),
    "claude-mythos-5": ModelInfo(_p(10.0, 50.0, 12.5, 1.0), adaptive=True),
    "claude-opus-5-5": ModelInfo(_p(4.0, 20.0, 5.0, 0.20), adaptive=True),
    "claude-opus-5": ModelInfo(_p(5.0, 25.0, 6.25, 0.50), adaptive=True),
    "claude-opus-4-8": ModelInfo(_p(5.0, 25.0, 6.25, 0.50), adaptive=True),
    "claude-opus-4-7": ModelInfo(_p(5.0, 25.0, 6.25, 0.50), adaptive=True),
    "claude-opus-4-6": ModelInfo(_p(5.0, 25.0, 6.25, 0.50), adaptive=True),
    "claude-opus-4-5": ModelInfo(_p(5.0, 25.0, 6.25, 0.50)),
    "claude-opus-4-1": ModelInfo(_p(15.0, 75.0, 18.75, 1.50)),
    "claude-opus-4-0": ModelInfo(_p(15.0, 75.0, 18.75, 1.50)),
    "claude-opus-4": ModelInfo(_p(15.0, 75.0, 18.75, 1.50)),
    "claude-sonnet-5-5": ModelInfo(_p(2.0, 10.0, 2.50, 0.10), adaptive=True),
    "claude-sonnet-5": ModelInfo(_p(2.0, 10.0, 2.50, 0.20), adaptive=True),
    "claude-sonnet-4-6": ModelInfo(_p(3.0, 15.0, 3.75, 0.30), adaptive=True),
    "claude-sonnet-4-5": ModelInfo(_p(3.0, 15.0, 3.75, 0.30)),
    "claude-sonnet-4-0": ModelInfo(_p(3.0, 15.0, 3.75, 0.30)),
    "claude-sonnet-4": ModelInfo(_p(3.0, 15.0, 3.75, 0.30)),
    "claude-3-7-sonnet": ModelInfo(_p(3.0, 15.0, 3.75, 0.30)),
    "claude-3-5-sonnet": ModelInfo(_p(3.0, 15.0, 3.75, 0.30)),
    "claude-haiku-5-5": ModelInfo(_p(0.10, 0.50, 0.125, 0.01,
                                     long=_p(0.50, 2.50, 0.625, 0.05)), adaptive=True),
    "claude-haiku-4-5": ModelInfo(_p(1.0, 5.0, 1.25, 0.10)),
    "claude-3-5-haiku": ModelInfo(_p(0.8, 4.0, 1.0, 0.08)),
    "claude-3-opus": ModelInfo(_p(15.0, 75.0, 18.75, 1.50)),
    "claude-3-haiku": ModelInfo(_p(0.25, 1.25, 0.30, 0.03)),
}
# (input, output) per million tokens, as the table had it before cache prices: kept for
# the callers that read it.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    name: (info.price.input, info.price.output) for name, info in MODELS.items()}
_SNAPSHOT_SUFFIX = re.compile(r"-(?:\d{8}|latest)$")


def model_info(model: str) -> ModelInfo | None:
    return MODELS.get(_SNAPSHOT_SUFFIX.sub("", model))


def price_per_mtok(model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens, or None for a model not in the table."""
    info = model_info(model)
    return None if info is None else (info.price.input, info.price.output)


def cost_usd(model: str, input_tokens: int, output_tokens: int, *,
             cache_creation_input_tokens: int = 0, cache_read_input_tokens: int = 0
             ) -> float | None:
    """The cost of one request in USD, or None when the model's price is unknown.

    ``input_tokens`` are the uncached input tokens, as the Messages API reports them.
    """
    info = model_info(model)
    if info is None:
        return None
    price = info.price
    prompt = input_tokens + cache_creation_input_tokens + cache_read_input_tokens
    if price.long_prompt is not None and prompt > LONG_PROMPT_TOKENS:
        price = price.long_prompt
    total = (input_tokens * price.input + output_tokens * price.output
             + cache_creation_input_tokens * price.cache_write
             + cache_read_input_tokens * price.cache_read)
    return round(total / 1_000_000, 8)
