"""The three kinds of memory as pydantic models, and their published JSON Schema.

One set of models serves every purpose: ``memory add`` validates with them before
writing, ``records.validate_data`` (the ledger) and ``meridian verify`` re-validate
stored lines with them, and ``json_schema(kind)`` exports them as JSON Schema
(draft 2020-12) to ``.meridian-template/schemas/`` so users can check exported
memory with any tool. Cross-field rules that JSON Schema cannot express (the ratio
must equal actual/predicted) are stated in the schema's description and enforced here.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from meridian import records
from meridian.memory.kinds import (  # noqa: F401  (re-exported: the kinds by name)
    _ALIASES,
    GATE_EVENTS,
    KINDS,
    MemoryKind,
    UnknownKind,
    memory_kind,
    utc_timestamp,
)
from meridian.yamlio import dotted

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
# Ratios are stored rounded; a ratio given by a writer may be rounded to 2 decimals.
RATIO_DIGITS = 4  # significant digits: a gate done in seconds is not ratio 0
RATIO_TOLERANCE = 0.005


_utc_timestamp = utc_timestamp  # the one rule, shared with the fast path


class _Memory(BaseModel):
    # strict: what JSON Schema calls a number is a number (not true, not "8"), so the
    # models refuse exactly what the published schemas refuse. No inf/nan: stored lines
    # must stay JSON that jq and any other tool can read.
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


@records.register("memory.semantic")
class SemanticMemory(_Memory):
    """A pattern that holds across gates or projects.

    Its validation count is not stored (records are immutable): it is 1 plus the number
    of ``pattern.validated`` events naming this record's id.
    """

    text: str = Field(min_length=1, description="The pattern, as one sentence.")
    context: str | None = Field(
        default=None, min_length=1, description="Where the pattern applies (stack, gate type)."
    )
    confidence: float = Field(ge=0, le=1, description="How sure the writer is, 0 to 1.")
    source_gates: list[str] = Field(default_factory=list, description="Gates it was seen in.")
    source_projects: list[str] = Field(
        default_factory=list, description="Projects it was seen in."
    )
    tags: list[str] = Field(default_factory=list)
    session: str | None = Field(default=None, min_length=1)


EpisodicEvent = Literal[
    "session_started", "session_ended", "gate_started", "gate_passed", "gate_failed",
    "block", "note",
]


@records.register("memory.episodic")
class EpisodicMemory(_Memory):
    """What happened in one session.

    Identical episodes are one memory (the id hashes the content); give ``at`` to keep
    repeated events (a gate failing twice in a session) apart.
    """

    session: str = Field(min_length=1, description="The session id.")
    event: EpisodicEvent
    gate: str | None = Field(
        default=None, min_length=1, validate_default=True,
        description="Required for gate_started, gate_passed and gate_failed.",
    )
    outcome: str | None = Field(default=None, min_length=1)
    notes: str | None = Field(default=None, min_length=1)
    at: str | None = Field(default=None, description="When it happened (UTC, ending in Z).")

    @field_validator("at")
    @classmethod
    def _at_is_utc(cls, value: str | None) -> str | None:
        return _utc_timestamp(value)

    @field_validator("gate", mode="after")
    @classmethod
    def _gate_events_name_a_gate(cls, value: str | None, info: ValidationInfo) -> str | None:
        event = info.data.get("event")
        if value is None and event in GATE_EVENTS:
            raise ValueError(f"required for a {event} event")
        return value


@records.register("memory.correction")
class CorrectionMemory(_Memory):
    """Predicted versus actual hours for a gate: ratio = actual / predicted.

    A ratio below 1 means the gate took less time than predicted (8h predicted, 6h
    actual: 0.75). The ratio is computed when absent and must equal
    actual_hours / predicted_hours (within 0.005) when given. A record with ``amends``
    adds to an earlier correction of the same gate (root cause, next action, or hours
    that were unknown then); only such an amendment may omit ``actual_hours``.
    """

    gate: str = Field(min_length=1)
    amends: str | None = Field(
        default=None, pattern=r"^[0-9a-f]{32}$",
        description="Id of the earlier correction of this gate that this record adds to.",
    )
    predicted_hours: float | None = Field(default=None, gt=0)
    actual_hours: float | None = Field(default=None, gt=0, validate_default=True)
    ratio: float | None = Field(
        default=None, ge=0, validate_default=True,
        description="actual_hours / predicted_hours; computed when absent.",
    )
    root_cause: str | None = Field(default=None, min_length=1)
    next_action: str | None = Field(default=None, min_length=1)
    source: Literal["gate_pass", "user"] = Field(
        default="user", description="gate_pass: written automatically when the gate passed."
    )
    wall_hours: float | None = Field(
        default=None, gt=0, description="Wall-clock hours from the gate's start to its pass.")
    measured: str | None = Field(
        default=None, min_length=1, description="How actual_hours was measured.")
    session: str | None = Field(default=None, min_length=1)
    at: str | None = Field(default=None, description="When the gate passed (UTC, ending in Z).")

    @field_validator("at")
    @classmethod
    def _at_is_utc(cls, value: str | None) -> str | None:
        return _utc_timestamp(value)

    @field_validator("actual_hours", mode="after")
    @classmethod
    def _actual_unless_amending(cls, value: float | None, info: ValidationInfo) -> float | None:
        if value is None and info.data.get("amends") is None and "amends" in info.data:
            raise ValueError("required unless the record amends an earlier correction")
        return value

    @field_validator("ratio", mode="after")
    @classmethod
    def _ratio_is_actual_over_predicted(
        cls, value: float | None, info: ValidationInfo
    ) -> float | None:
        predicted = info.data.get("predicted_hours")
        actual = info.data.get("actual_hours")
        if predicted is None or actual is None:
            if value is not None and "predicted_hours" in info.data and "actual_hours" in info.data:
                raise ValueError("needs both predicted_hours and actual_hours")
            return value
        exact = actual / predicted
        if not math.isfinite(exact) or exact == 0:
            raise ValueError(f"actual_hours / predicted_hours = {actual:g} / {predicted:g} "
                             "is out of range")
        if value is not None and not math.isclose(value, exact, rel_tol=1e-3,
                                                  abs_tol=RATIO_TOLERANCE):
            raise ValueError(
                f"must equal actual_hours / predicted_hours = {actual:g} / {predicted:g} "
                f"= {exact:.4g}, got {value:g}"
            )
        return significant(exact)

    @model_validator(mode="after")
    def _amendment_adds_something(self) -> CorrectionMemory:
        if self.amends is not None and not any(
            v is not None for v in (self.root_cause, self.next_action,
                                    self.predicted_hours, self.actual_hours)
        ):
            raise ValueError("an amendment must add root_cause, next_action or hours")
        return self


def significant(value: float) -> float:
    return float(f"{value:.{RATIO_DIGITS}g}")


@records.register("pattern.validated")
class PatternValidated(_Memory):
    """Event data: a known semantic pattern was confirmed again."""

    id: str = Field(pattern=r"^[0-9a-f]{32}$")
    session: str | None = Field(default=None, min_length=1)


def _error_message(error: dict[str, Any]) -> str:
    kind = error.get("type", "")
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown key"
    comparisons = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<",
                   "less_than_equal": "<="}
    if kind in comparisons:
        bound = next(iter(ctx.values()), "")
        if isinstance(bound, float) and bound.is_integer():
            bound = int(bound)
        return f"must be {comparisons[kind]} {bound}"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected', '')}"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "string_pattern_mismatch":
        return f"must match {ctx.get('pattern', '')}"
    if kind in ("float_parsing", "float_type"):
        return "must be a number"
    if kind == "finite_number":
        return "must be a finite number"
    if kind == "string_type":
        return "must be a string"
    if kind == "list_type":
        return "must be a list"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return "must be a JSON object"
    message = str(error.get("msg", "invalid value"))
    message = message.removeprefix("Value error, ")
    return message[:1].lower() + message[1:]


def field_error(label: str, exc: ValidationError) -> str:
    """``corrections.actual_hours: must be > 0`` for the first error of ``exc``."""
    first = exc.errors()[0]
    path = dotted(tuple(first["loc"]))
    where = f"{label}.{path}" if path else label
    return f"{where}: {_error_message(dict(first))}"


def validate(kind: MemoryKind, data: Any) -> dict[str, Any]:
    """Validated, normalised data exactly as the ledger stores it, or InvalidRecord."""
    if not isinstance(data, dict):
        raise records.InvalidRecord(f"{kind.label}: must be a JSON object")
    try:
        model = kind.model.model_validate(data)
    except ValidationError as exc:
        raise records.InvalidRecord(field_error(kind.label, exc)) from None
    return model.model_dump(mode="json", exclude_none=True)


class _Line(BaseModel):
    """The shape of one stored line, used only to generate its JSON Schema."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[0-9a-f]{32}$",
                    description="sha256 (first 32 hex) of the canonical JSON of kind and data.")
    ts: str = Field(description="When it was written (UTC, ending in Z).")
    writer: str = Field(description="Git identity of the writer.")


def json_schema(kind: MemoryKind) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of one stored line of ``kind``, as exported."""
    data_schema = kind.model.model_json_schema()
    line = _Line.model_json_schema()
    defs = data_schema.pop("$defs", {})
    name = kind.model.__name__
    defs[name] = data_schema
    properties = dict(line["properties"])
    properties["kind"] = {"const": kind.kind, "title": "Kind", "type": "string"}
    properties["data"] = {"$ref": f"#/$defs/{name}"}
    ordered = {key: properties[key] for key in ("id", "ts", "kind", "writer", "data")}
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": f"Meridian {kind.label} memory record",
        "description": (
            f"One line of the {kind.stream}/<YYYY-MM>/<NNNN>.jsonl stream on the state "
            f"branch, as printed by `meridian memory export {kind.label}`. "
            + " ".join((kind.model.__doc__ or "").split())
        ),
        "type": "object",
        "additionalProperties": False,
        "required": list(ordered),
        "properties": ordered,
        "$defs": defs,
    }


def schema_documents() -> dict[str, str]:
    """file name -> text of each published schema (``.meridian-template/schemas/``)."""
    import json

    return {spec.schema_file: json.dumps(json_schema(spec), indent=2, ensure_ascii=False) + "\n"
            for spec in KINDS.values()}


if __name__ == "__main__":
    # Regenerate the published schemas: python -m meridian.memory.schemas DIRECTORY
    import sys
    from pathlib import Path

    target = Path(sys.argv[1] if len(sys.argv) > 1 else ".meridian-template/schemas")
    target.mkdir(parents=True, exist_ok=True)
    for name, text in schema_documents().items():
        (target / name).write_text(text, encoding="utf-8")
        print(target / name)
