"""Secret redaction for everything an evaluation run commits or exports.

A trajectory holds whatever an agent saw and said: tool inputs, HTTP headers, error
messages. Once a key reaches the state branch it is in git history for good (the
branch is append-only), so runs are redacted *before* any blob is written, and the
serialised bytes are scanned once more as a last line of defence.

Redaction is structural: every string (and every mapping key) in the run is cleaned,
and a value stored under a key that names a secret (``password``, ``api_key``, ...)
is replaced whole. The result is still valid data of the same shape, so a redacted
run file still parses and still validates.

A key is also found when it is base64-encoded (an ``Authorization: Basic`` header, a
JSON blob an agent encoded): runs of base64 text are decoded and scanned, and a run
whose decoding holds a secret is replaced whole.
"""

from __future__ import annotations

import base64
import binascii
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
    ("gitlab-token", re.compile(r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_\-]{20,}")),
    ("google-api-key", re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{35}")),
    ("huggingface-token", re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}")),
    ("stripe-key", re.compile(r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("jwt", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    # The scheme name is kept (group "keep"): it says what kind of credential was there.
    ("bearer-token", re.compile(r"(?i)(?<![A-Za-z0-9])(?P<keep>bearer\s+)[A-Za-z0-9\-._~+/]{8,}=*")),
    ("url-credentials", re.compile(r"(?P<keep>://)[^\s/:@\"'<>\[\]]+:[^\s/@\"'<>]+(?=@)")),
)

# ``Basic <base64 of user:password>``: redacted when the value decodes to ``x:y`` text,
# so "basic arithmetic" in prose is left alone.
_BASIC_AUTH = re.compile(r"(?i)(?<![A-Za-z0-9])(basic\s+)([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])")
# Runs of (standard or URL-safe) base64 long enough to hide a key.
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{20,}={0,2}")

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
# Mapping keys whose value is a secret whatever it looks like: the name itself or a
# last segment of it (``X-Auth-Token``, ``github_token``, ``Set-Cookie``).
_SECRET_KEY = re.compile(rf"(?i)(?:^|[^A-Za-z0-9])(?:{_SECRET_NAME}|authorization|cookie)$")


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
        mark = MARK.format(kind=kind)
        # A literal replacement (no backslashes in a mark), after the kept scheme if any.
        replacement = r"\g<keep>" + mark if "keep" in pattern.groupindex else mark
        text, n = pattern.subn(replacement, text)
        tally.add(kind, n)
    text, n = _ASSIGNMENT.subn(lambda m: m.group(1) + MARK.format(kind="secret-value"), text)
    tally.add("secret-value", n)
    for kind, pattern, replace in (("basic-auth", _BASIC_AUTH, _redact_basic_auth),
                                   ("base64-secret", _BASE64_RUN, _redact_encoded_secret)):
        mark = MARK.format(kind=kind)
        before = text.count(mark)
        text = pattern.sub(replace, text)
        tally.add(kind, text.count(mark) - before)  # matches left as they were do not count
    return text


def _decode_base64(run: str) -> str | None:
    """``run`` decoded as base64 (standard or URL-safe) to text, or None."""
    body = run.rstrip("=")
    altchars = b"-_" if ("-" in body or "_" in body) else None
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.decode("utf-8", errors="ignore")


def _redact_basic_auth(match: re.Match[str]) -> str:
    decoded = _decode_base64(match.group(2))
    if decoded is None or ":" not in decoded or not decoded.isprintable():
        return match.group(0)
    return match.group(1) + MARK.format(kind="basic-auth")


def _redact_encoded_secret(match: re.Match[str]) -> str:
    """The base64 run whole, unless some alignment of it decodes to a secret."""
    run = match.group(0)
    for offset in range(4):  # the encoded text may start mid-run
        decoded = _decode_base64(run[offset:])
        if decoded and _has_plain_secret(decoded):
            return MARK.format(kind="base64-secret")
    return run


def _has_plain_secret(text: str) -> bool:
    return (any(pattern.search(text) for _, pattern in _PATTERNS)
            or _ASSIGNMENT.search(text) is not None)


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
            if (isinstance(key, str) and _SECRET_KEY.search(key)
                    and item not in (None, "", [], {}) and not already_clean):
                tally.add("secret-value")
                item = MARK.format(kind="secret-value")
            out[clean_key] = redact(item, tally)
        return out
    if isinstance(value, list | tuple):
        return [redact(item, tally) for item in value]
    return value


def find_secrets(text: str, *, assignments: bool = True) -> list[str]:
    """Kinds of secret still present in ``text`` (empty when it is clean).

    ``assignments=False`` skips the ``name: value`` heuristic. That is for scanning a
    serialised document whose every string and key was already redacted: JSON's own
    ``"api_key": null`` would trip the heuristic without holding any secret.
    """
    found = Redactions()
    redact_text(text, found)
    if not assignments:
        found.counts.pop("secret-value", None)
    return sorted(found.counts)
