"""Adversarial candidates that want ``eval compare --fail-on-regression`` to pass.

- an infra-error flood (every task exit 75) hidden by editing the run file's summary;
- a run file whose results hold a task twice, or a trial marked pass over a failing score;
- regressions renamed or edited away (they become added/changed, not regressed): the
  gate cannot know a rename from a real suite edit, so the headline says how much was
  actually compared instead of a bare "No regressions".
"""

from __future__ import annotations

import json

import pytest

from meridian.evals import compare as cmp
from meridian.evals import run as runfile
from meridian.evals.types import Task
from tests.evals.runs_support import make_run


def _tampered(run: runfile.Run, edit) -> bytes:  # type: ignore[no-untyped-def]
    document = json.loads(runfile.dumps(run))
    edit(document)
    return json.dumps(document).encode()


def test_an_infra_error_flood_hidden_in_the_summary_is_refused() -> None:
    flood = make_run({"a": "infra_error", "b": "infra_error"})
    assert runfile.loads(runfile.dumps(flood), "run.json").summary.infra_errors == 2

    def hide(doc):  # type: ignore[no-untyped-def]
        doc["summary"]["infra_errors"] = 0

    with pytest.raises(runfile.RunFileError,
                       match=r"run.json: summary.infra_errors: 0 disagrees with the results \(2\)"):
        runfile.loads(_tampered(flood, hide), "run.json")


def test_a_raised_pass_rate_is_refused() -> None:
    bad = make_run({"a": "fail", "b": "fail"})

    def lift(doc):  # type: ignore[no-untyped-def]
        doc["summary"]["pass_rate"] = 1.0

    with pytest.raises(runfile.RunFileError, match="summary.pass_rate"):
        runfile.loads(_tampered(bad, lift), "run.json")


def test_a_task_twice_in_the_results_is_refused() -> None:
    run = make_run({"a": "fail", "b": "pass"})

    def duplicate(doc):  # type: ignore[no-untyped-def]
        doc["results"][1]["task"]["id"] = "a"
        for trial in doc["results"][1]["trials"]:
            trial["task_id"] = "a"

    with pytest.raises(runfile.RunFileError, match="task 'a' appears twice"):
        runfile.loads(_tampered(run, duplicate), "run.json")


def test_a_trial_marked_pass_over_a_failing_score_is_refused() -> None:
    run = make_run({"a": "fail"})

    def flip(doc):  # type: ignore[no-untyped-def]
        doc["results"][0]["trials"][0]["status"] = "pass"
        doc["summary"].update(passed=1, failed=0, pass_rate=1.0)

    with pytest.raises(runfile.RunFileError, match="marked pass has a failing score"):
        runfile.loads(_tampered(run, flip), "run.json")


def test_renamed_and_edited_regressions_are_not_hidden_behind_no_regressions() -> None:
    baseline = make_run({"a": "pass", "b": "pass", "c": "pass"})
    candidate = make_run({"a": "pass", "b-renamed": "fail", "c": "fail"})
    edited = candidate.results[2].task.model_dump()
    edited["expected"] = "43"  # c edited: changed (not compared)
    candidate.results[2] = candidate.results[2].model_copy(update={"task": Task(**edited)})
    result = cmp.compare(candidate, baseline)
    assert result.regressions == []
    assert result.compared == 1 and result.not_compared == 3  # b-renamed, c, b
    assert result.added == ["b-renamed"] and result.changed == ["c"] and result.removed == ["b"]
    headline = cmp.render_markdown(result).splitlines()[0]
    # a baseline task not compared (b removed, c changed) fails the gate unless accepted
    # (--accept-changed-tasks): never "No regressions" (test_eval_suite_shadow.py)
    assert "No regressions" not in headline and headline.endswith(
        "gate FAILED among 1 compared task(s); **3 not compared** (changed, added or removed)")
    assert "note: 1 task(s) compared; 3 not compared" in cmp.render_text(result)
    # Same suite, nothing left out: the plain verdict.
    same = cmp.compare(make_run({"a": "pass"}), make_run({"a": "pass"}))
    assert cmp.render_markdown(same).splitlines()[0].endswith(": No regressions")
