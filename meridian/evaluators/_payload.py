"""The verdict an outside evaluator reports (Claude's tool call, a command's stdout).

One JSON Schema serves twice: it is the ``input_schema`` of the forced
``record_verdict`` tool, and it validates what a command prints. Anything that does
not validate makes the evaluator unavailable; it is never read as a pass. A label such
as ``"pass": true`` or ``"verdict": "pass"`` is allowed in the output and ignored.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from meridian.evaluators._base import EvaluatorUnavailable
from meridian.evaluators.models import DIMENSIONS, Issue, Usage

DIMENSION_MEANING = {
    "completeness": "is everything the acceptance criteria ask for actually there",
    "correctness": "does it work: logic, checks, edge cases that matter",
    "robustness": "does it hold up: error handling, tests that can fail, no silent gaps",
    "spec_adherence": "does it do what the acceptance criteria say, not something nearby",
}

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "scores": {
            "type": "object",
            "description": "Each dimension from 0 (absent or broken) to 10 (nothing missing).",
            "properties": {d: {"type": "number", "minimum": 0, "maximum": 10,
                               "description": meaning}
                           for d, meaning in DIMENSION_MEANING.items()},
            "required": list(DIMENSIONS),
        },
        "issues": {
            "type": "array",
            "description": "Every problem found, most severe first. high = the work must not "
                           "pass as is; medium = should be fixed; low = minor.",
            "items": {
                "type": "object",
                "properties": {
                    "severity": {"type": "string", "enum": ["high", "medium", "low"]},
                    "file": {"type": ["string", "null"],
                             "description": "path as given in the bundle"},
                    "line": {"type": ["integer", "null"],
                             "description": "1-based line from the numbered listing"},
                    "message": {"type": "string", "minLength": 1,
                                "description": "what is wrong and what would fix it"},
                },
                "required": ["severity", "message"],
            },
        },
        "summary": {"type": "string", "description": "two or three sentences"},
    },
    "required": ["scores", "issues", "summary"],
}

USAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "input_tokens": {"type": "integer", "minimum": 0},
        "output_tokens": {"type": "integer", "minimum": 0},
        "cost_usd": {"type": "number", "minimum": 0},
    },
}

COMMAND_VERDICT_SCHEMA: dict[str, Any] = copy.deepcopy(VERDICT_SCHEMA)
COMMAND_VERDICT_SCHEMA["required"] = ["scores", "issues"]
COMMAND_VERDICT_SCHEMA["properties"]["usage"] = USAGE_SCHEMA


@dataclass(frozen=True)
class Reported:
    scores: dict[str, float]
    issues: list[Issue]
    summary: str
    usage: Usage | None


def _path(error_path: Any) -> str:
    return ".".join(str(p) for p in error_path) or "(top level)"


def parse_reported(data: object, evaluator: str, schema: dict[str, Any] = VERDICT_SCHEMA
                   ) -> Reported:
    """Validate ``data`` against ``schema``; EvaluatorUnavailable naming the first problem."""
    error = best_match(Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        raise EvaluatorUnavailable(
            evaluator, f"its verdict does not match the verdict schema: "
                       f"{_path(error.absolute_path)}: {error.message[:200]}")
    data = cast(dict[str, Any], data)  # the schema guarantees an object
    issues = [
        Issue(severity=item["severity"], file=item.get("file") or None,
              # A line the reader cannot jump to is no line at all.
              line=int(item["line"]) if isinstance(item.get("line"), int | float)
              and item["line"] >= 1 else None,
              message=" ".join(item["message"].split()))
        for item in data["issues"]
    ]
    raw_usage = data.get("usage")
    usage = Usage(**{k: raw_usage[k] for k in USAGE_SCHEMA["properties"] if k in raw_usage}
                  ) if isinstance(raw_usage, dict) else None
    return Reported(scores={d: float(data["scores"][d]) for d in DIMENSIONS}, issues=issues,
                    summary=str(data.get("summary", "")).strip(), usage=usage)
