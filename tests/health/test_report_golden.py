"""The health report over a generated 10,000-event history is exactly what it was before
the aggregation was made faster: the golden document (``tests/data/health_10k.json.gz``)
was written by the code of main at 5998d57 (one pass folding every parsed event), and any
change to the scan, the fold or the models must reproduce it, text and JSON.

The history is built with pygit2 plumbing in one commit, every kind health reads:
gate cycles (start, block, submit with and without a self-score, failed and passed
verdicts with and without per-dimension scores, unknown cost, objective-only scope,
suppressions), reopens, approvals, evaluator outages, hook blocks without a gate,
features, harness changes, duplicates refused, memory records and corrections, and a
line that is not JSON. To write the golden again (only when the report is meant to
change): ``MERIDIAN_WRITE_GOLDEN=1 pytest tests/health/test_report_golden.py``.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pygit2
import pytest

from meridian import gitio, merge, records
from meridian.health import build_report
from meridian.ledger import EVENTS, Ledger
from tests.conftest import git

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "health_10k.json.gz"
START = datetime(2026, 1, 1, tzinfo=UTC)
WRITER = "golden <golden@localhost>"
TODAY = date(2026, 3, 1)


def _ts(n: int) -> str:
    return (START + n * timedelta(minutes=3)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _line(kind: str, data: dict[str, Any], ts: str) -> bytes:
    rid = records.record_id(kind, ts, WRITER, data)
    return json.dumps({"id": rid, "ts": ts, "kind": kind, "writer": WRITER, "data": data},
                      separators=(",", ":")).encode()


def _verdict(gate: str, overall: float, passed: bool) -> bytes:
    scores = {d: round(overall + (i - 1.5) * 0.3, 2) for i, d in enumerate(
        ("completeness", "correctness", "robustness", "spec_adherence"))}
    return json.dumps({"gate": gate, "evaluator": "heuristic", "subject": "0" * 40,
                       "scores": scores, "overall": overall, "threshold": 7.0,
                       "passed": passed, "issues": [], "summary": "golden"}).encode()


def _history(count: int) -> tuple[list[bytes], dict[str, bytes]]:
    lines: list[bytes] = []
    documents: dict[str, bytes] = {}

    def add(kind: str, data: dict[str, Any]) -> None:
        lines.append(_line(kind, data, _ts(len(lines))))

    n = 0
    while len(lines) < count:
        gate = f"g{n % 37:02d}"
        usage: dict[str, Any] = {"input_tokens": 1000 + n % 300, "output_tokens": 200 + n % 50,
                                 "cost_usd": None if n % 11 == 0 else round(0.001 * (n % 17), 6)}
        outcome: dict[str, Any] = {"threshold": 7.0, "evaluator": "heuristic",
                                   "subject": "0" * 40, "usage": usage}
        if n % 3 == 0:
            outcome["scope"] = "objective checks only"
        if n % 4 == 0:
            outcome["suppressed"] = n % 5
        failed_path = f"verdicts/{gate}/{n:06d}-f.json"
        passed_path = f"verdicts/{gate}/{n:06d}-p.json"
        documents[failed_path] = _verdict(gate, 5.0 + n % 20 / 10, False)
        documents[passed_path] = _verdict(gate, 7.0 + n % 30 / 10, True)
        add("session.started", {"session": f"s{n}", "source": "claude"})
        add("gate.started", {"gate": gate, "estimate_hours": 1.0 + n % 4})
        add("gate.blocked", {"source": "pre-commit", "reason": "stub", "files": ["src/a.py"]})
        add("gate.submitted", {"gate": gate, "subject": "0" * 40,
                               **({"self_score": 8.0 + n % 3 / 2} if n % 2 else {})})
        failed = {"gate": gate, "verdict": failed_path, "overall": 5.0 + n % 20 / 10,
                  "issues": {"high": 1}, **outcome}
        if n % 2:
            failed["scores"] = json.loads(documents[failed_path])["scores"]
        add("gate.failed", failed)
        if n % 7 == 0:
            add("gate.evaluator_unavailable", {"gate": gate, "evaluator": "anthropic",
                                               "reason": "timeout"})
        add("gate.submitted", {"gate": gate, "self_score": 7.5, "subject": "1" * 40})
        add("gate.passed", {"gate": gate, "verdict": passed_path, "overall": 7.0 + n % 30 / 10,
                            "issues": {}, "self_score": 7.5, **outcome})
        if n % 5 == 0:
            add("gate.approved", {"gate": gate, "approver": "alice", "verdict": passed_path,
                                  "subject": "1" * 40})
        if n % 9 == 0:
            add("gate.reopened", {"gate": gate, "reason": "more work"})
        if n % 13 == 0:
            add("gate.blocked", {"gate": gate, "source": "claude", "reason": "locked"})
        if n % 50 == 0:
            add("features.computed", {"junit": "junit.xml", "total": 10 + n % 7,
                                      "working": 5 + n % 5, "hardened": 3, "working_pct": 50.0,
                                      "hardened_pct": 30.0, "working_ids": [], "hardened_ids": []})
        if n % 97 == 0:
            add("harness.changed", {"changes": [f".claude/settings.json changed {n}"],
                                    "weakening": n % 2 == 0, "source": "catch-up"})
        add("pattern.validated", {"id": f"{n:032x}"})
        add("session.ended", {"session": f"s{n}", "source": "claude"})
        n += 1
    return lines[:count], documents


def _memory() -> dict[str, list[bytes]]:
    corrections = []
    for n in range(120):
        predicted, actual = 1.0 + n % 4, 0.5 + n % 6
        corrections.append(_line("memory.correction", {
            "gate": f"g{n % 37:02d}", "predicted_hours": predicted, "actual_hours": actual,
            "ratio": round(actual / predicted, 4), "source": "gate_pass"}, _ts(n * 50)))
    return {
        "memory/corrections": corrections,
        "memory/episodic": [_line("memory.episodic", {"session": f"s{n}", "event": "note",
                                                      "notes": f"episode {n}"}, _ts(n * 40))
                            for n in range(200)],
        "memory/semantic": [_line("memory.semantic", {
            "text": f"pattern {n}: test first", "confidence": 0.7, "source_gates": [],
            "source_projects": [], "tags": []}, _ts(n * 90)) for n in range(30)],
    }


def _project(root: Path, corrupt: bool) -> Ledger:
    git(root.parent, "init", "-q", "-b", "main", str(root))
    repo = pygit2.Repository(str(root))
    events, documents = _history(10_000)
    updates: dict[str, pygit2.Oid] = {}
    for stream, lines in {EVENTS: events, **_memory()}.items():
        for number, (shard, content) in enumerate(sorted(merge.shard_lines(stream, lines).items())):
            if corrupt and stream == EVENTS and number == 1:  # a line that is not JSON, mid-shard
                kept = content.splitlines(keepends=True)
                content = b"".join([*kept[:10], b"{this line is not json\n", *kept[10:]])
            updates[shard] = repo.create_blob(content)
    for path, content in documents.items():
        updates[path] = repo.create_blob(content)
    tree = gitio.update_tree(repo, None, updates)
    when = int(datetime(2026, 2, 1, tzinfo=UTC).timestamp())
    signature = pygit2.Signature("golden", "golden@localhost", when, 0)
    repo.create_commit("refs/heads/meridian/state", signature, signature, "golden history\n",
                       tree, [])
    return Ledger.open(root)


def _documents(ledger: Ledger, root: Path) -> tuple[dict[str, Any], str]:
    report = build_report(ledger, root, today=TODAY)
    document = json.loads(report.model_dump_json())
    document.pop("generated_at")
    from rich.console import Console

    from meridian.health import render_terminal

    text = io.StringIO()
    render_terminal.render(report, Console(file=text, width=120, color_system=None))
    return document, text.getvalue()


@pytest.mark.parametrize("case", ["clean", "corrupt"])
def test_the_report_over_10k_events_is_unchanged(tmp_path: Path, case: str) -> None:
    root = tmp_path / "project"
    ledger = _project(root, corrupt=case == "corrupt")
    document, text = _documents(ledger, root)
    assert document["events"] == 10_000 and document["gates"]["verdicts"] > 2000
    assert any("could not be read" in note for note in document["notes"]) == (case == "corrupt")
    if os.environ.get("MERIDIAN_WRITE_GOLDEN") == "1":
        kept = json.loads(gzip.decompress(GOLDEN.read_bytes())) if GOLDEN.exists() else {}
        kept[case] = {"json": document, "text": text}
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_bytes(gzip.compress(json.dumps(kept, sort_keys=True, indent=1).encode(),
                                         mtime=0))
    golden = json.loads(gzip.decompress(GOLDEN.read_bytes()))[case]
    expected = _without_commit(golden["json"], golden["text"])
    assert _without_commit(document, text) == expected
    # Again, from whatever the first report left cached: the same report.
    assert _without_commit(*_documents(ledger, root)) == expected


def _without_commit(document: dict[str, Any], text: str) -> tuple[dict[str, Any], str]:
    """The report less the state commit's id, which follows the ledger's shard layout
    (the size a shard is closed at), not the figures."""
    commit = str(document["commit"])
    return {**document, "commit": None}, text.replace(commit[:12], "<commit>")
