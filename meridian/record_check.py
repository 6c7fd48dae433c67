"""A stored line proved valid without pydantic, for the kinds the hooks write.

``records.parse_line`` checks a line with the pydantic ``Record`` and the kind's data
model; importing and building those costs a git hook more than the whole commit may.
The hooks append ``gate.blocked`` events (and verify them on the next commit), so for
that kind ``valid`` checks here exactly what the models check: the five record fields
and no other, their types, the id and kind patterns, the UTC time (shape and calendar),
the event's fields (``gate`` a string or null, ``source`` one of the sources, ``reason``
a string, ``files`` a list of strings or null; others allowed, as the model allows
them) and the content id. It only ever *accepts*: a line it does not prove valid, of any
kind, is checked by the models, which also word the problem. ``tests/test_record_check.py``
feeds the same lines, valid and malformed, to both and compares the verdicts.
"""

from __future__ import annotations

import json
from typing import Any

from meridian.records import _FIELDS as RECORD_FIELDS
from meridian.records import _plainly_valid, record_id

FIELDS = frozenset(RECORD_FIELDS)
# meridian.gates.events.BlockSource, spelled out (that module imports pydantic); a test
# keeps the two equal
BLOCK_SOURCES = frozenset({"gate", "evaluator", "pre-commit", "pre-push", "claude"})


def _blocked(data: dict[str, Any]) -> bool:
    """``gates.events.BlockedEvent`` (extra fields allowed) accepts ``data``."""
    gate = data.get("gate")
    files = data.get("files")
    return ((gate is None or type(gate) is str)
            and type(data.get("source")) is str and data["source"] in BLOCK_SOURCES
            and type(data.get("reason")) is str
            and (files is None or (type(files) is list and all(type(f) is str for f in files))))


DATA_CHECKS = {"gate.blocked": _blocked}


def valid(line: bytes | str) -> bool:
    """True only when ``records.parse_line(line)`` would accept the line; False: ask it."""
    try:
        raw = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return False
    if type(raw) is not dict or raw.keys() != FIELDS:
        return False
    rid, ts, kind, writer, data = (raw[f] for f in RECORD_FIELDS)
    check = DATA_CHECKS.get(kind) if type(kind) is str else None
    # the record's own fields as the record model takes them unchanged (records.Record)
    if check is None or not _plainly_valid(rid, ts, kind, writer, data):
        return False
    try:
        return check(data) and record_id(kind, ts, writer, data) == rid
    except ValueError:  # text no id can hash (an escaped lone surrogate)
        return False
