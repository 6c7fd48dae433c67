"""The claude-code evaluator through a fake `claude` executable on PATH.

The fake reproduces the documented shapes of `claude -p --output-format json`: a
`type: result` object with `subtype`, `is_error`, `result` text, `session_id`,
`total_cost_usd`, `usage` and `modelUsage`; an error run; a run that never ends; and
output that is not JSON. It records its arguments and standard input.
"""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from meridian.config import ClaudeCodeSettings, EvaluatorSettings
from meridian.evaluators import EvaluatorUnavailable, choose_kind, evaluate
from meridian.evaluators.claude_code_evaluator import ClaudeCodeEvaluator
from tests.evaluators.evaluator_helpers import make_bundle

GOOD = {"scores": {"completeness": 9, "correctness": 9, "robustness": 8, "spec_adherence": 9},
        "issues": [], "summary": "The guide explains usage."}
STUB = {"scores": {"completeness": 9, "correctness": 9, "robustness": 9, "spec_adherence": 9},
        "issues": [{"severity": "high", "file": "docs/guide.md", "line": 3,
                    "message": "the usage section is a placeholder"}],
        "summary": "Usage is not documented."}

FAKE = textwrap.dedent('''\
    #!{python}
    import json, os, sys, time
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.argv[1:] == ["--version"]:
        print("2.1.7 (Claude Code)")
        sys.exit(0)
    stdin = sys.stdin.read()
    with open(os.path.join(here, "calls.jsonl"), "a") as log:
        log.write(json.dumps({{"argv": sys.argv[1:], "stdin": stdin,
                               "no_claude_md": os.environ.get("CLAUDE_CODE_DISABLE_CLAUDE_MDS")}})
                  + "\\n")
    mode = open(os.path.join(here, "mode")).read().strip()
    verdict = open(os.path.join(here, "verdict.json")).read()
    base = {{"type": "result", "duration_ms": 8123, "duration_api_ms": 7001, "num_turns": 3,
             "session_id": "5f0c2b1e-1111-4222-8333-944445555666", "total_cost_usd": 0.0421,
             "usage": {{"input_tokens": 1200, "cache_creation_input_tokens": 5000,
                        "cache_read_input_tokens": 20000, "output_tokens": 640}},
             "modelUsage": {{"claude-sonnet-4-6": {{"inputTokens": 1200, "outputTokens": 640}}}}}}
    if mode == "success":
        text = "I read docs/guide.md.\\n\\n```json\\n" + verdict + "\\n```\\n"
        print(json.dumps(dict(base, subtype="success", is_error=False, result=text)))
    elif mode == "max_turns":
        print(json.dumps(dict(base, subtype="error_max_turns", is_error=True)))
    elif mode == "crash":
        print("Error: Invalid API key · Please run /login", file=sys.stderr)
        sys.exit(1)
    elif mode == "hang":
        time.sleep(60)
    elif mode == "malformed":
        print("Welcome to Claude Code! <html>")
    elif mode == "no_verdict":
        print(json.dumps(dict(base, subtype="success", is_error=False,
                              result="Looks fine to me, ship it.")))
    elif mode == "two_verdicts":
        text = "```json\\n" + verdict + "\\n```\\nOn reflection:\\n```json\\n" + verdict + "\\n```"
        print(json.dumps(dict(base, subtype="success", is_error=False, result=text)))
''')


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Path]:
    folder = tmp_path / "fakebin"
    folder.mkdir()
    script = folder / "claude"
    script.write_text(FAKE.format(python=sys.executable))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)

    def use(mode: str, verdict: dict[str, Any] | None = None) -> Path:
        (folder / "mode").write_text(mode)
        (folder / "verdict.json").write_text(json.dumps(verdict or GOOD))
        return folder

    return use


def calls(folder: Path) -> list[dict[str, Any]]:
    path = folder / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_auto_prefers_the_api_key_then_the_cli_on_path(fake_claude, monkeypatch) -> None:
    fake_claude("success")
    settings = EvaluatorSettings()
    assert choose_kind(settings) == (
        "claude-code", "auto: no ANTHROPIC_API_KEY, the `claude` CLI is on PATH")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-x")
    assert choose_kind(settings) == ("anthropic", "auto: ANTHROPIC_API_KEY is set")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert choose_kind(settings) == (
        "heuristic", "auto: no ANTHROPIC_API_KEY and no `claude` CLI on PATH")


def test_a_review_runs_read_only_in_a_fresh_session_and_records_its_cost(fake_claude) -> None:
    folder = fake_claude("success", GOOD)
    assessment = ClaudeCodeEvaluator(ClaudeCodeSettings(max_turns=12)).assess(make_bundle())
    (call,) = calls(folder)
    argv = call["argv"]
    assert argv[:4] == ["-p", "--output-format", "json", "--no-session-persistence"]
    assert argv[argv.index("--max-turns") + 1] == "12"
    assert argv[argv.index("--tools") + 1] == "Read,Grep,Glob"
    assert argv[argv.index("--allowedTools") + 1] == "Read,Grep,Glob"
    assert "Bash" in argv[argv.index("--disallowedTools") + 1].split(",")
    assert argv[argv.index("--permission-mode") + 1] == "plan"
    assert json.loads(argv[argv.index("--settings") + 1]) == {"disableAllHooks": True}
    assert call["no_claude_md"] == "1"
    assert "Your job is to find what is wrong with it" in argv[argv.index("--system-prompt") + 1]
    assert "    4| def total(prices: list[float], discount: float = 0.0) -> float:" \
        in call["stdin"]
    assert assessment.scores["robustness"] == 8
    assert assessment.usage.model_dump() == {
        "input_tokens": 1200, "output_tokens": 640, "cache_creation_input_tokens": 5000,
        "cache_read_input_tokens": 20000, "attempts": 1, "cost_usd": 0.0421}
    assert assessment.identity is not None
    assert assessment.identity.model_dump() == {
        "kind": "claude-code", "endpoint": None, "requested_model": None,
        "models": ["claude-sonnet-4-6"], "request_ids": [], "message_ids": [],
        "client": f"claude-code 2.1.7 ({folder / 'claude'})",
        "session_id": "5f0c2b1e-1111-4222-8333-944445555666"}


@pytest.mark.parametrize(("mode", "reason"), [
    ("max_turns", "the claude CLI reported error_max_turns"),
    ("crash", "the claude CLI exited with code 1: Error: Invalid API key · Please run /login"),
    ("malformed", ("the claude CLI's output is not JSON (Expecting value); it printed: "
                  "Welcome to Claude Code! <html>")),
    ("no_verdict", "the review ends without a JSON verdict (expected one fenced ```json block)"),
    ("two_verdicts", "the review holds 2 fenced JSON blocks; a verdict is exactly one"),
])
def test_a_failed_or_malformed_run_is_unavailable(fake_claude, mode: str, reason: str) -> None:
    fake_claude(mode)
    with pytest.raises(EvaluatorUnavailable) as err:
        ClaudeCodeEvaluator(ClaudeCodeSettings()).assess(make_bundle())
    assert err.value.reason == reason


def test_a_run_past_the_deadline_is_killed_and_unavailable(fake_claude) -> None:
    fake_claude("hang")
    started = time.monotonic()
    with pytest.raises(EvaluatorUnavailable) as err:
        ClaudeCodeEvaluator(ClaudeCodeSettings(timeout_s=1)).assess(make_bundle())
    assert time.monotonic() - started < 2.5
    assert re.fullmatch(r"the claude CLI did not finish within the 1s deadline "
                        r"\(1 session\(s\) in \d+\.\ds\)", err.value.reason)


def test_an_environment_base_url_is_refused(fake_claude, monkeypatch) -> None:
    folder = fake_claude("success")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    with pytest.raises(EvaluatorUnavailable) as err:
        evaluate(make_bundle(), EvaluatorSettings(kind="claude-code"))
    assert err.value.reason.startswith("ANTHROPIC_BASE_URL is set in the environment")
    assert calls(folder) == []
