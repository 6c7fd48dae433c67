"""Records: the JSONL lines stored on the state branch.

Every line is a ``Record``: ``id`` (content hash), ``ts`` (UTC), ``kind``, ``writer``
(git identity) and ``data``. Kinds with a registered data model are validated
against it on write and again by ``meridian verify``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from meridian.errors import MeridianError

B = TypeVar("B", bound=type[BaseModel])

# Kinds whose id hashes only the content (kind + data), so the same content written
# twice has the same id and is stored once. Everything else hashes ts and writer too.
CONTENT_ADDRESSED_PREFIXES = ("memory.",)

DATA_MODELS: dict[str, type[BaseModel]] = {}

# Where the data models of each family of kinds live. They are imported on first use,
# so a reader that meets only gate events never pays for the evaluation-run models.
MODEL_MODULES_BY_PREFIX = {
    "memory.": "meridian.memory.schemas",
    "pattern.": "meridian.memory.schemas",
    "gate.": "meridian.gates.events",
    "eval.": "meridian.evals.store",
    "baseline.": "meridian.evals.store",
    "features.": "meridian.features",
    "harness.": "meridian.harness",
}
_imported: set[str] = set()


def model_for(kind: str) -> type[BaseModel] | None:
    """The data model registered for ``kind``, importing its module the first time."""
    model = DATA_MODELS.get(kind)
    if model is not None:
        return model
    for prefix, module in MODEL_MODULES_BY_PREFIX.items():
        if kind.startswith(prefix) and module not in _imported:
            importlib.import_module(module)  # a failure propagates: never skip validation quietly
            _imported.add(module)
            return DATA_MODELS.get(kind)
    return None
# Kinds written with no data model (their data is free-form); listed so they can be named.
KINDS_WITHOUT_MODEL = ("meridian.init",)


def registered_kinds() -> list[str]:
    """Every kind with a data model, importing each model module (for listings and schemas)."""
    for module in dict.fromkeys(MODEL_MODULES_BY_PREFIX.values()):
        if module not in _imported:
            importlib.import_module(module)
            _imported.add(module)
    return sorted(DATA_MODELS)


TS_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")


def register(kind: str) -> Callable[[B], B]:
    """Class decorator: validate the ``data`` of records of ``kind`` with this model."""

    def wrap(model: B) -> B:
        DATA_MODELS[kind] = model
        return model

    return wrap


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def now_ts() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_ts(ts: str) -> datetime:
    return datetime.fromisoformat(ts)


def record_id(kind: str, ts: str, writer: str, data: dict[str, Any]) -> str:
    if kind.startswith(CONTENT_ADDRESSED_PREFIXES):
        material: dict[str, Any] = {"kind": kind, "data": data}
    else:
        material = {"kind": kind, "ts": ts, "writer": writer, "data": data}
    return hashlib.sha256(canonical_json(material).encode()).hexdigest()[:32]


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[0-9a-f]{32}$")
    ts: str
    kind: str = Field(pattern=r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
    writer: str
    data: dict[str, Any]

    @field_validator("ts")
    @classmethod
    def _utc(cls, value: str) -> str:
        # One exact shape: shards, merge order and --since all compare these as strings.
        if not TS_PATTERN.fullmatch(value):
            raise ValueError("must be a UTC timestamp like 2026-11-30T12:00:00.000000Z")
        parse_ts(value)
        return value

    def line(self) -> str:
        return json.dumps(
            {"id": self.id, "ts": self.ts, "kind": self.kind, "writer": self.writer,
             "data": self.data},
            separators=(",", ":"),
            ensure_ascii=False,
            sort_keys=False,
        )

    @property
    def month(self) -> str:
        return self.ts[:7]

    @property
    def gate(self) -> str | None:
        value = self.data.get("gate")
        return value if isinstance(value, str) else None


class InvalidRecord(MeridianError):
    """A record failed validation; the message names the field path."""


def _message(error: Any) -> str:
    text = str(error["msg"]).removeprefix("Value error, ")
    return text[:1].lower() + text[1:]


def validate_data(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """Validate (and normalise) ``data`` with the model registered for ``kind``."""
    model = model_for(kind)
    if model is None:
        return data
    try:
        return model.model_validate(data).model_dump(mode="json", exclude_none=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        label = kind.split(".")[-1]
        raise InvalidRecord(f"{label}.{field}: {_message(first)}") from None


def make(kind: str, data: dict[str, Any], *, writer: str, ts: str | None = None) -> Record:
    """A validated record, secrets redacted, with its content-hash id.

    Redaction comes first, so the id hashes what is stored and the model validates it.
    """
    from meridian.redact import redact  # on write only: compiling its patterns costs ms

    clean = validate_data(kind, redact(data))
    stamp = ts or now_ts()
    return Record(id=record_id(kind, stamp, writer, clean), ts=stamp, kind=kind,
                  writer=writer, data=clean)


def parse_line(line: str | bytes) -> Record:
    """Parse and fully check one stored line: shape, data model and id."""
    try:
        raw = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidRecord(f"not valid JSON ({exc.msg if hasattr(exc, 'msg') else exc})") from None
    try:
        record = Record.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "record"
        raise InvalidRecord(f"{field}: {_message(first)}") from None
    validate_data(record.kind, record.data)
    expected = record_id(record.kind, record.ts, record.writer, record.data)
    if expected != record.id:
        raise InvalidRecord(f"id {record.id} does not match its content (expected {expected})")
    return record
