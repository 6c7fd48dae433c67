"""The one price table behind the gate evaluators' and llm_judge's recorded cost."""

from __future__ import annotations

import typing

import pytest

from meridian import pricing
from meridian.pricing import cost_usd, price_per_mtok

# Listed by the installed SDK but not priced where the table was checked: admitted unknown.
UNPRICED = {"claude-mythos-5-2", "claude-mythos-preview"}


@pytest.mark.parametrize(("model", "expected"), [
    ("claude-sonnet-4-6", (3.0, 15.0)),
    ("claude-opus-4-1-20250805", (15.0, 75.0)),  # a dated snapshot is its family
    ("claude-3-5-haiku-latest", (0.8, 4.0)),
    ("claude-opus-4-7", (5.0, 25.0)),
    ("claude-sonnet-5-5", (2.0, 10.0)),
    ("claude-opus-4-9", None),  # not guessed from a prefix: an unknown price is admitted
    ("claude-next-9", None),
])
def test_price_per_mtok(model: str, expected: tuple[float, float] | None) -> None:
    assert price_per_mtok(model) == expected


def test_cost_usd() -> None:
    assert cost_usd("claude-sonnet-4-6", 2000, 400) == 0.012
    assert cost_usd("claude-haiku-4-5-20251001", 1_000_000, 0) == 1.0
    assert cost_usd("claude-next-9", 2000, 400) is None


def test_cache_tokens_are_priced_apart() -> None:
    # sonnet 4.6: $3 input, $3.75 cache writes, $0.30 cache reads per million tokens.
    assert cost_usd("claude-sonnet-4-6", 1000, 0, cache_creation_input_tokens=1_000_000) \
        == 3.753
    assert cost_usd("claude-sonnet-4-6", 0, 0, cache_read_input_tokens=1_000_000) == 0.3


def test_a_long_prompt_pays_the_higher_band_on_every_token() -> None:
    short = cost_usd("claude-haiku-5-5", 100_000, 1000)
    long = cost_usd("claude-haiku-5-5", 60_000, 1000, cache_read_input_tokens=40_001)
    assert short == round((100_000 * 0.10 + 1000 * 0.50) / 1e6, 8)
    assert long == round((60_000 * 0.50 + 1000 * 2.50 + 40_001 * 0.05) / 1e6, 8)


def test_every_model_the_installed_sdk_names_is_priced_or_admitted_unknown() -> None:
    from anthropic.types.model import Model

    literal = next(a for a in typing.get_args(Model) if typing.get_origin(a) is typing.Literal)
    named = set(typing.get_args(literal))
    missing = {m for m in named if price_per_mtok(m) is None} - UNPRICED
    assert not missing, f"add prices (and the date checked) for: {sorted(missing)}"
    assert pricing.PRICES_CHECKED and pricing.PRICES_SOURCE.startswith("https://")
