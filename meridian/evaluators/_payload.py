"""The verdict an outside evaluator reports (Claude's tool call, a command's stdout).

One JSON Schema serves twice: it is the ``input_schema`` of the forced
``record_verdict`` tool, and it validates what a command prints. Anything that does
not validate makes the evaluator unavailable; it is never read as a pass. A label such
as ``"pass": true`` or ``"verdict": "pass"`` is allowed in the output and ignored.
"""

from __future__ import annotations

import copy
import math
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

MAX_SUMMARY_CHARS = 4000
MAX_ISSUES = 300
MAX_MESSAGE_CHARS = 2000
MAX_PATH_CHARS = 1000

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
            "maxItems": MAX_ISSUES,
            "description": "Every problem found, most severe first. high = the work must not "
                           "pass as is; medium = should be fixed; low = minor.",
            "items": {
                "type": "object",
                "properties": {
                    "severity": {"type": "string", "enum": ["high", "medium", "low"]},
                    "file": {"type": ["string", "null"], "maxLength": MAX_PATH_CHARS,
                             "description": "path as given in the bundle"},
                    "line": {"type": ["integer", "null"],
                             "description": "1-based line from the numbered listing"},
                    "message": {"type": "string", "minLength": 1,
                                "maxLength": MAX_MESSAGE_CHARS,
                                "description": "what is wrong and what would fix it"},
                },
                "required": ["severity", "message"],
            },
        },
        "summary": {"type": "string", "maxLength": MAX_SUMMARY_CHARS,
                    "description": "two or three sentences"},
    },
    "required": ["scores", "issues", "summary"],
}


def _strict(schema: Any) -> Any:
    """``schema`` as strict tool use takes it: every object closed with every property
    required (optional ones are nullable already), no numeric or length keywords (the
    bounds move into the description; Meridian checks them on the answer)."""
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    bounds: list[str] = []
    for key, value in schema.items():
        if key in ("minimum", "maximum", "minLength", "maxLength", "maxItems"):
            bounds.append(f"{key} {value}")
            continue
        out[key] = _strict(value) if key in ("properties", "items") else value
        if key == "properties":
            out[key] = {name: _strict(sub) for name, sub in value.items()}
    if out.get("type") == "object":
        out["additionalProperties"] = False
        out["required"] = list(out.get("properties", {}))
    if bounds:
        out["description"] = (out.get("description", "") + f" ({', '.join(bounds)})").strip()
    return out


# What the record_verdict tool declares to the API (strict tool use).
TOOL_INPUT_SCHEMA: dict[str, Any] = _strict(VERDICT_SCHEMA)

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


def _non_finite(data: object, path: str = "") -> str | None:
    """The path of the first NaN or infinite number in ``data`` (JSON allows neither,
    Python's parser reads both, and every bound compares False with NaN)."""
    if isinstance(data, float) and not math.isfinite(data):
        return path or "(top level)"
    if isinstance(data, dict):
        for key, value in data.items():
            found = _non_finite(value, f"{path}.{key}" if path else str(key))
            if found:
                return found
    if isinstance(data, list):
        for index, value in enumerate(data):
            found = _non_finite(value, f"{path}.{index}" if path else str(index))
            if found:
                return found
    return None


def parse_reported(data: object, evaluator: str, schema: dict[str, Any] = VERDICT_SCHEMA
                   ) -> Reported:
    """Validate ``data`` against ``schema``; EvaluatorUnavailable naming the first problem."""
    bad = _non_finite(data)
    if bad is not None:
        raise EvaluatorUnavailable(
            evaluator, f"its verdict does not match the verdict schema: {bad}: not a finite "
                       "number")
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


def combine(reports: list[Reported], notes: list[str], part: str
            ) -> tuple[dict[str, float], list[Issue], str]:
    """One verdict from the reports of the requests (or sessions) of one evaluation:
    each dimension's lowest score, every distinct issue once, the summaries each marked
    with its ``part`` ("request 2 of 3"), then ``notes`` in brackets."""
    scores = {d: min(r.scores[d] for r in reports) for d in DIMENSIONS}
    issues: list[Issue] = []
    known: set[tuple[str, str | None, int | None, str]] = set()
    for report in reports:
        for issue in report.issues:
            key = (issue.severity, issue.file, issue.line, issue.message)
            if key not in known:
                known.add(key)
                issues.append(issue)
    if len(reports) == 1:
        summary = reports[0].summary
    else:
        summary = " ".join(f"[{part} {n} of {len(reports)}] {r.summary}"
                           for n, r in enumerate(reports, 1) if r.summary)
        notes = [*notes, f"reviewed in {len(reports)} {part}s (scores: the lowest of them)"]
    summary = " ".join([summary[:2 * MAX_SUMMARY_CHARS], *(f"[{n}]" for n in notes)]).strip()
    return scores, issues, summary
