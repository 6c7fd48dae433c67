"""An agent with a shell writes a run document AND its index record on the state branch,
or hands compare a run file: the view compare reads (``runview``, which trusts no
writer) must then give the answer of the full reader, or refuse what it refuses with the
same line; a regression is never hidden (``--fail-on-regression`` exits 1), bad input
is one line and exit 2, never a traceback or a hang."""

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


def _steps_negative_latency(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["trajectory"]["steps"][0]["latency_s"] = -1.0


def _step_extra_key(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["trajectory"]["steps"][0]["verdict"] = "pass"


def _final_output_nan(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["trajectory"]["final_output"] = [float("inf")]


def _task_input_too_deep(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["task"]["input"] = json.loads("[" * 300 + "]" * 300)


def _score_value_above_one(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["scores"][0]["value"] = 1.5


def _status_unknown(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["trials"][0]["status"] = "passed"


def _visible_graders(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["task"]["visible"] = ["graders"]


def _task_id_empty(doc):  # type: ignore[no-untyped-def]
    doc["results"][0]["task"]["id"] = ""


@pytest.mark.parametrize("edit", [
    _steps_negative_latency, _step_extra_key, _final_output_nan, _task_input_too_deep,
    _score_value_above_one, _status_unknown, _visible_graders, _task_id_empty,
], ids=lambda f: f.__name__.strip("_"))
def test_fields_compare_does_not_read_are_checked_too(
        ledger: Ledger, edit, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """The steps and final output (compare reads neither) are held to the models too:
    a document the full reader refuses is refused, with its line."""
    run = with_manifest(make_run({"a": "pass", "b": "fail"}, run_id="a" * 12))
    store.save_run(ledger, make_run({"a": "pass", "b": "pass"}, run_id="b" * 12))
    data = plant(ledger, run, edit)
    with pytest.raises(runfile.RunFileError) as full:
        runfile.loads(data, f"meridian/state:runs/{'a' * 12}.json")
    assert main(["eval", "compare", "a" * 12, "b" * 12, "--fail-on-regression"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"meridian: {full.value}", err
    assert len(err.splitlines()) == 1


def test_a_task_twice_is_refused_whoever_wrote_the_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run({"a": "fail", "b": "pass"}, run_id="a" * 12)
    doc = json.loads(runfile.dumps(run))
    twin = json.loads(json.dumps(doc["results"][1]))
    twin["task"]["id"] = "a"
    for trial in twin["trials"]:
        trial["task_id"] = "a"
        trial["trajectory"]["task_id"] = "a"
    doc["results"][1] = twin  # a passing "a" after the failing one
    doc["summary"].update(passed=1, failed=1, pass_rate=0.5)
    (tmp_path / "a.json").write_text(json.dumps(doc))
    (tmp_path / "b.json").write_bytes(runfile.dumps(make_run({"a": "pass", "b": "pass"})))
    assert main(["eval", "compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                 "--fail-on-regression"]) == 2
    assert "results: task 'a' appears twice (edited by hand?)" in capsys.readouterr().err


def test_a_forged_definition_hash_in_the_manifest_of_a_file_hides_nothing(
        tmp_path: Path) -> None:
    baseline = with_manifest(make_run({"a": "pass", "b": "pass"}, run_id="b" * 12))
    candidate = with_manifest(make_run({"a": "fail", "b": "pass"}, run_id="a" * 12))
    doc = json.loads(runfile.dumps(candidate))
    doc["suite"]["tasks"]["a"] = "0" * 64  # the manifest says "a" changed
    (tmp_path / "a.json").write_text(json.dumps(doc))
    (tmp_path / "b.json").write_bytes(runfile.dumps(baseline))
    assert main(["eval", "compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                 "--fail-on-regression"]) == 1
    fast = cmp.compare(runview.load((tmp_path / "a.json").read_bytes(), "a"), baseline)
    assert [c.task_id for c in fast.regressions] == ["a"]


@pytest.mark.parametrize(("content", "expected"), [
    (b"[" * 200_000 + b"]" * 200_000, "not valid JSON (nested too deeply)"),
    (b'{"version": 2, "results": [], "n": ' + b"7" * 5000 + b"}", "not valid JSON (Exceeds"),
    (None, "not valid JSON ("),  # a run file cut short
    (b"\xff\xfe{", "not valid JSON"),
    (b"", "not valid JSON"),
])
def test_a_broken_file_is_one_line_and_exit_2(
        tmp_path: Path, content: bytes | None, expected: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    good = runfile.dumps(make_run({"a": "pass"}))
    (tmp_path / "good.json").write_bytes(good)
    (tmp_path / "bad.json").write_bytes(good[: len(good) // 2] if content is None else content)
    assert main(["eval", "compare", str(tmp_path / "bad.json"), str(tmp_path / "good.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and expected in err, err
    assert "internal error" not in err


def test_a_huge_file_is_refused_before_it_is_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = runfile.dumps(make_run({"a": "pass"}))
    (tmp_path / "good.json").write_bytes(good)
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:  # sparse: 600 MB that take no disk
        handle.write(good[:-2])
        handle.truncate(600 * 1024 * 1024)
    import time

    started = time.monotonic()
    assert main(["eval", "compare", str(huge), str(tmp_path / "good.json")]) == 2
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err.strip()
    assert err == (f"meridian: {huge}: 629,145,600 bytes; a run file is at most "
                   "536,870,912 bytes (512 MiB)"), err


def test_a_huge_document_on_the_branch_is_refused_without_parsing_it(
        ledger: Ledger, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    store.save_run(ledger, make_run({"a": "pass"}, run_id="b" * 12))
    run = make_run({"a": "pass"}, run_id="a" * 12)
    data = plant(ledger, run, lambda doc: doc.update(padding="x" * 4096))
    monkeypatch.setattr(runfile, "MAX_RUN_BYTES", len(data) - 1)
    parsed = []
    monkeypatch.setattr(runfile, "parse", lambda *a, **k: parsed.append(1))
    assert main(["eval", "compare", "a" * 12, "b" * 12]) == 2
    assert not parsed
    assert f"runs/{'a' * 12}.json: {len(data):,} bytes; a run file is at most" in \
        capsys.readouterr().err
