"""``meridian evaluator bench``: the shipped corpus through the real gate path, and the
corpus format a user writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.evaluators import bench


@pytest.fixture(scope="module")
def shipped_report() -> dict:
    cases = bench.load_corpus(bench.CORPUS_DIR)
    return bench.run_bench(cases).to_json()


def test_the_shipped_corpus_is_large_varied_and_balanced() -> None:
    cases = bench.load_corpus(bench.CORPUS_DIR)
    assert len(cases) >= 80
    defects = [c for c in cases if c.expect != "pass"]
    clean = [c for c in cases if c.expect == "pass"]
    assert abs(len(defects) - len(clean)) <= len(cases) // 5
    assert {"python", "javascript", "typescript", "go", "rust"} <= {c.lang for c in cases}
    for cls in {c.cls for c in cases}:
        assert any(c.cls == cls for c in defects), cls
        assert any(c.cls == cls for c in clean), cls


def test_the_offline_evaluator_catches_the_defects_and_blocks_no_clean_case(
        shipped_report: dict) -> None:
    total = shipped_report["total"]
    assert total["recall"] >= 0.95, shipped_report["misses"]
    assert total["false_blocks"] == 0, shipped_report["misses"]
    for row in shipped_report["classes"]:
        assert row["false_blocks"] == 0, row


def test_the_command_prints_recall_and_false_block_rate_per_class(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "mine.yaml").write_text(
        "cases:\n"
        "  - id: planted\n    class: stub_code\n    lang: python\n    expect: block\n"
        "    files:\n      src/a.py: |\n        def f(x):\n            pass\n"
        "  - id: clean\n    class: stub_code\n    lang: python\n    expect: pass\n"
        "    files:\n      src/b.py: |\n        def g(x):\n            return x\n")
    (corpus / "missed.yaml").write_text(
        "class: hollow_test\nlang: python\nexpect: block\n"
        "files:\n  src/c.py: |\n    def h(x):\n        return x + 1\n")
    monkeypatch.chdir(tmp_path)
    code = main(["evaluator", "bench", "--corpus", str(corpus)])
    out = capsys.readouterr().out
    assert code == 1  # the hollow_test case has no test at all: a miss, recall 50%
    lines = out.splitlines()
    assert lines[0].startswith("evaluator bench: 3 cases, evaluator heuristic")
    assert any(line.split()[:4] == ["stub_code", "1", "1", "100.0%"] for line in lines)
    assert any(line.split()[:4] == ["hollow_test", "1", "0", "0.0%"] for line in lines)
    assert "  missed (python, hollow_test, expect block): missed: no findings" in out

    assert main(["evaluator", "bench", "--corpus", str(corpus), "--json",
                 "--min-recall", "0.5"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["total"] == {"class": "all", "defects": 2, "caught": 1, "recall": 0.5,
                               "clean": 1, "false_blocks": 0, "false_block_rate": 0.0}


@pytest.mark.parametrize(("text", "message"), [
    ("class: stub_code\nexpect: maybe\nfiles: {a.py: x}\n", "expect: expected one of block"),
    ("class: stub_code\nexpect: pass\n", "files: required"),
    ("class: stub_code\nexpect: pass\nfiles: {../x.py: y}\n", "expected a relative path"),
    ("class: stub_code\nexpect: pass\nfiles: {a.py: y}\ncolour: red\n", "unknown key(s) colour"),
    ("expect: pass\nfiles: {a.py: y}\n", "class: required"),
])
def test_a_malformed_case_is_one_clear_line_and_exit_2(tmp_path: Path, text: str, message: str,
                                                       capsys, monkeypatch) -> None:
    (tmp_path / "bad.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    assert main(["evaluator", "bench", "--corpus", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml: case 1" in err and message in err
    assert "Traceback" not in err
