"""`meridian demo` runs the whole product end to end, offline."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.ledger import Ledger
from tests.conftest import git


def test_demo_runs_end_to_end(tmp_path: Path, capfd: pytest.CaptureFixture[str],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    # A newcomer's API key must not send the offline tour to the network (there is none
    # here: an evaluator call would be "unavailable" and the demo would stop).
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-demo-test")
    target = tmp_path / "tour"
    assert main(["demo", "--dir", str(target)]) == 0
    captured = capfd.readouterr()
    out = captured.out
    # eval runs print their summary, not one progress line per task
    assert "--offline: skipping 2 task(s) graded by a model API" in captured.err
    assert not re.search(r"^\[\d+/23\] ", captured.err + out, re.MULTILINE)
    # the corrections carry the hours the work took, so calibration says something
    assert "multiplier: 1.5 (median ratio of the last 2 correction(s); window 10)" in out
    # the health report is printed once; --html writes the file and says so
    assert out.count("Meridian health meridian/state") == 1
    assert "blocks by source       2: evaluator 1, pre-commit 1" in out
    assert re.search(r"^wrote health\.html \(\d+ events, 3 gates; open it in a browser\)$", out,
                     re.MULTILINE)
    assert f"open {target / 'health.html'} in a browser" in out
    # the stub was caught by the evaluator (with its file:line) and by the pre-commit hook
    assert "gate core: FAILED" in out
    assert "src/calc.py:6" in out
    assert "meridian pre-commit: commit refused" in out
    assert "gate core: PASSED" in out
    assert "REGRESSIONS (0)" in out
    assert "baseline main -> run" in out
    assert "Demo finished in" in out
    # and it all happened on the state branch of a real repository
    ledger = Ledger.open(target)
    kinds = [r.kind for r in ledger.records()]
    for kind in ("meridian.init", "gate.failed", "gate.passed", "gate.blocked", "baseline.pinned"):
        assert kind in kinds
    assert len(list(ledger.records("memory/corrections"))) >= 2
    assert (target / "health.html").read_text().lstrip().lower().startswith("<!doctype html>")
    # the user's branch holds only what the tour committed; state lives on its own branch
    assert git(target, "status", "--porcelain") == "?? health.html\n?? suites/\n"
    assert "meridian/state" not in git(target, "log", "--format=%s", "main")


def test_demo_refuses_a_non_empty_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x").write_text("keep me")
    assert main(["demo", "--dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"meridian: {tmp_path}: directory is not empty; the demo needs an empty one\n")
