"""A run file handed to compare in another encoding than the UTF-8 ``save_run`` writes,
or holding a lone surrogate (``\\ud800``, which JSON escapes and json.loads keeps):
the fast reader (``runview``) must refuse what the full reader refuses, with the same
line, and compare must answer (a regression exits 1), never stop with an internal
error.

json.loads reads UTF-16 and UTF-32 too; a little-endian document's first byte is
``{``, like a UTF-8 one, and its escapes and surrogates are not the UTF-8 bytes the
view searches for. A task id holding a lone surrogate was then taken by the view
(the full reader refuses it: pydantic's constrained ``str``), and compare stopped
with an internal error (exit 3) when it hashed the definition."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from meridian.cli import main
from meridian.evals import compare as cmp
from meridian.evals import run as runfile
from meridian.evals import runview
from tests.evals.runs_support import make_run

ENCODINGS = ["utf-16-le", "utf-32-le", "utf-16-be", "utf-32-be", "utf-16", "utf-8-sig"]


def document(outcomes: dict[str, str], run_id: str) -> dict[str, Any]:
    return json.loads(runfile.dumps(make_run(outcomes, run_id=run_id)))


def encoded(doc: dict[str, Any], encoding: str) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode(encoding, "surrogatepass")


def with_task_id(doc: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    for entry in doc["results"]:
        if entry["task"]["id"] == old:
            entry["task"]["id"] = new
            for trial in entry["trials"]:
                trial["task_id"] = new
    return doc


def refusal(read: Any, data: bytes) -> str | None:
    try:
        read(data, "run.json")
    except runfile.RunFileError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_lone_surrogate_in_a_task_id_is_refused_by_both_readers_in_any_encoding(
        encoding: str) -> None:
    doc = with_task_id(document({"a": "pass", "b": "fail"}, "a" * 12), "a", "a\ud800")
    data = encoded(doc, encoding)
    full = refusal(runfile.loads, data)
    assert full is not None and "results.0.task.id" in full
    assert refusal(runview.load, data) == full


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_document_in_another_encoding_compares_as_the_full_reader_reads_it(
        encoding: str) -> None:
    baseline = runfile.loads(runfile.dumps(make_run({"a": "pass", "b": "pass"}, run_id="b" * 12)),
                             "b.json")
    data = encoded(document({"a": "fail", "b": "pass"}, "a" * 12), encoding)
    fast = cmp.compare(runview.load(data, "a.json"), baseline, a_ref="A", b_ref="B")
    full = cmp.compare(runfile.loads(data, "a.json"), baseline, a_ref="A", b_ref="B")
    assert fast.to_json() == full.to_json()
    assert [c.task_id for c in fast.regressions] == ["a"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16-le"])
def test_a_regression_in_a_task_whose_input_holds_a_lone_surrogate_exits_1(
        tmp_path: Path, encoding: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    def forged(outcomes: dict[str, str], run_id: str) -> dict[str, Any]:
        doc = document(outcomes, run_id)
        doc["results"][0]["task"]["input"] = "x\ud800y"  # the same definition on both sides
        return doc

    (tmp_path / "a.json").write_bytes(encoded(forged({"a": "fail", "b": "pass"}, "a" * 12),
                                              encoding))
    (tmp_path / "b.json").write_bytes(encoded(forged({"a": "pass", "b": "pass"}, "b" * 12),
                                              encoding))
    code = main(["eval", "compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"),
                 "--fail-on-regression"])
    err = capsys.readouterr().err
    assert "internal error" not in err, err
    assert code == 1, err
    assert "1 task(s) regressed: a" in err


@pytest.mark.parametrize("extra", [[], ["--json"], ["--fail-on-regression"]])
def test_an_infra_error_text_holding_a_lone_surrogate_is_printed_escaped(
        tmp_path: Path, extra: list[str]) -> None:
    """What the run file says is printed, whatever it holds: a lone surrogate that JSON
    kept in an infra error's text stopped the report with an internal error (exit 3)."""
    import subprocess
    import sys

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    doc = document({"a": "infra_error", "b": "pass"}, "a" * 12)
    doc["results"][0]["trials"][0]["error"] = "boom \ud800 x"
    (tmp_path / "a.json").write_bytes(encoded(doc, "utf-8"))
    (tmp_path / "b.json").write_bytes(encoded(document({"a": "pass", "b": "pass"}, "b" * 12),
                                              "utf-8"))
    proc = subprocess.run([sys.executable, "-m", "meridian", "eval", "compare", "a.json", "b.json",
                           *extra], cwd=tmp_path, capture_output=True, text=True,
                          errors="surrogateescape", check=False)
    assert "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode == (1 if extra == ["--fail-on-regression"] else 0), proc.stderr
    if not extra:
        assert "boom \\ud800 x" in proc.stdout
