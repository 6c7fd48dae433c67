"""`meridian gate submit` with the claude-code evaluator, through a fake `claude` on PATH."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.evaluators.test_claude_code_evaluator import GOOD, STUB, fake_claude  # noqa: F401 - a fixture
from tests.gates.conftest import write


@pytest.fixture
def docs_gate(project: Path, write_gates: Callable[[str], Path]) -> Path:
    write(project, ".meridian/config.yaml", """
        evaluator:
          kind: claude-code
          claude_code: {timeout_s: 2}
    """)
    write_gates("""
        gates:
          - id: docs
            acceptance: docs/guide.md explains how to install and use the tool.
            artifacts: ["docs/**"]
    """)
    write(project, "docs/guide.md", "# Guide\n\nInstall with pip.\n")
    return project


def _state(cli: Callable[..., Any]) -> list[str]:
    return cli("status").out.splitlines()[1].split()[:3]


def test_the_cli_passes_and_fails_gates(docs_gate, fake_claude, cli, events) -> None:  # noqa: F811
    fake_claude("success", GOOD)
    assert cli("gate", "start", "docs").code == 0
    result = cli("gate", "submit", "docs")
    assert result.code == 0, result
    assert result.out.startswith("gate docs: PASSED  overall 8.8 (threshold 7.0, evaluator "
                                 "claude-code:default)")
    assert "  evaluator: claude-code answered by claude-sonnet-4-6 session " in result.out
    passed = events("gate.passed")[-1].data
    assert passed["usage"]["cost_usd"] == 0.0421
    assert passed["identity"]["session_id"] == "5f0c2b1e-1111-4222-8333-944445555666"

    cli("gate", "reopen", "docs", "--reason", "check again")
    fake_claude("success", STUB)
    result = cli("gate", "submit", "docs")
    assert result.code == 2
    assert "    high    docs/guide.md:3  the usage section is a placeholder" in result.out
    assert _state(cli) == ["1", "docs", "failed"]


@pytest.mark.parametrize("mode", ["crash", "hang", "malformed"])
def test_an_erroring_or_hanging_cli_leaves_the_gate_unchanged(docs_gate, fake_claude, cli,  # noqa: F811
                                                              events, mode) -> None:
    fake_claude(mode)
    cli("gate", "start", "docs")
    before = _state(cli)
    result = cli("gate", "submit", "docs")
    assert result.code == 2
    assert "evaluator claude-code:default was unavailable" in result.err
    assert _state(cli) == before == ["1", "docs", "in_progress"]
    assert events("gate.evaluator_unavailable")[-1].data["evaluator"] == "claude-code:default"
