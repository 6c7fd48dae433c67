"""Graders of the final answer: what the agent said, regardless of how it got there."""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any, Literal

import jsonschema
from pydantic import AfterValidator, Field, JsonValue

from meridian.evals.graders.registry import grader
from meridian.evals.types import Score, Task, Trajectory


def answer_text(value: JsonValue) -> str:
    """The final output as text: strings as they are, anything else as canonical JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def normalise_whitespace(text: str) -> str:
    return " ".join(text.split())


def _no_answer(name: str, trajectory: Trajectory) -> Score | None:
    if trajectory.final_output is None or answer_text(trajectory.final_output).strip() == "":
        why = f" ({trajectory.error})" if trajectory.error else ""
        return Score(name=name, value=0.0, passed=False, detail=f"no final output{why}")
    return None


def _shorten(text: str, limit: int = 80) -> str:
    text = normalise_whitespace(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@grader("exact_match", kind="final_answer", requires=("expected",))
def exact_match(task: Task, trajectory: Trajectory, *, case_sensitive: bool = False) -> Score:
    """Whitespace-normalised string equality with the expected answer (a list: any of them)."""
    missing = _no_answer("exact_match", trajectory)
    if missing:
        return missing
    accepted = task.expected if isinstance(task.expected, list) else [task.expected]

    def fold(text: str) -> str:
        text = normalise_whitespace(text)
        return text if case_sensitive else text.casefold()

    answer = fold(answer_text(trajectory.final_output))
    for candidate in accepted:
        if fold(answer_text(candidate)) == answer:
            return Score(name="exact_match", value=1.0, passed=True,
                         detail=f"matches {_shorten(answer_text(candidate))!r}")
    wanted = " or ".join(repr(_shorten(answer_text(c))) for c in accepted)
    return Score(name="exact_match", value=0.0, passed=False,
                 detail=f"got {_shorten(answer_text(trajectory.final_output))!r}, expected {wanted}")


# Thousands separators only in groups of three, so "1,2,3" is three numbers.
_NUMBER = re.compile(
    r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?"
)


def parse_number(value: JsonValue) -> tuple[float | None, str]:
    """The number an answer states, and how it was found (for the score detail).

    A bare number is taken as is; in prose the last number wins ("2 + 2 = 4" is 4),
    since agents tend to end with their answer.
    """
    if isinstance(value, bool):
        return None, "a boolean is not a number"
    if isinstance(value, list | dict):
        return None, f"a JSON {'list' if isinstance(value, list) else 'object'} is not a number"
    if isinstance(value, int | float):
        number = float(value)
        return (number, "") if math.isfinite(number) else (None, f"{value} is not finite")
    text = answer_text(value).replace("\u2212", "-").strip()
    try:
        number = float(text.replace(",", ""))
        if math.isfinite(number):
            return number, ""
    except ValueError:
        pass
    found = _NUMBER.findall(text)
    if not found:
        return None, f"no number in {_shorten(text)!r}"
    number = float(found[-1].replace(",", ""))
    note = f" (last of {len(found)} numbers)" if len(found) > 1 else ""
    return number, note


Tolerance = Annotated[float, Field(ge=0)]


@grader("numeric_tolerance", kind="final_answer", requires=("expected",))
def numeric_tolerance(
    task: Task, trajectory: Trajectory, *, rel: Tolerance | None = None,
    abs: Tolerance | None = None,
) -> Score:
    """Numeric comparison with the expected number, within `rel` and/or `abs` tolerance."""
    missing = _no_answer("numeric_tolerance", trajectory)
    if missing:
        return missing
    expected, why_expected = parse_number(task.expected)
    if expected is None:
        return Score(name="numeric_tolerance", value=0.0, passed=False,
                     detail=f"expected value is not a number: {why_expected}")
    got, note = parse_number(trajectory.final_output)
    if got is None:
        return Score(name="numeric_tolerance", value=0.0, passed=False, detail=note)
    rel_tol = rel if rel is not None else (0.0 if abs is not None else 1e-9)
    abs_tol = abs if abs is not None else 0.0
    allowed = max(rel_tol * math.fabs(expected), abs_tol)
    difference = math.fabs(got - expected)
    passed = difference <= allowed
    detail = f"got {got:g}{note}, expected {expected:g}, |diff| {difference:.3g} "
    detail += f"{'<=' if passed else '>'} tolerance {allowed:.3g}"
    return Score(name="numeric_tolerance", value=1.0 if passed else 0.0, passed=passed, detail=detail)


@grader("contains_all", kind="final_answer", requires=("required|expected",))
def contains_all(
    task: Task,
    trajectory: Trajectory,
    *,
    required: list[str] | None = None,
    case_sensitive: bool = False,
    threshold: float = 1.0,
) -> Score:
    """Every required substring present (`required`, else the expected list); partial credit."""
    if required is not None:
        needles = list(required)
    elif isinstance(task.expected, list):
        needles = [answer_text(item) for item in task.expected]
    else:
        needles = [answer_text(task.expected)] if task.expected is not None else []
    if not needles:
        return Score(name="contains_all", value=1.0, passed=True,
                     detail="nothing required (vacuous pass)")
    haystack = answer_text(trajectory.final_output)
    if not case_sensitive:
        haystack = haystack.casefold()
    absent = [n for n in needles if (n if case_sensitive else n.casefold()) not in haystack]
    value = (len(needles) - len(absent)) / len(needles)
    detail = f"{len(needles) - len(absent)}/{len(needles)} present"
    if absent:
        detail += "; missing " + ", ".join(repr(_shorten(n, 40)) for n in absent)
    return Score(name="contains_all", value=value, passed=value >= threshold, detail=detail)


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None
    return pattern


@grader("regex_match", kind="final_answer")
def regex_match(
    task: Task,
    trajectory: Trajectory,
    *,
    pattern: Annotated[str, AfterValidator(_compiles)],
    mode: Literal["search", "fullmatch"] = "search",
    ignore_case: bool = False,
) -> Score:
    """The final answer matches `pattern` (`mode`: search anywhere, or fullmatch)."""
    missing = _no_answer("regex_match", trajectory)
    if missing:
        return missing
    flags = re.IGNORECASE if ignore_case else 0
    text = answer_text(trajectory.final_output).strip()
    compiled = re.compile(pattern, flags)
    match = compiled.search(text) if mode == "search" else compiled.fullmatch(text)
    if match:
        return Score(name="regex_match", value=1.0, passed=True,
                     detail=f"{mode} /{pattern}/ matched {_shorten(match.group(0), 40)!r}")
    return Score(name="regex_match", value=0.0, passed=False,
                 detail=f"{mode} /{pattern}/ did not match {_shorten(text)!r}")


def _valid_schema(schema: dict[str, Any]) -> dict[str, Any]:
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"invalid JSON Schema: {exc.message}") from None
    return schema


# An info string ("json") is a word right after the fence that whitespace ends, so
# ```true``` and ```42``` keep their bodies. An unclosed fence (a reply cut off at
# max_tokens) runs to the end of the text.
_FENCE = re.compile(r"```(?:[A-Za-z][\w+.-]*(?=\s))?(.*?)(?:```|\Z)", re.DOTALL)


def strip_code_fence(text: str) -> str:
    """The body of the first ``` fenced block, or the text itself when there is none."""
    match = _FENCE.search(text)
    return match.group(1).strip() if match else text.strip()


@grader("json_schema_match", kind="final_answer")
def json_schema_match(
    task: Task,
    trajectory: Trajectory,
    *,
    schema: Annotated[dict[str, Any], AfterValidator(_valid_schema)],
) -> Score:
    """The answer parses as JSON (a ``` fence is stripped) and satisfies a JSON Schema."""
    missing = _no_answer("json_schema_match", trajectory)
    if missing:
        return missing
    output = trajectory.final_output
    if isinstance(output, str):
        try:
            document: Any = json.loads(strip_code_fence(output))
        except json.JSONDecodeError as exc:
            return Score(name="json_schema_match", value=0.0, passed=False,
                         detail=f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
    else:
        document = output
    validator_class = jsonschema.validators.validator_for(schema)
    error = jsonschema.exceptions.best_match(validator_class(schema).iter_errors(document))
    if error is None:
        return Score(name="json_schema_match", value=1.0, passed=True, detail="valid against the schema")
    where = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return Score(name="json_schema_match", value=0.0, passed=False,
                 detail=f"schema violation at {where}: {_shorten(error.message, 120)}")
