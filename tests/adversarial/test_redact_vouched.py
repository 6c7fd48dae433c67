"""The ledger's write boundary writes bytes ``redact.dump_clean`` returned without
redacting them again. Only bytes dump_clean *redacted* may be vouched for: a check-only
dump (``redact_first=False``, what ``store.checked_bytes`` makes for ``--save`` files)
leaves the ``name=value`` heuristic out, so its bytes may still hold a password."""

from __future__ import annotations

import json
from pathlib import Path

from meridian import redact
from meridian.ledger import Ledger, Write


def _serialise(value: object) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()


def test_checked_only_bytes_are_redacted_at_the_write_boundary(repo_with_commit: Path) -> None:
    document = {"output": "export DB_PASSWORD=hunter2hunter2", "api_key": None}
    data = redact.dump_clean(document, _serialise, redact_first=False)
    assert b"hunter2hunter2" in data  # only checked (the heuristic left out), not redacted
    ledger = Ledger.open(repo_with_commit)
    ledger.commit(Write(summary="a document", blobs={"runs/forged.json": data}))
    written = Ledger.open(repo_with_commit).read("runs/forged.json")
    assert written is not None
    assert b"hunter2hunter2" not in written
    assert b"DB_PASSWORD=[REDACTED:secret-value]" in written


def test_redacted_bytes_are_written_as_they_are(repo_with_commit: Path) -> None:
    document = {"output": "export DB_PASSWORD=hunter2hunter2", "n": 1}
    data = redact.dump_clean(document, _serialise)
    assert b"hunter2hunter2" not in data
    ledger = Ledger.open(repo_with_commit)
    ledger.commit(Write(summary="a document", blobs={"runs/clean.json": data}))
    assert Ledger.open(repo_with_commit).read("runs/clean.json") == data
