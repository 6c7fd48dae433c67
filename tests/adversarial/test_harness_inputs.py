"""Hostile inputs to the harness: datasets that block, never end or are not text,
and agents whose output is not UTF-8. Each is one clear error or a failed task,
never a hang or a traceback."""

from __future__ import annotations

import os
import shlex
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from meridian.cli import main
from meridian.evals.runner import RunOptions, run_suite
from meridian.evals.suite import load_suite
from tests.evals.runs_support import write_suite


def _suite(tmp: Path, source: str) -> Path:
    path = tmp / "s.yaml"
    path.write_text(yaml.safe_dump({"suite": "ds", "defaults": {"grader": "exact_match"},
                                    "tasks_from": source}))
    return path


@pytest.mark.parametrize("make, expected", [
    (lambda p: os.mkfifo(p), "is not a regular file"),
    (lambda p: p.write_bytes(b'{"id": "a", "input": "\xff\xfe"}\n'), "not UTF-8 (byte"),
    (lambda p: p.write_text("[" * 100000 + "]" * 100000 + "\n"), "JSON nested too deeply"),
])
def test_a_dataset_that_blocks_or_is_not_text_is_one_clear_error(
        tmp_path: Path, make, expected: str, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    make(tmp_path / "rows.jsonl")
    assert main(["eval", "run", str(_suite(tmp_path, "rows.jsonl")), "--agent", "reference-v2",
                 "--no-store"]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_a_dataset_pointing_at_a_device_is_refused_before_reading(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    assert main(["eval", "run", str(_suite(tmp_path, "zero.jsonl")), "--agent", "reference-v2",
                 "--no-store"]) == 2
    assert "is not a regular file" in capsys.readouterr().err


def test_a_csv_field_over_the_csv_limit_is_one_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rows.csv").write_text("id,input,expected\na,\"" + "x" * 200_000 + "\",42\n")
    assert main(["eval", "run", str(_suite(tmp_path, "rows.csv")), "--agent", "reference-v2",
                 "--no-store"]) == 2
    err = capsys.readouterr().err
    assert "not valid CSV" in err and "Traceback" not in err


@pytest.mark.parametrize("isolation", [True, False])
def test_an_agent_printing_invalid_utf8_fails_its_task(tmp_path: Path, isolation: bool) -> None:
    body = textwrap.dedent("""
        import sys
        sys.stdin.read()
        sys.stdout.buffer.write(b'{"steps": [], "final_output": "42\\xff\\xfe"}\\n')
    """)
    script = tmp_path / "bad_utf8.py"
    script.write_text(body)
    suite = load_suite(write_suite(tmp_path / "s.yaml", [{"id": "u"}]))
    result = run_suite(suite, f"command:{shlex.quote(sys.executable)} {shlex.quote(str(script))}",
                       RunOptions(workers=1, isolation=isolation))
    entry = result.results[0]
    assert entry.status == "fail"  # 42 plus replacement characters is not 42, and no crash
    trajectory = entry.trials[0].trajectory
    assert trajectory is not None and trajectory.final_output == "42\ufffd\ufffd"
