"""The one secret redactor: everything Meridian writes to the state branch goes through it.

Once a key reaches the state branch it is in git history for good (the branch is
append-only and sync pushes it), so secrets are removed *before* any blob is written.
The ledger applies this module at its write boundary (``meridian.ledger``): record
data, documents (verdicts, evidence, runs) and commit messages are all redacted there,
whichever command produced them. Exports and reports call it too.

What is recognised (``[REDACTED:<kind>]`` replaces it):

- provider tokens by shape: Anthropic, OpenAI, AWS access key ids, GitHub (classic and
  fine-grained ``github_pat_``), GitLab, Slack (tokens and webhook URLs), Google, Hugging
  Face, Stripe, npm, PyPI, SendGrid, Azure (storage ``AccountKey=``, ``SharedAccessKey=``,
  SAS ``sig=``, client secrets), JWTs, PEM private keys (to the end of the text when the
  END line is missing), bearer tokens, HTTP basic credentials;
- a bare AWS secret access key (40 characters of base64) next to an access key id;
- passwords in URLs (``scheme://user:password@host``);
- ``name = value`` assignments whose name ends in a secret word, prefixed or not
  (``password=``, ``DATABASE_PASSWORD=``, ``AWS_SECRET_ACCESS_KEY=``, ``STRIPE_SECRET:``,
  ``"dbPassword": "..."``), each item of a YAML list under such a name, HTTP headers
  (``X-Api-Key: v``): the name is kept, the value replaced;
- a flag and its value (``--password v``, ``--api-key v``), mysql-like clients'
  ``-pVALUE``, ``sshpass -p v``, ``.netrc`` (``machine h login u password v``) and
  ``.pgpass`` lines (``host:port:db:user:v``);
- any of the above base64-encoded inside a longer run.

Redaction of a JSON-like value is structural: every string (and every mapping key) is
cleaned, and the value of a key naming a secret is replaced whole, so the result keeps
its shape and still validates.

Speed: a combined prefilter (``_may_hold_plain_secret``: one scan of the text, one of
its lower case) decides whether a short string can hold a secret at all (almost all
text cannot), so the individual patterns run only where it finds something; results
are memoised per distinct string, so a run document's keys, statuses and grader
names, and a 10 MB output repeated across a run, are cleaned once.
"""

from __future__ import annotations

import binascii
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = ["MARK", "Redactions", "SecretLeft", "dump_clean", "find_secrets", "has_secret",
           "redact", "redact_bytes", "redact_text", "secret_key"]

MARK = "[REDACTED:{kind}]"
_MARK_PREFIX = "[REDACTED"

# Patterns start with their literal prefix and check the character before it with a
# look-behind placed after it: the regex engine then skips to the prefix at C speed,
# where a leading look-behind is tried at every position (20x slower on 10 MB).
# (kind, pattern, needles): a pattern runs only over text containing one of its
# needles (a plain substring test, far cheaper than a regex scan); needles in lower
# case are looked up in the lower-cased text. Most specific first: an Anthropic key
# also looks like a generic ``sk-`` key.
_FLAG_WORD = (r"(?:password|passwd|pass|pwd|passphrase|secret|client[-_]?secret|token|"
              r"api[-_]?key|apikey|access[-_]?key|secret[-_]?key|auth[-_]?token|"
              r"access[-_]?token|refresh[-_]?token)")
# A flag's value: quoted, or a word that is not a flag, a variable or a placeholder.
# The guard against a following flag (``-``) is for the unquoted word only: a quoted
# value is an argument whatever it starts with (``--password "-x"``). A double-quoted
# variable (``--password "$PW"``) is the shell's expansion, not a value.
_FLAG_VALUE = (r"(?!\[REDACTED)(?!\$)(?![<\[{])(?-i:(?![A-Z][A-Z_]*(?![^\s\"';,)\]])))"
               r"(?:\"(?!\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\")[^\"\n]+\"|'[^'\n]+'|(?!-)[^\s\"';,)\]]+)")
_GLUED_VALUE = r"(?!\[REDACTED)(?!\$)(?:'[^'\n]+'|\"[^\"\n]+\"|(?!-)[^\s\"';|&]+)"
_FLAG_NEEDLES = ("pass", "pwd", "secret", "token", "key")
_PATTERNS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("private-key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
        re.DOTALL,
    ), ()),
    ("anthropic-key", re.compile(r"sk-ant-(?<![A-Za-z0-9].{7})[A-Za-z0-9_\-]{16,}"), ()),
    ("openai-key", re.compile(r"sk-(?<![A-Za-z0-9].{3})(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
     ()),
    ("aws-access-key", re.compile(
        r"(?:AKIA|ASIA|AROA|AIDA|ANPA|AGPA)(?<![A-Z0-9].{4})[0-9A-Z]{16}(?![0-9A-Z])"),
     ()),
    ("github-token", re.compile(
        r"(?:gh[pousr]_(?<![A-Za-z0-9].{4})[A-Za-z0-9]{20,}"
        r"|github_pat_(?<![A-Za-z0-9].{11})[A-Za-z0-9_]{20,})"),
     ()),
    ("slack-webhook", re.compile(
        r"https://hooks\.slack(?:-gov)?\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{8,}"),
     ()),
    ("slack-token", re.compile(
        r"(?:xox[abposre]-(?<![A-Za-z0-9].{5})(?:[0-9]+-)?[A-Za-z0-9\-]{10,}"
        r"|xapp-(?<![A-Za-z0-9].{5})[0-9]-[A-Za-z0-9\-]{10,}"
        r"|xoxe\.xox[bp]-(?<![A-Za-z0-9].{10})[0-9]-[A-Za-z0-9\-]{10,})"), ()),
    ("gitlab-token", re.compile(r"gl(?<![A-Za-z0-9].{2})(?:pat|dt|rt|ptt|cbt|soat)-[A-Za-z0-9_\-]{20,}"),
     ()),
    ("google-api-key", re.compile(r"AIza(?<![A-Za-z0-9].{4})[0-9A-Za-z_\-]{35}"), ()),
    ("huggingface-token", re.compile(r"hf_(?<![A-Za-z0-9].{3})[A-Za-z0-9]{30,}"), ()),
    ("stripe-key", re.compile(
        r"(?:sk_(?<![A-Za-z0-9].{3})|rk_(?<![A-Za-z0-9].{3})|whsec_(?<![A-Za-z0-9].{6}))"
        r"(?:(?:live|test)_)?[A-Za-z0-9]{16,}"),
     ()),
    ("npm-token", re.compile(r"npm_(?<![A-Za-z0-9].{4})[A-Za-z0-9]{36}(?![A-Za-z0-9])"), ()),
    ("pypi-token", re.compile(r"pypi-(?<![A-Za-z0-9].{5})[A-Za-z0-9_\-]{50,}"), ()),
    ("sendgrid-key", re.compile(
        r"SG\.(?<![A-Za-z0-9].{3})[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}"), ()),
    # Azure AD client secrets: three characters, a digit, ``Q~``, then 31-34 more.
    ("azure-client-secret", re.compile(
        r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
     ("Q~",)),
    # Storage and Service Bus connection strings, SAS signatures: the name is kept.
    ("azure-key", re.compile(
        r"(?i)(?P<keep>(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|SharedAccessSignature|sig)=)"
        r"[A-Za-z0-9+/%]{20,}={0,2}"), ("accountkey=", "sharedaccess", "sig=")),
    ("jwt", re.compile(r"eyJ(?<![A-Za-z0-9_-].{3})[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
     ()),
    # The scheme name is kept (group "keep"): it says what kind of credential was there.
    ("bearer-token", re.compile(r"(?i)(?<![A-Za-z0-9])(?P<keep>bearer\s+)[A-Za-z0-9\-._~+/]{8,}=*"),
     ("bearer",)),
    # ``scheme://user:password@host``: the password may itself hold ``@`` (the last one
    # before the host ends it); the user may be empty (``redis://:pw@host``).
    ("url-credentials", re.compile(
        r"(?P<keep>://)[^\s/:@\"'<>\[\]]*:(?!//)[^\s/\"'<>]+(?=@[^\s@/\"'<>]+)"), ()),
    # Heuristic shapes (kind "secret-value", like ``name = value``): the name is kept.
    # ``--password VALUE``, ``--db-password VALUE``, ``--api-key VALUE``, ``--token VALUE``
    # (``--password=VALUE`` is an assignment). Not a following flag, a ``$VAR``, or a
    # placeholder (``--password PASSWORD``, ``<secret>``, ``[TOKEN]``, ``{token}``).
    ("secret-value", re.compile(
        r"(?i)(?P<keep>-(?<![\w-]-)-?(?:[a-z0-9]+[-_])*" + _FLAG_WORD + r"[ \t]+)" + _FLAG_VALUE),
     _FLAG_NEEDLES),
    # mysql-like clients take the password glued to ``-p`` (``mysql -u root -pS3cret``;
    # ``-p`` alone prompts), sshpass with or without a space.
    ("secret-value", re.compile(
        r"(?P<keep>(?:mysql(?<![\w.-]mysql)|mariadb(?<![\w.-]mariadb))[\w-]*(?![\w.])[^\n]*?(?<=\s)-p)" + _GLUED_VALUE),
     ("mysql", "mariadb")),
    ("secret-value", re.compile(
        r"(?P<keep>sshpass(?<![\w.-]sshpass)(?![\w.])[^\n]*?(?<=\s)-p[ \t]*)" + _GLUED_VALUE),
     ("sshpass",)),
    # .netrc: ``machine HOST login USER password VALUE`` (on one line or several).
    ("secret-value", re.compile(
        r"(?P<keep>(?:machine(?<![\w-]machine)[ \t]+\S+|default(?<![\w-]default)"
        r"|login(?<![\w-]login)[ \t]+\S+)"
        r"(?:\s+(?:login|account|port|protocol|machine)[ \t]+\S+)*\s+password[ \t]+)" + _FLAG_VALUE),
     ("machine", "login", "default")),
    # .pgpass: ``host:port:database:user:password``, one entry per line (the port a
    # number or ``*``, the database not a number: ``file.py:10:5:...`` is a linter's).
    ("secret-value", _PGPASS := re.compile(
        r"(?m)^(?P<keep>[ \t]*[^:\s#][^:\s]*:(?:[0-9]+|\*):(?![0-9]+:)[^:\s]+:[^:\s]+:)"
        r"(?!\[REDACTED)(?:\\.|[^\s\\])+[ \t]*$"), (":",)),
)

# An AWS secret access key has no prefix: 40 base64 characters. Alone it cannot be told
# from any other 40-character token, so it is recognised next to an access key id.
_AWS_ID = re.compile(r"(?:AKIA|ASIA)(?<![A-Z0-9].{4})[0-9A-Z]{16}(?![0-9A-Z])")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_WINDOW = 1000

# ``Basic <base64 of user:password>``: redacted when the value decodes to ``x:y`` text,
# so "basic arithmetic" in prose is left alone.
_BASIC_AUTH = re.compile(r"(?i)(?<![A-Za-z0-9])(basic\s+)([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])")
# Runs of (standard or URL-safe) base64 long enough to hide a key.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{20,}={0,2}")  # scanning left to right, a match starts a run

# ``password=hunter2``, ``DATABASE_PASSWORD: abc``, ``"secret": "x"`` inside free text:
# the name is kept (it explains what was there) and only the value is replaced.
_SECRET_WORD = (
    r"(?:password|passwd|passphrase|pwd|secret|client[_-]?secret|api[_-]?key|apikey|"
    r"access[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|"
    r"private[_-]?key|credentials?|token)"
)
_VALUE_START = r"(?!\[REDACTED)(?!\$\{?[A-Za-z_][A-Za-z0-9_]*\}?(?![^\s\"'&,;]))"
# An unquoted value is not a YAML list marker (``password: - x``: the head takes the
# marker, the item is the value); a quoted one is a value whatever it starts with
# (``password = "- hunter2"``, ``"--x"``).
_UNQUOTED_START = r"(?!-[ \t])" + _VALUE_START
# The match starts at the secret word: whatever precedes it (``DATABASE_``, ``db``)
# stays in the text, so prefixed names need no pattern of their own.
_ASSIGNMENT_SOURCE = (
    rf"(?P<head>{_SECRET_WORD}[\"']?\s*[:=]\s*(?:-[ \t]+)?)"
    rf"(?:(?P<dq>\"){_VALUE_START}[^\"\n]+(?=\")|(?P<sq>'){_VALUE_START}[^'\n]+(?=')"
    rf"|{_UNQUOTED_START}[^\s\"'&,;]+)"
)
_ASSIGNMENT_NEEDLES = ("pass", "pwd", "secret", "key", "token", "credential")
# Run over lower-cased text: a case-sensitive scan is ten times faster, and lower-casing
# keeps every offset when the text's length does not change. (The case-insensitive
# form, for text where it does, is compiled on first use: it costs 10 ms to compile.)
_ASSIGNMENT_LOWER = re.compile(_ASSIGNMENT_SOURCE.replace("REDACTED", "redacted"))


@lru_cache(maxsize=1)
def _assignment_any_case() -> re.Pattern[str]:
    return re.compile("(?i)" + _ASSIGNMENT_SOURCE)
# Mapping keys whose value is a secret whatever it looks like: the key, split into
# words (``X-Auth-Token`` -> ``x_auth_token``, ``SecretAccessKey`` ->
# ``secret_access_key``), ends in a secret word, or names a header that carries one.
_SECRET_KEY = re.compile(rf"(?:^|_)(?:{_SECRET_WORD}|authorization|cookie|set_cookie)$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_WORD = re.compile(r"[^A-Za-z0-9]+")

_BASIC_NEEDLES = ("basic",)
_IGNORECASE_KINDS = frozenset(kind for kind, pattern, _ in _PATTERNS
                              if pattern.flags & re.IGNORECASE)

# The combined prefilter: two scans (one over the text, one over its lower case) that
# find every place where any pattern above could match. A string they find nothing in
# holds no plain-text secret, and the individual patterns are not run over it (almost
# all text: ids, statuses, grader names, prose). Each alternative is a part of the text
# that every match of its pattern contains: its literal prefix, or the needle that
# already gates a case-insensitive pattern (``_PATTERNS``' needles, "basic", the head
# of an assignment), so the filter can only let more through, never less;
# ``tests/test_redact_prefilter.py`` checks that over the secret corpus and generated
# variants. Base64-encoded secrets are the separate step (``_may_encode_secret``).
# Keep it in step with _PATTERNS, _ASSIGNMENT_SOURCE, _BASIC_AUTH and _AWS_ID.
#
# Literals first in the case-sensitive scan: an alternation of literals is what the
# regex engine scans fastest (a class first costs twice as much). Long text goes
# straight to the patterns: each of them skips to its own prefix at C speed, where an
# alternation of 25 tries every branch at most positions (7 s over 10 MB).
_PREFILTER_EXACT = re.compile(
    # the same look-behinds as the patterns, placed after the literal (see above):
    # "task-1" holds "sk-" but no key starts there
    r"sk(?:-|_)(?<![A-Za-z0-9].{3})|rk_(?<![A-Za-z0-9].{3})|whsec_(?<![A-Za-z0-9].{6})"
    r"|(?:AKIA|ASIA|AROA|AIDA|ANPA|AGPA)(?<![A-Z0-9].{4})"
    r"|gh[pousr]_(?<![A-Za-z0-9].{4})|github_pat_(?<![A-Za-z0-9].{11})"
    r"|xox(?<![A-Za-z0-9].{3})|xapp-(?<![A-Za-z0-9].{5})|gl(?<![A-Za-z0-9].{2})(?:pat|dt|rt|ptt|cbt|soat)-"
    r"|AIza(?<![A-Za-z0-9].{4})|hf_(?<![A-Za-z0-9].{3})|npm_(?<![A-Za-z0-9].{4})"
    r"|pypi-(?<![A-Za-z0-9].{5})|SG\.(?<![A-Za-z0-9].{3})|eyJ(?<![A-Za-z0-9_-].{3})"
    r"|-----BEGIN |Q~|://"
)
# Over the lower-cased text, where the case-insensitive patterns look for their needles.
# An assignment's head: every _SECRET_WORD ends in one of these words.
_PREFILTER_LOWER = re.compile(
    r"accountkey=|sharedaccess|sig=|bearer|basic"
    r"|(?:password|passwd|passphrase|pwd|secret|key|token|credentials?)[\"']?\s*[:=]"
    # a flag and its value, a netrc password, mysql-like clients' glued -p
    r"|-(?:[a-z0-9]+[-_])*(?:pass|pwd|secret|token|key)[a-z]*[ \t]|password[ \t]"
    r"|mysql|mariadb|sshpass"
)
_PREFILTER_MAX = 4096  # longer text is not prefiltered (see above)


def _may_hold_plain_secret(text: str) -> bool:
    """False only when no pattern of ``_clean_plain`` can match ``text``."""
    if len(text) > _PREFILTER_MAX or _PREFILTER_EXACT.search(text) is not None:
        return True
    if ":" in text and _PGPASS.search(text) is not None:
        return True
    lowered = text.lower()
    if len(lowered) != len(text):
        # A character whose lower case is longer: the assignment pattern then runs
        # case-insensitively over the text itself (rare; not prefiltered).
        return True
    return _PREFILTER_LOWER.search(lowered) is not None


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
    clean, counts = _clean_cached(text)
    if found is not None:
        for kind, n in counts:
            found.add(kind, n)
    return clean


def has_secret(text: str) -> bool:
    """Whether ``text`` holds anything redaction would replace."""
    return bool(_clean_cached(text)[1])


_Cleaned = tuple[str, tuple[tuple[str, int], ...]]
# The memo: one entry per distinct string (a run document repeats the same keys, grader
# names and statuses tens of thousands of times, and a document is checked again after
# it is redacted). Bounded by entries and by the characters it keeps alive; emptied
# when either bound is passed. Strings longer than _MEMO_LONG go to a small LRU.
_MEMO: dict[str, _Cleaned] = {}
_MEMO_MAX_ENTRIES = 200_000
_MEMO_MAX_CHARS = 64 * 1024 * 1024
_MEMO_LONG = 4096
_memo_chars = 0
_NOTHING: tuple[tuple[str, int], ...] = ()


def _clean_cached(text: str) -> _Cleaned:
    global _memo_chars
    hit = _MEMO.get(text)
    if hit is not None:
        return hit
    if len(text) > _MEMO_LONG:
        return _clean_long(text)
    result = _clean_uncached(text)
    if len(_MEMO) >= _MEMO_MAX_ENTRIES or _memo_chars > _MEMO_MAX_CHARS:
        _MEMO.clear()
        _memo_chars = 0
    _MEMO[text] = result
    _memo_chars += len(text) + (0 if result[0] is text else len(result[0]))
    return result


@lru_cache(maxsize=64)
def _clean_long(text: str) -> _Cleaned:
    return _clean_uncached(text)


def _clean_uncached(text: str) -> _Cleaned:
    if (len(text) <= _PREFILTER_MAX and not _may_hold_plain_secret(text)
            and not _may_encode_secret(text)):
        return text, _NOTHING  # nothing in it can be a secret: the common case
    tally = Redactions()
    clean = _clean(text, tally)
    return clean, tuple(sorted(tally.counts.items()))


def _clean(text: str, tally: Redactions) -> str:
    return _clean_encoded(_clean_plain(text, tally), tally)


def _may_encode_secret(text: str) -> bool:
    """Whether some base64 run of ``text`` decodes to a secret (``_clean_encoded``'s test)."""
    return any(_encodes_secret(run) for run in set(_BASE64_RUN.findall(text)))


def _clean_plain(text: str, tally: Redactions) -> str:
    """Every secret written in plain text (not the base64 step)."""
    lowered: str | None = None
    for kind, pattern, needles in _PATTERNS:
        if needles:
            if kind in _IGNORECASE_KINDS:
                lowered = lowered if lowered is not None else text.lower()
                haystack = lowered
            else:
                haystack = text
            if not any(needle in haystack for needle in needles):
                continue
        if kind == "aws-access-key":  # the bare secret key is found by its id: first
            text = _redact_aws_secret_keys(text, tally)
        mark = MARK.format(kind=kind)
        # A literal replacement (no backslashes in a mark), after the kept name if any.
        replacement = r"\g<keep>" + mark if "keep" in pattern.groupindex else mark
        text, n = pattern.subn(replacement, text)
        if n:
            tally.add(kind, n)
            lowered = None
    lowered = lowered if lowered is not None else text.lower()
    if any(needle in lowered for needle in _ASSIGNMENT_NEEDLES):
        text, n = _redact_assignments(text, lowered)
        tally.add("secret-value", n)
        if n:
            lowered = text.lower()
    if "basic" in lowered:
        mark = MARK.format(kind="basic-auth")
        before = text.count(mark)
        text = _BASIC_AUTH.sub(_redact_basic_auth, text)
        tally.add("basic-auth", text.count(mark) - before)  # matches left alone do not count
    return text


def _clean_encoded(text: str, tally: Redactions) -> str:
    """Base64 runs whose decoding holds a secret, replaced whole."""
    runs = set(_BASE64_RUN.findall(text))
    if not runs:
        return text
    encoded = {run for run in runs if _encodes_secret(run)}
    if not encoded:
        return text
    mark = MARK.format(kind="base64-secret")

    def replace(match: re.Match[str]) -> str:
        if match.group(0) in encoded:
            tally.add("base64-secret")
            return mark
        return match.group(0)

    return _BASE64_RUN.sub(replace, text)


def _redact_assignments(text: str, lowered: str) -> tuple[str, int]:
    if len(lowered) == len(text):
        matches = _ASSIGNMENT_LOWER.finditer(lowered)
    else:  # a character whose lower case is longer: offsets moved, scan the text itself
        matches = _assignment_any_case().finditer(text)
    pieces: list[str] = []
    last = 0
    mark = MARK.format(kind="secret-value")
    for match in matches:
        if match.start() < last or not _is_assignment(text, match):
            continue
        quote = match.group("dq") or match.group("sq") or ""
        pieces.append(text[last:match.end("head")] + quote + mark)
        last = match.end()
        head = match.group("head")
        if "\n" in head and head.rstrip(" \t").endswith("-"):
            # a YAML list under the name (``password:\n  - a\n  - b``): every item at
            # the first one's indentation is a value
            indent = head[head.rindex("\n") + 1:head.rindex("-")]
            if last < len(text) and text[last] in "\"'":
                last += 1  # the first item's closing quote stays
                pieces[-1] += text[last - 1]
            while (item := _LIST_ITEM.match(text, last)) is not None and item.group(1) == indent:
                pieces.append(text[last:item.start(2)] + mark)
                last = item.end()
    if not pieces:
        return text, 0
    pieces.append(text[last:])
    return "".join(pieces), len(pieces) - 1


_LIST_ITEM = re.compile(r"\r?\n([ \t]*)-[ \t]+(?!\[REDACTED)(\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'&,;]+)")
# ``X-Api-Key:``, ``Private-Token:``: a header's name (words joined by hyphens).
_HEADER_NAME = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+")


def _is_assignment(text: str, match: re.Match[str]) -> bool:
    """Whether a ``word: value`` match assigns a secret, judged by the whole name.

    A name that is just the secret word, or any name followed by ``=``, assigns
    (``password: x``, ``DATABASE_PASSWORD=x``). A longer name followed by ``:`` assigns
    only when it is written as a key: in capitals (``STRIPE_SECRET: x``) or quoted
    (``"dbPassword": "x"``); ``test_wrong_password: not found`` is prose.
    """
    start = match.start()
    name_start = start
    while name_start > 0 and (text[name_start - 1].isalnum() or text[name_start - 1] in "_.-"):
        name_start -= 1
    if name_start == start or "=" in match.group("head"):
        return True
    name = text[name_start:match.end("head")].split(":")[0].rstrip("\"' \t")
    quoted = (name_start > 0 and text[name_start - 1] in "\"'") or \
        match.group("head").rstrip(": \t").endswith(("\"", "'"))
    if quoted or name.isupper():
        return True
    # An HTTP header (``X-Api-Key: v``): its words capitalised, or the line starting
    # with it (``x-api-key: v`` as HTTP/2 writes it, ``> X-Auth-Token: v`` from curl -v).
    if _HEADER_NAME.fullmatch(name):
        if all(part[:1].isupper() for part in name.split("-")):
            return True
        line_start = text.rfind("\n", 0, name_start) + 1
        return text[line_start:name_start].strip(" \t<>*") == ""
    return False


def _looks_like_aws_secret(token: str) -> bool:
    # Real keys mix cases and digits; a hex digest or a word does not.
    return (any(c.isupper() for c in token) and any(c.islower() for c in token)
            and any(c.isdigit() or c in "/+" for c in token))


def _redact_aws_secret_keys(text: str, tally: Redactions) -> str:
    """40-character secret keys within ``_AWS_WINDOW`` characters of an access key id."""
    windows: list[list[int]] = []
    for match in _AWS_ID.finditer(text):
        start = max(0, match.start() - _AWS_WINDOW)
        end = min(len(text), match.end() + _AWS_WINDOW)
        if windows and start <= windows[-1][1]:
            windows[-1][1] = end
        else:
            windows.append([start, end])
    if not windows:
        return text
    mark = MARK.format(kind="aws-secret-key")
    pieces: list[str] = []
    last = 0
    for start, end in windows:
        # Widen to token boundaries, so no key is cut in two by a window's edge.
        while start > 0 and _AWS_CHARS.fullmatch(text[start - 1]):
            start -= 1
        while end < len(text) and _AWS_CHARS.fullmatch(text[end]):
            end += 1
        for match in _AWS_SECRET.finditer(text, max(start, last), end):
            if _looks_like_aws_secret(match.group(0)):
                pieces.append(text[last:match.start()] + mark)
                last = match.end()
                tally.add("aws-secret-key")
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


_AWS_CHARS = re.compile(r"[A-Za-z0-9/+=]")


def _decode_base64(run: str) -> str | None:
    """``run`` decoded as base64 (standard or URL-safe) to mostly printable text, or None."""
    body = run.rstrip("=").encode("ascii", "ignore")
    if b"-" in body or b"_" in body:
        body = body.translate(_URL_SAFE)
    try:
        raw = binascii.a2b_base64(body + b"=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return None
    text = raw.decode("utf-8", errors="ignore")
    # Random identifiers and digests decode to binary noise: skip them cheaply.
    if len(text) < len(raw) * 0.9:
        return None
    return text


_URL_SAFE = bytes.maketrans(b"-_", b"+/")


def _redact_basic_auth(match: re.Match[str]) -> str:
    decoded = _decode_base64(match.group(2))
    if decoded is None or ":" not in decoded or not decoded.isprintable():
        return match.group(0)
    return match.group(1) + MARK.format(kind="basic-auth")


@lru_cache(maxsize=16384)
def _encodes_secret(run: str) -> bool:
    """Whether some alignment of the base64 ``run`` decodes to text holding a secret."""
    if ("-" in run or "_" in run) and ("+" in run or "/" in run):
        return False  # both alphabets at once (a path, an identifier): not base64
    if run.lower() == run or run.upper() == run:
        # Base64 of 20+ characters of text mixes cases; a hex digest or snake_case does not.
        return False

    for offset in range(4):  # the encoded text may start mid-run
        decoded = _decode_base64(run[offset:])
        if decoded and _has_plain_secret(decoded):
            return True
    return False


def _has_plain_secret(text: str) -> bool:
    if not _may_hold_plain_secret(text):
        return False
    tally = Redactions()
    _clean_plain(text, tally)
    return bool(tally.total)


@lru_cache(maxsize=4096)
def secret_key(key: str) -> bool:
    """Whether a mapping key names a secret (its value is replaced whole). Memoised: a
    run document repeats the same few keys tens of thousands of times."""
    words = _NON_WORD.sub("_", _CAMEL.sub("_", key)).strip("_").lower()
    return _SECRET_KEY.search(words) is not None


def redact(value: Any, found: Redactions | None = None) -> Any:
    """A copy of a JSON-like value with every string, and every secret-named key's value, redacted."""
    return _walk(value, found if found is not None else Redactions())


_SCALARS = frozenset({int, float, bool, type(None)})


def _text(text: str, tally: Redactions, leftovers: set[str] | None = None) -> str:
    hit = _MEMO.get(text)
    if hit is None:
        hit = _clean_cached(text)
    if hit[1]:
        for kind, n in hit[1]:
            tally.add(kind, n)
        if leftovers is not None:  # what the final scan would find in the cleaned text
            leftovers.update(find_secrets(hit[0], assignments=False))
    return hit[0]


def _walk(value: Any, tally: Redactions, leftovers: set[str] | None = None) -> Any:
    # Exact types first (a run document is ~1M values); subclasses take the general path.
    kind = type(value)
    if kind is str or isinstance(value, str):
        return _text(value, tally, leftovers)
    if kind is dict or (kind is not list and isinstance(value, Mapping)):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str):
                clean_key = _text(key, tally, leftovers)
                if (secret_key(key) and item not in (None, "", [], {})
                        and not (isinstance(item, str) and item.startswith(_MARK_PREFIX))
                        and not isinstance(item, bool)):
                    tally.add("secret-value")
                    item = MARK.format(kind="secret-value")
            else:
                clean_key = key
            item_kind = type(item)
            if item_kind is str:
                out[clean_key] = _text(item, tally, leftovers)
            elif item_kind in _SCALARS:
                out[clean_key] = item
            else:
                out[clean_key] = _walk(item, tally, leftovers)
        return out
    if kind is list or isinstance(value, list | tuple):
        return [_text(item, tally, leftovers) if type(item) is str
                else item if type(item) in _SCALARS else _walk(item, tally, leftovers)
                for item in value]
    return value


class SecretLeft(Exception):
    """A secret is still visible after redaction (``kinds``: what was found)."""

    def __init__(self, kinds: list[str]) -> None:
        super().__init__(", ".join(kinds))
        self.kinds = kinds


def dump_clean(value: Any, serialise: Callable[[Any], bytes], found: Redactions | None = None,
               *, redact_first: bool = True) -> bytes:
    """``value`` redacted (unless ``redact_first`` is False), checked and serialised.

    Raises ``SecretLeft`` when a string or key of the value written still holds a secret
    (the ``name: value`` heuristic left out: JSON's own ``"api_key": null`` would trip
    it). The check is fused into the redaction walk: a string redaction left unchanged
    is clean by definition, one it changed is scanned again. With ``redact_first``
    False the value is only checked (every string and key), never changed.

    The bytes returned are remembered by digest, so the ledger's write boundary
    (``redact_bytes``) writes exactly these bytes without parsing and redacting them a
    second time. Only this function vouches, for what ``serialise`` made of the value
    it has just redacted: bytes only checked (``redact_first`` False) are not vouched
    for, as the check leaves the ``name: value`` heuristic out (they may still hold
    ``DB_PASSWORD=...``; the write boundary redacts them).
    """
    leftovers: set[str] = set()
    tally = found if found is not None else Redactions()
    if redact_first:
        clean = _walk(value, tally, leftovers)
    else:
        clean = value
        _scan(value, leftovers)
    if leftovers:
        raise SecretLeft(sorted(leftovers))
    data = serialise(clean)
    if redact_first:  # only-checked bytes skipped the name=value heuristic: not vouched
        _vouch(data)
    return data


def _scan(value: Any, leftovers: set[str]) -> None:
    kind = type(value)
    if kind is str or isinstance(value, str):
        hit = _MEMO.get(value) or _clean_cached(value)
        if hit[1]:
            leftovers.update(find_secrets(value, assignments=False))
    elif kind is dict or isinstance(value, Mapping):
        for key, item in value.items():
            _scan(key, leftovers)
            if type(item) not in _SCALARS:
                _scan(item, leftovers)
    elif kind is list or isinstance(value, list | tuple):
        for item in value:
            if type(item) not in _SCALARS:
                _scan(item, leftovers)


_VOUCHED: dict[bytes, None] = {}  # digests of what dump_clean returned, oldest first
_VOUCHED_MAX = 64


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=32).digest()


def _vouch(data: bytes) -> None:
    _VOUCHED[_digest(data)] = None
    while len(_VOUCHED) > _VOUCHED_MAX:
        del _VOUCHED[next(iter(_VOUCHED))]


def redact_bytes(data: bytes, path: str = "", found: Redactions | None = None) -> bytes:
    """A document's bytes with secrets removed; unchanged bytes when it holds none.

    A ``.json`` document is redacted structurally (it stays valid JSON, indented as
    Meridian writes documents); other UTF-8 text as text; binary data is left alone.
    Bytes ``dump_clean`` returned in this process are written as they are (it redacted
    and checked them a moment ago).
    """
    if _VOUCHED and _digest(data) in _VOUCHED:
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    if path.endswith(".json"):
        try:
            document = json.loads(text)
        except ValueError:
            document = _NOT_JSON
        if document is not _NOT_JSON:
            tally = Redactions()
            clean = redact(document, tally)
            if not tally.total:
                return data
            if found is not None:
                for kind, n in tally.counts.items():
                    found.add(kind, n)
            return (json.dumps(clean, indent=2, sort_keys=True, ensure_ascii=False)
                    + "\n").encode()
    clean_text = redact_text(text, found)
    return data if clean_text == text else clean_text.encode()


_NOT_JSON = object()


def find_secrets(text: str, *, assignments: bool = True) -> list[str]:
    """Kinds of secret still present in ``text`` (empty when it is clean).

    ``assignments=False`` skips the ``name: value`` heuristic. That is for scanning a
    serialised document whose every string and key was already redacted: JSON's own
    ``"api_key": null`` would trip the heuristic without holding any secret.
    """
    counts = dict(_clean_cached(text)[1])
    if not assignments:
        counts.pop("secret-value", None)
    return sorted(counts)
