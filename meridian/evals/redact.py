"""Secret redaction for everything an evaluation run commits or exports.

A trajectory holds whatever an agent saw and said: tool inputs, HTTP headers, error
messages. Once a key reaches the state branch it is in git history for good (the
branch is append-only), so runs are redacted *before* any blob is written, and the
serialised bytes are scanned once more as a last line of defence.

Redaction is structural: every string (and every mapping key) in the run is cleaned,
and a value stored under a key that names a secret (``password``, ``api_key``, ...)
is replaced whole. The result is still valid data of the same shape, so a redacted
run file still parses and still validates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MARK = "[REDACTED:{kind}]"

# Most specific first: an Anthropic key also looks like a generic ``sk-`` key.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private-key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
        re.DOTALL,
    )),
    ("anthropic-key", re.compile(r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai-key", re.compile(r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("aws-access-key", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])")),
    ("github-token", re.compile(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("slack-token", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("bearer-token", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9\-._~+/]{8,}=*")),
)

# ``password=hunter2``, ``api_key: abc``, ``"secret": "x"`` inside free text: the name
# is kept (it explains what was there) and only the value is replaced.
_SECRET_NAME = (
    r"(?:password|passwd|passphrase|pwd|secret|client[_-]?secret|api[_-]?key|apikey|"
    r"access[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|"
    r"private[_-]?key|token)"
)
_ASSIGNMENT = re.compile(
    rf"(?i)(?<![A-Za-z0-9_])({_SECRET_NAME}[\"']?\s*[:=]\s*[\"']?)(?!\[REDACTED)([^\s\"'&,;]+)"
)
# Mapping keys whose value is a secret whatever it looks like.
_SECRET_KEY = re.compile(rf"(?i)^(?:{_SECRET_NAME}|authorization|x-api-key|cookie)$")


@dataclass
class Redactions:
    """What was removed: kind -> count (never the secrets themselves)."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, n: int = 1) -> None:
        if n:
            self.counts[kind] = self.counts.get(kind, 0) + n

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def describe(self) -> str:
        return ", ".join(f"{n} {kind}" for kind, n in sorted(self.counts.items()))


def redact_text(text: str, found: Redactions | None = None) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``."""
    tally = found if found is not None else Redactions()
    for kind, pattern in _PATTERNS:
        text, n = pattern.subn(MARK.format(kind=kind), text)
        tally.add(kind, n)
    text, n = _ASSIGNMENT.subn(lambda m: m.group(1) + MARK.format(kind="secret-value"), text)
    tally.add("secret-value", n)
    return text


def redact(value: Any, found: Redactions | None = None) -> Any:
    """A copy of a JSON-like value with every string, and every secret-named key's value, redacted."""
    tally = found if found is not None else Redactions()
    if isinstance(value, str):
        return redact_text(value, tally)
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            clean_key = redact_text(key, tally) if isinstance(key, str) else key
            already_clean = isinstance(item, str) and item.startswith("[REDACTED")
            if (isinstance(key, str) and _SECRET_KEY.match(key)
                    and item not in (None, "", [], {}) and not already_clean):
                tally.add("secret-value")
                item = MARK.format(kind="secret-value")
            out[clean_key] = redact(item, tally)
        return out
    if isinstance(value, list | tuple):
        return [redact(item, tally) for item in value]
    return value


def find_secrets(text: str) -> list[str]:
    """Kinds of secret still present in ``text`` (empty when it is clean)."""
    found = Redactions()
    redact_text(text, found)
    return sorted(found.counts)
