"""Prove stored memory intact: every line re-checked against its schema.

A model (or a person) that edits the state branch by hand can leave memory that no
longer parses, no longer matches its schema, or no longer matches its content-hash id.
``check_memory`` finds every such line; ``gate submit`` refuses while it finds any,
so corrupt memory blocks instead of passing silently.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from meridian import records
from meridian.ledger import Ledger
from meridian.memory.schemas import KINDS, MemoryKind, validate
from meridian.records import InvalidRecord, Record


def _line_problem(spec: MemoryKind, raw: bytes, earlier: dict[str, str],
                  corrections: dict[str, dict[str, Any]]) -> tuple[str | None, Record | None]:
    """The reason a stored line is bad (None when it is sound), and its record."""
    try:
        parsed = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return f"not valid JSON ({getattr(exc, 'msg', exc)})", None
    try:
        record = Record.model_validate(parsed)
    except ValidationError as exc:
        return _record_error(exc), None
    if record.kind != spec.kind:
        return f"kind {record.kind!r} does not belong in {spec.stream} (expected {spec.kind!r})", None
    try:
        validate(spec, record.data)
    except InvalidRecord as exc:
        return str(exc), None
    expected = records.record_id(record.kind, record.ts, record.writer, record.data)
    if expected != record.id:
        return f"id {record.id} does not match its content (expected {expected})", None
    if record.id in earlier:
        return f"duplicate of {earlier[record.id]} (record {record.id} is stored twice)", None
    amends = record.data.get("amends")
    if amends is not None:
        target = corrections.get(amends)
        if target is None:
            return f"corrections.amends: no earlier correction has id {amends}", None
        if target.get("gate") != record.data.get("gate"):
            return (f"corrections.amends: {amends} is a correction of gate "
                    f"{target.get('gate')!r}, not {record.data.get('gate')!r}"), None
    return None, record


def _record_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "record"
    return f"{field}: {first['msg'][:1].lower()}{first['msg'][1:]}"


def check_memory(ledger: Ledger) -> list[str]:
    """Every bad stored memory line as ``<branch>:<path>:<line>: <reason>``; [] when intact."""
    problems: list[str] = []
    if not ledger.exists():
        return problems
    for spec in KINDS.values():
        first_seen: dict[str, str] = {}
        corrections: dict[str, dict[str, Any]] = {}
        for path, number, raw in ledger.lines(spec.stream):
            reason, record = _line_problem(spec, raw, first_seen, corrections)
            if reason is not None:
                problems.append(f"{ledger.branch}:{path}:{number}: {reason}")
                continue
            assert record is not None
            first_seen[record.id] = f"{path}:{number}"
            if spec.label == "corrections":
                corrections[record.id] = record.data
    return problems
