"""Health reads what the real gate lifecycle writes (offline heuristic evaluator)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.ledger import EVENTS, Ledger, Write

GATES = """\
version: 1
gates:
  - id: core
    artifacts: ["src/core.py"]
    estimate_hours: 1
  - id: more
    needs: [core]
    artifacts: ["src/more.py"]
"""


def test_health_after_real_gate_cycles(repo_with_commit: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = repo_with_commit
    assert main(["init", "--no-hooks"]) == 0
    (root / ".meridian" / "gates.yaml").write_text(GATES)
    (root / "src").mkdir()
    (root / "src" / "core.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "src" / "more.py").write_text("def mul(a, b):\n    pass\n")  # a stub: fails

    assert main(["gate", "start", "core"]) == 0
    assert main(["gate", "submit", "core", "--self-score", "9"]) == 0
    assert main(["gate", "start", "more"]) == 0
    assert main(["gate", "submit", "more", "--self-score", "9.5"]) != 0
    (root / "src" / "more.py").write_text("def mul(a, b):\n    return a * b\n")
    assert main(["gate", "submit", "more"]) == 0
    capsys.readouterr()

    assert main(["health", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    gates = report["gates"]
    assert gates["by_state"] == {"passed": 2}
    assert (gates["first_try_passed"], gates["with_verdict"], gates["first_try_pass_rate"]) == (1, 2, 0.5)
    assert (gates["failed_verdicts"], gates["verdicts"]) == (1, 3)
    # the evaluator's refusal of the stub is a block, though the lifecycle writes no gate.blocked
    assert (gates["blocks"], gates["blocks_by_source"]) == (1, {"evaluator": 1})
    assert gates["intervals"] == 2
    evaluator = report["evaluator"]
    assert evaluator["verdicts_read"] == 0  # the scores are on the verdict events
    # No checks and no tests: the offline evaluator judged completeness only, and health
    # counts no score for what it did not judge.
    assert {name: d["count"] for name, d in evaluator["dimensions"].items()} == {
        "completeness": 3, "correctness": 0, "robustness": 0, "spec_adherence": 0}
    # self-scores 9 (core) and 9.5 (more, first try); the resubmission gave none
    gaps = [(g["gate"], g["self_score"], round(g["self_score"] - g["overall"], 4), g["gap"])
            for g in evaluator["gaps"]]
    assert [gate for gate, *_ in gaps] == ["core", "more"]
    assert all(expected == gap for _, _, expected, gap in gaps)
    assert [c["gate"] for c in report["calibration"]["corrections"]] == ["core", "more"]
    assert report["cost"]["by_source"]["evaluator"]["cost_usd"] == 0.0  # heuristic: free
    assert report["memory"]["invalid"] == 0


def test_scores_come_from_the_events_and_from_documents_only_for_older_events(
        repo_with_commit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = repo_with_commit
    assert main(["init", "--no-hooks"]) == 0
    (root / ".meridian" / "gates.yaml").write_text(GATES)
    (root / "src").mkdir()
    (root / "src" / "core.py").write_text("def add(a, b):\n    return a + b\n")
    assert main(["gate", "start", "core"]) == 0
    assert main(["gate", "submit", "core"]) == 0
    ledger = Ledger.open(root)
    (passed,) = [r for r in ledger.records(EVENTS) if r.kind == "gate.passed"]
    document = ledger.read_json(passed.data["verdict"])
    assert passed.data["scores"] == document["scores"]

    # A verdict event written before events carried scores: its document is read.
    old_scores = {"completeness": 2.0, "correctness": 3.0, "robustness": 4.0,
                  "spec_adherence": 5.0}
    old = ledger.record("gate.failed", {
        "gate": "more", "verdict": "verdicts/more/old.json", "overall": 3.35,
        "threshold": 7.0, "evaluator": "heuristic", "subject": "b" * 40})
    ledger.commit(Write(summary="an older verdict", blobs={
        "verdicts/more/old.json": json.dumps({"scores": old_scores}).encode()}).add(EVENTS, old))
    capsys.readouterr()

    assert main(["health", "--json"]) == 0
    evaluator = json.loads(capsys.readouterr().out)["evaluator"]
    assert evaluator["verdicts_read"] == 1
    for name, dimension in evaluator["dimensions"].items():
        if name not in document["scores"]:  # not judged by the new verdict: no score
            assert name in document["not_judged"]
            assert dimension["count"] == 1 and dimension["min"] == old_scores[name]
            continue
        assert dimension["count"] == 2
        assert dimension["min"] == old_scores[name]
        assert dimension["max"] == document["scores"][name]
