"""What the full path and its plain readers (no pygit2, no pydantic) share, defined once.

``meridian status`` re-checks a pass a status view shows without the repository library
or the models (``commands/status_passes.py``, ``gates/plain_definition.py``): it must
hash, parse and name things exactly as the full path does, so those few functions and
names live here and both sides import them (this module imports only the standard
library and ``viewfile``'s sha256).
"""

from __future__ import annotations

import json
from typing import Any

from meridian.viewfile import sha256

CONFIG_FILE = ".meridian/config.yaml"  # meridian.config.CONFIG_PATH is this path
SNAPSHOT_VERSION = 2  # the gate snapshot's layout (``gates.snapshot``)


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 as is: what records and definitions are hashed as."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def line_id(line: bytes) -> str | None:
    """The id of a stored line, as JSON reads it (the last ``id`` key wins). Lines the
    ledger wrote start with it and state it once: no parse. A line that could state it
    again (an ``"id"`` key, or a ``\\u`` escape that can spell one, after the first) is
    parsed, so a decoy first id never files a record under the wrong id."""
    if line[:7] == b'{"id":"' and line[39:41] == b'",' \
            and b'"id"' not in line[41:] and b"\\u" not in line[41:]:
        return line[7:39].decode()
    try:
        value = json.loads(line).get("id")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def snapshot_checksum(tip: str, last_ts: str | None, fields: list[str],
                      folds: dict[str, dict[str, Any]]) -> str:
    """The gate snapshot's ``checksum`` (of its folds)."""
    body = json.dumps({"version": SNAPSHOT_VERSION, "tip": tip, "last_ts": last_ts,
                       "fields": fields, "folds": folds},
                      sort_keys=True, separators=(",", ":"))
    return sha256(body.encode()).hexdigest()


def snapshot_aux_checksum(tip: str, aux: dict[str, Any]) -> str:
    """The gate snapshot's ``aux_checksum`` (of its floors, claims, ids, harness)."""
    body = json.dumps({"tip": tip, "aux": aux}, sort_keys=True, separators=(",", ":"))
    return sha256(body.encode()).hexdigest()
