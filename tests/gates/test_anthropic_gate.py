"""`meridian gate submit` with the anthropic evaluator, end to end.

The real SDK talks HTTP to a local server standing in for the Messages API
(``ANTHROPIC_BASE_URL``, the ``messages_api`` fixture of ``conftest.py``), so the request path is the one a user's submit takes: config,
gate overrides, client construction from the environment, retries, error mapping.
"""

from __future__ import annotations

import json
import re
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
def docs_gate(project: Path, write_gates: Callable[[str], Path], messages_api) -> Path:
    # Retries stay on (the default); the server's retry-after-ms keeps them quick. The
    # deadline is short so the hanging server times out fast. The endpoint is the
    # committed config's.
    write(project, ".meridian/config.yaml", f"""
        evaluator:
          kind: heuristic
          anthropic: {{model: claude-sonnet-4-6, timeout_s: 1, base_url: "{messages_api.url}"}}
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
    return 200, {"request-id": "req_fake_1"}, tool_use_message(verdict, input_tokens=1000,
                                                               output_tokens=200)


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
    assert request["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    text = "".join(block["text"] for block in request["messages"][0]["content"])
    assert "docs/guide.md explains how to install and use the tool." in text
    assert "    3| Install with pip." in text
    passed = events("gate.passed")[-1]
    assert passed.data["evaluator"] == "anthropic:claude-sonnet-4-6"
    # $3 in / $15 out per million tokens.
    assert passed.data["usage"] == {"input_tokens": 1000, "output_tokens": 200,
                                    "cache_creation_input_tokens": 0,
                                    "cache_read_input_tokens": 0, "attempts": 1,
                                    "cost_usd": 0.006}
    identity = passed.data["identity"]
    assert identity["endpoint"] == messages_api.url
    assert identity["models"] == ["claude-sonnet-4-6"]
    assert identity["message_ids"] == ["msg_01XFDUDYJgAACzvnptvVoYEL"]
    assert identity["request_ids"] == ["req_fake_1"]
    assert identity["client"].startswith("anthropic-python ")
    assert passed.data["coverage"]["changed_lines_seen"] == \
        passed.data["coverage"]["changed_lines_total"]
    # status and why show who answered.
    status = json.loads(cli("status", "--json").out)["gates"][0]
    assert status["identity"]["endpoint"] == messages_api.url
    assert f"  docs: verdict by anthropic at {messages_api.url} answered by claude-sonnet-4-6 " \
        in cli("status").out
    why = cli("why", "docs").out
    assert f"at {messages_api.url} answered by claude-sonnet-4-6 message " \
           "msg_01XFDUDYJgAACzvnptvVoYEL request req_fake_1" in why


def test_a_high_issue_from_claude_fails_the_gate_whatever_its_label(docs_gate, messages_api,
                                                                    cli, events) -> None:
    messages_api.answer(_ok(STUB_FOUND))
    cli("gate", "start", "docs")
    result = cli("gate", "submit", "docs", "--quiet")
    assert result.code == 2
    assert result.err == ("meridian: gate docs failed: overall 9.0 (threshold 7.0), "
                          "1 high-severity issue(s)\n")
    assert "    high    docs/guide.md:3  the usage section is a placeholder" in result.out
    assert _state(cli) == ["1", "docs", "failed"]
    assert events("gate.failed")[-1].data["issues"] == {"high": 1}


@pytest.mark.parametrize(("reply", "reason", "attempts"), [
    pytest.param((529, {"retry-after-ms": "1"}, error_body("overloaded_error", "Overloaded")),
                 r"the API is overloaded \(HTTP 529\): Overloaded \(3 attempt\(s\) in \d+\.\ds\)",
                 3, id="overloaded"),
    pytest.param(None, r"the API did not answer within the 1s deadline \(1 attempt\(s\) in "
                       r"\d+\.\ds\)", 1, id="timeout"),
    pytest.param((200, {"content-type": "text/html"}, b"<html><body>502 Bad Gateway</body></html>"),
                 r"the API answered with a body that is not a Messages API message "
                 r"\(content-type text/html\): <html><body>502 Bad Gateway</body></html>", 1,
                 id="html-body"),
    pytest.param((200, {}, json.dumps(tool_use_message(GOOD)).replace(
        '"robustness": 8', '"robustness": NaN').encode()),
                 r"its verdict does not match the verdict schema: scores.robustness: not a "
                 r"finite number", 1, id="nan-score"),
    pytest.param((200, {}, tool_use_message(GOOD, stop_reason="max_tokens")),
                 r"the answer was cut at max_tokens=16000 before a complete verdict; raise "
                 r"evaluator.anthropic.max_tokens", 1, id="cut-answer"),
])
def test_an_unavailable_api_leaves_the_gate_unchanged(docs_gate, messages_api, cli, events,
                                                      reply, reason, attempts) -> None:
    # First a real verdict (failed), so "unchanged" means more than "still in progress".
    messages_api.answer(_ok(STUB_FOUND))
    cli("gate", "start", "docs")
    assert cli("gate", "submit", "docs", "--quiet").code == 2
    failed_verdict = events("gate.failed")[-1].data["verdict"]
    before = cli("status", "--json").out
    asked_before = len(messages_api.requests)

    write(docs_gate, "docs/guide.md", "# Guide\n\nInstall with pip, run `tool --help`.\n")
    messages_api.answer(reply)
    result = cli("gate", "submit", "docs", "--quiet")
    assert result.code == 2
    match = re.fullmatch(
        r"meridian: docs: evaluator anthropic:claude-sonnet-4-6 was unavailable: (.*) "
        r"\(no verdict: neither pass nor fail, the gate is unchanged\); submit again when it "
        r"is back: meridian gate submit docs\n", result.err)
    assert match and re.fullmatch(reason, match.group(1)), result.err
    assert result.out == ""
    assert len(messages_api.requests) - asked_before == attempts

    assert _state(cli) == ["1", "docs", "failed"]
    after = json.loads(cli("status", "--json").out)["gates"][0]
    assert after["verdict"] == failed_verdict
    assert after == json.loads(before)["gates"][0] | {"submissions": 2,
                                                     "updated_at": after["updated_at"]}
    kinds = [e.kind for e in events() if e.kind.startswith("gate.")]
    assert kinds == ["gate.started", "gate.submitted", "gate.failed", "gate.submitted",
                     "gate.evaluator_unavailable"]
    unavailable = events("gate.evaluator_unavailable")[-1].data
    assert unavailable["reason"] == match.group(1)
    assert unavailable["evaluator"] == "anthropic:claude-sonnet-4-6"
    assert unavailable["usage"]["attempts"] == attempts


def test_an_endpoint_from_the_agents_environment_is_refused(docs_gate, messages_api, cli,
                                                            events, monkeypatch) -> None:
    messages_api.answer(_ok(GOOD))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    cli("gate", "start", "docs")
    result = cli("gate", "submit", "docs")
    assert result.code == 2
    assert "ANTHROPIC_BASE_URL is set in the environment (http://127.0.0.1:1), but the " \
           "endpoint comes only from the committed config" in result.err
    assert messages_api.requests == []
    assert _state(cli) == ["1", "docs", "in_progress"]
    assert events("gate.evaluator_unavailable")[-1].data["reason"].startswith(
        "ANTHROPIC_BASE_URL is set in the environment")


def _reviewer(body: dict[str, Any]) -> Reply:
    """Reports the stub when its request shows it, finds nothing otherwise."""
    text = "".join(block["text"] for block in body["messages"][0]["content"])
    if "raise NotImplementedError" in text:
        return _ok(dict(GOOD, issues=[{"severity": "high", "file": "src/gen/m49.py",
                                       "line": None, "message": "finish() is a stub"}]))
    return _ok(GOOD)


@pytest.mark.parametrize(("max_requests", "stub_found"), [(40, True), (2, False)])
def test_a_stub_at_the_end_of_the_largest_of_50_files_is_found_or_the_gate_cannot_pass(
        project, write_gates, messages_api, cli, events, max_requests, stub_found) -> None:
    write(project, ".meridian/config.yaml", f"""
        evaluator:
          kind: anthropic
          anthropic: {{model: claude-haiku-4-5, base_url: "{messages_api.url}",
                       max_bundle_chars: 40000, max_requests: {max_requests}}}
    """)
    write_gates("""
        gates:
          - id: gen
            acceptance: every generated function is implemented.
            artifacts: ["src/gen/*.py"]
    """)
    for n in range(50):
        rows = 200 if n == 49 else 100
        body = "".join(f"def f_{n}_{i}(x):\n    return x * {i}\n" for i in range(rows))
        if n == 49:
            body += "def finish(x):\n    raise NotImplementedError\n"
        write(project, f"src/gen/m{n:02d}.py", body)
    messages_api.answer(_reviewer)
    assert cli("gate", "start", "gen").code == 0
    result = cli("gate", "submit", "gen")
    assert result.code == 2, result
    failed = events("gate.failed")[-1].data
    coverage = failed["coverage"]
    if stub_found:
        assert len(messages_api.requests) > 5
        assert coverage["changed_lines_seen"] == coverage["changed_lines_total"] > 10_000
        assert "finish() is a stub" in result.out
    else:
        assert len(messages_api.requests) == 2
        assert coverage["changed_lines_seen"] < coverage["changed_lines_total"]
        assert "the evaluator did not see all of the evidence" in result.out
    # The offline scan's finding is there whichever the model saw.
    assert "src/gen/m49.py" in result.out
