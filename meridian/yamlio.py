"""YAML loading that remembers where every value came from.

Every YAML file a user writes (config, gates, rules, features, suites) is loaded
here, so a mistake is reported as ``file:line: field: what is expected`` instead of
a traceback. ``validate`` turns the first pydantic error into that one line.

Loading is bounded, because these files are in the work tree an agent writes and every
hook reads them: only a regular file (a FIFO, a device such as a ``/dev/zero`` symlink,
or a directory is refused before anything is read), at most ``MAX_BYTES``, nested at
most ``MAX_DEPTH`` deep, and building at most ``MAX_NODES`` values, aliases counted
each time they are expanded (a 370-byte "billion laughs" would otherwise grow to
gigabytes). Each limit is a one-line ConfigError naming the file.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from meridian import yamlparse
from meridian.userfiles import MAX_BYTES, NotARegularFile, present, read_bounded
from meridian.yamlparse import Loc, Located, display_path, dotted, load, parse

__all__ = [
    "MAX_BYTES",
    "Located",
    "NotARegularFile",
    "display_path",
    "dotted",
    "first_error",
    "load",
    "parse",
    "present",
    "pydantic_message",
    "read_bounded",
    "validate",
]

# The parsing is ``yamlparse``'s (no pydantic), shared with the plain readers
# (``gates/plain_definition.py``); this module adds the models' validation.
M = TypeVar("M", bound=BaseModel)
_c_loader = yamlparse._c_loader  # the one composer probe (tests clear its cache)


def pydantic_message(error: dict[str, Any]) -> str:
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required field is missing"
    msg = str(error.get("msg", "invalid value"))
    return msg[0].lower() + msg[1:] if msg else msg


def validate(
    model: type[M],
    located: Located,
    *,
    data: Any = None,
    base: Loc = (),
    context: dict[str, Any] | None = None,
) -> M:
    """Validate ``data`` (default: the whole file) and raise one located ConfigError."""
    payload = located.data if data is None else data
    try:
        return model.model_validate(payload, context=context)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = base + tuple(p for p in first["loc"] if not str(p).startswith("function-"))
        raise located.error(loc, pydantic_message(dict(first))) from None


def first_error(exc: ValidationError, prefix: str = "") -> str:
    """``field.path: message`` for the first error of a ValidationError."""
    first = exc.errors()[0]
    field = dotted(tuple(first["loc"]))
    name = ".".join(p for p in (prefix, field) if p)
    return f"{name}: {pydantic_message(dict(first))}" if name else pydantic_message(dict(first))

