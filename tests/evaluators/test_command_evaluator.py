"""Any program as the evaluator: real subprocesses reading the bundle, printing verdicts."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from meridian.config import EvaluatorSettings
from meridian.errors import ConfigError
from meridian.evaluators import CheckResult, EvaluatorUnavailable, evaluate
from meridian.evaluators.command_evaluator import CommandEvaluator
from tests.evaluators.evaluator_helpers import make_bundle

GOOD_SCORES = {"completeness": 9, "correctness": 9, "robustness": 8, "spec_adherence": 9}
BAD_SCORES = {"completeness": 3, "correctness": 4, "robustness": 2, "spec_adherence": 3}


def judge(tmp_path: Path, body: str, name: str = "judge.py") -> str:
    """An executable Python script; returns the shell command that runs it."""
    script = tmp_path / name
    script.write_text(f"#!{sys.executable}\nimport json, os, sys\n{body}")
    script.chmod(0o755)
    return shlex.quote(str(script))


def settings_for(command: str) -> EvaluatorSettings:
    return EvaluatorSettings(kind="command", command=command)


def test_a_good_verdict_passes_and_the_program_reads_the_bundle(tmp_path: Path) -> None:
    command = judge(tmp_path, f"""
bundle = json.load(sys.stdin)
print(json.dumps({{
    "scores": {GOOD_SCORES!r},
    "issues": [{{"severity": "low", "file": "src/shop/cart.py", "line": 5,
                "message": "name the magic number"}}],
    "summary": "read gate " + bundle["gate"] + " with "
               + str(len(bundle["artifacts"])) + " files",
    "usage": {{"input_tokens": 120, "output_tokens": 30, "cost_usd": 0.002}},
}}))
""")
    verdict = evaluate(make_bundle(), settings_for(command))
    assert verdict.passed
    assert verdict.evaluator == "command:judge.py"
    assert verdict.summary == "read gate backend with 2 files"
    assert [i.where() for i in verdict.issues] == ["src/shop/cart.py:5"]
    assert verdict.usage.model_dump(include={"input_tokens", "output_tokens", "cost_usd"}) \
        == {"input_tokens": 120, "output_tokens": 30, "cost_usd": 0.002}


def test_a_program_that_prints_pass_with_failing_scores_fails(tmp_path: Path) -> None:
    command = judge(tmp_path, f"""
print(json.dumps({{"verdict": "pass", "pass": True, "passed": True,
                  "scores": {BAD_SCORES!r}, "issues": [], "summary": "PASS"}}))
""")
    verdict = evaluate(make_bundle(), settings_for(command))
    assert not verdict.passed
    assert verdict.overall == 3.15  # 3*.25 + 4*.35 + 2*.2 + 3*.2


def test_a_program_that_says_pass_over_a_high_issue_fails(tmp_path: Path) -> None:
    command = judge(tmp_path, f"""
print(json.dumps({{"verdict": "pass", "scores": {GOOD_SCORES!r},
                  "issues": [{{"severity": "high", "file": "src/shop/cart.py", "line": 4,
                              "message": "total() ignores the discount"}}]}}))
""")
    verdict = evaluate(make_bundle(), settings_for(command))
    assert not verdict.passed
    assert verdict.blocking()[0].where() == "src/shop/cart.py:4"


def test_garbage_output_is_unavailable_never_a_pass(tmp_path: Path) -> None:
    command = judge(tmp_path, 'print("LGTM, ship it!")\n')
    with pytest.raises(EvaluatorUnavailable) as err:
        evaluate(make_bundle(), settings_for(command))
    assert str(err.value) == (
        "evaluator command:judge.py was unavailable: its output is not JSON (Expecting value "
        "at line 1); it printed: LGTM, ship it! (no verdict: neither pass nor fail, the gate "
        "is unchanged)")


def test_output_outside_the_schema_is_unavailable(tmp_path: Path) -> None:
    command = judge(tmp_path, """
print(json.dumps({"passed": True, "scores": {"completeness": 9, "correctness": 9,
                                             "spec_adherence": 9}, "issues": []}))
""")
    with pytest.raises(EvaluatorUnavailable) as err:
        evaluate(make_bundle(), settings_for(command))
    assert err.value.reason == ("its verdict does not match the verdict schema: scores: "
                                "'robustness' is a required property")


def test_a_crash_is_unavailable_with_the_last_error_line(tmp_path: Path) -> None:
    command = judge(tmp_path, 'sys.stderr.write("Traceback...\\nRuntimeError: quota\\n")\n'
                              'sys.exit(3)\n')
    with pytest.raises(EvaluatorUnavailable) as err:
        evaluate(make_bundle(), settings_for(command))
    assert err.value.reason == f"`{command}` exited with code 3: RuntimeError: quota"


def test_a_program_that_hangs_is_killed_and_unavailable(tmp_path: Path) -> None:
    evaluator = CommandEvaluator("sleep 30", timeout_s=0.5)
    with pytest.raises(EvaluatorUnavailable) as err:
        evaluator.assess(make_bundle())
    assert err.value.reason == "`sleep 30` did not finish within 0.5s"


def test_repository_variables_are_stripped_and_cwd_is_honoured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What a hook inherits: variables pinning git to the hook's repository and index.
    monkeypatch.setenv("GIT_DIR", "/somewhere/else/.git")
    monkeypatch.setenv("GIT_INDEX_FILE", "/somewhere/else/index")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.hooksPath")
    # Not repository-pinning (gitio.clean_env keeps them): credentials, identity.
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -i key")
    monkeypatch.setenv("MERIDIAN_SAMPLE", "kept")
    workdir = tmp_path / "project"
    workdir.mkdir()
    command = judge(tmp_path, f"""
names = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_CONFIG_KEY_0", "GIT_SSH_COMMAND")
git = sorted(k for k in names if k in os.environ)
print(json.dumps({{"scores": {GOOD_SCORES!r}, "issues": [],
                  "summary": f"git={{git}} sample={{os.environ['MERIDIAN_SAMPLE']}} "
                             f"cwd={{os.path.basename(os.getcwd())}}"}}))
""")
    verdict = evaluate(make_bundle(), settings_for(command), cwd=workdir)
    assert verdict.summary == "git=['GIT_SSH_COMMAND'] sample=kept cwd=project"


def test_claude_cli_json_output_is_unwrapped(tmp_path: Path) -> None:
    inner = {"scores": BAD_SCORES, "issues": [{"severity": "high", "file": "src/shop/cart.py",
                                               "line": 2, "message": "stub"}],
             "summary": "stubbed"}
    wrapper = {"type": "result", "subtype": "success", "is_error": False,
               "result": "Here is my verdict:\n```json\n" + json.dumps(inner) + "\n```",
               "total_cost_usd": 0.0123, "usage": {"input_tokens": 900, "output_tokens": 80}}
    command = judge(tmp_path, f"print(json.dumps({wrapper!r}))\n", name="claude")
    verdict = evaluate(make_bundle(), settings_for(command))
    assert verdict.evaluator == "command:claude"
    assert not verdict.passed
    assert verdict.usage.model_dump(include={"input_tokens", "output_tokens", "cost_usd"}) \
        == {"input_tokens": 900, "output_tokens": 80, "cost_usd": 0.0123}


def test_failing_checks_fail_the_gate_even_when_the_program_is_satisfied(tmp_path: Path) -> None:
    command = judge(tmp_path, f'print(json.dumps({{"scores": {GOOD_SCORES!r}, "issues": []}}))\n')
    bundle = make_bundle(checks=[CheckResult(command="pytest -q", exit_code=2)])
    verdict = evaluate(bundle, settings_for(command))
    assert not verdict.passed
    assert [i.check for i in verdict.issues] == ["failing_check"]


def test_kind_command_without_a_command_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as err:
        evaluate(make_bundle(), EvaluatorSettings(kind="command"))
    assert str(err.value).startswith("evaluator.command: required when evaluator.kind is "
                                     "'command'")
