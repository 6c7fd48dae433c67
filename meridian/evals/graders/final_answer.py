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


_PUNCTUATION = re.compile(r"[^\w\s.\-]")


@grader("exact_match", kind="final_answer", requires=("expected",))
def exact_match(task: Task, trajectory: Trajectory, *, case_sensitive: bool = False,
                strip_punctuation: bool = False) -> Score:
    """Whitespace-normalised string equality with the expected answer (a list: any of them)."""
    missing = _no_answer("exact_match", trajectory)
    if missing:
        return missing
    accepted = task.expected if isinstance(task.expected, list) else [task.expected]

    def fold(text: str) -> str:
        text = normalise_whitespace(text)
        if strip_punctuation:  # caliper's option: drop all but word characters, '.' and '-'
            text = _PUNCTUATION.sub("", text).strip()
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


def parse_number(value: JsonValue, pick: str = "first") -> tuple[float | None, str]:
    """The number an answer states, and how it was found (for the score detail).

    A bare number is taken as is. In prose ``pick`` decides: the ``first`` number (the
    default: "42 (that is 6 * 7)" is 42, an answer leads with its result) or the
    ``last`` ("so the total is 42"); the detail says which was read.
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
    chosen = found[-1] if pick == "last" else found[0]
    number = float(chosen.replace(",", ""))
    if not math.isfinite(number):  # "1e999": an expected inf would pass any answer
        return None, f"{chosen} is not finite"
    note = f" ({pick} of {len(found)} numbers)" if len(found) > 1 else ""
    return number, note


Tolerance = Annotated[float, Field(ge=0)]


@grader("numeric_tolerance", kind="final_answer", requires=("expected",))
def numeric_tolerance(
    task: Task, trajectory: Trajectory, *, rel: Tolerance | None = None,
    abs: Tolerance | None = None, pick: Literal["first", "last"] = "first",
) -> Score:
    """Numeric comparison with the expected number, within `rel` and/or `abs` tolerance
    (in prose the first number is read, `pick: last` for the last)."""
    missing = _no_answer("numeric_tolerance", trajectory)
    if missing:
        return missing
    expected, why_expected = parse_number(task.expected)
    if expected is None:
        return Score(name="numeric_tolerance", value=0.0, passed=False,
                     detail=f"expected value is not a number: {why_expected}")
    got, note = parse_number(trajectory.final_output, pick)
    if got is None:
        return Score(name="numeric_tolerance", value=0.0, passed=False, detail=note)
    rel_tol = rel if rel is not None else (0.0 if abs is not None else 1e-9)
    abs_tol = abs if abs is not None else 0.0
    allowed = max(rel_tol * math.fabs(expected), abs_tol)
    difference = math.fabs(got - expected)
    passed = difference <= allowed
    detail = f"read {got:g}{note}, expected {expected:g}, |diff| {difference:.3g} "
    detail += f"{'<=' if passed else '>'} tolerance {allowed:.3g}"
    return Score(name="numeric_tolerance", value=1.0 if passed else 0.0, passed=passed,
                 detail=detail, metadata={"read": got, "pick": pick, "expected": expected,
                                          "tolerance": allowed})


@grader("contains_all", kind="final_answer", requires=("required|terms|expected",))
def contains_all(
    task: Task,
    trajectory: Trajectory,
    *,
    required: list[str] | None = None,
    terms: list[str] | None = None,
    case_sensitive: bool = False,
    threshold: float = 1.0,
) -> Score:
    """Every required substring present (`required` or caliper's `terms`, else the
    expected list); partial credit."""
    if required is not None and terms is not None:
        return Score(name="contains_all", value=0.0, passed=False, infra_error=True,
                     detail="give `required` or `terms` (the same argument), not both")
    if terms is not None:
        required = terms
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
    metadata: dict[str, Any] = {"missing": absent[:50]}
    return Score(name="contains_all", value=value, passed=value >= threshold, detail=detail,
                 metadata=metadata)


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None
    return pattern


def _known_flags(flags: str) -> str:
    unknown = sorted(set(flags) - set("ims"))
    if unknown:
        raise ValueError(f"unknown regex flag(s) {''.join(unknown)!r} (known: i, m, s)")
    return flags


@grader("regex_match", kind="final_answer", requires=("pattern|expected",))
def regex_match(
    task: Task,
    trajectory: Trajectory,
    *,
    pattern: Annotated[str, AfterValidator(_compiles)] | None = None,
    mode: Literal["search", "fullmatch"] | None = None,
    fullmatch: bool | None = None,
    ignore_case: bool | None = None,
    case_sensitive: bool | None = None,
    flags: Annotated[str, AfterValidator(_known_flags)] | None = None,
) -> Score:
    """The final answer matches `pattern` (default: the expected string), searched
    anywhere or (`mode: fullmatch` / `fullmatch: true`) whole; case-insensitive unless
    `ignore_case: false`, `case_sensitive: true` or `flags` without `i`."""
    missing = _no_answer("regex_match", trajectory)
    if missing:
        return missing
    if mode is not None and fullmatch is not None and (mode == "fullmatch") != fullmatch:
        return Score(name="regex_match", value=0.0, passed=False, infra_error=True,
                     detail="`mode` and `fullmatch` disagree; give one of them")
    if ignore_case is not None and case_sensitive is not None and ignore_case == case_sensitive:
        return Score(name="regex_match", value=0.0, passed=False, infra_error=True,
                     detail="`ignore_case` and `case_sensitive` disagree; give one of them")
    mode = mode or ("fullmatch" if fullmatch else "search")
    if pattern is None:
        pattern = answer_text(task.expected)
        try:
            re.compile(pattern)
        except re.error as exc:
            return Score(name="regex_match", value=0.0, passed=False, infra_error=True,
                         detail=f"the expected value is the pattern and is not one: {exc}")
    letters = flags if flags is not None else "i"  # caliper's default: ignore case
    if ignore_case is not None:
        letters = letters.replace("i", "") + ("i" if ignore_case else "")
    if case_sensitive is not None:
        letters = letters.replace("i", "") + ("" if case_sensitive else "i")
    compiled_flags = 0
    for letter in letters:
        compiled_flags |= {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}[letter]
    text = answer_text(trajectory.final_output).strip()
    compiled = re.compile(pattern, compiled_flags)
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


@grader("json_schema_match", kind="final_answer", requires=("schema|expected",))
def json_schema_match(
    task: Task,
    trajectory: Trajectory,
    *,
    schema: Annotated[dict[str, Any], AfterValidator(_valid_schema)] | None = None,
) -> Score:
    """The answer parses as JSON (a ``` fence is stripped) and satisfies a JSON Schema
    (`schema`, else the expected value when it is an object)."""
    missing = _no_answer("json_schema_match", trajectory)
    if missing:
        return missing
    if schema is None:
        if not isinstance(task.expected, dict):
            return Score(name="json_schema_match", value=0.0, passed=False, infra_error=True,
                         detail="no schema: give `schema`, or an object as the expected value")
        try:
            schema = _valid_schema(task.expected)
        except ValueError as exc:
            return Score(name="json_schema_match", value=0.0, passed=False, infra_error=True,
                         detail=f"the expected value is the schema and is not one: {exc}")
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
