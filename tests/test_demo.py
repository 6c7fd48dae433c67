"""`meridian demo` runs the whole product end to end, offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from meridian.cli import main
from meridian.ledger import Ledger
from tests.conftest import git


def test_demo_runs_end_to_end(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "tour"
    assert main(["demo", "--dir", str(target)]) == 0
    out = capfd.readouterr().out
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
