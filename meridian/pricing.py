"""What a Claude call costs: the one price table, shared by the gate evaluator and the
eval harness's llm_judge grader.

USD per million tokens (input, output) by model family, as Anthropic published them
for standard use (not batch, not long-context) when this table was written. A model
matches its family name, a dated snapshot of it (``claude-opus-4-1-20250805``) or
``-latest``. A model not listed has no price (None): callers record cost 0 and say so,
because a guessed price would be worse than an admitted unknown.
"""

from __future__ import annotations

import re

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4-0": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4-0": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-opus": (15.0, 75.0),
    "claude-3-haiku": (0.25, 1.25),
}
_SNAPSHOT_SUFFIX = re.compile(r"-(?:\d{8}|latest)$")


def price_per_mtok(model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens, or None for a model not in the table."""
    return PRICES_PER_MTOK.get(_SNAPSHOT_SUFFIX.sub("", model))


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """The cost of one call in USD, or None when the model's price is unknown."""
    prices = price_per_mtok(model)
    if prices is None:
        return None
    return round((input_tokens * prices[0] + output_tokens * prices[1]) / 1_000_000, 8)
