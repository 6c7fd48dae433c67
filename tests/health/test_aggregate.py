"""Health figures of the crafted state branch (conftest.py) against hand-computed values."""

from __future__ import annotations

from datetime import date

import pytest

from meridian.health import build_report
from meridian.health.aggregate import distribution, iso_week, scan_events
from meridian.health.models import HealthReport
from meridian.ledger import EVENTS, Write
from meridian.memory import store as memory_store

from .conftest import Crafted

TODAY = date(2026, 11, 30)


@pytest.fixture
def report(crafted: Crafted) -> HealthReport:
    return build_report(crafted.ledger, crafted.root, today=TODAY)


def test_gate_figures(report: HealthReport) -> None:
    gates = report.gates
    assert gates.by_state == {"failed": 1, "in_progress": 1, "passed": 2}
    assert gates.total == 4
    # db failed first, api passed first, ui failed first: 1 of 3 gates with a verdict
    assert (gates.first_try_passed, gates.with_verdict, gates.first_try_pass_rate) == (1, 3, 0.3333)
    # verdicts: db failed, db passed, api passed, ui failed
    assert (gates.failed_verdicts, gates.verdicts, gates.evaluator_fail_rate) == (2, 4, 0.5)
    assert gates.evaluator_unavailable == 1
    # the evaluator blocked db (first verdict) and ui: gate.failed events, not gate.blocked
    assert gates.blocks_by_source == {"claude": 1, "evaluator": 2, "gate": 1, "pre-commit": 2}
    assert gates.blocks == 6
    # db 09:00 -> 11:00 (2 h), api 09:00 -> 12:00 (3 h)
    assert (gates.intervals, gates.mean_hours_in_progress) == (2, 2.5)
    rows = {row.gate: row for row in gates.gates}
    assert (rows["db"].submissions, rows["db"].verdicts, rows["db"].failed_verdicts) == (2, 2, 1)
    assert rows["db"].first_verdict_passed is False and rows["api"].first_verdict_passed is True
    assert rows["docs"].first_verdict_passed is None and rows["docs"].state == "in_progress"
    assert (rows["db"].blocks, rows["api"].blocks, rows["ui"].blocks, rows["docs"].blocks) == (1, 0, 1, 1)
    assert rows["api"].hours_in_progress == 3.0


def test_calibration_median_multiplier_and_trend(report: HealthReport) -> None:
    cal = report.calibration
    assert [(p.gate, p.ratio) for p in cal.corrections] == [("db", 1.0), ("api", 1.5), ("ui", 0.5)]
    assert [p.predicted_hours for p in cal.corrections] == [2.0, 2.0, 4.0]
    assert [p.actual_hours for p in cal.corrections] == [2.0, 3.0, 2.0]
    # the multiplier as it stood after each correction: median of [1], [1, 1.5], [1, 1.5, 0.5]
    assert [p.multiplier for p in cal.corrections] == [1.0, 1.25, 1.0]
    assert (cal.multiplier, cal.sample, cal.median_ratio) == (1.0, 3, 1.0)


def test_self_assessment_gap(report: HealthReport) -> None:
    ev = report.evaluator
    # overall = weighted mean (0.25, 0.35, 0.2, 0.2) of the verdict's four scores
    # db-1: 6*.25 + 5*.35 + 7*.2 + 6*.2 = 5.85; db-2: 8; api-1: 9*.25 + 8*.35 + 8*.2 + 9*.2 = 8.45
    assert [(p.gate, p.self_score, p.overall, p.gap) for p in ev.gaps] == [
        ("db", 9.0, 5.85, 3.15), ("db", 8.0, 8.0, 0.0), ("api", 7.5, 8.45, -0.95)]
    assert [p.rolling_mean for p in ev.gaps] == [3.15, 1.575, 0.7333]
    assert ev.mean_gap == 0.7333  # (3.15 + 0 - 0.95) / 3
    assert (ev.early_mean_gap, ev.recent_mean_gap) == (3.15, -0.475)


def test_score_distribution_per_dimension(report: HealthReport) -> None:
    ev = report.evaluator
    assert (ev.verdicts, ev.verdicts_read) == (4, 4)
    completeness = ev.dimensions["completeness"]  # 6, 8, 9, 5
    assert (completeness.count, completeness.min, completeness.median, completeness.max) == (4, 5, 7.0, 9)
    assert (completeness.q1, completeness.q3, completeness.mean) == (5.75, 8.25, 7.0)
    assert completeness.histogram == [0, 0, 0, 0, 0, 1, 1, 0, 1, 1]
    assert ev.dimensions["robustness"].median == 7.5  # 7, 8, 8, 5
    assert ev.overall.median == 6.92  # median of 5.85, 8.0, 8.45, 5.55 = (5.85 + 8.0) / 2


def test_costs_per_source_gate_and_week(report: HealthReport, crafted: Crafted) -> None:
    cost = report.cost
    evaluator = cost.by_source["evaluator"]
    assert (evaluator.input_tokens, evaluator.output_tokens, evaluator.cost_usd) == (4500, 650, 0.11)
    judge = cost.by_source["llm_judge"]
    assert (judge.input_tokens, judge.output_tokens, judge.cost_usd) == (100, 10, 0.003)
    agents = cost.by_source["eval_agents"]
    # run A: 3 trials at $0.1/3, run B: 3 at $0.2/3; 10 in + 5 out tokens per trajectory
    assert (agents.input_tokens, agents.output_tokens, agents.tokens, agents.cost_usd) == (
        60, 30, 90, 0.3)
    assert cost.total.cost_usd == 0.413
    assert (cost.total.input_tokens, cost.total.output_tokens, cost.total.tokens) == (
        4500 + 100 + 60, 650 + 10 + 30, 5150 + 110 + 90)
    assert [(g.gate, g.verdicts, g.cost_usd, g.tokens) for g in cost.by_gate] == [
        ("api", 1, 0.05, 2300), ("db", 2, 0.05, 2300), ("ui", 1, 0.01, 550)]
    by_week = {w.week: w for w in cost.by_week}
    # 2026-11-02 and 11-03 are in ISO week 45, 11-10 in week 46
    assert (by_week["2026-W45"].evaluator_usd, by_week["2026-W46"].evaluator_usd) == (0.1, 0.01)
    runs_week = iso_week(next(crafted.ledger.records("runs/index")).ts)
    assert (by_week[runs_week].eval_agents_usd, by_week[runs_week].llm_judge_usd) == (0.3, 0.003)
    assert sum(w.cost_usd for w in cost.by_week) == pytest.approx(0.413)


def test_completion_memory_rules_and_evaluation(report: HealthReport) -> None:
    assert report.completion is not None
    assert (report.completion.junit, report.completion.working_pct,
            report.completion.hardened_pct) == ("report.xml", 75.0, 25.0)
    assert report.memory.records == {"semantic": 1, "episodic": 1, "corrections": 3}
    assert (report.memory.invalid, report.memory.duplicates_prevented) == (0, 1)
    assert [r.id for r in report.rules.due] == ["no-stub-code"]
    assert (report.rules.total, report.rules.active) == (2, 2)
    [suite] = report.evaluation.suites
    assert (suite.suite, suite.latest_run, suite.baseline, suite.baseline_run) == (
        "ref", "run-b", "main", "run-a")
    # baseline t1 pass, t2 pass, t3 fail; latest t1 pass, t2 fail, t3 pass
    assert (suite.passed, suite.baseline_passed, suite.regressions, suite.fixes) == (2, 2, 1, 1)
    assert report.evaluation.runs == 2
    assert report.notes == []


def test_invalid_memory_is_reported(crafted: Crafted) -> None:
    ledger = crafted.ledger
    good = next(ledger.records("memory/episodic"))
    forged = good.model_copy(update={"data": {**good.data, "event": "party"}})
    ledger.commit(Write(summary="forged").add("memory/episodic", forged))
    report = build_report(ledger, crafted.root, today=TODAY)
    assert report.memory.invalid == 1
    assert report.memory.problems[0].endswith("episodic.event: must be one of 'session_started', "
                                              "'session_ended', 'gate_started', 'gate_passed', "
                                              "'gate_failed', 'block' or 'note'")
    assert report.memory.records["episodic"] == 2


def test_graph_gives_locked_open_and_awaiting_approval(crafted: Crafted) -> None:
    (crafted.root / ".meridian" / "gates.yaml").write_text(
        "version: 1\ngates:\n"
        "  - {id: db}\n"
        "  - id: api\n    needs: [db]\n    approval: {token_sha256: '" + "a" * 64 + "'}\n"
        "  - {id: ui, needs: [api]}\n"
        "  - {id: docs}\n"
        "  - {id: deploy, needs: [ui]}\n"
        "  - {id: readme}\n")
    report = build_report(crafted.ledger, crafted.root, today=TODAY)
    states = {row.gate: row.state for row in report.gates.gates}
    # api passed its verdict but nobody approved it; deploy waits on ui; readme is free;
    # db's crafted verdict read artifacts that are not the work tree's: stale, as status says
    assert states == {"db": "stale", "api": "submitted", "ui": "failed", "docs": "in_progress",
                      "deploy": "locked", "readme": "open"}
    assert report.gates.by_state == {"failed": 1, "in_progress": 1, "locked": 1, "open": 1,
                                     "stale": 1, "submitted": 1}
    from meridian.gates.graph import load_graph
    from meridian.gates.state import derive_states

    status = derive_states(crafted.ledger, load_graph(crafted.root))
    assert {gate: s.state for gate, s in status.items()} == states


def test_corrupt_event_lines_are_skipped_and_noted(crafted: Crafted) -> None:
    ledger = crafted.ledger
    shard = ledger.shards(EVENTS)[-1]
    blob = ledger.read(shard) or b""
    # Write a bad line the way a hand edit would (bypassing the ledger's append).
    from meridian import gitio

    hand_edits = (b"\n{not json\n"
                  b'{"id":"0","ts":"yesterday","kind":"gate.passed","writer":"w","data":{}}\n'
                  b'{"id":"0","ts":"2026-11-20T00:00:00Z","kind":"gate.failed","writer":"w","data":7}\n')
    tree = gitio.update_tree(ledger.repo, ledger.tree(), {shard: gitio.write_blob(
        ledger.repo, blob + hand_edits)})
    tip = ledger.tip()
    assert tip is not None
    gitio.create_commit(ledger.repo, ledger.refname, tree, [tip], "hand edit\n", expected=tip)
    scan = scan_events(ledger, ledger.tip())
    assert len(scan.corrupt) == 3
    bad_line = len(blob.splitlines()) + 2  # after the blank line, which is not an error
    report = build_report(ledger, crafted.root, today=TODAY)
    assert report.gates.verdicts == 4
    assert report.notes == [(f"3 event line(s) could not be read (first: {ledger.branch}:"
                             f"{shard}:{bad_line}); run `meridian verify`")]


def test_verdict_scores_in_the_event_need_no_document(crafted: Crafted) -> None:
    ledger = crafted.ledger
    record = ledger.record("gate.failed", {
        "gate": "ui", "verdict": "verdicts/ui/missing.json", "overall": 1.0, "threshold": 7.0,
        "evaluator": "heuristic", "subject": "b" * 40,
        "usage": {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0},
        "issues": {}}, ts="2026-11-20T00:00:00.000000Z")
    data = dict(record.data, scores={"completeness": 1, "correctness": 1, "robustness": 1,
                                     "spec_adherence": 1})
    ledger.commit(Write(summary="x").add(EVENTS, record.model_copy(update={"data": data})))
    report = build_report(ledger, crafted.root, today=TODAY)
    assert report.evaluator.verdicts_read == 4
    assert report.evaluator.dimensions["completeness"].count == 5
    assert report.evaluator.dimensions["completeness"].min == 1


def test_distribution_of_one_value_and_of_none() -> None:
    one = distribution([10.0])
    assert (one.min, one.q1, one.median, one.q3, one.max) == (10.0, 10.0, 10.0, 10.0, 10.0)
    assert one.histogram[9] == 1
    assert distribution([]).count == 0 and distribution([]).median is None


def test_empty_state_branch(repo_with_commit: object) -> None:
    from meridian.ledger import Ledger

    ledger = Ledger.open(".")
    ledger.emit("meridian.init", {"branch": ledger.branch})
    report = build_report(ledger, ledger.workdir, today=TODAY)
    assert report.events == 1
    assert report.gates.total == 0 and report.gates.first_try_pass_rate is None
    assert report.gates.evaluator_fail_rate is None and report.calibration.multiplier is None
    assert report.completion is None and report.evaluation.suites == []
    assert report.cost.total.cost_usd == 0.0


def test_duplicate_corrections_are_stored_once(crafted: Crafted) -> None:
    added = memory_store.add(crafted.ledger, "corrections",
                             {"gate": "db", "predicted_hours": 2.0, "actual_hours": 2.0})
    assert not added.stored
    report = build_report(crafted.ledger, crafted.root, today=TODAY)
    assert report.memory.records["corrections"] == 3


def test_malformed_project_files_become_notes(crafted: Crafted) -> None:
    (crafted.root / ".meridian" / "rules.yaml").write_text("version: 1\nrules: [{id: x}]\n")
    (crafted.root / ".meridian" / "gates.yaml").write_text("version: 1\ngates: {}\n")
    report = build_report(crafted.ledger, crafted.root, today=TODAY)
    assert [note.split(":")[0] for note in report.notes] == ["rules", "gates"]
    assert report.notes[0].startswith("rules: .meridian/rules.yaml:2: rules[0]")
    assert report.notes[1].startswith("gates: states from events only: .meridian/gates.yaml:2: ")
    # everything else is still computed, gate states from the events alone
    assert report.gates.by_state == {"failed": 1, "in_progress": 1, "passed": 2}
    assert report.rules.total == 0


def test_run_figures_come_from_the_index_not_the_documents(
        crafted: Crafted, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run's index record carries its figures (tokens, judge usage), equal to what
    health used to read from the document, so health opens no run document."""
    from meridian.evals import store
    from meridian.health import aggregate

    entries = store.index(crafted.ledger, include_pruned=True)
    assert entries and all(e.data.figures is not None for e in entries)
    for entry in entries:
        from_document = aggregate.run_figures(crafted.ledger, None, entry.data.path)
        assert entry.data.figures is not None
        assert entry.data.figures == from_document  # one model: store.RunFigures
    before = build_report(crafted.ledger, crafted.root, today=TODAY)

    def no_document(*args: object) -> None:
        raise AssertionError("a run document was read")

    monkeypatch.setattr(aggregate, "run_figures", no_document)
    monkeypatch.setattr(store, "load_run", no_document)  # no baseline comparison either
    monkeypatch.setattr(aggregate, "_compare_with_baseline", lambda *a: None)
    after = build_report(crafted.ledger, crafted.root, today=TODAY)
    assert after.cost == before.cost


def test_runs_saved_without_figures_are_read_once(crafted: Crafted,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Index records written before figures existed: health reads each such document
    once, keeps the figures keyed by the document's blob id, and never again."""
    from meridian.evals import store
    from meridian.health import aggregate

    expected = build_report(crafted.ledger, crafted.root, today=TODAY).cost
    real_index = store.index

    def old_index(ledger: object, **kwargs: bool) -> list:
        return [type(e)(ts=e.ts, data=e.data.model_copy(update={"figures": None}),
                        pruned=e.pruned) for e in real_index(ledger, **kwargs)]  # type: ignore[arg-type]

    monkeypatch.setattr(store, "index", old_index)
    reads: list[str] = []
    real_figures = aggregate.run_figures

    def counted(ledger: object, at: object, path: str) -> object:
        reads.append(path)
        return real_figures(ledger, at, path)  # type: ignore[arg-type]

    monkeypatch.setattr(aggregate, "run_figures", counted)
    kept_answer = aggregate._RunsKept(crafted.ledger).path  # would answer without the index
    kept_answer.unlink()
    assert build_report(crafted.ledger, crafted.root, today=TODAY).cost == expected
    assert sorted(reads) == sorted({e.data.path for e in real_index(crafted.ledger,
                                                                    include_pruned=True)})
    reads.clear()
    kept_answer.unlink()
    assert build_report(crafted.ledger, crafted.root, today=TODAY).cost == expected
    assert reads == []
