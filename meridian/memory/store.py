"""Writing and reading memory on the state branch.

Every write is validated with the kind's model before anything is committed, so an
invalid record leaves the branch exactly as it was. Memory records are content
addressed (the id hashes kind and data only), and writes use ``Write(dedupe=True)``:
the same record added twice, even by two processes at once, is stored once.

Two kinds have extra write semantics:

- semantic: a pattern whose text and context match a stored one (ignoring case and
  spacing) is not stored again; a ``pattern.validated`` event naming the stored id is
  emitted instead, raising its validation count (1 + the number of such events).
- corrections: a record without ``actual_hours`` and without ``amends`` amends the
  latest correction of its gate (typically the one written when the gate passed), so
  ``memory add correction '{"gate": "api", "root_cause": "..."}'`` attaches a root cause
  to it. An explicit ``amends`` must name an earlier, non-amending correction of the
  same gate. Records are never edited: the amendment is a new record.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from meridian import records
from meridian.errors import MeridianError
from meridian.ledger import EVENTS, Ledger, Write
from meridian.memory.kinds import KINDS, MemoryKind, memory_kind, validate  # no pydantic
from meridian.records import InvalidRecord, Record

PATTERN_VALIDATED = "pattern.validated"


@dataclass(frozen=True)
class Added:
    """The outcome of one ``add``."""

    kind: MemoryKind
    record: Record  # the stored record (the earlier one when nothing new was stored)
    stored: bool  # False: an identical record, or the same pattern, was already stored
    validations: int | None = None  # semantic only: the pattern's validation count now

    def describe(self) -> str:
        short = self.record.id[:12]
        if self.kind.label == "semantic":
            if self.stored:
                return f"stored semantic {short} (validation count 1)"
            return (f"known pattern semantic {short}: validation count now {self.validations} "
                    "(not stored twice)")
        if not self.stored:
            return f"already stored: {self.kind.label} {short} (identical records are stored once)"
        amends = self.record.data.get("amends")
        suffix = f", amends {amends[:12]}" if amends else ""
        return f"stored {self.kind.label} {short}{suffix}"


def _resolve(kind: MemoryKind | str) -> MemoryKind:
    return kind if isinstance(kind, MemoryKind) else memory_kind(kind)


def _normal(text: str | None) -> str:
    return " ".join((text or "").casefold().split())


def _pattern_key(data: dict[str, Any]) -> tuple[str, str]:
    return _normal(data.get("text")), _normal(data.get("context"))


def stored_records(ledger: Ledger, kind: MemoryKind | str) -> Iterator[Record]:
    """Every stored record of ``kind``, oldest first, each line checked as it is read.

    ``ledger.records`` trusts the branch; memory is read by code that does arithmetic on
    it, so a line edited by hand stops the read with its file:line instead of an
    AttributeError or a wrong number.
    """
    from meridian.memory.verify import check_line

    spec = _resolve(kind)
    for path, number, raw in ledger.lines(spec.stream):
        reason, record = check_line(spec, raw)
        if record is None:
            raise MeridianError(f"{ledger.branch}:{path}:{number}: {reason} "
                                "(run `meridian memory verify`)")
        yield record


def iter_records(ledger: Ledger, kind: MemoryKind | str, *, gate: str | None = None,
                 since: datetime | None = None) -> Iterator[Record]:
    """Stored records of ``kind``, oldest first, optionally filtered by gate and time."""
    for record in stored_records(ledger, kind):
        if gate is not None and not _mentions_gate(record, gate):
            continue
        if since is not None and records.parse_ts(record.ts) < since:
            continue
        yield record


def _mentions_gate(record: Record, gate: str) -> bool:
    data = record.data
    return data.get("gate") == gate or gate in (data.get("source_gates") or [])


def export_lines(ledger: Ledger, kind: MemoryKind | str) -> Iterator[bytes]:
    """The stored JSONL lines of ``kind`` exactly as written, one shard at a time."""
    spec = _resolve(kind)
    for _path, _number, line in ledger.lines(spec.stream):
        yield line


def validation_counts(ledger: Ledger) -> Counter[str]:
    """semantic id -> validation count (1 + its ``pattern.validated`` events)."""
    counts: Counter[str] = Counter(record.id for record in stored_records(ledger, "semantic"))
    for event in ledger.records(EVENTS):
        if event.kind == PATTERN_VALIDATED and event.data.get("id") in counts:
            counts[event.data["id"]] += 1
    return counts


def find_pattern(ledger: Ledger, data: dict[str, Any]) -> Record | None:
    """The stored semantic record with the same text and context, if any."""
    key = _pattern_key(data)
    for record in stored_records(ledger, "semantic"):
        if _pattern_key(record.data) == key:
            return record
    return None


def _pattern_id(data: dict[str, Any]) -> str:
    text, context = _pattern_key(data)
    return hashlib.sha256(f"{text}\0{context}".encode()).hexdigest()[:32]


def _stored_pattern_id(record: Record) -> str | None:
    return _pattern_id(record.data) if isinstance(record.data, dict) else None


def _known_pattern(ledger: Ledger, data: dict[str, Any]) -> Record | None:
    """``find_pattern``, answered "no" from the index of stored patterns' keys
    (``meridian.idindex``) without reading the stream; a "yes" is read exactly."""
    from meridian import idindex

    spec = KINDS["semantic"]
    derive = idindex.Derive("pattern", _stored_pattern_id)
    patterns = idindex.load(ledger, spec.stream, ledger.tip(), derive)
    idindex.save(ledger, patterns)
    if _pattern_id(data) not in patterns:
        return None
    return find_pattern(ledger, data)


def _link_amendment(ledger: Ledger, data: dict[str, Any]) -> dict[str, Any]:
    """Fill in or check ``amends`` for a correction (see the module docstring)."""
    gate = data.get("gate")
    if not isinstance(gate, str):
        return data  # the model reports the missing gate
    amends = data.get("amends")
    if amends is None:
        if data.get("actual_hours") is None:
            originals = [r for r in stored_records(ledger, "corrections")
                         if r.data["gate"] == gate and "amends" not in r.data]
            if originals:
                return {**data, "amends": originals[-1].id}
        return data
    if not isinstance(amends, str):
        return data
    target = next((r for r in stored_records(ledger, "corrections") if r.id == amends), None)
    if target is None:
        raise InvalidRecord(f"corrections.amends: no stored correction has id {amends}")
    if target.data.get("gate") != gate:
        raise InvalidRecord(f"corrections.amends: {amends} is a correction of gate "
                            f"{target.data.get('gate')!r}, not {gate!r}")
    if "amends" in target.data:
        raise InvalidRecord(f"corrections.amends: {amends} is itself an amendment; "
                            f"amend the original {target.data['amends']}")
    return data


def _summary(spec: MemoryKind, data: dict[str, Any]) -> str:
    if spec.label == "semantic":
        return f"memory semantic: {data['text'][:60]}"
    if spec.label == "episodic":
        gate = f" {data['gate']}" if data.get("gate") else ""
        return f"memory episodic: {data['event']}{gate} ({data['session']})"
    detail = f"ratio {data['ratio']}" if "ratio" in data else (
        "amendment" if "amends" in data else f"{data.get('actual_hours')}h")
    return f"memory corrections: {data['gate']} {detail}"


def add(ledger: Ledger, kind: MemoryKind | str, data: Any, *,
        session: str | None = None) -> Added:
    """Validate ``data`` and append it as one record of ``kind`` (one commit).

    Raises InvalidRecord (exit 2) naming the field path; nothing is written then.
    ``session`` fills the record's ``session`` field when the data has none.
    """
    spec = _resolve(kind)
    if isinstance(data, dict) and session is not None and "session" not in data:
        data = {**data, "session": session}
    if spec.label == "corrections" and isinstance(data, dict):
        # Every route (the CLI, the automatic correction on pass, any caller): a
        # correction names a gate the project has, or it is refused with the gates.
        from meridian.memory.calibration import check_gate

        check_gate(ledger.workdir, data.get("gate"))
        data = _link_amendment(ledger, data)
    clean = validate(spec, data)

    if spec.label == "semantic":
        known = _known_pattern(ledger, clean)
        if known is not None:
            return _validate_pattern(ledger, spec, known, clean.get("session"))

    record = ledger.record(spec.kind, clean)
    trailers = {"Meridian-Memory": spec.label}
    if isinstance(clean.get("gate"), str):
        trailers["Meridian-Gate"] = clean["gate"]
    trailers["Meridian-Record"] = record.id
    result = ledger.commit(
        Write(summary=_summary(spec, clean), trailers=trailers, dedupe=True)
        .add(spec.stream, record)
    )
    if result.written:
        return Added(spec, record, stored=True, validations=1 if spec.label == "semantic" else None)
    if spec.label == "semantic":
        # Another writer stored the identical pattern between our check and our write.
        return _validate_pattern(ledger, spec, record, clean.get("session"))
    return Added(spec, record, stored=False)


def _validate_pattern(ledger: Ledger, spec: MemoryKind, known: Record,
                      session: str | None) -> Added:
    data: dict[str, Any] = {"id": known.id}
    if session:
        data["session"] = session
    ledger.emit(PATTERN_VALIDATED, data, summary=f"pattern validated {known.id[:12]}",
                trailers={"Meridian-Memory": "semantic"})
    return Added(spec, known, stored=False, validations=validation_counts(ledger)[known.id])


def record_episode(ledger: Ledger, session: str, event: str, *, gate: str | None = None,
                   outcome: str | None = None, notes: str | None = None,
                   at: str | None = None) -> Added:
    """Append one episodic memory (for gate and hook code that logs sessions)."""
    data: dict[str, Any] = {"session": session, "event": event}
    for key, value in (("gate", gate), ("outcome", outcome), ("notes", notes), ("at", at)):
        if value is not None:
            data[key] = value
    return add(ledger, KINDS["episodic"], data)
