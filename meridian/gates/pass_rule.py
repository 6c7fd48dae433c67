"""Meridian's pass rule on a stored verdict document, in plain Python (no pydantic).

``gates.evidence._check_document`` decides whether a verdict document backs a
``gate.passed`` event: the raw gate, subject and spec hash ties, the document
validated by ``evaluators.models.Verdict`` (pydantic, lax mode, ``extra="forbid"`` at
every level), Meridian's rule applied again (``models.decide``: every dimension scored
0-10 or listed as not judged, the weighted overall >= threshold, no blocking high
issue, a complete coverage) and the event's overall and threshold equal to what the
rule gives. Importing the models costs ~190 ms of a fresh process, which is most of a
``meridian status`` with a passed gate (``commands/status_passes.py``).

``judge`` gives the same answer without them, or says it is not sure:

- ``ACCEPT``: the full rule accepts the document, for certain;
- ``REFUSE``: the full rule refuses it, for certain (only for documents of the plain
  shape below whose rule or ties fail);
- ``UNSURE``: anything else, e.g. a value pydantic would coerce (``"8.5"`` or ``true``
  for a score, ``1.0`` for a line number), a string with a lone surrogate, a non-finite
  number, an integer too large for a float, a key no model has: the caller derives
  with the full rule.

Only the exact JSON types each field takes are read as sure: ``str`` for strings,
``int``/``float`` (not ``bool``) for floats, ``int`` for integers, ``bool`` for
booleans, ``None`` where the field is optional. ``tests/gates/test_pass_rule.py`` feeds
this and the full rule the same generated set of valid, invalid and adversarial
documents and requires the same answer wherever this one is sure.
"""

from __future__ import annotations

import math
from typing import Any

ACCEPT, REFUSE, UNSURE = "accept", "refuse", "unsure"

# evaluators.models.DIMENSIONS / DEFAULT_WEIGHTS (a test holds them equal)
DIMENSIONS = ("completeness", "correctness", "robustness", "spec_adherence")
DEFAULT_WEIGHTS = {"completeness": 0.25, "correctness": 0.35, "robustness": 0.2,
                   "spec_adherence": 0.2}
SEVERITIES = ("high", "medium", "low")
OUTCOMES = ("killed", "survived", "timeout", "error", "not_tried")
_EXACT = 2 ** 53  # an int beyond this is not surely the float pydantic makes of it
_BIG = 2 ** 62


class _Unsure(Exception):
    """The document is not of the plain shape: only the full rule may answer."""


def _str(value: Any) -> str:
    if value.__class__ is not str:
        raise _Unsure
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: pydantic-core's own question
        raise _Unsure from None
    return value


def _opt_str(value: Any) -> str | None:
    return None if value is None else _str(value)


def _float(value: Any) -> float:
    if value.__class__ is int:
        if abs(value) > _EXACT:
            raise _Unsure
        return float(value)
    if value.__class__ is float and math.isfinite(value):
        return value
    raise _Unsure


def _opt_float(value: Any) -> float | None:
    return None if value is None else _float(value)


def _int(value: Any, minimum: int | None = None) -> int:
    if value.__class__ is not int or abs(value) > _BIG:
        raise _Unsure
    if minimum is not None and value < minimum:
        raise _Unsure
    return int(value)


def _opt_int(value: Any, minimum: int | None = None) -> int | None:
    return None if value is None else _int(value, minimum)


def _bool(value: Any) -> bool:
    if value.__class__ is not bool:
        raise _Unsure
    return bool(value)


def _list(value: Any) -> list[Any]:
    if value.__class__ is not list:
        raise _Unsure
    return list(value)


def _str_list(value: Any) -> list[str]:
    return [_str(item) for item in _list(value)]


def _object(value: Any, required: frozenset[str], optional: frozenset[str]) -> dict[str, Any]:
    """A JSON object with every required key and no key its model does not have."""
    if value.__class__ is not dict:
        raise _Unsure
    keys = set(value)
    if not required <= keys or not keys <= required | optional:
        raise _Unsure
    for key in keys:
        _str(key)
    return dict(value)


def _float_map(value: Any) -> dict[str, float]:
    if value.__class__ is not dict:
        raise _Unsure
    return {_str(key): _float(item) for key, item in value.items()}


_ISSUE = (frozenset({"severity", "message"}),
          frozenset({"file", "line", "check", "pre_existing"}))


def _issue(value: Any) -> tuple[str, bool]:
    """(severity, pre_existing) of a valid ``Issue``."""
    item = _object(value, *_ISSUE)
    severity = _str(item["severity"])
    if severity not in SEVERITIES:
        raise _Unsure
    _str(item["message"])
    _opt_str(item.get("file"))
    _opt_int(item.get("line"), 1)
    _opt_str(item.get("check"))
    return severity, _bool(item.get("pre_existing", False))


_USAGE: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset({"input_tokens", "output_tokens", "cache_creation_input_tokens",
                                  "cache_read_input_tokens", "attempts", "cost_usd"}))


def _usage(value: Any) -> None:
    item = _object(value, *_USAGE)
    for key in _USAGE[1] - {"cost_usd"}:
        if key in item:
            _int(item[key])
    _opt_float(item.get("cost_usd"))


_IDENTITY = (frozenset({"kind"}), frozenset({"endpoint", "requested_model", "models",
                                             "request_ids", "message_ids", "client",
                                             "session_id"}))


def _identity(value: Any) -> None:
    item = _object(value, *_IDENTITY)
    _str(item["kind"])
    for key in ("endpoint", "requested_model", "client", "session_id"):
        _opt_str(item.get(key))
    for key in ("models", "request_ids", "message_ids"):
        _str_list(item.get(key, []))


_COVERAGE = (frozenset({"bytes_seen", "bytes_total", "changed_lines_seen",
                        "changed_lines_total"}), frozenset({"requests", "unseen"}))


def _coverage_complete(value: Any) -> bool:
    item = _object(value, *_COVERAGE)
    seen, total = _int(item["bytes_seen"]), _int(item["bytes_total"])
    lines_seen, lines_total = _int(item["changed_lines_seen"]), _int(item["changed_lines_total"])
    _int(item.get("requests", 1))
    unseen = _str_list(item.get("unseen", []))
    return lines_seen >= lines_total and seen >= total and not unseen


_SUPPRESSED = (frozenset({"file", "line", "kind", "reason", "message"}),
               frozenset({"finding_line", "added"}))


def _suppressed(value: Any) -> None:
    item = _object(value, *_SUPPRESSED)
    for key in ("file", "kind", "reason", "message"):
        _str(item[key])
    _int(item["line"])
    _opt_int(item.get("finding_line"))
    _bool(item.get("added", False))


_MUTANT = (frozenset({"function", "file", "line", "outcome"}),
           frozenset({"duration_s", "detail"}))


def _mutant(value: Any) -> None:
    item = _object(value, *_MUTANT)
    _str(item["function"])
    _str(item["file"])
    _int(item["line"], 1)
    if _str(item["outcome"]) not in OUTCOMES:
        raise _Unsure
    _float(item.get("duration_s", 0.0))
    _str(item.get("detail", ""))


_MUTATION = (frozenset({"max_functions", "timeout_s"}),
             frozenset({"mutants", "duration_s", "workers", "note", "scoped", "control"}))


def _mutation(value: Any) -> None:
    item = _object(value, *_MUTATION)
    for mutant in _list(item.get("mutants", [])):
        _mutant(mutant)
    _int(item["max_functions"])
    _float(item["timeout_s"])
    _float(item.get("duration_s", 0.0))
    _int(item.get("workers", 1))
    _str(item.get("note", ""))
    _bool(item.get("scoped", True))
    if item.get("control") is not None:
        _mutant(item["control"])


_VERDICT = (frozenset({"gate", "evaluator", "subject", "scores", "overall", "threshold",
                       "passed"}),
            frozenset({"weights", "issues", "summary", "usage", "self_score", "identity",
                       "coverage", "spec_hash", "not_judged", "scope", "fallback",
                       "block_pre_existing", "suppressed", "excluded", "exclude_added",
                       "mutation"}))


def _decide(document: dict[str, Any]) -> tuple[bool, float, float] | None:
    """(passed, overall, threshold) as ``models.decide`` computes them on the validated
    document; None where ``decide`` raises (the full rule's "not a valid verdict")."""
    item = _object(document, *_VERDICT)
    for key in ("gate", "evaluator", "subject"):
        _str(item[key])
    scores = _float_map(item["scores"])
    weights = _float_map(item["weights"]) if "weights" in item else dict(DEFAULT_WEIGHTS)
    _float(item["overall"])
    threshold = _float(item["threshold"])
    _bool(item["passed"])
    issues = [_issue(issue) for issue in _list(item.get("issues", []))]
    _str(item.get("summary", ""))
    if "usage" in item:
        _usage(item["usage"])
    _opt_float(item.get("self_score"))
    if item.get("identity") is not None:
        _identity(item["identity"])
    complete = True if item.get("coverage") is None else _coverage_complete(item["coverage"])
    _opt_str(item.get("spec_hash"))
    not_judged = _str_list(item.get("not_judged", []))
    _opt_str(item.get("scope"))
    _opt_str(item.get("fallback"))
    block_pre_existing = _bool(item.get("block_pre_existing", False))
    for suppressed in _list(item.get("suppressed", [])):
        _suppressed(suppressed)
    _str_list(item.get("excluded", []))
    _str_list(item.get("exclude_added", []))
    if item.get("mutation") is not None:
        _mutation(item["mutation"])
    # models.decide, step by step
    unjudged = [d for d in DIMENSIONS if d in set(not_judged)]
    if any(d not in scores and d not in unjudged for d in DIMENSIONS):
        return None
    if len(unjudged) == len(DIMENSIONS):
        return None
    if any(not 0 <= value <= 10 for value in scores.values()):
        return None
    weights = dict(weights or DEFAULT_WEIGHTS)
    judged = {d: float(scores[d]) for d in DIMENSIONS if d not in unjudged}
    total = sum(weights.get(d, 0.0) for d in judged)
    if not math.isfinite(total):
        raise _Unsure
    if total <= 0:
        return None
    overall = round(sum(judged[d] * weights.get(d, 0.0) for d in judged) / total, 2)
    if not math.isfinite(overall):
        raise _Unsure
    blocked = any(severity == "high" and (block_pre_existing or not pre_existing)
                  for severity, pre_existing in issues)
    return overall >= threshold and not blocked and complete, overall, threshold


def judge(document: Any, data: Any) -> str:
    """``ACCEPT``, ``REFUSE`` or ``UNSURE``: whether ``evidence._check_document`` (with
    no graph) accepts the verdict ``document`` (parsed JSON) for an event whose data is
    ``data``."""
    if document.__class__ is not dict or data.__class__ is not dict:
        return UNSURE
    try:
        for key in ("gate", "subject", "spec_hash"):
            if document.get(key) != data.get(key):
                return REFUSE
        decided = _decide(document)
    except _Unsure:
        return UNSURE
    except (TypeError, ValueError, OverflowError):
        return UNSURE
    if decided is None:
        return REFUSE
    passed, overall, threshold = decided
    if not passed:
        return REFUSE
    try:
        if data.get("threshold") != threshold or data.get("overall") != overall:
            return REFUSE
    except (TypeError, ValueError):
        return UNSURE
    return ACCEPT
