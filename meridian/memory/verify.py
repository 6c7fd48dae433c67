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


def check_line(spec: MemoryKind, raw: bytes) -> tuple[str | None, Record | None]:
    """The reason one stored line of ``spec``'s stream is bad (None and its record when sound).

    Checks the line on its own: JSON, record shape, kind, schema and content id. What
    needs the other lines (duplicates, ``amends`` targets) is checked by ``check_memory``.
    """
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
    return None, record


def _cross_line_problem(record: Record, earlier: dict[str, str],
                        corrections: dict[str, dict[str, Any]]) -> str | None:
    if record.id in earlier:
        return f"duplicate of {earlier[record.id]} (record {record.id} is stored twice)"
    amends = record.data.get("amends")
    if amends is not None:
        target = corrections.get(amends)
        if target is None:
            return f"corrections.amends: no earlier correction has id {amends}"
        if target.get("gate") != record.data.get("gate"):
            return (f"corrections.amends: {amends} is a correction of gate "
                    f"{target.get('gate')!r}, not {record.data.get('gate')!r}")
    return None


def _record_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "record"
    return f"{field}: {first['msg'][:1].lower()}{first['msg'][1:]}"


def check_memory(ledger: Ledger, kind: MemoryKind | None = None) -> list[str]:
    """Every bad stored memory line as ``<branch>:<path>:<line>: <reason>``; [] when intact.
    ``kind`` limits the check to one kind (default: all)."""
    problems: list[str] = []
    if not ledger.exists():
        return problems
    for spec in KINDS.values() if kind is None else [kind]:
        first_seen: dict[str, str] = {}
        corrections: dict[str, dict[str, Any]] = {}
        for path, number, raw in ledger.lines(spec.stream):
            reason, record = check_line(spec, raw)
            if record is not None:
                reason = _cross_line_problem(record, first_seen, corrections)
            if reason is not None or record is None:
                problems.append(f"{ledger.branch}:{path}:{number}: {reason}")
                continue
            first_seen[record.id] = f"{path}:{number}"
            if spec.label == "corrections":
                corrections[record.id] = record.data
    return problems
