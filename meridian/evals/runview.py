"""A run document read for ``compare``: checked as the models check it, without
building them.

``compare`` reads, per task, its id, its definition and each trial's status, scores,
error and cost. Building the full ``Run`` model of a 10k-task run costs several
times parsing its JSON (a million pydantic objects). This reader parses the JSON
once and checks every task entry against checks DERIVED from the pydantic models
(``TaskEntry``, ``Task``, ``GraderSpec``, ``TaskResult``, ``Score``, ``Usage``,
``Trajectory``, ``Step``: each field's type, bounds, default and the models' ban on
unknown keys), reading the answer straight from the parsed JSON. The rule:

- what the checks accept, the models accept: each check is at most as lenient as
  pydantic (``1`` is not taken for ``true``, ``1.0`` not for an int, no NaN or
  infinity, JSON values nested at most ``MAX_DEPTH`` deep; a document that may hold a
  lone surrogate, which pydantic's ``str`` refuses, is not read here at all);
- where a check is stricter than the model (a value pydantic coerces, a ``visible``
  list its validator normalises, a trajectory whose totals its validator fills in
  from the steps), the entry is validated by ``TaskEntry`` itself, and the answer is
  read from the model;
- where the model refuses, or the header (suite, agent, settings, summary: validated
  by the ``Run`` model) does, the whole document goes to ``runfile``'s full reader,
  so the error line is the full reader's own: file, field, what is expected (exit 2);
- the consistency rules of ``runfile.inconsistency`` (no task twice, trials of their
  own task, no ``pass`` over a failing score, a summary that agrees with the results)
  are applied with the same messages;
- a task's definition hash is the model's (``Task.definition_hash``), computed only
  where two definitions are not identical (their ``marshal`` form: same keys, values
  and types, so ``1``, ``1.0``, ``true`` and ``-0.0`` differ, as they do in the hash).

Any document goes through this reader (a run on the state branch, an exported file):
nothing here trusts who wrote it. ``tests/evals/test_runview_differential.py`` holds
it to the full reader over valid documents and thousands of forged ones;
``tests/adversarial/test_compare_view_forged.py`` to the gate's answer.

The derivation refuses (at import) a model it does not know how to check: a new
field type, constraint, alias or validator must be taught here first.
"""

from __future__ import annotations

import itertools
import json
import marshal
import math
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import annotated_types
from pydantic import BaseModel, JsonValue, ValidationError

from meridian.evals import run as runfile
from meridian.evals.types import (
    MAY_BE_VISIBLE,
    GraderSpec,
    Score,
    Step,
    Task,
    TaskResult,
    Trajectory,
    Usage,
)

# JSON containers nested deeper than this inside a JSON-valued field are left to
# pydantic (which refuses them past 255 levels).
MAX_DEPTH = 64
# Integers taken for a float field: exactly representable (pydantic converts them,
# and refuses one too large for a float).
_FLOAT_INT = 2**53


class NotAsWritten(Exception):
    """The document is not one this reader can answer for: read it in full."""


@dataclass(slots=True)
class Cost:
    cost_usd: float


@dataclass(slots=True)
class TrialView:
    task_id: str
    status: str
    error: str | None
    trajectory: Cost | None
    failing_pass: bool = False  # marked pass over no score or a failing one


@dataclass(slots=True)
class TaskRef:
    """A task's id and stored definition; its model and hash are made when first
    asked for (``model`` is given when the entry was validated by pydantic)."""

    id: str
    raw: dict[str, Any]
    model: Task | None = None
    _hash: str | None = None
    _form: bytes | None = None

    def definition_hash(self) -> str:
        """``Task.definition_hash`` of the stored definition."""
        if self._hash is None:
            if self.model is None:
                self.model = Task.model_validate(self.raw)  # checked already: valid
            self._hash = self.model.definition_hash()
        return self._hash

    def form(self) -> bytes:
        """The stored definition's exact form: ``marshal`` (version 2: no references,
        floats in binary) tells ``1``, ``1.0``, ``true`` and ``-0.0`` apart, as the
        hash does, where ``==`` does not."""
        if self._form is None:
            self._form = marshal.dumps(self.raw, 2)
        return self._form

    def same_definition(self, other: TaskRef) -> bool:
        """Whether the two definitions hash alike: identical stored definitions (same
        keys in the same order, same values of the same types) do without hashing."""
        return self.form() == other.form() or self.definition_hash() == other.definition_hash()


@dataclass(slots=True)
class EntryView:
    """What compare reads of one ``TaskEntry``."""

    task: TaskRef
    trials: list[TrialView]
    passes: int
    graded: list[TrialView] = field(default_factory=list)

    @property
    def task_id(self) -> str:
        return self.task.id


@dataclass
class RunView:
    """A ``Run``'s header (validated) and its results as compare reads them."""

    header: runfile.Run  # results empty
    results: list[EntryView]

    @property
    def run_id(self) -> str | None:
        return self.header.run_id

    @property
    def suite(self) -> runfile.SuiteInfo:
        return self.header.suite

    @property
    def agent(self) -> runfile.AgentInfo:
        return self.header.agent

    @property
    def settings(self) -> runfile.Settings:
        return self.header.settings

    @property
    def summary(self) -> runfile.Summary:
        return self.header.summary

    @property
    def interrupted(self) -> bool:
        return self.header.interrupted

    @property
    def timings(self) -> bool:
        return self.header.timings


def load(data: bytes, source: str) -> RunView | runfile.Run:
    """The run document ``data`` as compare reads it: a ``RunView`` when every part
    passes the checks, else the ``Run`` of the full reader (which refuses what is
    invalid with its one-line ``RunFileError`` naming ``source`` and the field)."""
    from meridian.evals import nogc

    with nogc.paused():
        raw = runfile.parse(data, source)
        try:
            return _view(raw, data, source)
        except NotAsWritten:
            return runfile.validate(raw, source)


def read(data: bytes, source: str) -> RunView:
    """The view of ``data``, or ``NotAsWritten`` when the full reader must answer."""
    from meridian.evals import nogc

    with nogc.paused():
        try:
            raw = runfile.parse(data, source)
        except runfile.RunFileError as exc:
            raise NotAsWritten(str(exc)) from None
        return _view(raw, data, source)


# A lone surrogate (pydantic's ``str`` refuses one, JSON values keep it) can only come
# from a ``\\uD800``-style escape or from bytes json.loads decodes with surrogatepass.
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_ENCODED_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")


def _may_hold_surrogate(data: bytes) -> bool:
    # one search for the byte first: the pattern searches cost several times more
    return ((b"\\" in data and _ESCAPED_SURROGATE.search(data) is not None)
            or (b"\xed" in data and _ENCODED_SURROGATE.search(data) is not None))


def _view(raw: Any, data: bytes, source: str) -> RunView:
    # Only UTF-8 text starting with the object (json.loads also reads UTF-16/32 and a
    # byte-order mark; the full reader takes those). A UTF-16-LE or UTF-32-LE document
    # starts with ``{`` too: its escapes and surrogates are not the bytes searched for
    # below, so the encoding is asked as json.loads asks it.
    if (not data[:1] == b"{" or json.detect_encoding(data) != "utf-8"
            or _may_hold_surrogate(data)):
        raise NotAsWritten("encoding")
    if not isinstance(raw, dict) or raw.get("version") != runfile.RUN_VERSION:
        raise NotAsWritten("not a current run document")
    results = raw.get("results")
    if type(results) is not list:
        raise NotAsWritten("results")
    try:
        header = runfile.Run.model_validate({**raw, "results": []})
    except ValidationError:
        raise NotAsWritten("header") from None
    entries = [_entry(item) for item in results]
    problem = _inconsistency(entries, header)
    if problem:
        raise runfile.RunFileError(f"{source}: {problem} (edited by hand?)")
    return RunView(header=header, results=entries)


# --- checks derived from the models ---------------------------------------------------
#
# For each model, the source of one function is written from its fields (type, bounds,
# required or not, the set of known keys) and compiled once: a check per value inline,
# no call per field, so checking an entry costs about what walking it costs.

Check = Callable[[Any], bool]
_MISSING = object()


def _json_value(value: Any, depth: int = 0) -> bool:
    """Whether pydantic's ``JsonValue`` (finite floats) takes ``value`` as it is."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return -math.inf < value < math.inf
    if depth >= MAX_DEPTH:
        return False
    if kind is list:
        for item in value:
            if not _json_value(item, depth + 1):
                return False
        return True
    if kind is dict:
        for item in value.values():
            if not _json_value(item, depth + 1):
                return False
        return True
    return False


def _json_object(value: Any) -> bool:
    """``dict[str, JsonValue]`` (JSON object keys are strings)."""
    if type(value) is not dict:
        return False
    for item in value.values():
        if not _json_value(item):
            return False
    return True


def _visible_as_written(value: Any) -> bool:
    """``Task.visible`` as its validator leaves it: names an agent may be shown, sorted,
    each once (the validator would change any other list, or refuse it)."""
    if type(value) is not list:
        return False
    for name in value:
        if type(name) is not str or name not in MAY_BE_VISIBLE:
            return False
    return all(first < second for first, second in itertools.pairwise(value))


class _Writer:
    """Python source of the check functions, and the names it refers to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {"_json_value": _json_value, "_json_object": _json_object,
                                      "_visible_as_written": _visible_as_written,
                                      "_MISSING": _MISSING, "_inf": math.inf,
                                      "_FLOAT_INT": _FLOAT_INT}
        self.done: dict[type[BaseModel], str] = {}
        self.counter = 0

    def constant(self, value: Any) -> str:
        self.counter += 1
        name = f"_c{self.counter}"
        self.names[name] = value
        return name


def _bounds(metadata: list[Any], owner: str) -> tuple[list[str], int]:
    """(comparisons on ``x``, min length) from a field's constraints."""
    tests, min_len = [], 0
    for item in metadata:
        if isinstance(item, annotated_types.MinLen):
            min_len = item.min_length
            continue
        for kind, attribute, operator in (
                (annotated_types.Ge, "ge", ">="), (annotated_types.Gt, "gt", ">"),
                (annotated_types.Le, "le", "<="), (annotated_types.Lt, "lt", "<")):
            if isinstance(item, kind):
                bound = getattr(item, attribute)
                if type(bound) not in (int, float) or not math.isfinite(bound):
                    raise TypeError(f"runview: {owner}: bound {item!r} is not checked here")
                tests.append(f"x {operator} {bound!r}")
                break
        else:
            raise TypeError(f"runview: {owner}: constraint {item!r} is not checked here")
    return tests, min_len


def _test(writer: _Writer, annotation: Any, metadata: list[Any], owner: str) -> str:
    """An expression true when ``x`` is a value of ``annotation`` the model takes as it is."""
    tests, min_len = _bounds(metadata, owner)
    bounded = "".join(f" and {test}" for test in tests)
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(members) != 1 or len(typing.get_args(annotation)) != 2:
            raise TypeError(f"runview: {owner}: union {annotation!r} is not checked here")
        return f"(x is None or {_test(writer, members[0], metadata, owner)})"
    if annotation is str:
        return f"(type(x) is str and len(x) >= {min_len})" if min_len else "type(x) is str"
    if min_len:
        raise TypeError(f"runview: {owner}: a length bound on {annotation!r} is not checked here")
    if annotation is bool and not tests:
        return "type(x) is bool"
    if annotation is int:
        return f"(type(x) is int{bounded})"
    if annotation is float:
        # finite (comparisons with NaN are false); an int only where a float holds it
        return (f"((type(x) is float and -_inf < x < _inf{bounded}) or "
                f"(type(x) is int and -_FLOAT_INT <= x <= _FLOAT_INT{bounded}))")
    if tests:
        raise TypeError(f"runview: {owner}: bounds on {annotation!r} are not checked here")
    if annotation is JsonValue:
        return "(type(x) is str or x is None or _json_value(x))"
    if origin is typing.Literal:
        allowed = frozenset(typing.get_args(annotation))
        if not all(type(item) is str for item in allowed):
            raise TypeError(f"runview: {owner}: literal {annotation!r} is not checked here")
        return f"(type(x) is str and x in {writer.constant(allowed)})"
    if origin is list:
        (item_type,) = typing.get_args(annotation)
        return f"(type(x) is list and {_each(writer, item_type, owner)}(x))"
    if origin is dict and typing.get_args(annotation) == (str, JsonValue):
        return "(type(x) is dict and (not x or _json_object(x)))"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"{_model_function(writer, annotation)}(x)"
    raise TypeError(f"runview: {owner}: type {annotation!r} is not checked here")


def _each(writer: _Writer, item_type: Any, owner: str) -> str:
    """The name of a function checking every item of a list."""
    test = _test(writer, item_type, [], owner)
    name = f"_each{writer.counter + 1}"
    writer.counter += 1
    writer.lines += [f"def {name}(items):", "    for x in items:",
                     f"        if not {test}:", "            return False", "    return True", ""]
    return name


# Validators the models run, and how the derived checks stay within what they accept.
# A validator not listed here makes the derivation refuse the model.
_KNOWN_VALIDATORS = {
    # Task.visible is normalised (sorted, always-visible names dropped) and checked
    # against the names an agent may be shown: only a list already in that form is
    # taken as it is (``_visible_as_written``).
    (Task, "_known_visible"),
    # Trajectory totals are filled in from the steps when absent: they must be present.
    (Trajectory, "_totals_from_steps"),
}


def _model_function(writer: _Writer, model: type[BaseModel]) -> str:
    """The name of the check function of ``model`` (written once)."""
    if model in writer.done:
        return writer.done[model]
    name = f"_check_{model.__name__}"
    writer.done[model] = name
    config = model.model_config
    if config.get("extra") != "forbid" or config.get("strict"):
        raise TypeError(f"runview: {model.__name__}: only models that forbid unknown keys "
                        "are checked here")
    decorators = model.__pydantic_decorators__
    for kind in ("validators", "root_validators", "field_validators", "model_validators"):
        for validator in getattr(decorators, kind):
            if (model, validator) not in _KNOWN_VALIDATORS:
                raise TypeError(f"runview: {model.__name__}: validator {validator} is not "
                                "known here")
    known = writer.constant(frozenset(model.model_fields))
    body = [f"    if type(v) is not dict or not v.keys() <= {known}:", "        return False"]
    for field_name, info in model.model_fields.items():
        owner = f"{model.__name__}.{field_name}"
        if info.alias not in (None, field_name) or info.validation_alias is not None:
            raise TypeError(f"runview: {owner}: aliases are not checked here")
        test = _test(writer, info.annotation, list(info.metadata), owner)
        if model is Task and field_name == "visible":
            test = "_visible_as_written(x)"
        required = info.is_required() or (
            model is Trajectory and field_name in ("cost_usd", "tokens_in", "tokens_out"))
        body.append(f"    x = v.get({field_name!r}, _MISSING)")
        if required:
            body += ["    if x is _MISSING:", "        return False"]
            body += [f"    if not {test}:", "        return False"]
        else:
            body += [f"    if x is not _MISSING and not {test}:", "        return False"]
    writer.lines += [f"def {name}(v):", *body, "    return True", ""]
    return name


def _compile(model: type[BaseModel]) -> tuple[Check, str]:
    """The check of ``model`` and its source."""
    writer = _Writer()
    name = _model_function(writer, model)
    source = "\n".join(writer.lines)
    scope = dict(writer.names)
    exec(compile(source, f"<runview checks of {model.__name__}>", "exec"), scope)  # noqa: S102
    check: Check = scope[name]
    return check, source


_check_entry, SOURCE = _compile(runfile.TaskEntry)
# The models this reader answers for (a test holds the derivation to each of them).
CHECKED = (runfile.TaskEntry, Task, GraderSpec, TaskResult, Score, Usage, Trajectory, Step)


# --- entries ----------------------------------------------------------------------------


def _entry(item: Any) -> EntryView:
    """One entry: read from the JSON when the checks take it, else from the model."""
    if _check_entry(item):
        return _entry_from_json(item)
    try:
        model = runfile.TaskEntry.model_validate(item)
    except ValidationError:
        raise NotAsWritten("entry") from None
    return _entry_from_model(item, model)


def _entry_from_json(item: dict[str, Any]) -> EntryView:
    task = item["task"]
    trials = []
    graded = []
    passes = 0
    for trial in item.get("trials", ()):
        status = trial["status"]
        failing_pass = False
        if status == "pass":
            passes += 1
            scores = trial.get("scores")
            if not scores:
                failing_pass = True
            else:
                for score in scores:
                    if not score["passed"] or score.get("infra_error", False):
                        failing_pass = True
                        break
        trajectory = trial.get("trajectory")
        # positional: the slotted classes' fields in order (keywords cost a third more)
        view = TrialView(trial["task_id"], status, trial.get("error"),
                         None if trajectory is None else Cost(float(trajectory["cost_usd"])),
                         failing_pass)
        trials.append(view)
        if status != "infra_error":
            graded.append(view)
    return EntryView(TaskRef(task["id"], task), trials, passes, graded)


def _entry_from_model(item: Any, entry: runfile.TaskEntry) -> EntryView:
    trials = []
    graded = []
    for trial in entry.trials:
        failing_pass = trial.status == "pass" and (not trial.scores or not all(
            score.passed and not score.infra_error for score in trial.scores))
        view = TrialView(task_id=trial.task_id, status=trial.status, error=trial.error,
                         trajectory=None if trial.trajectory is None
                         else Cost(trial.trajectory.cost_usd),
                         failing_pass=failing_pass)
        trials.append(view)
        if trial.status != "infra_error":
            graded.append(view)
    raw = item["task"]
    return EntryView(task=TaskRef(entry.task.id, raw, entry.task), trials=trials,
                     passes=entry.passes, graded=graded)


def _inconsistency(entries: list[EntryView], header: runfile.Run) -> str | None:
    """``runfile.inconsistency`` over the views (the same rules, the same messages)."""
    seen: set[str] = set()
    trials = passed = infra = 0
    for entry in entries:
        if entry.task_id in seen:
            return f"results: task {entry.task_id!r} appears twice"
        seen.add(entry.task_id)
        for trial in entry.trials:
            if trial.task_id != entry.task_id:
                return f"results: {entry.task_id}: holds a trial of task {trial.task_id!r}"
            if trial.failing_pass:
                return f"results: {entry.task_id}: a trial marked pass has a failing score"
        trials += len(entry.trials)
        passed += entry.passes
        infra += len(entry.trials) - len(entry.graded)
    graded = trials - infra
    expected = {"tasks": len(entries), "trials": trials, "passed": passed,
                "failed": graded - passed, "infra_errors": infra,
                "pass_rate": round(passed / graded, 6) if graded else None}
    summary = header.summary
    for name in runfile._COUNTED:
        if getattr(summary, name) != expected[name]:
            return (f"summary.{name}: {getattr(summary, name)!r} disagrees with the "
                    f"results ({expected[name]!r})")
    return None
