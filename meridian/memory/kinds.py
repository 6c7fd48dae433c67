"""The three kinds of memory by name, and the check of a write that needs no pydantic.

``meridian memory add`` and ``record_episode`` (every Claude Code SessionStart) run in a
fresh process each: importing pydantic and building the memory models costs more than
the write itself. This module names the kinds (``KINDS``, ``memory_kind``) without the
models, and ``validate`` checks episodic and semantic data with plain Python first:
``fast_data`` returns the data exactly as the model would (``model_dump(mode="json",
exclude_none=True)``: fields in the model's order, ``None`` left out, defaults filled)
only when every value is of the exact type and within the bounds the model states.
Anything else (a missing or unknown key, a wrong type, a bound missed, an int where a
float is declared, a ``str`` subclass, a correction) goes to the pydantic model in
``meridian.memory.schemas``, which refuses it with its one-line field-path message or
normalises it. So the fast path accepts a subset of what the model accepts, with the
same result; ``tests/memory/test_memory_fast.py`` holds the two side by side.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from meridian import records

EPISODIC_EVENTS = ("session_started", "session_ended", "gate_started", "gate_passed",
                   "gate_failed", "block", "note")
GATE_EVENTS = frozenset({"gate_started", "gate_passed", "gate_failed"})


@dataclass(frozen=True)
class MemoryKind:
    label: str  # the name users type and errors start with: "corrections"
    kind: str  # the record kind: "memory.correction"
    stream: str  # the ledger stream: "memory/corrections"
    model_name: str  # the pydantic model's name in meridian.memory.schemas

    @property
    def model(self) -> Any:
        """The pydantic model (importing ``meridian.memory.schemas``)."""
        from meridian.memory import schemas

        return getattr(schemas, self.model_name)

    @property
    def schema_file(self) -> str:
        return f"memory-{self.kind.split('.', 1)[1]}.schema.json"


KINDS: dict[str, MemoryKind] = {
    "semantic": MemoryKind("semantic", "memory.semantic", "memory/semantic", "SemanticMemory"),
    "episodic": MemoryKind("episodic", "memory.episodic", "memory/episodic", "EpisodicMemory"),
    "corrections": MemoryKind("corrections", "memory.correction", "memory/corrections",
                              "CorrectionMemory"),
}
_ALIASES = {"semantics": "semantic", "episodes": "episodic", "episode": "episodic",
            "correction": "corrections"}


class UnknownKind(ValueError):
    pass


def memory_kind(name: str) -> MemoryKind:
    """The kind for a user-typed name (singular or plural)."""
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in KINDS:
        raise UnknownKind(
            f"unknown memory kind {name!r}; expected one of: {', '.join(KINDS)}"
        )
    return KINDS[key]


def utc_timestamp(value: str | None) -> str | None:
    """The ``at`` rule of the models: a UTC ISO 8601 time ending in Z (ValueError else)."""
    if value is None:
        return value
    if not value.endswith("Z"):
        raise ValueError("must be a UTC timestamp ending in Z (2026-11-30T10:00:00Z)")
    try:
        records.parse_ts(value)
    except ValueError:
        raise ValueError("must be an ISO 8601 UTC timestamp (2026-11-30T10:00:00Z)") from None
    return value


# --- the fast path ---------------------------------------------------------------------


_str = records.plain_str  # a plain str pydantic takes as it is (no lone surrogate)


def _text(value: Any) -> bool:
    """A plain, non-empty str (what ``str`` with ``min_length=1`` in strict mode takes)."""
    return _str(value) and len(value) >= 1


def _optional_text(data: dict[str, Any], key: str) -> bool:
    value = data.get(key)
    return value is None or _text(value)


def _texts(value: Any) -> bool:
    return type(value) is list and all(_str(item) for item in value)


def _at(value: Any) -> bool:
    if value is None:
        return True
    if not _str(value):
        return False
    try:
        utc_timestamp(value)
    except ValueError:
        return False
    return True


_EPISODIC = ("session", "event", "gate", "outcome", "notes", "at")
_SEMANTIC = ("text", "context", "confidence", "source_gates", "source_projects", "tags",
             "session")


def _episodic(data: dict[str, Any]) -> dict[str, Any] | None:
    if not data.keys() <= set(_EPISODIC):
        return None
    event = data.get("event")
    if not _text(data.get("session")) or type(event) is not str \
            or event not in EPISODIC_EVENTS:
        return None
    if not all(_optional_text(data, key) for key in ("gate", "outcome", "notes")):
        return None
    if data.get("gate") is None and event in GATE_EVENTS:
        return None
    if not _at(data.get("at")):
        return None
    return {key: data[key] for key in _EPISODIC if data.get(key) is not None}


def _semantic(data: dict[str, Any]) -> dict[str, Any] | None:
    if not data.keys() <= set(_SEMANTIC):
        return None
    confidence = data.get("confidence")
    if not _text(data.get("text")) or not _optional_text(data, "context") \
            or not _optional_text(data, "session"):
        return None
    if type(confidence) is not float or not math.isfinite(confidence) \
            or not 0 <= confidence <= 1:
        return None
    out: dict[str, Any] = {"text": data["text"]}
    if data.get("context") is not None:
        out["context"] = data["context"]
    out["confidence"] = confidence
    for key in ("source_gates", "source_projects", "tags"):
        value = data.get(key, [])
        if not _texts(value):
            return None
        out[key] = list(value)
    if data.get("session") is not None:
        out["session"] = data["session"]
    return out


FAST: dict[str, Callable[[dict[str, Any]], dict[str, Any] | None]] = {
    "memory.episodic": _episodic,
    "memory.semantic": _semantic,
}


def fast_data(kind: str, data: Any) -> dict[str, Any] | None:
    """``data`` as the model of ``kind`` stores it, when plain checks prove it valid;
    None means "ask the model" (it may still be valid), never "invalid"."""
    check = FAST.get(kind)
    if check is None or type(data) is not dict:
        return None
    return check(data)


def validate(kind: MemoryKind, data: Any) -> dict[str, Any]:
    """Validated, normalised data exactly as the ledger stores it, or InvalidRecord
    (the model's one-line field-path message)."""
    clean = fast_data(kind.kind, data)
    if clean is not None:
        return clean
    from meridian.memory.schemas import validate as model_validate

    return model_validate(kind, data)
