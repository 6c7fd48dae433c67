"""The gate lifecycle honours retired rules: a retired heuristic check is not run.

(``gate:independent_evaluator`` and ``gate:approval_requires_tty`` cannot be retired:
``meridian.rules`` refuses it, so there is no switch to test here.)"""

from __future__ import annotations

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
