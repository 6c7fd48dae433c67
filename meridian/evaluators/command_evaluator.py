"""Any program as the evaluator: bundle JSON on stdin, verdict JSON on stdout.

The command (``evaluator.command`` in the config) runs through the shell with the
variables that pin git to a repository removed (``gitio.clean_env``, the one definition
the checks and Meridian's own git calls use too), so a program that calls git sees the
repository it runs in rather than whatever hook invoked Meridian. It must print one JSON object:

    {"scores": {"completeness": 8, "correctness": 7, "robustness": 7, "spec_adherence": 8},
     "issues": [{"severity": "high", "file": "src/app.py", "line": 12, "message": "..."}],
     "summary": "optional", "usage": {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0}}

A ``pass``/``verdict`` label it prints is ignored: Meridian decides from the scores and
issues. ``claude -p --output-format json`` wraps the model's answer in an object whose
``result`` is text; that text is unwrapped (a fenced JSON block is accepted) and the
wrapper's ``usage`` and ``total_cost_usd`` are recorded. Output that is not JSON or does
not match the schema, a non-zero exit, a crash or a timeout: EvaluatorUnavailable.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
from pathlib import Path
from typing import Any

from meridian.evaluators._base import Assessment, EvaluatorUnavailable
from meridian.evaluators._payload import COMMAND_VERDICT_SCHEMA, parse_reported
from meridian.evaluators.models import Bundle, Issue, Usage
from meridian.gitio import clean_env

COMMAND_TIMEOUT_S = 600.0
FENCED_JSON = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)


def _program(command: str) -> str:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return os.path.basename(words[0]) if words else command


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else "(no output)"


def _unwrap_claude_result(data: dict[str, Any]) -> tuple[object, Usage | None]:
    """``claude -p --output-format json`` output -> (the verdict inside, the run's usage)."""
    text = data["result"].strip()
    fenced = FENCED_JSON.search(text)
    candidate = fenced.group(1) if fenced else text[text.find("{"):text.rfind("}") + 1]
    inner = json.loads(candidate)
    usage = None
    raw = data.get("usage")
    if isinstance(raw, dict):
        usage = Usage(input_tokens=int(raw.get("input_tokens") or 0),
                      output_tokens=int(raw.get("output_tokens") or 0),
                      cost_usd=float(data.get("total_cost_usd") or 0.0))
    return inner, usage


class CommandEvaluator:
    def __init__(self, command: str, *, timeout_s: float = COMMAND_TIMEOUT_S,
                 cwd: Path | None = None) -> None:
        self.command = command
        self.timeout_s = timeout_s
        self.cwd = cwd

    @property
    def label(self) -> str:
        return f"command:{_program(self.command)}"

    def _run(self, stdin_text: str) -> str:
        try:
            # A new session, so a timeout can kill the shell and everything it started.
            process = subprocess.Popen(
                self.command, shell=True, cwd=self.cwd, env=clean_env(),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, start_new_session=True)
        except OSError as err:
            raise EvaluatorUnavailable(self.label, f"could not start `{self.command}`: {err}"
                                       ) from None
        try:
            stdout, stderr = process.communicate(stdin_text, timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise EvaluatorUnavailable(
                self.label, f"`{self.command}` did not finish within {self.timeout_s:g}s"
            ) from None
        if process.returncode != 0:
            raise EvaluatorUnavailable(
                self.label, f"`{self.command}` exited with code {process.returncode}: "
                            f"{_last_line(stderr or stdout)}")
        return stdout

    def assess(self, bundle: Bundle, findings: list[Issue] | None = None) -> Assessment:
        # ``findings`` (the offline scan's) are merged by the facade; the command's input
        # stays the bundle JSON it always was.
        stdout = self._run(bundle.model_dump_json())
        try:
            data = json.loads(stdout)
        except json.JSONDecodeError as err:
            shown = stdout.strip()[:80] or "(nothing)"
            raise EvaluatorUnavailable(
                self.label, f"its output is not JSON ({err.msg} at line {err.lineno}); "
                            f"it printed: {shown}") from None
        wrapper_usage = None
        if isinstance(data, dict) and "scores" not in data and isinstance(data.get("result"), str):
            try:
                data, wrapper_usage = _unwrap_claude_result(data)
            except (json.JSONDecodeError, ValueError):
                raise EvaluatorUnavailable(
                    self.label, "its output wraps a `result` text that holds no verdict JSON"
                ) from None
        reported = parse_reported(data, self.label, COMMAND_VERDICT_SCHEMA)
        return Assessment(evaluator=self.label, scores=reported.scores, issues=reported.issues,
                          summary=reported.summary,
                          usage=reported.usage or wrapper_usage or Usage())
