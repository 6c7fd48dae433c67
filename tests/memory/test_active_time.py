"""Actual hours are active time: Claude sessions and the gate's commits, idle gaps cut.

A crafted history (sessions recorded as the Claude hooks record them, commits with
real author dates in a real repository, gate events at set times) against figures
computed by hand; then a real gate passing through the lifecycle, the correction it
writes, and how the hours read in `meridian calibration` and the SessionStart context.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.durations import human_hours
from meridian.ledger import EVENTS, Ledger, Write
from meridian.memory import store
from meridian.memory.calibration import (
    effective_corrections,
    intervals,
    record_pass,
    union_hours,
)
from meridian.memory.schemas import KINDS
from meridian.records import now_ts, parse_ts
from tests.conftest import git

GATES = """\
version: 1
gates:
  - id: build
    artifacts: ["src/**"]
    estimate_hours: 4
  - id: docs
    needs: [build]
    artifacts: ["docs/**"]
"""

START = "2026-11-02T09:00:00.000000Z"  # Monday
PASS = "2026-11-04T11:00:00.000000Z"  # Wednesday: 50 h of wall time


def _at(day: int, hhmm: str) -> str:
    return f"2026-11-{day:02d}T{hhmm}:00.000000Z"


def _session(ledger: Ledger, session: str, started: str, *ended: str) -> None:
    """As the Claude hooks record it: SessionStart, then each Stop / SessionEnd, each
    written at its moment (the record's ts; calibration never trusts a claimed ``at``)."""
    spec = KINDS["episodic"]
    moments = [(started, {"session": session, "event": "session_started"})] + [
        (when, {"session": session, "event": "session_ended", "notes": "Stop (a turn ended)",
                "at": when}) for when in ended]
    for when, data in moments:
        record = ledger.record(spec.kind, store.validate(spec, data), ts=when)
        ledger.commit(Write(summary=f"{data['event']} (crafted)",
                            trailers={"Meridian-Memory": "episodic"}).add(spec.stream, record))


def _event(ledger: Ledger, kind: str, data: dict, ts: str) -> None:
    record = ledger.record(kind, data, ts=ts)
    ledger.commit(Write(summary=f"{kind} (crafted)").add(EVENTS, record))


def _commit(root: Path, path: str, text: str, when: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    git(root, "add", path)
    stamp = when.replace(".000000Z", "+00:00")
    env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    subprocess.run(["git", "commit", "-q", "-m", f"{path} at {when}"], cwd=root, env=env,
                   check=True)


@pytest.fixture
def crafted(repo_with_commit: Path) -> Ledger:
    root = repo_with_commit
    (root / ".meridian").mkdir()
    (root / ".meridian" / "gates.yaml").write_text(GATES)
    ledger = Ledger.open(root)
    ledger.emit("meridian.init", {"branch": "meridian/state"})
    _event(ledger, "gate.started", {"gate": "build", "estimate_hours": 4}, START)
    # S0 began the night before; its only point inside the window is a lone Stop.
    _session(ledger, "S0", _at(1, "23:50"), _at(2, "09:10"))
    # S1: 09:05-09:40, then a 50 min gap (> 30), then 10:30-10:50.
    _session(ledger, "S1", _at(2, "09:05"), _at(2, "09:20"), _at(2, "09:40"), _at(2, "10:30"),
             _at(2, "10:45"), _at(2, "10:50"))
    # S2: 14:00-14:40 on Tuesday.
    _session(ledger, "S2", _at(3, "14:00"), _at(3, "14:25"), _at(3, "14:40"))
    # S3: 10:35-10:55 on Wednesday, around the submission.
    _session(ledger, "S3", _at(4, "10:35"), _at(4, "10:55"))
    # Commits of the gate's artifacts: Tuesday 14:30, 15:00, 15:20 (one interval, 50 min)
    _commit(root, "src/a.py", "A = 1\n", _at(3, "14:30"))
    _commit(root, "src/a.py", "A = 2\n", _at(3, "15:00"))
    _commit(root, "src/b.py", "B = 1\n", _at(3, "15:20"))
    # ...and one that is not the gate's (README), Tuesday evening: not counted.
    _commit(root, "README.md", "# notes\n", _at(3, "18:00"))
    _event(ledger, "gate.submitted", {"gate": "build", "subject": "0" * 40}, _at(4, "10:40"))
    return ledger


def test_active_hours_of_a_crafted_history_equal_the_hand_computed_figure(
        crafted: Ledger) -> None:
    # By hand, idle cut 30 min:
    #   Monday:    S1 09:05-09:40 (35) + 10:30-10:50 (20); the start at 09:00 and S0's
    #              09:10 Stop are lone points                                    55 min
    #   Tuesday:   S2 14:00-14:40 joined with the commits 14:30-15:20            80 min
    #   Wednesday: S3 10:35-10:55 joined with submit 10:40 -> pass 11:00         25 min
    #   total 160 min = 2.667 h of 50 h wall.
    record = record_pass(crafted, "build", ["src/**"], 4.0, START, PASS)
    assert record is not None
    data = record.data
    assert data["actual_hours"] == pytest.approx(160 / 60)
    assert data["wall_hours"] == pytest.approx(50.0)
    assert data["predicted_hours"] == 4.0
    assert data["ratio"] == pytest.approx(round(160 / 60 / 4, 4))
    assert data["measured"] == (
        "active time: union of 4 Claude session(s) and the gate's work (3 commit(s) touching "
        "its artifacts, its lifecycle events), gaps over 30 min cut; wall time 50 h")
    assert human_hours(data["actual_hours"]) == "2.7 h"


def test_the_idle_cut_is_the_measure_s_one_parameter(crafted: Ledger) -> None:
    # Idle cut 60 min: S1 is one interval 09:05-10:50 (105); Tuesday 80; Wednesday 25.
    record = record_pass(crafted, "build", ["src/**"], 4.0, START, PASS, idle_cut_minutes=60)
    assert record is not None and record.data["actual_hours"] == pytest.approx(210 / 60)
    # Idle cut 10 min: every gap is longer but S1's 10:45-10:50 (5 min): S1 09:05 | 09:20 |
    # 09:40 | 10:30 | 10:45-10:50; S2 14:00 | 14:25 | 14:40; commits 14:30 | 15:00 | 15:20;
    # S3 10:35 | 10:55; submit 10:40 | pass 11:00. Total 5 min.
    record = record_pass(crafted, "build", ["src/**"], 4.0, START, PASS, idle_cut_minutes=10)
    assert record is not None and record.data["actual_hours"] == pytest.approx(5 / 60)


def test_intervals_and_their_union_on_plain_values() -> None:
    t = [datetime(2026, 11, 2, 9, tzinfo=UTC) + timedelta(minutes=m) for m in (0, 10, 45, 50)]
    cut = timedelta(minutes=30)
    assert intervals(reversed(t), cut) == [(t[0], t[1]), (t[2], t[3])]
    # Overlapping spans count once; spans are clipped to the window.
    assert union_hours([(t[0], t[2]), (t[1], t[3])], t[1], t[3]) == pytest.approx(40 / 60)
    assert union_hours([], t[0], t[3]) == 0


@pytest.mark.parametrize(("hours", "shown"), [
    (0.0006713141666666667, "2 s"), (0.000485, "2 s"), (2 / 3, "40 min"), (1.5, "1.5 h"),
    (1.0, "1 h"), (26.4, "26 h"), (None, "-"),
])
def test_hours_read_with_sensible_precision(hours: float | None, shown: str) -> None:
    assert human_hours(hours) == shown


# --- through the lifecycle ------------------------------------------------------------------


@pytest.fixture
def real_gate(repo_with_commit: Path) -> Path:
    root = repo_with_commit
    assert main(["init", "--no-hooks"]) == 0
    (root / ".meridian" / "gates.yaml").write_text(GATES)
    (root / "src").mkdir()
    (root / "src" / "area.py").write_text(
        'def area(width: float, height: float) -> float:\n    """Area."""\n'
        "    return width * height\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "setup")
    return root


def test_a_pass_writes_active_hours_and_says_how_they_were_measured(
        real_gate: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = Ledger.open(real_gate)
    now = parse_ts(now_ts())

    def ago(hours: float) -> str:
        return (now - timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    # Started 5 h ago; one Claude session of exactly 1 h (stops every 20 min) since.
    _event(ledger, "gate.started", {"gate": "build", "estimate_hours": 2,
                                    "base_commit": git(real_gate, "rev-parse", "HEAD").strip()},
           ago(5))
    _session(ledger, "S1", ago(4), ago(3 + 40 / 60), ago(3 + 20 / 60), ago(3))
    assert main(["gate", "submit", "build"]) == 0
    [correction] = effective_corrections(ledger)
    # 1 h of session, plus the seconds from submission to pass (the start is a lone point).
    assert 1.0 < correction.actual_hours < 1.0 + 2 / 60
    assert 5.0 < correction.wall_hours < 5.0 + 2 / 60
    assert correction.measured.startswith("active time: union of 1 Claude session(s)")

    capsys.readouterr()
    assert main(["calibration"]) == 0
    out = capsys.readouterr().out
    assert "build" in out and " 1 h " in out and " 5 h " in out and " 2 h " in out
    assert "0.000" not in out

    from meridian import gitio
    from meridian.hooks.claude_context import session_context
    from meridian.hooks.project import load_facts

    repo = gitio.open_repo(real_gate)
    text, _ = session_context(repo, load_facts(repo, real_gate))
    assert "- gate build; predicted 2 h, took 1 h of active time (5 h wall) (ratio 0.5" in text

    # The user amends it; the amendment wins and says so.
    assert main(["memory", "add", "corrections", "--json", json.dumps(
        {"gate": "build", "amends": correction.id, "actual_hours": 1.5,
         "root_cause": "an evening off the clock"})]) == 0
    [amended] = effective_corrections(ledger)
    assert (amended.actual_hours, amended.ratio, amended.measured) == (
        1.5, 0.75, "amended by the user")
    text, _ = session_context(repo, load_facts(repo, real_gate))
    assert ("- gate build; predicted 2 h, took 1.5 h (ratio 0.75); root cause: an evening off "
            "the clock") in text


def test_a_correction_for_an_unknown_gate_is_refused_with_the_gates(
        real_gate: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tip = Ledger.open(real_gate).tip()
    capsys.readouterr()
    assert main(["memory", "add", "corrections", "--json", json.dumps(
        {"gate": "nosuch", "predicted_hours": 1, "actual_hours": 2})]) == 2
    assert capsys.readouterr().err == (
        "meridian: corrections.gate: unknown gate 'nosuch' (gates: build, docs)\n")
    assert Ledger.open(real_gate).tip() == tip


def test_the_idle_cut_is_configurable_and_validated(real_gate: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    config = real_gate / ".meridian" / "config.yaml"
    config.write_text(config.read_text().replace("idle_cut_minutes: 30", "idle_cut_minutes: 0"))
    capsys.readouterr()
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert "calibration.idle_cut_minutes" in err and "greater than 0" in err


# --- attacks on the figure --------------------------------------------------------------------


def test_back_dated_episodes_buy_no_active_time(real_gate: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The attack: an agent inflates the gate's actual hours (and so the multiplier) by
    adding a fake session with `at` every 20 min across the window. Only when the
    records were written counts, so the fake session is a handful of points at once."""
    ledger = Ledger.open(real_gate)
    now = parse_ts(now_ts())

    def ago(hours: float) -> str:
        return (now - timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    _event(ledger, "gate.started", {"gate": "build", "estimate_hours": 2,
                                    "base_commit": git(real_gate, "rev-parse", "HEAD").strip()},
           ago(5))
    for i in range(16):
        event = "session_started" if i == 0 else "session_ended"
        assert main(["memory", "add", "episodic", "--json", json.dumps(
            {"session": "fake", "event": event, "at": ago(5 - i / 3)})]) == 0
    assert main(["gate", "submit", "build"]) == 0
    [correction] = effective_corrections(ledger)
    assert correction.actual_hours < 5 / 60, correction  # not ~5 h
    assert correction.wall_hours > 4.9


def test_a_correction_for_an_unknown_gate_is_refused_on_every_route(real_gate: Path) -> None:
    """Not only the CLI: the store refuses it (the automatic pass and any caller)."""
    from meridian.errors import MeridianError
    from meridian.memory.calibration import record_gate_pass

    ledger = Ledger.open(real_gate)
    tip = ledger.tip()
    with pytest.raises(MeridianError, match=r"unknown gate 'nosuch' \(gates: build, docs\)"):
        store.add(ledger, "corrections", {"gate": "nosuch", "actual_hours": 2})
    with pytest.raises(MeridianError, match="unknown gate 'nosuch'"):
        record_gate_pass(ledger, "nosuch", 1.0, 2.0)
    assert Ledger.open(real_gate).tip() == tip


@pytest.mark.parametrize(("hours", "shown"), [
    (0, "0 s"), (0.0, "0 s"), (59.9 / 60, "1 h"), (59.4 / 60, "59 min"), (1000, "1000 h"),
    (9.96, "10 h"), (1e-9, "<1 s"), (float("nan"), "-"), (-1.5, "-1.5 h"),
])
def test_hours_at_the_edges(hours: float, shown: str) -> None:
    assert human_hours(hours) == shown


@pytest.mark.parametrize(("ratio", "shown"), [
    (0.0047, "0.0047"), (0.75, "0.75"), (1.25, "1.2"), (12.5, "12"), (2000.0, "2000"),
    (123456.0, "120000"), (0.0, "0"), (1e-5, "0.00001"), (0.999, "1"), (9.96, "10"),
    (-0.5, "-0.5"),
])
def test_ratios_never_read_in_scientific_notation(ratio: float, shown: str) -> None:
    from meridian.durations import human_ratio

    assert human_ratio(ratio) == shown
