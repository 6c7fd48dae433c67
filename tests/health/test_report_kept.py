"""Health keeps the progress of its one pass over the events
(``.git/meridian/health-<branch>.json``, with the state tree it was computed at), so a
second report at the same state costs its start-up and one after new events reads only
the lines appended since. Both are caches, never trust: every report must equal the one
computed from nothing (the files deleted), whatever was appended (in time order or not,
in the newest shard or a new month's), and a damaged file is computed again.

Real repositories: the golden test's generated 10k-event history, then real ledger
commits (``Ledger.emit`` and ``Ledger.commit``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from meridian.health import aggregate, build_report
from meridian.ledger import EVENTS, Ledger, Write
from tests.health.test_report_golden import TODAY, _project


def _report(ledger: Ledger, root: Path) -> dict[str, Any]:
    document = json.loads(build_report(ledger, root, today=TODAY).model_dump_json())
    document.pop("generated_at")
    return document


def _kept(ledger: Ledger) -> list[Path]:
    return sorted(ledger.local_dir.glob("health-*.json"))


def _fresh(ledger: Ledger, root: Path) -> dict[str, Any]:
    saved = {path: path.read_bytes() for path in _kept(ledger)}
    for path in saved:
        path.unlink()
    try:
        return _report(ledger, root)
    finally:
        for path, data in saved.items():  # the kept files as they were, for the next step
            path.write_bytes(data)


def _at(ledger: Ledger, kind: str, data: dict[str, Any], ts: str) -> None:
    """One event stamped ``ts`` (not now), committed as the ledger commits any record."""
    record = ledger.record(kind, data, ts=ts)
    ledger.commit(Write(summary=kind).add(EVENTS, record))


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Ledger, Path]:
    root = tmp_path_factory.mktemp("kept") / "project"
    return _project(root, corrupt=False), root


def test_appended_events_are_folded_on_and_equal_a_fresh_report(
        history: tuple[Ledger, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ledger, root = history
    first = _report(ledger, root)
    assert len(_kept(ledger)) == 1
    assert _report(ledger, root) == first  # the same tree: the kept figures
    ledger.emit("gate.started", {"gate": "g03"})
    ledger.emit("gate.submitted", {"gate": "g03", "self_score": 9.0, "subject": "2" * 40})
    ledger.emit("gate.failed", {"gate": "g03", "verdict": "verdicts/g03/late.json",
                                "overall": 4.5, "threshold": 7.0, "evaluator": "heuristic",
                                "subject": "2" * 40, "issues": {"high": 2},
                                "scores": {"completeness": 4.0}, "self_score": 9.0,
                                "usage": {"input_tokens": 10, "output_tokens": 5,
                                          "cost_usd": 0.5}})
    ledger.emit("gate.blocked", {"source": "pre-push", "reason": "locked"})
    ledger.emit("pattern.validated", {"id": "f" * 32})
    ledger.emit("harness.changed", {"files": [{"path": ".meridian/rules.yaml"}],
                                    "changes": ["rules changed"], "weakening": True,
                                    "source": "catch-up"})
    ledger.emit("features.computed", {"junit": "j.xml", "total": 3, "working": 2,
                                      "hardened": 1, "working_pct": 66.7, "hardened_pct": 33.3,
                                      "working_ids": [], "hardened_ids": []})
    # Resumed, not read again: no shard of the first report's history is parsed.
    parsed: list[str] = []
    real = aggregate._parse_part
    monkeypatch.setattr(aggregate, "_parse_part",
                        lambda path, blob: parsed.append(path) or real(path, blob))
    after = _report(ledger, root)
    assert after != first and after["events"] == first["events"] + 7
    assert all(not path.startswith("events/2026-0") for path in parsed), parsed
    monkeypatch.undo()
    assert after == _fresh(ledger, root)


@pytest.mark.parametrize("late", ["older gate event", "older month"])
def test_events_out_of_time_order_are_aggregated_from_every_shard(
        history: tuple[Ledger, Path], late: str) -> None:
    ledger, root = history
    _report(ledger, root)
    if late == "older gate event":  # sorts before the latest gate event folded
        _at(ledger, "gate.reopened", {"gate": "g05", "reason": "late"},
            "2026-01-02T00:00:00.000000Z")
    else:  # lands in an old month's shard, before the newest one in stored order
        _at(ledger, "harness.changed", {"files": [{"path": ".meridian/gates.yaml"}],
                                        "changes": ["late"], "weakening": False},
            "2026-01-03T00:00:00.000000Z")
    assert _report(ledger, root) == _fresh(ledger, root)


@pytest.mark.parametrize("damage", ["garbage", "edited", "another version"])
def test_damaged_kept_files_are_computed_again(history: tuple[Ledger, Path],
                                               damage: str) -> None:
    ledger, root = history
    expected = _fresh(ledger, root)
    _report(ledger, root)
    [kept] = _kept(ledger)
    digest, _, body = kept.read_bytes().partition(b"\n")
    document = json.loads(body)
    if damage == "garbage":
        kept.write_text("{not json")
    elif damage == "edited":  # the figures changed, the checksum line not
        document["progress"]["events"] = 1
        kept.write_bytes(digest + b"\n" + json.dumps(document).encode())
    else:  # written by another Meridian: its figures may mean something else
        document["key"]["meridian"] = "0.0.0"
        body = json.dumps(document).encode()
        kept.write_bytes(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    assert _report(ledger, root) == expected
    digest, _, body = kept.read_bytes().partition(b"\n")  # rewritten true
    assert hashlib.sha256(body).hexdigest().encode() == digest
    assert json.loads(body)["progress"]["events"] == expected["events"]
    assert _report(ledger, root) == expected  # and kept true again
