"""The grader registry: a dict of name -> grader, filled by the ``@grader`` decorator.

Every grader is a pure function ``fn(task, trajectory, **kwargs) -> Score``. A run
records grader names and arguments, so a stored trajectory can be re-graded later.
Keyword arguments are checked against the function signature when a suite is loaded
(unknown argument, wrong type, missing required argument), not when the run is
half done.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from meridian.errors import MeridianError
from meridian.evals.types import Score, Task, Trajectory

GraderKind = Literal["final_answer", "trajectory"]


# ``fn(task, trajectory, **kwargs) -> Score``; the keyword arguments vary by grader.
GraderFn = Callable[..., Score]
F = TypeVar("F", bound=GraderFn)


class UnknownGrader(MeridianError):
    """A suite names a grader that is not registered."""


class GraderArgumentError(MeridianError):
    """A grader was given arguments its signature does not accept."""


@dataclass(frozen=True)
class GraderInfo:
    name: str
    fn: GraderFn
    description: str
    kind: GraderKind
    # Task fields the grader reads; "a|b" means either task field / argument a or b.
    requires: tuple[str, ...]
    # Needs the network (a model API): an --offline run cannot use it.
    network: bool
    # Arguments for programmatic callers only (an injected HTTP client), never YAML.
    internal_args: frozenset[str]
    args_model: type[BaseModel]

    def argument_names(self) -> list[str]:
        return sorted(field.alias or key for key, field in self.args_model.model_fields.items())


_REGISTRY: dict[str, GraderInfo] = {}
_FIELD_PREFIX = "arg_"


def grader(
    name: str,
    *,
    kind: GraderKind,
    requires: tuple[str, ...] = (),
    network: bool = False,
    internal_args: tuple[str, ...] = (),
) -> Callable[[F], F]:
    """Register ``fn`` under ``name``; its docstring's first line is its description."""

    def wrap(fn: F) -> F:
        if name in _REGISTRY and _REGISTRY[name].fn is not fn:
            raise ValueError(f"grader {name!r} is already registered")
        doc = inspect.getdoc(fn) or ""
        description = doc.splitlines()[0].strip() if doc else ""
        if not description:
            raise ValueError(f"grader {name!r} needs a docstring (its one-line description)")
        _REGISTRY[name] = GraderInfo(
            name=name,
            fn=fn,
            description=description,
            kind=kind,
            requires=requires,
            network=network,
            internal_args=frozenset(internal_args),
            args_model=_arguments_model(name, fn, frozenset(internal_args)),
        )
        return fn

    return wrap


def _arguments_model(name: str, fn: Callable[..., Any], internal: frozenset[str]) -> type[BaseModel]:
    """A pydantic model of the keyword arguments after ``(task, trajectory)``."""
    fields: dict[str, Any] = {}
    parameters = list(inspect.signature(fn).parameters.values())[2:]
    for parameter in parameters:
        if parameter.name in internal:
            continue
        if parameter.kind not in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            raise ValueError(f"grader {name!r}: argument {parameter.name!r} must be a keyword")
        annotation = _resolve(fn, parameter)
        default = ... if parameter.default is parameter.empty else parameter.default
        # Stored under a prefixed name with the real one as alias, so an argument
        # may be called anything (``schema`` would shadow a BaseModel attribute).
        fields[_FIELD_PREFIX + parameter.name] = (annotation, Field(default, alias=parameter.name))
    config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    model: type[BaseModel] = create_model(f"{name}_arguments", __config__=config, **fields)
    return model


def _resolve(fn: Callable[..., Any], parameter: inspect.Parameter) -> Any:
    """The parameter's annotation as a type.

    Resolved one parameter at a time (as ``inspect.signature(eval_str=True)`` does
    for all of them) so an internal argument may be annotated with a type that is
    imported only for type checking, such as ``httpx.Client``.
    """
    annotation = parameter.annotation
    if annotation is parameter.empty:
        return Any
    if isinstance(annotation, str):
        return eval(annotation, getattr(fn, "__globals__", {}))
    return annotation


def get(name: str) -> GraderInfo:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownGrader(f"unknown grader {name!r} (known: {', '.join(names())})") from None


def names() -> list[str]:
    return sorted(_REGISTRY)


def describe() -> list[tuple[str, str]]:
    """``(name, one-line description)`` for every registered grader, by name."""
    return [(name, _REGISTRY[name].description) for name in names()]


def check_arguments(name: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ``args`` for grader ``name``; the validated arguments, or one clear error."""
    info = get(name)
    try:
        validated = info.args_model.model_validate(dict(args))
    except ValidationError as exc:
        first = exc.errors()[0]
        argument = ".".join(str(part) for part in first["loc"]) or "arguments"
        if first["type"] == "extra_forbidden":
            accepted = ", ".join(info.argument_names()) or "none"
            raise GraderArgumentError(
                f"grader {name!r} has no argument {argument!r} (accepted: {accepted})"
            ) from None
        if first["type"] == "missing":
            raise GraderArgumentError(f"grader {name!r} requires argument {argument!r}") from None
        message = str(first["msg"]).removeprefix("Value error, ")
        message = message[0].lower() + message[1:]
        got = repr(first.get("input"))
        got = got if len(got) <= 60 else got[:57] + "..."
        raise GraderArgumentError(
            f"grader {name!r} argument {argument!r}: {message}, got {got}"
        ) from None
    return {key: getattr(validated, _FIELD_PREFIX + key) for key in args}


def missing_requirement(name: str, task: Task, args: Mapping[str, Any]) -> str | None:
    """The task field the grader needs but the task lacks (``None`` when all present)."""
    for requirement in get(name).requires:
        alternatives = requirement.split("|")
        if not any(_present(task, args, alternative) for alternative in alternatives):
            return " or ".join(alternatives)
    return None


def _present(task: Task, args: Mapping[str, Any], key: str) -> bool:
    value = args.get(key) if key in args else getattr(task, key, None)
    return value is not None and value != [] and value != ""


def run_grader(spec_name: str, args: Mapping[str, Any], task: Task, trajectory: Trajectory,
               *, offline: bool) -> Score:
    """Call one grader; whatever goes wrong inside it becomes an infra-error Score.

    A grader that raises has a bug or met input it cannot judge; either way that is
    not a verdict on the agent, so it must not count as a failing grade.
    """
    try:
        info = get(spec_name)
    except UnknownGrader as exc:
        return Score(name=spec_name, value=0.0, passed=False, detail=str(exc), infra_error=True)
    if offline and info.network:
        return Score(name=spec_name, value=0.0, passed=False, infra_error=True,
                     detail=f"skipped: {spec_name} needs the network and the run is offline")
    try:
        checked = check_arguments(spec_name, args)
    except GraderArgumentError as exc:
        return Score(name=spec_name, value=0.0, passed=False, detail=str(exc), infra_error=True)
    missing = missing_requirement(spec_name, task, checked)
    if missing:
        return Score(name=spec_name, value=0.0, passed=False, infra_error=True,
                     detail=f"task {task.id!r} has no {missing}, which {spec_name} needs")
    try:
        score = info.fn(task, trajectory, **checked)
    except Exception as exc:  # noqa: BLE001 - any grader bug is an infra error, see above
        message = str(exc).splitlines()[0] if str(exc) else ""
        return Score(name=spec_name, value=0.0, passed=False, infra_error=True,
                     detail=f"grader raised {type(exc).__name__}: {message}".rstrip(": "))
    if not isinstance(score, Score):
        return Score(name=spec_name, value=0.0, passed=False, infra_error=True,
                     detail=f"grader returned {type(score).__name__}, not a Score")
    return score
