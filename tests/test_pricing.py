"""The one price table behind the gate evaluator's and llm_judge's recorded cost."""

from __future__ import annotations

import pytest

from meridian.pricing import cost_usd, price_per_mtok


@pytest.mark.parametrize(("model", "expected"), [
    ("claude-sonnet-4-6", (3.0, 15.0)),
    ("claude-opus-4-1-20250805", (15.0, 75.0)),  # a dated snapshot is its family
    ("claude-3-5-haiku-latest", (0.8, 4.0)),
    ("claude-opus-4-7", None),  # not guessed from a prefix: an unknown price is admitted
    ("claude-next-9", None),
])
def test_price_per_mtok(model: str, expected: tuple[float, float] | None) -> None:
    assert price_per_mtok(model) == expected


def test_cost_usd() -> None:
    assert cost_usd("claude-sonnet-4-6", 2000, 400) == 0.012
    assert cost_usd("claude-haiku-4-5-20251001", 1_000_000, 0) == 1.0
    assert cost_usd("claude-next-9", 2000, 400) is None
