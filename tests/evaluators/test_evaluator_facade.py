"""``meridian.evaluators.evaluate``: choosing the evaluator, per-gate overrides, errors."""

from __future__ import annotations

import pytest

from meridian import evaluators
from meridian.config import EvaluatorSettings
from meridian.errors import ConfigError, MeridianError
from meridian.evaluators import EvaluatorUnavailable, evaluate, resolve_kind
from tests.evaluators.evaluator_helpers import REAL_CODE, FakeAPI, make_bundle


def test_auto_is_heuristic_without_a_key_and_anthropic_with_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_kind(EvaluatorSettings()) == "heuristic"
    assert evaluate(make_bundle(), EvaluatorSettings()).evaluator == "heuristic"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert resolve_kind(EvaluatorSettings()) == "anthropic"
    assert resolve_kind(EvaluatorSettings(kind="heuristic")) == "heuristic"


def test_threshold_and_weights_can_be_set_per_gate() -> None:
    # Two bare markers: no high issue, completeness slightly below 10.
    code = REAL_CODE + "# TODO: coupons\n# TODO: currencies\n"
    bundle = make_bundle({"src/shop/cart.py": code})
    settings = EvaluatorSettings(kind="heuristic")
    assert evaluate(bundle, settings).passed
    strict = evaluate(bundle, settings, threshold=9.99)
    assert not strict.passed and strict.threshold == 9.99
    only_completeness = {"completeness": 1.0, "correctness": 0.0, "robustness": 0.0,
                         "spec_adherence": 0.0}
    weighted = evaluate(bundle, settings, weights=only_completeness)
    assert weighted.overall == weighted.scores["completeness"] == 9.4
    assert weighted.weights == only_completeness


def test_an_unknown_check_id_is_refused_before_the_api_is_called(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    api = FakeAPI(lambda request: pytest.fail("the API must not be called"))
    with pytest.raises(ConfigError, match="unknown heuristic check id 'stubs'"):
        evaluate(make_bundle(), EvaluatorSettings(kind="anthropic"),
                 disabled_checks=frozenset({"stubs"}), http_client=api.client())
    assert api.requests == []


def test_unavailable_is_a_one_line_user_error_that_keeps_its_parts() -> None:
    err = EvaluatorUnavailable("command:judge", "exited with code 1:\nTraceback\n  boom")
    assert isinstance(err, MeridianError)
    assert err.exit_code == 2
    assert "\n" not in str(err)
    assert err.reason == "exited with code 1: Traceback boom"
    assert str(err) == ("evaluator command:judge was unavailable: exited with code 1: "
                        "Traceback boom (no verdict: neither pass nor fail, the gate is "
                        "unchanged)")


def test_the_facade_exports_what_it_lists() -> None:
    assert set(evaluators.__all__) <= set(dir(evaluators))
    assert {"evaluate", "EvaluatorUnavailable", "Bundle", "Verdict", "decide", "scan_files",
            "CHECK_IDS"} <= set(evaluators.__all__)
