"""``eval compare`` reads a run without building its pydantic models (``runview``), with
the answers of the validated run, and refuses what the full reader refuses, with its
error line, whoever wrote the document (a document edited on the state branch, a file).

Runs are saved with ``store.save_run`` to a real repository's state branch; a tampered
document is a real commit on that branch replacing the run's blob.
"""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest

from meridian import gitio
from meridian.cli import main
from meridian.evals import compare as cmp
from meridian.evals import run as runfile
from meridian.evals import runview, store
from meridian.ledger import Ledger
from tests.evals.runs_support import make_run


@pytest.fixture
def ledger(repo_with_commit: Path, monkeypatch: pytest.MonkeyPatch) -> Ledger:
    monkeypatch.chdir(repo_with_commit)
    return Ledger.open(repo_with_commit)


def with_manifest(run: runfile.Run, extra: dict[str, str] | None = None) -> runfile.Run:
    """``run`` with its suite's manifest, as ``eval run`` records it."""
    manifest = {entry.task_id: entry.task.definition_hash() for entry in run.results}
    suite = run.suite.model_copy(update={"tasks": {**manifest, **(extra or {})}})
    return run.model_copy(update={"suite": suite})


PAIRS = [
    # (candidate outcomes, baseline outcomes): regressions, fixes, infra, missing, added
    ({"a": "pass", "b": "fail", "c": "infra_error", "d": "pass"},
     {"a": "fail", "b": "pass", "c": "pass", "e": "pass"}),
    ({"a": ["pass", "fail", "pass"], "b": ["fail", "fail", "fail"], "c": ["pass"] * 3},
     {"a": ["pass"] * 3, "b": ["pass", "pass", "fail"], "c": ["infra_error", "pass", "pass"]}),
    ({"x": "pass"}, {"x": "pass"}),
]


@pytest.mark.parametrize("manifest", [True, False])
@pytest.mark.parametrize(("a_outcomes", "b_outcomes"), PAIRS)
def test_the_view_gives_the_answers_of_the_validated_run(
        ledger: Ledger, a_outcomes: dict, b_outcomes: dict, manifest: bool) -> None:
    a = make_run(a_outcomes, run_id="a" * 12, agent_version="v2")
    b = make_run(b_outcomes, run_id="b" * 12)
    if manifest:
        # the baseline's suite also knows a task it did not run, and one it dropped
        a, b = with_manifest(a), with_manifest(b, {"d": "0" * 64})
    store.save_run(ledger, b)
    store.save_run(ledger, a)
    views = [store.load_for_compare(ledger, run.run_id) for run in (a, b)]
    assert all(isinstance(view, runview.RunView) for view in views)
    full = [store.load_run(ledger, run.run_id) for run in (a, b)]
    fast = cmp.compare(*views, a_ref="A", b_ref="B")
    slow = cmp.compare(*full, a_ref="A", b_ref="B")
    assert fast.to_json() == slow.to_json()
    assert cmp.render_text(fast) == cmp.render_text(slow)
    assert cmp.gate_failures(fast) == cmp.gate_failures(slow)
    for entry, view in zip(full[0].results, views[0].results, strict=True):
        assert view.task.definition_hash() == entry.task.definition_hash()


def test_a_redacted_task_definition_hashes_as_the_model_does(ledger: Ledger) -> None:
    run = with_manifest(make_run({"a": "pass"}, run_id="c" * 12))
    secret_input = run.results[0].task.model_copy(update={"input": "password=hunter2hunter2"})
    run.results[0] = run.results[0].model_copy(update={"task": secret_input})
    saved = store.save_run(ledger, run)  # the manifest hashed the task before redaction
    view = store.load_for_compare(ledger, run.run_id)
    assert isinstance(view, runview.RunView)
    assert "hunter2" not in json.dumps(view.results[0].task.raw)
    assert view.results[0].task.definition_hash() == saved.run.results[0].task.definition_hash()


def tamper(ledger: Ledger, run_id: str, edit) -> Ledger:  # type: ignore[no-untyped-def]
    """Replace the run's document on the state branch with an edited one, with git
    plumbing as an agent with a shell would (the ledger refuses to change a document)."""
    path = store.run_path(run_id)
    data = ledger.read(path)
    assert data is not None
    document = json.loads(data)
    edit(document)
    repo = pygit2.Repository(ledger.repo.path)
    refname = f"refs/heads/{ledger.branch}"
    tip = repo.references[refname].target
    blob = repo.create_blob(json.dumps(document).encode())
    tree = gitio.update_tree(repo, repo[tip].tree, {path: blob})
    sig = pygit2.Signature("agent", "agent@localhost")
    repo.create_commit(refname, sig, sig, "edit a run\n", tree, [tip])
    return Ledger.open(Path(repo.workdir))


def test_a_document_edited_on_the_branch_is_validated_in_full_and_refused(
        ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    store.save_run(ledger, make_run({"a": "pass", "b": "infra_error"}, run_id="a" * 12))
    store.save_run(ledger, make_run({"a": "pass", "b": "pass"}, run_id="b" * 12))

    def negative_latency(doc):  # type: ignore[no-untyped-def]
        doc["results"][0]["trials"][0]["trajectory"]["steps"][0]["latency_s"] = -1  # unread by compare

    tamper(ledger, "b" * 12, negative_latency)
    assert main(["eval", "compare", "a" * 12, "b" * 12]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"runs/{'b' * 12}.json: results.0.trials.0.trajectory.steps.0.latency_s" in err

    def hide_infra(doc):  # type: ignore[no-untyped-def]
        doc["summary"]["infra_errors"] = 0

    tamper(Ledger.open(Path.cwd()), "a" * 12, hide_infra)
    assert main(["eval", "compare", "a" * 12, "b" * 12, "--fail-on-regression"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"runs/{'a' * 12}.json: summary.infra_errors: 0 disagrees with the results (1)" in err


def test_a_valid_edit_on_the_branch_is_compared_as_edited(
        ledger: Ledger, capsys: pytest.CaptureFixture[str]) -> None:
    store.save_run(ledger, make_run({"a": "pass", "b": "pass"}, run_id="b" * 12))
    store.save_run(ledger, make_run({"a": "pass", "b": "pass"}, run_id="a" * 12))

    def fail_b(doc):  # type: ignore[no-untyped-def]
        trial = doc["results"][1]["trials"][0]
        trial["status"] = "fail"
        trial["scores"][0].update(passed=False, value=0.0)
        doc["summary"].update(passed=1, failed=1, pass_rate=0.5)

    edited = tamper(ledger, "a" * 12, fail_b)
    view = store.load_for_compare(edited, "a" * 12)
    full = store.load_run(edited, "a" * 12)
    assert [t.status for e in view.results for t in e.trials] == ["pass", "fail"]
    assert cmp.compare(view, store.load_run(edited, "b" * 12)).to_json() == cmp.compare(
        full, store.load_run(edited, "b" * 12)).to_json()
    assert main(["eval", "compare", "a" * 12, "b" * 12, "--fail-on-regression"]) == 1
    assert "REGRESSIONS (1)\n  b  pass -> fail\n" in capsys.readouterr().out


def test_a_run_indexed_without_its_blob_id_is_read_the_same_way(
        ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(store, "blob_id", lambda data: None)  # as older Meridians wrote the index
        store.save_run(ledger, make_run({"a": "pass"}, run_id="b" * 12))
    [entry] = store.index(ledger)
    assert entry.data.blob is None
    assert isinstance(store.load_for_compare(ledger, "b" * 12), runview.RunView)
    store.save_run(ledger, make_run({"a": "fail"}, run_id="a" * 12))
    assert main(["eval", "compare", "a" * 12, "b" * 12, "--fail-on-regression"]) == 1


def test_an_exported_file_is_read_by_the_view_and_a_forged_one_refused(
        ledger: Ledger, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = make_run({"a": "fail"}, run_id="a" * 12), make_run({"a": "pass"}, run_id="b" * 12)
    (tmp_path / "a.json").write_bytes(runfile.export_bytes(a))
    (tmp_path / "b.json").write_bytes(runfile.export_bytes(b))
    view = runview.load((tmp_path / "a.json").read_bytes(), "a.json")
    assert isinstance(view, runview.RunView)
    assert main(["eval", "compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                 "--fail-on-regression"]) == 1
    assert "REGRESSIONS (1)" in capsys.readouterr().out
    forged = json.loads((tmp_path / "a.json").read_bytes())
    forged["results"][0]["trials"][0]["scores"][0]["passed"] = 1  # pydantic takes 1 for true
    forged["results"][0]["trials"][0]["trajectory"]["steps"][0]["index"] = -1
    (tmp_path / "a.json").write_text(json.dumps(forged))
    assert main(["eval", "compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("meridian: " + str(tmp_path / "a.json")
                   + ": results.0.trials.0.trajectory.steps.0.index: Input should be greater "
                   "than or equal to 0"), err


def _document(run: runfile.Run, edit) -> bytes:  # type: ignore[no-untyped-def]
    document = json.loads(runfile.dumps(run))
    edit(document)
    return json.dumps(document).encode()


def _hide(doc):  # type: ignore[no-untyped-def]
    doc["summary"]["infra_errors"] = 0


def _lift(doc):  # type: ignore[no-untyped-def]
    doc["summary"]["pass_rate"] = 1.0


def _duplicate(doc):  # type: ignore[no-untyped-def]
    doc["results"][1]["task"]["id"] = "a"
    for trial in doc["results"][1]["trials"]:
        trial["task_id"] = "a"


def _flip(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["status"] = "pass"
    doc["summary"].update(passed=1, failed=0, pass_rate=1.0)


def _foreign_trial(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["task_id"] = "zzz"


@pytest.mark.parametrize(("outcomes", "edit"), [
    ({"a": "infra_error", "b": "infra_error"}, _hide), ({"a": "fail", "b": "fail"}, _lift),
    ({"a": "fail", "b": "pass"}, _duplicate), ({"a": "fail", "b": "fail"}, _flip),
    ({"a": "fail"}, _foreign_trial),
])
def test_the_view_refuses_what_the_run_file_reader_refuses(outcomes: dict, edit) -> None:  # type: ignore[no-untyped-def]
    data = _document(make_run(outcomes), edit)
    with pytest.raises(runfile.RunFileError) as full:
        runfile.loads(data, "run.json")
    with pytest.raises(runfile.RunFileError) as fast:
        runview.read(data, "run.json")
    assert str(fast.value) == str(full.value)


def _drop_status(doc):  # type: ignore[no-untyped-def]
    del doc["results"][0]["trials"][0]["status"]


def _odd_status(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["status"] = "banana"


def _results_not_a_list(doc):  # type: ignore[no-untyped-def]
    doc["results"] = {"a": 1}


def _older_version(doc):  # type: ignore[no-untyped-def]
    doc["version"] = 1


def _bad_header(doc):  # type: ignore[no-untyped-def]
    doc["settings"]["epochs"] = 0


def _cost_text(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["trajectory"]["cost_usd"] = "free"


@pytest.mark.parametrize("edit", [_drop_status, _odd_status, _results_not_a_list,
                                  _older_version, _bad_header, _cost_text])
def test_a_document_not_shaped_as_the_store_writes_it_is_left_to_the_full_reader(edit) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(runview.NotAsWritten):
        runview.read(_document(make_run({"a": "pass"}), edit), "run.json")
