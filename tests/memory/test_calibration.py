"""Corrections written on gate pass, the multiplier, and suggested estimates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.ledger import Ledger
from meridian.memory import store
from meridian.memory.calibration import (
    build_report,
    effective_corrections,
    multiplier,
    record_gate_pass,
)


def test_gate_pass_correction_ratio_is_actual_over_predicted(ledger: Ledger) -> None:
    record = record_gate_pass(ledger, "api", 8.0, 6.0, session="s1")
    assert record is not None
    assert record.data["ratio"] == 0.75  # 8h predicted, 6h actual: took 0.75 of the estimate
    assert record.data["predicted_hours"] == 8.0 and record.data["actual_hours"] == 6.0
    assert record.data["source"] == "gate_pass" and record.data["session"] == "s1"
    [stored] = list(store.iter_records(ledger, "corrections"))
    assert stored.id == record.id


def test_gate_that_overran_has_ratio_above_one(ledger: Ledger) -> None:
    record = record_gate_pass(ledger, "web", 4.0, 6.0)
    assert record is not None and record.data["ratio"] == 1.5


def test_gate_pass_without_prediction_records_actual_hours_without_ratio(ledger: Ledger) -> None:
    record = record_gate_pass(ledger, "api", None, 2.5)
    assert record is not None
    assert "ratio" not in record.data and "predicted_hours" not in record.data
    assert record.data["actual_hours"] == 2.5
    [correction] = effective_corrections(ledger)
    assert correction.ratio is None
    assert multiplier([correction]) == (None, 0)
    # A later amendment supplies the prediction; the ratio follows.
    store.add(ledger, "corrections", {"gate": "api", "predicted_hours": 2.0,
                                      "root_cause": "estimate was in the issue, not the gate"})
    [correction] = effective_corrections(ledger)
    assert (correction.predicted_hours, correction.actual_hours, correction.ratio) == (2.0, 2.5, 1.25)
    assert correction.root_cause == "estimate was in the issue, not the gate"


@pytest.mark.parametrize("actual", [0.0, -1.0, float("nan")])
def test_no_measurable_time_writes_nothing(ledger: Ledger, actual: float) -> None:
    tip = ledger.tip()
    assert record_gate_pass(ledger, "api", 8.0, actual) is None
    assert ledger.tip() == tip


def test_two_passes_of_one_gate_are_two_corrections(ledger: Ledger) -> None:
    first = record_gate_pass(ledger, "api", 8.0, 6.0)
    second = record_gate_pass(ledger, "api", 8.0, 6.0)
    assert first is not None and second is not None and first.id != second.id
    assert len(effective_corrections(ledger)) == 2


def test_multiplier_is_the_median_ratio_of_the_last_n(ledger: Ledger) -> None:
    for gate, predicted, actual in [("a", 1, 2), ("b", 2, 1), ("c", 1, 1), ("d", 2, 3)]:
        record_gate_pass(ledger, gate, predicted, actual)
    corrections = effective_corrections(ledger)
    assert [c.ratio for c in corrections] == [2.0, 0.5, 1.0, 1.5]
    assert multiplier(corrections, last=3) == (1.0, 3)  # median of 0.5, 1.0, 1.5
    assert multiplier(corrections, last=10) == (1.25, 4)


def test_amendment_keeps_the_original_in_the_calibration_table(ledger: Ledger) -> None:
    record_gate_pass(ledger, "api", 8.0, 12.0)
    store.add(ledger, "corrections", {"gate": "api", "root_cause": "OAuth",
                                      "next_action": "x1.5 for auth"})
    [correction] = effective_corrections(ledger)
    assert (correction.ratio, correction.root_cause, correction.next_action) == (
        1.5, "OAuth", "x1.5 for auth")
    assert len(correction.amended_by) == 1


# The data of a gate.passed event (validated by meridian.gates.events when imported).
PASSED_API = {"gate": "api", "verdict": "verdicts/api/v.json", "overall": 8.0, "threshold": 7.0,
              "evaluator": "heuristic", "subject": "0" * 40}

GATES_YAML = """\
version: 1
gates:
  - id: api
    estimate_hours: 8
  - id: web
    needs: [api]
    estimate_hours: 4
  - id: docs
    needs: [web]
"""


def test_suggested_estimates_for_gates_not_yet_passed(
        repo: Path, ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".meridian").mkdir()
    (repo / ".meridian" / "gates.yaml").write_text(GATES_YAML)
    ledger.emit("gate.started", {"gate": "api", "estimate_hours": 10})
    ledger.emit("gate.passed", PASSED_API)
    record_gate_pass(ledger, "api", 10.0, 15.0)
    report = build_report(ledger, repo)
    assert report.multiplier == 1.5
    assert [(s.gate, s.estimate_hours, s.estimate_source, s.suggested_hours)
            for s in report.suggestions] == [("web", 4.0, "gates.yaml", 6.0)]

    assert main(["calibration", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["multiplier"] == 1.5 and data["sample"] == 1 and data["window"] == 10
    assert data["corrections"][0]["gate"] == "api"
    assert data["suggestions"] == [{"gate": "web", "estimate_hours": 4.0,
                                    "estimate_source": "gates.yaml", "suggested_hours": 6.0}]


def test_reopened_gate_is_open_again_and_gate_start_estimate_wins(
        repo: Path, ledger: Ledger) -> None:
    (repo / ".meridian").mkdir()
    (repo / ".meridian" / "gates.yaml").write_text(GATES_YAML)
    ledger.emit("gate.passed", PASSED_API)
    ledger.emit("gate.reopened", {"gate": "api", "reason": "spec changed"})
    ledger.emit("gate.started", {"gate": "api", "estimate_hours": 3})
    report = build_report(ledger, repo)
    assert [(s.gate, s.estimate_hours, s.estimate_source) for s in report.suggestions] == [
        ("api", 3.0, "gate start"), ("web", 4.0, "gates.yaml")]
    assert all(s.suggested_hours is None for s in report.suggestions)  # no multiplier yet


def test_calibration_text_output(ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibration"]) == 0
    out = capsys.readouterr().out
    assert "no corrections yet: one is written each time a gate passes" in out
    assert "multiplier: none yet" in out
    record_gate_pass(ledger, "api", 8.0, 6.0)
    assert main(["calibration", "--last", "5"]) == 0
    out = capsys.readouterr().out
    assert "0.75" in out
    assert "multiplier: 0.75 (median ratio of the last 1 correction(s); window 5)" in out


def test_calibration_rejects_a_window_below_one(ledger: Ledger,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibration", "--last", "0"]) == 2
    assert "--last: expected a number >= 1" in capsys.readouterr().err
