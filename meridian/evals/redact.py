"""Kept importable for older callers: the redactor lives in :mod:`meridian.redact`.

There is one redactor for every route to the state branch (runs, verdicts, evidence,
events, memory, commit messages); this module re-exports it unchanged.
"""

from __future__ import annotations

from meridian.redact import (
    MARK,
    Redactions,
    SecretLeft,
    dump_clean,
    find_secrets,
    has_secret,
    redact,
    redact_bytes,
    redact_text,
    secret_key,
)

__all__ = ["MARK", "Redactions", "SecretLeft", "dump_clean", "find_secrets", "has_secret",
           "redact", "redact_bytes", "redact_text", "secret_key"]
