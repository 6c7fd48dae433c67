"""An agent with a shell writes a run document AND its index record (the blob id the
light compare view trusts) on the state branch: the view must then give the answer of
the full reader, or refuse what it refuses. The blob id proves only that nobody changed
the document since its index record was written, not that Meridian wrote either."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.evals import compare as cmp
from meridian.evals import run as runfile
from meridian.evals import runview, store
from meridian.ledger import Ledger, Write
from meridian.records import canonical_json
from tests.evals.runs_support import make_run


@pytest.fixture
def ledger(repo_with_commit: Path, monkeypatch: pytest.MonkeyPatch) -> Ledger:
    monkeypatch.chdir(repo_with_commit)
    return Ledger.open(repo_with_commit)


def with_manifest(run: runfile.Run) -> runfile.Run:
    manifest = {entry.task_id: entry.task.definition_hash() for entry in run.results}
    return run.model_copy(update={"suite": run.suite.model_copy(update={"tasks": manifest})})


def plant(ledger: Ledger, run: runfile.Run, edit) -> bytes:  # type: ignore[no-untyped-def]
    """Commit an edited document of ``run`` with an index record naming its blob id,
    through the ledger's own API (what an agent's python script can call)."""
    document = json.loads(runfile.dumps_document(runfile.document(run)))
    edit(document)
    data = json.dumps(document).encode()
    record = ledger.record("eval.run", store.index_data(run, store.blob_id(data)))
    ledger.commit(Write(summary=f"eval run {run.run_id}",
                        blobs={store.run_path(run.run_id): data}).add(store.INDEX_STREAM, record))
    return data


def test_a_forged_manifest_entry_cannot_turn_a_regression_into_a_changed_task(
        ledger: Ledger) -> None:
    baseline = with_manifest(make_run({"a": "pass", "b": "pass"}, run_id="b" * 12))
    store.save_run(ledger, baseline)
    candidate = with_manifest(make_run({"a": "fail", "b": "pass"}, run_id="a" * 12,
                                       agent_version="v2"))

    def drop_a_default(doc):  # type: ignore[no-untyped-def]
        task = doc["results"][0]["task"]
        del task["tags"]  # the model fills it back in: the same definition
        doc["suite"]["tasks"]["a"] = hashlib.sha256(canonical_json(task).encode()).hexdigest()

    data = plant(ledger, candidate, drop_a_default)
    full = runfile.loads(data, "forged")  # the full reader accepts it...
    slow = cmp.compare(full, store.load_run(ledger, "b" * 12))
    assert [c.task_id for c in slow.regressions] == ["a"]  # ...and sees the regression
    fast = cmp.compare(store.load_for_compare(ledger, "a" * 12),
                       store.load_for_compare(ledger, "b" * 12))
    assert fast.to_json() == slow.to_json()
    assert main(["eval", "compare", "a" * 12, "b" * 12, "--fail-on-regression"]) != 0


def _score_infra_error(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["scores"][0]["infra_error"] = 1


def _score_passed_int(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["scores"][0]["passed"] = 1
    doc["results"][0]["trials"][0]["scores"][0]["value"] = 7


def _trial_extra_key(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["verdict_override"] = "pass"


def _entry_extra_key(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["status"] = "pass"


def _nan_cost(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["trajectory"]["cost_usd"] = float("nan")


def _negative_cost(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["trajectory"]["cost_usd"] = -5.0


def _negative_index(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["index"] = -1


def _bad_task(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["task"]["grader_override"] = "always_pass"


def _bad_epoch(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["epoch"] = -3


def _crashed_trajectory(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["trajectory"]["completed"] = "crashed"


def _trial_task_id_int(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["task_id"] = 5


@pytest.mark.parametrize("edit", [
    _score_infra_error, _score_passed_int, _trial_extra_key, _entry_extra_key, _nan_cost,
    _negative_cost, _negative_index, _bad_task, _bad_epoch, _crashed_trajectory,
    _trial_task_id_int,
], ids=lambda f: f.__name__.strip("_"))
def test_what_the_full_reader_refuses_the_view_refuses(ledger: Ledger, edit) -> None:  # type: ignore[no-untyped-def]
    run = with_manifest(make_run({"a": "pass", "b": "fail"}, run_id="a" * 12))
    data = plant(ledger, run, edit)
    with pytest.raises(runfile.RunFileError):
        runfile.loads(data, "forged")
    with pytest.raises(runfile.RunFileError):
        got = store.load_for_compare(ledger, "a" * 12)
        assert not isinstance(got, runview.RunView), got
