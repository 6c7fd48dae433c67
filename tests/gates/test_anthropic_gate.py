"""`meridian gate submit` with the anthropic evaluator, end to end.

The real SDK talks HTTP to a local server standing in for the Messages API
(``ANTHROPIC_BASE_URL``, the ``messages_api`` fixture of ``conftest.py``), so the request path is the one a user's submit takes: config,
gate overrides, client construction from the environment, retries, error mapping.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.evaluators.evaluator_helpers import error_body, tool_use_message
from tests.gates.conftest import Reply, write

GOOD: dict[str, Any] = {
    "scores": {"completeness": 9, "correctness": 9, "robustness": 8, "spec_adherence": 9},
    "issues": [],
    "summary": "The guide explains usage.",
}
STUB_FOUND: dict[str, Any] = {
    # High scores and a "pass" label: the high issue alone must fail the gate.
    "scores": {"completeness": 9, "correctness": 9, "robustness": 9, "spec_adherence": 9},
    "issues": [{"severity": "high", "file": "docs/guide.md", "line": 3,
                "message": "the usage section is a placeholder"}],
    "summary": "Usage is not documented.",
    "verdict": "pass",
}

@pytest.fixture
def docs_gate(project: Path, write_gates: Callable[[str], Path]) -> Path:
    # Retries stay on (the SDK default used by Meridian); the server's retry-after-ms
    # keeps them quick. The timeout is short so the hanging server times out fast.
    write(project, ".meridian/config.yaml", """
        evaluator:
          kind: heuristic
          anthropic: {model: claude-sonnet-4-6, timeout_s: 0.5}
    """)
    write_gates("""
        gates:
          - id: docs
            acceptance: docs/guide.md explains how to install and use the tool.
            artifacts: ["docs/**"]
            evaluate: {evaluator: anthropic}
    """)
    write(project, "docs/guide.md", "# Guide\n\nInstall with pip.\n")
    return project


def _ok(verdict: dict[str, Any]) -> Reply:
    return 200, {}, tool_use_message(verdict, input_tokens=1000, output_tokens=200)


def _state(cli: Callable[..., Any]) -> list[str]:
    return cli("status").out.splitlines()[1].split()[:3]


def test_a_passing_verdict_from_claude_passes_the_gate(docs_gate, messages_api, cli,
                                                         events) -> None:
    messages_api.answer(_ok(GOOD))
    assert cli("gate", "start", "docs").code == 0
    result = cli("gate", "submit", "docs")
    assert result.code == 0, result
    assert result.out.startswith("gate docs: PASSED  overall 8.8 "
                                 "(threshold 7.0, evaluator anthropic:claude-sonnet-4-6)")
    assert _state(cli) == ["1", "docs", "passed"]

    (request,) = messages_api.requests
    assert "sk-ant-gate-test" in messages_api.api_keys[0]  # the key from the environment
    assert request["tool_choice"] == {"type": "tool", "name": "record_verdict"}
    text = request["messages"][0]["content"]
    assert "docs/guide.md explains how to install and use the tool." in text
    assert "    3| Install with pip." in text
    passed = events("gate.passed")[-1]
    assert passed.data["evaluator"] == "anthropic:claude-sonnet-4-6"
    # $3 in / $15 out per million tokens.
    assert passed.data["usage"] == {"input_tokens": 1000, "output_tokens": 200,
                                    "cost_usd": 0.006}


def test_a_high_issue_from_claude_fails_the_gate_whatever_its_label(docs_gate, messages_api,
                                                                    cli, events) -> None:
    messages_api.answer(_ok(STUB_FOUND))
    cli("gate", "start", "docs")
    result = cli("gate", "submit", "docs")
    assert result.code == 2
    assert result.err == ("meridian: gate docs failed: overall 9.0 (threshold 7.0), "
                          "1 high-severity issue(s)\n")
    assert "    high    docs/guide.md:3  the usage section is a placeholder" in result.out
    assert _state(cli) == ["1", "docs", "failed"]
    assert events("gate.failed")[-1].data["issues"] == {"high": 1}


@pytest.mark.parametrize(("reply", "reason"), [
    pytest.param((529, {"retry-after-ms": "1"}, error_body("overloaded_error", "Overloaded")),
                 "the API is overloaded (HTTP 529): Overloaded", id="overloaded"),
    pytest.param(None, "the API did not answer within 0.5s", id="timeout"),
])
def test_an_unavailable_api_leaves_the_gate_unchanged(docs_gate, messages_api, cli, events,
                                                      reply, reason) -> None:
    # First a real verdict (failed), so "unchanged" means more than "still in progress".
    messages_api.answer(_ok(STUB_FOUND))
    cli("gate", "start", "docs")
    assert cli("gate", "submit", "docs").code == 2
    failed_verdict = events("gate.failed")[-1].data["verdict"]
    before = cli("status", "--json").out
    asked_before = len(messages_api.requests)

    write(docs_gate, "docs/guide.md", "# Guide\n\nInstall with pip, run `tool --help`.\n")
    messages_api.answer(reply)
    result = cli("gate", "submit", "docs")
    assert result.code == 2
    assert result.err == (
        f"meridian: docs: evaluator anthropic:claude-sonnet-4-6 was unavailable: {reason} "
        "(no verdict: neither pass nor fail, the gate is unchanged); submit again when it "
        "is back: meridian gate submit docs\n")
    assert result.out == ""
    # The SDK retried (twice) before giving up.
    assert len(messages_api.requests) - asked_before == 3

    assert _state(cli) == ["1", "docs", "failed"]
    after = json.loads(cli("status", "--json").out)["gates"][0]
    assert after["verdict"] == failed_verdict
    assert after == json.loads(before)["gates"][0] | {"submissions": 2,
                                                     "updated_at": after["updated_at"]}
    kinds = [e.kind for e in events() if e.kind.startswith("gate.")]
    assert kinds == ["gate.started", "gate.submitted", "gate.failed", "gate.submitted",
                     "gate.evaluator_unavailable"]
    unavailable = events("gate.evaluator_unavailable")[-1].data
    assert unavailable == {"gate": "docs", "evaluator": "anthropic:claude-sonnet-4-6",
                           "reason": reason}
