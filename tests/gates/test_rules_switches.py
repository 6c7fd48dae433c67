"""The gate lifecycle honours retired rules: each rule is a switch on one mechanism."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.gates.conftest import write


def _retire(root: Path, *mechanisms: str) -> None:
    rules = ["version: 1", "rules:"]
    for number, mechanism in enumerate(mechanisms):
        rules += [
            f"  - id: retired-{number}",
            "    rule: a rule",
            "    failure_mode: what goes wrong",
            f"    mechanism: {mechanism}",
            "    review: {date: 2030-01-01}",
            "    status: retired",
            "    retired_reason: the test retires it",
        ]
    write(root, ".meridian/rules.yaml", "\n".join(rules) + "\n")


STUB_GATE = """
gates:
  - id: calc
    artifacts: ["src/*.py"]
"""


def test_retired_stub_check_is_not_run(project, write_gates, cli) -> None:
    write_gates(STUB_GATE)
    write(project, "src/calc.py", "def divide(a, b):\n    raise NotImplementedError\n")
    cli("gate", "start", "calc")
    assert cli("gate", "submit", "calc").code == 2
    _retire(project, "heuristic:stub_code")
    assert cli("gate", "submit", "calc").code == 0


def test_retired_independent_evaluator_means_a_self_assessed_verdict(project, write_gates,
                                                                     cli, events) -> None:
    write_gates(STUB_GATE)
    write(project, "src/calc.py", "def divide(a, b):\n    raise NotImplementedError\n")
    _retire(project, "gate:independent_evaluator")
    cli("gate", "start", "calc")
    missing = cli("gate", "submit", "calc")
    assert missing.code == 2
    assert missing.err == ("meridian: calc: the rule behind gate:independent_evaluator is "
                           "retired, so the score is your own: meridian gate submit calc "
                           "--self-score N\n")
    assert events("gate.submitted") == []
    result = cli("gate", "submit", "calc", "--self-score", "8")
    assert result.code == 0, result
    assert events("gate.passed")[-1].data["evaluator"] == "self"


def test_retired_tty_rule_lets_approval_run_without_a_terminal(project, write_gates, cli) -> None:
    digest = hashlib.sha256(b"tok").hexdigest()
    write_gates(f"""
        gates:
          - id: ship
            artifacts: [README.md]
            approval: {{token_sha256: {digest}}}
    """)
    cli("gate", "start", "ship")
    assert cli("gate", "submit", "ship").code == 0
    assert cli("gate", "approve", "ship", "--token", "tok").code == 2
    _retire(project, "gate:approval_requires_tty")
    assert cli("gate", "approve", "ship", "--token", "tok").code == 0
