"""``meridian.gates.snapshot``: the cached gate fold is always what a recompute gives."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian import gitio
from meridian.gates import snapshot as snap
from meridian.gates.graph import load_graph
from meridian.gates.state import GateFold, derive_states, fold_events, gate_events
from meridian.ledger import EVENTS, Ledger, Write
from tests.hooks.conftest import CLEAN_MODULE, Proc, write


def _full(ledger: Ledger) -> dict[str, dict]:
    return {g: dataclasses.asdict(f) for g, f in sorted(fold_events(gate_events(ledger)).items())}


def _load(root: Path, **kwargs: bool) -> snap.Snapshot:
    ledger = Ledger.open(root)
    return snap.load_snapshot(ledger.repo, ledger.branch, **kwargs)


def test_first_load_computes_then_serves_from_cache(project: Path, cli: Callable[..., Proc]) -> None:
    cli("gate", "start", "schema")
    first = _load(project)
    assert first.source == "full"
    assert first.phase("schema") == "in_progress" and first.phase("api") == "open"
    second = _load(project)
    assert second.source == "cache"
    assert second.folds == first.folds == _full(Ledger.open(project))


def test_new_events_are_folded_incrementally_and_equal_a_recompute(
        project: Path, cli: Callable[..., Proc]) -> None:
    _load(project)
    cli("gate", "start", "schema")
    write(project, "schema/shapes.py", CLEAN_MODULE)
    cli("gate", "submit", "schema")
    # A new pass is caught up too: its evidence is checked on the commit that added it.
    passed = _load(project)
    assert passed.source == "incremental" and passed.phase("schema") == "passed"
    assert passed.folds == _full(Ledger.open(project))
    cli("gate", "start", "api")
    caught_up = _load(project)
    assert caught_up.source == "incremental"
    assert caught_up.folds == _full(Ledger.open(project))
    assert caught_up.phase("schema") == "passed" and caught_up.phase("api") == "in_progress"
    assert caught_up.gate_folds()["schema"] == fold_events(gate_events(Ledger.open(project)))["schema"]


def test_derive_states_from_the_snapshot_matches_derive_states(project: Path,
                                                               cli: Callable[..., Proc]) -> None:
    cli("gate", "start", "schema")
    write(project, "schema/shapes.py", CLEAN_MODULE)
    cli("gate", "submit", "schema")
    ledger = Ledger.open(project)
    graph = load_graph(project)
    cached = derive_states(ledger, graph, folds=_load(project).gate_folds())
    assert {g: s.to_json() for g, s in cached.items()} == \
        {g: s.to_json() for g, s in derive_states(ledger, graph).items()}


def test_a_tampered_cache_is_recomputed(project: Path, cli: Callable[..., Proc]) -> None:
    cli("gate", "start", "schema")
    loaded = _load(project)
    path = snap.cache_path(gitio.open_repo(project), "meridian/state")
    document = json.loads(path.read_text())
    document["folds"]["schema"]["phase"] = "passed"  # a hand edit: checksum no longer matches
    path.write_text(json.dumps(document))
    again = _load(project)
    assert again.source == "full" and again.folds == loaded.folds


def test_no_cache_always_recomputes(project: Path, cli: Callable[..., Proc]) -> None:
    cli("gate", "start", "schema")
    _load(project)
    assert _load(project, use_cache=False).source == "full"


def test_rewritten_history_is_recomputed(project: Path, cli: Callable[..., Proc]) -> None:
    ledger = Ledger.open(project)
    base = ledger.tip()
    assert base is not None
    cli("gate", "start", "schema")
    assert _load(project).phase("schema") == "in_progress"
    # Another history from the same base: the cached tip is no longer an ancestor.
    gitio.set_ref(ledger.repo, ledger.refname, base, expected=ledger.tip())
    ledger.commit(Write(summary="other history").add(
        EVENTS, ledger.record("gate.blocked", {"source": "gate", "reason": "elsewhere"})))
    result = _load(project)
    assert result.source == "full"
    assert result.folds == _full(ledger) == {}


def test_an_appended_event_older_than_the_fold_is_folded_in_ledger_order(
        project: Path, cli: Callable[..., Proc]) -> None:
    cli("gate", "start", "schema")
    cached = _load(project)
    ledger = Ledger.open(project)
    # A record stamped before the newest one already folded (a clock set back, a hand
    # edit) is stored in an older month's shard, yet folds where its commit put it.
    early = ledger.record("gate.reopened", {"gate": "schema", "reason": "from the other clone"},
                          ts="2001-01-01T00:00:00.000000Z")
    ledger.commit(Write(summary="merged from a clone").add(EVENTS, early))
    result = _load(project)
    assert result.source == "incremental"
    assert result.folds == _full(ledger)
    # Folded in ledger order: the reopen appended last is the latest transition, whatever
    # its timestamp says (a record stamped in the past or the future cannot reorder).
    assert result.folds["schema"]["started_at"] == "2001-01-01T00:00:00.000000Z"
    assert cached.folds["schema"]["started_at"] != "2001-01-01T00:00:00.000000Z"


def test_the_cached_fields_follow_gate_fold(project: Path, cli: Callable[..., Proc],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    cli("gate", "start", "schema")
    _load(project)
    assert cli("gate", "start", "api").code == 2  # refused, and the refusal is an event
    # A GateFold with other fields (a newer Meridian) must not read the old cache.
    monkeypatch.setattr(snap, "_fold_fields", lambda: ["phase", "something_new"])
    assert _load(project).source == "full"
    assert {f.name for f in dataclasses.fields(GateFold)} >= {"phase", "subject", "verdict"}


SNAPSHOT_PROBE = """\
import sys
from meridian import gitio
from meridian.gates.snapshot import load_snapshot
snapshot = load_snapshot(gitio.open_repo("."), "meridian/state")
print(snapshot.source, snapshot.phase("schema"), "meridian.gates.state" in sys.modules)
"""


def test_appends_that_touch_no_gate_do_not_load_the_gates_package(
        project: Path, cli: Callable[..., Proc]) -> None:
    import subprocess
    import sys

    cli("gate", "start", "schema")
    _load(project)
    assert cli("memory", "add", "semantic", "--json",
               '{"text": "Name things for what they do.", "confidence": 0.6}').code == 0
    Ledger.open(project).emit("baseline.note", {"detail": "an event that is not about a gate"})
    proc = subprocess.run([sys.executable, "-c", SNAPSHOT_PROBE], cwd=project,
                          capture_output=True, text=True, check=False)
    assert proc.stdout == "incremental in_progress False\n", proc.stderr


def test_a_cache_with_other_fields_at_the_same_tip_is_refolded(project: Path,
                                                              cli: Callable[..., Proc]) -> None:
    """A cache an older Meridian wrote, whose GateFold had another field, is read at an
    unchanged tip: the folds handed to derive_states are recomputed, not built from it."""
    cli("gate", "start", "schema")
    loaded = _load(project)
    path = snap.cache_path(gitio.open_repo(project), "meridian/state")
    document = json.loads(path.read_text())
    document["fields"] = document["fields"] + ["retired_field"]
    document["folds"]["schema"]["retired_field"] = 1
    document["checksum"] = snap._checksum(document["tip"], document["last_ts"],
                                          document["fields"], document["folds"])
    path.write_text(json.dumps(document))
    again = _load(project)
    assert again.source == "cache" and again.phase("schema") == "in_progress"
    assert again.gate_folds() == loaded.gate_folds()
    assert _load(project).fields == document["fields"][:-1]  # rewritten by the recompute
