"""A crafted state branch whose health figures are computed by hand in the tests.

Four gates (db, api, ui, docs) in November 2026:

    db    started 11-02 09:00, submitted (self 9) -> failed 6.0, submitted (self 8) -> passed 8.0 at 11:00
    api   started 11-03 09:00, submitted (self 7.5) -> passed 8.5 at 12:00
    ui    started 11-10 09:00, evaluator unavailable, submitted (no self-score) -> failed 5.55
    docs  started 11-10 12:00, still in progress

Blocks: pre-commit 2, claude 1, gate 1 (docs), and the evaluator's: every failed
verdict (db-1, ui-1), which the lifecycle records as gate.failed, not gate.blocked.
Corrections (ratio actual/predicted): db 2h/2h = 1.0, api 3h/2h = 1.5, ui 2h/4h = 0.5.
Evaluation: suite `ref`, run A (t1 pass, t2 pass, t3 fail; agents $0.10) pinned as
baseline `main`, then run B (t1 pass, t2 fail, t3 pass; agents $0.20; llm_judge 100+10
tokens, $0.003).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from meridian.evals import run as runfile
from meridian.evals import store
from meridian.evals.types import Score, Task, TaskResult, Trajectory, Usage
from meridian.evaluators.models import Usage as VerdictUsage
from meridian.evaluators.models import decide
from meridian.ledger import EVENTS, Ledger, Write
from meridian.memory import store as memory_store

SCORES = {
    "db-1": {"completeness": 6, "correctness": 5, "robustness": 7, "spec_adherence": 6},
    "db-2": {"completeness": 8, "correctness": 8, "robustness": 8, "spec_adherence": 8},
    "api-1": {"completeness": 9, "correctness": 8, "robustness": 8, "spec_adherence": 9},
    "ui-1": {"completeness": 5, "correctness": 6, "robustness": 5, "spec_adherence": 6},
}

RULES = """\
version: 1
rules:
  - id: no-stub-code
    rule: Submitted code has no stubs.
    failure_mode: Functions only look implemented.
    mechanism: heuristic:stub_code
    review: {date: 2026-01-31}
  - id: hollow-tests
    rule: Tests assert something.
    failure_mode: Green suites that prove nothing.
    mechanism: heuristic:hollow_test
    review: {date: 2099-01-31}
"""


@dataclass
class Crafted:
    ledger: Ledger
    root: Path
    run_a: str
    run_b: str


class Writer:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def event(self, ts: str, kind: str, data: dict[str, Any]) -> None:
        record = self.ledger.record(kind, data, ts=ts)
        self.ledger.commit(Write(summary=kind).add(EVENTS, record))

    def verdict(self, ts: str, key: str, *, self_score: float | None,
                usage: tuple[int, int, float]) -> None:
        gate = key.split("-")[0]
        usage_model = VerdictUsage(input_tokens=usage[0], output_tokens=usage[1], cost_usd=usage[2])
        verdict = decide(gate=gate, evaluator="heuristic", subject="a" * 40, scores=SCORES[key],
                         issues=[], threshold=7.0, usage=usage_model, self_score=self_score)
        path = f"verdicts/{gate}/{key}.json"
        data: dict[str, Any] = {
            "gate": gate, "verdict": path, "overall": verdict.overall, "threshold": 7.0,
            "evaluator": "heuristic", "subject": "a" * 40,
            "usage": usage_model.model_dump(mode="json"), "issues": {},
        }
        if self_score is not None:
            data["self_score"] = self_score
        kind = "gate.passed" if verdict.passed else "gate.failed"
        record = self.ledger.record(kind, data, ts=ts)
        self.ledger.commit(Write(summary=kind, blobs={
            path: json.dumps(verdict.model_dump(mode="json")).encode()}).add(EVENTS, record))


def _entry(index: int, task_id: str, status: str, cost: float,
           judge: Usage | None = None) -> runfile.TaskEntry:
    passed = status == "pass"
    scores = [Score(name="final_answer", value=1.0 if passed else 0.0, passed=passed)]
    if judge is not None:
        scores.append(Score(name="llm_judge", value=1.0 if passed else 0.0, passed=passed,
                            usage=judge))
    trajectory = Trajectory(task_id=task_id, completed=True, final_output="x", cost_usd=cost,
                            tokens_in=10, tokens_out=5)
    return runfile.TaskEntry(index=index, task=Task(id=task_id, input="q"), trials=[
        TaskResult(task_id=task_id, status=status, scores=scores, trajectory=trajectory)])


def save_run(ledger: Ledger, run_id: str, statuses: list[str], cost_each: float,
             judge: Usage | None = None) -> str:
    results = [_entry(i, f"t{i + 1}", status, cost_each, judge if i == 0 else None)
               for i, status in enumerate(statuses)]
    run = runfile.Run(
        run_id=run_id, created_at="2026-11-20T10:00:00Z",
        suite=runfile.SuiteInfo(name="ref", hash="h" * 8),
        agent=runfile.AgentInfo(name="reference", version="1", spec="builtin:reference"),
        settings=runfile.Settings(), summary=runfile.summarize(results, 1), results=results,
    )
    store.save_run(ledger, run)
    return run_id


@pytest.fixture
def crafted(repo_with_commit: Path) -> Crafted:
    root = repo_with_commit
    (root / ".meridian").mkdir()
    (root / ".meridian" / "rules.yaml").write_text(RULES)
    ledger = Ledger.open(root)
    w = Writer(ledger)
    w.event("2026-11-01T08:00:00.000000Z", "meridian.init", {"branch": ledger.branch})
    w.event("2026-11-02T09:00:00.000000Z", "gate.started", {"gate": "db", "estimate_hours": 2.0})
    w.event("2026-11-02T09:30:00.000000Z", "gate.blocked",
            {"source": "pre-commit", "reason": "locked gate artifacts"})
    w.event("2026-11-02T10:00:00.000000Z", "gate.submitted",
            {"gate": "db", "self_score": 9.0, "subject": "a" * 40})
    w.verdict("2026-11-02T10:01:00.000000Z", "db-1", self_score=9.0, usage=(1000, 200, 0.02))
    w.event("2026-11-02T10:59:00.000000Z", "gate.submitted",
            {"gate": "db", "self_score": 8.0, "subject": "a" * 40})
    w.verdict("2026-11-02T11:00:00.000000Z", "db-2", self_score=8.0, usage=(1000, 100, 0.03))
    w.event("2026-11-03T09:00:00.000000Z", "gate.started", {"gate": "api", "estimate_hours": 2.0})
    w.event("2026-11-03T10:00:00.000000Z", "gate.blocked",
            {"source": "claude", "reason": "stop refused"})
    # The self-score only on the submission: the verdict event is paired with it.
    w.event("2026-11-03T11:59:00.000000Z", "gate.submitted",
            {"gate": "api", "self_score": 7.5, "subject": "a" * 40})
    w.verdict("2026-11-03T12:00:00.000000Z", "api-1", self_score=None, usage=(2000, 300, 0.05))
    w.event("2026-11-10T09:00:00.000000Z", "gate.started", {"gate": "ui"})
    w.event("2026-11-10T09:10:00.000000Z", "gate.blocked",
            {"source": "pre-commit", "reason": "stub code"})
    w.event("2026-11-10T09:20:00.000000Z", "gate.evaluator_unavailable",
            {"gate": "ui", "evaluator": "anthropic", "reason": "timeout"})
    w.event("2026-11-10T10:00:00.000000Z", "gate.submitted", {"gate": "ui", "subject": "a" * 40})
    w.verdict("2026-11-10T10:30:00.000000Z", "ui-1", self_score=None, usage=(500, 50, 0.01))
    w.event("2026-11-10T12:00:00.000000Z", "gate.started", {"gate": "docs"})
    w.event("2026-11-10T12:05:00.000000Z", "gate.blocked",
            {"gate": "docs", "source": "gate", "reason": "needs db"})
    w.event("2026-11-11T08:00:00.000000Z", "features.computed", {
        "junit": "old.xml", "total": 4, "working": 1, "hardened": 0, "working_pct": 25.0,
        "hardened_pct": 0.0})
    w.event("2026-11-12T08:00:00.000000Z", "features.computed", {
        "junit": "report.xml", "total": 4, "working": 3, "hardened": 1, "working_pct": 75.0,
        "hardened_pct": 25.0, "working_ids": ["a", "b", "c"], "hardened_ids": ["a"]})

    for gate, predicted, actual in (("db", 2.0, 2.0), ("api", 2.0, 3.0), ("ui", 4.0, 2.0)):
        memory_store.add(ledger, "corrections",
                         {"gate": gate, "predicted_hours": predicted, "actual_hours": actual})
    pattern = {"text": "Write the failing test first.", "confidence": 0.8}
    memory_store.add(ledger, "semantic", pattern)
    memory_store.add(ledger, "semantic", pattern)  # refused as a duplicate: pattern.validated
    memory_store.add(ledger, "episodic", {"session": "s1", "event": "note", "notes": "hello"})

    run_a = save_run(ledger, "run-a", ["pass", "pass", "fail"], 0.1 / 3)
    store.pin_baseline(ledger, "main", run_a)
    run_b = save_run(ledger, "run-b", ["pass", "fail", "pass"], 0.2 / 3,
                     judge=Usage(tokens_in=100, tokens_out=10, cost_usd=0.003))
    return Crafted(ledger=ledger, root=root, run_a=run_a, run_b=run_b)
