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
from typing import TYPE_CHECKING, Any, TypeVar

from meridian import plainread
from meridian.errors import MeridianError

if TYPE_CHECKING:
    from pydantic import BaseModel

# pydantic is imported where a model is used, not here: a command that writes one
# memory or one event (``Record``, the fast checks of ``meridian.memory.kinds``) never
# needs it, and importing it and building models costs some 100 ms of start-up.
B = TypeVar("B", bound="type[BaseModel]")

# Kinds whose id hashes only the content (kind + data), so the same content written
# twice has the same id and is stored once. Everything else hashes ts and writer too.
CONTENT_ADDRESSED_PREFIXES = ("memory.",)

DATA_MODELS: dict[str, type[BaseModel]] = {}

# Kinds whose data a pydantic-free check can prove valid (returning exactly what the
# model stores, or None: "ask the model"); see ``meridian.memory.kinds``.
FAST_CHECKS_BY_PREFIX = {
    "memory.": "meridian.memory.kinds",
}

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


canonical_json = plainread.canonical_json  # one definition, shared with the plain readers


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


_ID = re.compile(r"[0-9a-f]{32}")
_KIND = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*")
_FIELDS = ("id", "ts", "kind", "writer", "data")


def plain_str(value: Any) -> bool:
    """A str pydantic takes as it is (exact type, no lone surrogate)."""
    if type(value) is not str:
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _plainly_valid(id: Any, ts: Any, kind: Any, writer: Any, data: Any) -> bool:
    """Whether the fields pass ``_RecordModel`` unchanged (checked without pydantic)."""
    if not (plain_str(id) and plain_str(ts) and plain_str(kind) and plain_str(writer)):
        return False
    if type(data) is not dict or not all(type(key) is str for key in data):
        return False
    if not _ID.fullmatch(id) or not _KIND.fullmatch(kind) or not TS_PATTERN.fullmatch(ts):
        return False
    try:
        parse_ts(ts)
    except ValueError:
        return False
    return True


class Record:
    """One stored line: ``id``, ``ts``, ``kind``, ``writer``, ``data`` (immutable).

    Built and checked without pydantic where the fields are plainly valid; anything
    else is validated by the pydantic model ``_RecordModel`` (the same rules and the
    same ``ValidationError`` as when this class was that model), so a bad field is
    refused exactly as before. ``model_construct`` and ``model_validate`` keep the
    pydantic names the readers use.
    """

    __slots__ = _FIELDS
    id: str
    ts: str
    kind: str
    writer: str
    data: dict[str, Any]

    def __init__(self, *, id: str, ts: str, kind: str, writer: str,
                 data: dict[str, Any]) -> None:
        if not _plainly_valid(id, ts, kind, writer, data):
            checked = _record_model()(id=id, ts=ts, kind=kind, writer=writer, data=data)
            id, ts, kind, writer, data = (checked.id, checked.ts, checked.kind,
                                          checked.writer, checked.data)
        else:
            data = dict(data)  # the model kept a copy, not the caller's dict
        _set(self, id, ts, kind, writer, data)

    @classmethod
    def model_construct(cls, **fields: Any) -> Record:
        """A record of already-trusted fields, unchecked (what readers of the branch use;
        ``meridian verify`` checks stored lines)."""
        record = object.__new__(cls)
        _set(record, *(fields.get(name) for name in _FIELDS))
        return record

    @classmethod
    def model_validate(cls, obj: Any) -> Record:
        """``obj`` (a mapping of the five fields) checked; pydantic's ValidationError
        when it is not a record."""
        if isinstance(obj, Record):
            return obj
        if type(obj) is dict and obj.keys() == set(_FIELDS) and _plainly_valid(
                obj["id"], obj["ts"], obj["kind"], obj["writer"], obj["data"]):
            return cls(**obj)
        checked = _record_model().model_validate(obj)
        return cls.model_construct(id=checked.id, ts=checked.ts, kind=checked.kind,
                                   writer=checked.writer, data=checked.data)

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"Record is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"Record is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _FIELDS)

    __hash__ = None  # type: ignore[assignment]  # data is a dict, as it was

    def __repr__(self) -> str:
        return "Record(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS) + ")"

    def __reduce__(self) -> Any:  # picklable (the harness sends results between processes)
        return _rebuild, tuple(getattr(self, name) for name in _FIELDS)

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FIELDS}

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Record:
        """A copy with ``update`` applied, unchecked (as pydantic's ``model_copy``)."""
        import copy

        fields = self.model_dump()
        if deep:
            fields = copy.deepcopy(fields)
        fields.update(update or {})
        return Record.model_construct(**fields)

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


def _set(record: Record, id: Any, ts: Any, kind: Any, writer: Any, data: Any) -> None:
    setter = object.__setattr__
    setter(record, "id", id)
    setter(record, "ts", ts)
    setter(record, "kind", kind)
    setter(record, "writer", writer)
    setter(record, "data", data)


def _rebuild(id: str, ts: str, kind: str, writer: str, data: dict[str, Any]) -> Record:
    return Record.model_construct(id=id, ts=ts, kind=kind, writer=writer, data=data)


_RECORD_MODEL: Any = None


def _record_model() -> Any:
    """The pydantic model of a record's fields, built on first need."""
    global _RECORD_MODEL
    if _RECORD_MODEL is None:
        from pydantic import BaseModel, ConfigDict, Field, field_validator

        class _RecordModel(BaseModel):
            model_config = ConfigDict(extra="forbid", frozen=True)

            id: str = Field(pattern=r"^[0-9a-f]{32}$")
            ts: str
            kind: str = Field(pattern=r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
            writer: str
            data: dict[str, Any]

            @field_validator("ts")
            @classmethod
            def _utc(cls, value: str) -> str:
                # One exact shape: shards, merge order and --since compare these as strings.
                if not TS_PATTERN.fullmatch(value):
                    raise ValueError("must be a UTC timestamp like 2026-11-30T12:00:00.000000Z")
                parse_ts(value)
                return value

        _RECORD_MODEL = _RecordModel
    return _RECORD_MODEL


class InvalidRecord(MeridianError):
    """A record failed validation; the message names the field path."""


def _message(error: Any) -> str:
    text = str(error["msg"]).removeprefix("Value error, ")
    return text[:1].lower() + text[1:]


def _fast_check(kind: str) -> Callable[[str, Any], dict[str, Any] | None] | None:
    for prefix, module in FAST_CHECKS_BY_PREFIX.items():
        if kind.startswith(prefix):
            return importlib.import_module(module).fast_data  # type: ignore[no-any-return]
    return None


def validate_data(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """Validate (and normalise) ``data`` with the model registered for ``kind``.

    A kind with a pydantic-free check (``FAST_CHECKS_BY_PREFIX``) is answered by it when
    it proves the data valid, with exactly what the model would return; otherwise (and
    for every other kind) the model decides, and its first error is the message.
    """
    fast = _fast_check(kind)
    if fast is not None:
        clean = fast(kind, data)
        if clean is not None:
            return clean
    model = model_for(kind)
    if model is None:
        return data
    from pydantic import ValidationError

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
    from pydantic import ValidationError

    try:
        record = Record.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "record"
        raise InvalidRecord(f"{field}: {_message(first)}") from None
    validate_data(record.kind, record.data)
    try:
        expected = record_id(record.kind, record.ts, record.writer, record.data)
    except UnicodeEncodeError:
        raise InvalidRecord("holds text that is not Unicode (an escaped lone surrogate, "
                            "\\ud800 to \\udfff), which no record id can hash") from None
    if expected != record.id:
        raise InvalidRecord(f"id {record.id} does not match its content (expected {expected})")
    return record
