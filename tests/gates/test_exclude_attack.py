"""An agent that adds an `exclude:` glob over its stubbed file during the gate: the
scan no longer reads it, and that is evidence in the verdict, for the evaluator and on
the harness record (real repositories, the real CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meridian.evaluators.models import Verdict
from meridian.harness import describe
from meridian.ledger import Ledger
from tests.gates.conftest import commit_all, write

GATE = """
gates:
  - id: pay
    description: payments
    acceptance: refunds are computed
    artifacts: ["src/**/*.py"]
{extra}"""

STUB = "def refund(order):\n    pass\n"


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")


def _latest(root: Path, *kinds: str):
    return [r for r in Ledger.open(root).records("events") if r.kind in kinds][-1]


@pytest.mark.parametrize("committed", [True, False])
def test_an_exclude_added_during_the_gate_over_a_stub_is_shown_listed_and_recorded(
        project: Path, write_gates, cli, committed: bool) -> None:
    write_gates(GATE.format(extra=""))
    write(project, "src/pay.py", "def refund(order):\n    return order.total\n")
    commit_all(project, "payments")
    assert cli("gate", "start", "pay").code == 0
    write(project, "src/pay.py", STUB)
    write_gates(GATE.format(extra='    exclude: ["src/pay.py"]\n'))
    if committed:
        commit_all(project, "exclude the payments module")
    result = cli("gate", "submit", "pay", "--quiet")
    assert "is a stub" not in result.out  # the scan did not read it...
    assert ("medium  (project)  `exclude: src/pay.py` was added during this gate and keeps "
            "changed file(s) out of the offline scan: src/pay.py") in result.out  # ...and says so
    assert "exclude globs added during this gate: src/pay.py" in result.out
    assert "excluded from the scan (exclude:): src/pay.py" in result.out
    outcome = _latest(project, "gate.passed", "gate.failed")
    verdict = Verdict.model_validate(Ledger.open(project).read_json(outcome.data["verdict"]))
    assert verdict.exclude_added == ["src/pay.py"] and verdict.excluded == ["src/pay.py"]
    evidence = Ledger.open(project).read_json(outcome.data["verdict"].replace(
        "verdicts/", "evidence/"))
    assert any("exclude: globs added during this gate" in n and "src/pay.py" in n
               for n in evidence["notes"])  # what a model evaluator is shown
    why = cli("why", "pay").out
    assert "exclude globs added during this gate: src/pay.py" in why
    changes = [r for r in Ledger.open(project).records("events") if r.kind == "harness.changed"
               and any("exclude" in c for c in r.data["changes"])]
    if committed:  # the commit skipped the hook: submit's catch-up recorded it, weakening
        [change] = changes
        assert change.data["weakening"] is True
        assert any("exclude [src/pay.py] added" in c for c in change.data["changes"])
    else:
        assert changes == []  # not committed: nothing to record, the verdict still says it


def test_an_exclude_already_there_at_the_base_is_not_news(project: Path, write_gates,
                                                          cli) -> None:
    write_gates(GATE.format(extra='    exclude: ["src/vendor/**"]\n'))
    write(project, "src/vendor/lib.py", "def moved():\n    pass\n")
    write(project, "src/pay.py", "def refund(order):\n    return order.total\n")
    commit_all(project, "payments and a vendored lib")
    assert cli("gate", "start", "pay").code == 0
    write(project, "src/vendor/lib.py", "def moved():\n    pass\n\n\ndef other():\n    pass\n")
    result = cli("gate", "submit", "pay", "--quiet")
    assert result.code == 0, result
    assert "added during this gate" not in result.out


@pytest.mark.parametrize(("before", "after", "weakens"), [
    ("", '    exclude: ["src/**"]\n', True),
    ('    exclude: ["src/a.py", "src/b.py"]\n', '    exclude: ["src/a.py"]\n', False),
    ("", "    mutation: false\n", True),
    ("    mutation: {max_functions: 20}\n", "    mutation: {max_functions: 5}\n", True),
    ("    mutation: {max_functions: 5}\n", "    mutation: {max_functions: 50}\n", False),
    ("    evaluate: {block_pre_existing: true}\n", "", True),
    ("", "    evaluate: {require: model}\n", False),
])
def test_harness_changes_that_take_files_or_mutants_out_are_weakening(
        before: str, after: str, weakens: bool) -> None:
    described = describe(".meridian/gates.yaml", GATE.format(extra=before).encode(),
                         GATE.format(extra=after).encode())
    assert described.changes, json.dumps(described.changes)
    assert described.weakening is weakens, described.changes
