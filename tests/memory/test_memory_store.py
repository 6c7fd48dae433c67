"""``meridian memory add/list/export``: validation, dedupe, patterns, amendments, streaming."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import meridian
from meridian.cli import main
from meridian.ledger import EVENTS, Ledger
from meridian.memory import store
from meridian.memory.schemas import KINDS, json_schema

Add = Callable[..., int]
Stored = Callable[[Ledger, str], list[dict[str, Any]]]


@pytest.mark.parametrize(("kind", "record", "message"), [
    ("corrections", {"gate": "api", "predicted_hours": 8, "actual_hours": 0},
     "corrections.actual_hours: must be > 0"),
    ("correction", {"gate": "api", "predicted_hours": 8, "actual_hours": 6, "ratio": 1.33},
     "corrections.ratio: must equal actual_hours / predicted_hours = 6 / 8 = 0.75, got 1.33"),
    ("semantic", {"text": "auth gates overrun", "confidence": 1.2},
     "semantic.confidence: must be <= 1"),
    ("semantic", {"text": "auth gates overrun"}, "semantic.confidence: required field is missing"),
    ("episodic", {"session": "s1", "event": "gate_failed"},
     "episodic.gate: required for a gate_failed event"),
    ("episodic", {"session": "s1", "event": "note", "mood": "good"}, "episodic.mood: unknown key"),
])
def test_invalid_record_is_refused_with_field_path_and_branch_unchanged(
        ledger: Ledger, add_memory: Add, capsys: pytest.CaptureFixture[str],
        kind: str, record: dict[str, Any], message: str) -> None:
    tip = ledger.tip()
    assert add_memory(kind, record) == 2
    assert capsys.readouterr().err == f"meridian: {message}\n"
    assert ledger.tip() == tip


def test_malformed_json_is_refused_and_nothing_written(
        ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    tip = ledger.tip()
    assert main(["memory", "add", "episodic", "--json", "{'session': 1}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("meridian: --json: not valid JSON: Expecting property name")
    assert ledger.tip() == tip


def test_unknown_kind_is_a_usage_error(ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "add", "procedural", "--json", "{}"]) == 2
    assert "unknown memory kind 'procedural'; expected one of: semantic, episodic, corrections" \
        in capsys.readouterr().err


def test_add_needs_an_initialised_state_branch(repo: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "add", "episodic", "--json", '{"session":"s","event":"note"}']) == 2
    assert "no state branch meridian/state: run `meridian init` first" in capsys.readouterr().err


def test_record_from_file_and_from_stdin(ledger: Ledger, tmp_path: Path, stored: Stored,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    record_file = tmp_path / "episode.json"
    record_file.write_text(json.dumps({"session": "s1", "event": "session_started"}))
    assert main(["memory", "add", "episodic", "--file", str(record_file)]) == 0
    import io
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"session": "s1", "event": "session_ended"}'))
    assert main(["memory", "add", "episodic"]) == 0
    assert [r["data"]["event"] for r in stored(ledger, "memory/episodic")] == [
        "session_started", "session_ended"]


def test_duplicates_are_stored_once_and_the_user_is_told(
        ledger: Ledger, add_memory: Add, stored: Stored,
        capsys: pytest.CaptureFixture[str]) -> None:
    record = {"gate": "api", "predicted_hours": 8, "actual_hours": 6}
    assert add_memory("corrections", record) == 0
    first = capsys.readouterr().out
    tip = ledger.tip()
    assert add_memory("corrections", record) == 0
    second = capsys.readouterr().out
    lines = stored(ledger, "memory/corrections")
    assert len(lines) == 1
    assert first == f"stored corrections {lines[0]['id'][:12]}\n"
    assert second == (f"already stored: corrections {lines[0]['id'][:12]} "
                      "(identical records are stored once)\n")
    assert ledger.tip() == tip  # the second add made no commit


def test_known_semantic_pattern_raises_its_validation_count(
        ledger: Ledger, add_memory: Add, stored: Stored,
        capsys: pytest.CaptureFixture[str]) -> None:
    pattern = {"text": "Frontend gates with more than eight components take 1.5x",
               "confidence": 0.6, "source_gates": ["ui"]}
    assert add_memory("semantic", pattern) == 0
    assert add_memory("semantic", pattern) == 0
    # Same text with other spacing, case and confidence is the same pattern.
    assert add_memory("semantic", {**pattern, "confidence": 0.9,
                                   "text": "frontend gates with more than  eight components take 1.5X"}) == 0
    out = capsys.readouterr().out.splitlines()
    lines = stored(ledger, "memory/semantic")
    assert len(lines) == 1
    short = lines[0]["id"][:12]
    assert out == [f"stored semantic {short} (validation count 1)",
                   f"known pattern semantic {short}: validation count now 2 (not stored twice)",
                   f"known pattern semantic {short}: validation count now 3 (not stored twice)"]
    events = [r for r in ledger.records(EVENTS) if r.kind == "pattern.validated"]
    assert [e.data for e in events] == [{"id": lines[0]["id"]}] * 2
    assert main(["memory", "list", "semantic", "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["id"], r["validations"]) for r in listed] == [(lines[0]["id"], 3)]


def test_a_different_context_is_a_different_pattern(ledger: Ledger) -> None:
    store.add(ledger, "semantic", {"text": "tests take long", "confidence": 0.5,
                                   "context": "python"})
    added = store.add(ledger, "semantic", {"text": "tests take long", "confidence": 0.5,
                                           "context": "rust"})
    assert added.stored
    assert len(list(store.iter_records(ledger, "semantic"))) == 2


def test_correction_without_hours_amends_the_latest_correction_of_its_gate(
        ledger: Ledger, add_memory: Add, stored: Stored,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert add_memory("corrections", {"gate": "api", "predicted_hours": 8,
                                      "actual_hours": 12, "source": "gate_pass"}) == 0
    assert add_memory("corrections", {"gate": "web", "predicted_hours": 2,
                                      "actual_hours": 3}) == 0
    capsys.readouterr()
    assert add_memory("corrections", {"gate": "api", "root_cause": "OAuth was new to us",
                                      "next_action": "budget 1.5x for auth gates"}) == 0
    lines = stored(ledger, "memory/corrections")
    original, amendment = lines[0], lines[2]
    assert amendment["data"] == {"gate": "api", "amends": original["id"],
                                 "root_cause": "OAuth was new to us",
                                 "next_action": "budget 1.5x for auth gates", "source": "user"}
    assert capsys.readouterr().out == (
        f"stored corrections {amendment['id'][:12]}, amends {original['id'][:12]}\n")


@pytest.mark.parametrize(("amends_of", "message"), [
    ("missing", "corrections.amends: no stored correction has id {id}"),
    ("web", "corrections.amends: {id} is a correction of gate 'web', not 'api'"),
    ("amendment", "corrections.amends: {id} is itself an amendment; amend the original {orig}"),
])
def test_explicit_amends_must_name_an_original_correction_of_the_same_gate(
        ledger: Ledger, add_memory: Add, capsys: pytest.CaptureFixture[str],
        amends_of: str, message: str) -> None:
    api = store.add(ledger, "corrections", {"gate": "api", "predicted_hours": 1,
                                            "actual_hours": 2}).record
    web = store.add(ledger, "corrections", {"gate": "web", "predicted_hours": 1,
                                            "actual_hours": 2}).record
    amendment = store.add(ledger, "corrections", {"gate": "api", "root_cause": "x"}).record
    target = {"missing": "0" * 32, "web": web.id, "amendment": amendment.id}[amends_of]
    tip = ledger.tip()
    capsys.readouterr()
    assert add_memory("corrections", {"gate": "api", "amends": target, "next_action": "y"}) == 2
    expected = message.format(id=target, orig=api.id)
    assert capsys.readouterr().err == f"meridian: {expected}\n"
    assert ledger.tip() == tip


def test_correction_without_hours_for_a_gate_with_no_correction_is_refused(
        ledger: Ledger, add_memory: Add, capsys: pytest.CaptureFixture[str]) -> None:
    assert add_memory("corrections", {"gate": "api", "root_cause": "x"}) == 2
    assert capsys.readouterr().err == ("meridian: corrections.actual_hours: required unless "
                                       "the record amends an earlier correction\n")


def test_session_option_fills_the_session(ledger: Ledger, add_memory: Add,
                                          stored: Stored) -> None:
    assert add_memory("semantic", {"text": "x", "confidence": 0.1}, "--session", "abc") == 0
    assert stored(ledger, "memory/semantic")[0]["data"]["session"] == "abc"


def test_commit_message_has_trailers(ledger: Ledger) -> None:
    added = store.add(ledger, "corrections", {"gate": "api", "predicted_hours": 8,
                                              "actual_hours": 6})
    info = next(ledger.history())
    assert info.summary == "memory corrections: api ratio 0.75"
    assert info.trailers == {"Meridian-Memory": "corrections", "Meridian-Gate": "api",
                             "Meridian-Record": added.record.id}


def _spawn_add(repo: Path, kind: str, record: dict[str, Any]) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(meridian.__file__).resolve().parents[1])
    return subprocess.Popen(
        [sys.executable, "-m", "meridian", "memory", "add", kind, "--json", json.dumps(record)],
        cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_concurrent_processes_lose_no_record(repo: Path, ledger: Ledger, stored: Stored) -> None:
    distinct = [{"session": f"s{i}", "event": "note", "notes": f"note {i}"} for i in range(8)]
    same = {"session": "shared", "event": "session_started"}
    procs = [_spawn_add(repo, "episodic", record) for record in distinct]
    procs += [_spawn_add(repo, "episodic", same) for _ in range(4)]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    data = [line["data"] for line in stored(ledger, "memory/episodic")]
    assert sorted(d["session"] for d in data) == sorted([f"s{i}" for i in range(8)] + ["shared"])
    assert data.count(same) == 1


def test_list_filters_by_gate_and_since(ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    store.add(ledger, "corrections", {"gate": "api", "predicted_hours": 8, "actual_hours": 6})
    store.add(ledger, "corrections", {"gate": "web", "predicted_hours": 2, "actual_hours": 3})
    store.add(ledger, "semantic", {"text": "p", "confidence": 0.5, "source_gates": ["web"]})
    capsys.readouterr()
    assert main(["memory", "list", "corrections", "--gate", "web", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["data"]["gate"] for r in rows] == ["web"]
    assert main(["memory", "list", "semantic", "--gate", "web", "--json"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
    assert main(["memory", "list", "corrections", "--since", "2999-01-01", "--json"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["memory", "list", "corrections", "--since", "2000-01-01"]) == 0
    table = capsys.readouterr().out
    assert "api" in table and "web" in table and "0.75" in table
    assert main(["memory", "list", "corrections", "--since", "yesterday"]) == 2
    assert "--since: expected a date like 2026-11-30" in capsys.readouterr().err


def test_export_streams_the_stored_lines_and_they_match_the_published_schema(
        ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    store.add(ledger, "corrections", {"gate": "api", "predicted_hours": 8, "actual_hours": 6})
    store.add(ledger, "corrections", {"gate": "api", "root_cause": "scope grew"})
    capsys.readouterr()
    assert main(["memory", "export", "corrections"]) == 0
    out = capsys.readouterr().out
    raw = [line.decode() for _, _, line in ledger.lines("memory/corrections")]
    assert out.splitlines() == raw
    validator = jsonschema.Draft202012Validator(json_schema(KINDS["corrections"]))
    for line in out.splitlines():
        validator.validate(json.loads(line))


def test_infinity_in_the_input_is_refused_so_export_stays_json(
        ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    tip = ledger.tip()
    # Python's json module reads Infinity; the stored line would then not be JSON.
    assert main(["memory", "add", "corrections", "--json",
                 '{"gate": "api", "predicted_hours": Infinity, "actual_hours": 6}']) == 2
    assert capsys.readouterr().err == (
        "meridian: corrections.predicted_hours: must be a finite number\n")
    assert ledger.tip() == tip


def test_empty_stdin_is_refused_with_one_line(ledger: Ledger, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    import io
    monkeypatch.setattr(sys, "stdin", io.StringIO("  \n"))
    assert main(["memory", "add", "episodic"]) == 2
    assert capsys.readouterr().err == (
        "meridian: stdin: empty; expected one record as a JSON object\n")


def test_export_of_an_empty_kind_prints_nothing(ledger: Ledger,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "export", "semantic"]) == 0
    assert capsys.readouterr().out == ""


def test_record_episode_helper(ledger: Ledger) -> None:
    added = store.record_episode(ledger, "s9", "gate_passed", gate="api", outcome="7.8/10",
                                 at="2026-11-30T10:00:00Z")
    assert added.stored
    assert added.record.data == {"session": "s9", "event": "gate_passed", "gate": "api",
                                 "outcome": "7.8/10", "at": "2026-11-30T10:00:00Z"}


# --- dedupe through the index of stored ids (meridian.idindex) --------------------------


def test_a_fresh_process_dedupes_from_the_index_without_reading_the_stream(
        ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    from meridian import idindex

    first = store.record_episode(Ledger(ledger.repo, ledger.branch), "s1", "note", notes="a")
    assert first.stored
    assert idindex.index_path(ledger, "memory/episodic").is_file()

    def no_scan(*args: object) -> set[str]:
        raise AssertionError("the whole stream was read")

    monkeypatch.setattr(idindex, "scan_ids", no_scan)
    second = store.record_episode(Ledger(ledger.repo, ledger.branch), "s1", "note", notes="b")
    assert second.stored
    monkeypatch.undo()
    again = store.record_episode(Ledger(ledger.repo, ledger.branch), "s1", "note", notes="b")
    assert not again.stored and again.record.id == second.record.id


def test_an_index_claiming_an_id_never_drops_a_write(ledger: Ledger) -> None:
    """A poisoned index (an id added, checksum recomputed) must not make a new memory
    look stored: the claim is checked against the commits first."""
    from meridian import idindex

    store.record_episode(Ledger(ledger.repo, ledger.branch), "s1", "note", notes="a")
    fresh = Ledger(ledger.repo, ledger.branch)
    victim = fresh.record("memory.episodic", {"session": "s1", "event": "note", "notes": "z"})
    path = idindex.index_path(ledger, "memory/episodic")
    stored_ids = idindex.scan_ids(ledger, "memory/episodic", ledger.tip())
    binary, other = idindex._split(stored_ids | {victim.id})
    idindex._write_whole(path, "memory/episodic", str(ledger.tip()), b"".join(sorted(binary)),
                         set(other))
    added = store.record_episode(fresh, "s1", "note", notes="z")
    assert added.stored and added.record.id == victim.id
    assert victim.id in {r.id for r in ledger.records("memory/episodic")}


def test_an_index_missing_an_id_never_stores_a_second_copy(ledger: Ledger) -> None:
    from meridian import idindex
    from meridian.verify import verify

    kept = store.record_episode(Ledger(ledger.repo, ledger.branch), "s1", "note", notes="a")
    path = idindex.index_path(ledger, "memory/episodic")
    data = path.read_bytes()
    path.write_bytes(data.replace(bytes.fromhex(kept.record.id), b""))  # torn/hand-edited
    again = store.record_episode(Ledger(ledger.repo, ledger.branch), "s1", "note", notes="a")
    assert not again.stored
    assert [r.id for r in ledger.records("memory/episodic")] == [kept.record.id]
    path.unlink()  # deleted: rebuilt from the commits
    assert not store.record_episode(Ledger(ledger.repo, ledger.branch), "s1", "note",
                                    notes="a").stored
    assert verify(ledger, full=True).ok


def test_a_known_pattern_is_found_through_the_pattern_index_however_it_is_poisoned(
        ledger: Ledger) -> None:
    """The index of pattern keys only answers "not stored"; deleted, torn or claiming a
    pattern that is not stored, it never hides a stored pattern nor invents one."""
    from meridian import idindex

    first = store.add(Ledger(ledger.repo, ledger.branch), "semantic",
                      {"text": "Flaky tests hide races", "confidence": 0.6})
    assert first.stored
    derive = idindex.Derive("pattern", store._stored_pattern_id)
    path = idindex.index_path(ledger, "memory/semantic", derive)
    assert path.is_file()
    same = {"text": "  flaky TESTS hide races ", "confidence": 0.7}
    again = store.add(Ledger(ledger.repo, ledger.branch), "semantic", same)
    assert not again.stored and again.record.id == first.record.id and again.validations == 2
    path.write_bytes(path.read_bytes()[:20])  # torn
    assert not store.add(Ledger(ledger.repo, ledger.branch), "semantic", same).stored
    path.unlink()  # deleted
    assert store.add(Ledger(ledger.repo, ledger.branch), "semantic", same).validations == 4
    # A key claimed for a pattern that is not stored: read exactly, and stored.
    new = {"text": "retries mask outages", "confidence": 0.5}
    keys = idindex.scan_ids(ledger, "memory/semantic", ledger.tip(), derive)
    binary, other = idindex._split(keys | {store._pattern_id(new)})
    idindex._write_whole(path, "memory/semantic#pattern", str(ledger.tip()),
                         b"".join(sorted(binary)), set(other))
    assert store.add(Ledger(ledger.repo, ledger.branch), "semantic", new).stored
