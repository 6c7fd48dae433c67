"""The redactor's prefilter never lets through what its full patterns catch.

``redact._may_hold_plain_secret`` (and the base64 step's ``_may_encode_secret``)
decide whether the individual patterns run over a string at all. The oracle here is
the full pipeline run without them (``redact._clean``): over every secret of the
project's corpora, the same secrets in generated contexts, spellings and encodings,
and random strings built from the patterns' own pieces, whenever the full pipeline
changes a string the prefilter must have let it through, and the memoised public
entry point must give exactly what the full pipeline gives.
"""

from __future__ import annotations

import base64
import json
import random

import pytest

from meridian import redact as redactor
from tests.evals.test_redact import SECRETS
from tests.test_redact import AWS_ID, AWS_SECRET, PEM, PLANTED

CORPUS = [text for text, _ in PLANTED] + [secret for _, secret in SECRETS] + [
    f"id {AWS_ID} secret {AWS_SECRET}",
    "Authorization: Bearer abcdefgh12345678",
    "Basic " + base64.b64encode(b"user:pass").decode(),
    "sk_test_" + "a1B2c3D4" * 3, "rk_live_" + "a1B2c3D4" * 3, "whsec_" + "a1B2c3D4" * 3,
    "xapp-1-A0123456789-abcdef", "xoxe.xoxp-1-abcdefghij0123",
    "glrt-" + "abcDEF0123" * 3, "gldt-" + "abcDEF0123" * 3,
    "AROA" + "A" * 16, "ASIA" + "B" * 16, "AIDA" + "C" * 16, "ANPA" + "D" * 16, "AGPA" + "E" * 16,
    "ghs_" + "a1" * 15, "ghu_" + "a1" * 15, "ghr_" + "a1" * 15,
    "SharedAccessSignature=" + "Ab1%" * 8, "sig=" + "AbCdEf0123" * 3,
    "secret: 'quoted value'", 'token = "double quoted"', "apikey:abc", "pwd=x1",
    "passphrase = long phrase", "credentials: abc", "client-secret=abc", "refresh_token=abc",
    "API_\u212aEY=kelvin-sign-value",  # lower-cases to "api_key=..."
    "\u0130 password=dotted-capital-i",  # a lower case longer than the character
    PEM, PEM.split("-----END")[0],
    "postgres://app:s3cr3t@db.internal:5432/app",
    "https://hooks.slack.com/workflows/T0000/B0000/abcdefgh",
]

# Pieces the generator joins: the patterns' prefixes and the characters around them.
PIECES = [
    "sk-", "sk-ant-", "sk_", "rk_", "whsec_", "AKIA", "ASIA", "AROA", "ghp_", "gho_", "github_pat_",
    "xoxb-", "xapp-", "xoxe.xoxb-", "glpat-", "AIza", "hf_", "npm_", "pypi-", "SG.", "8Q~", "eyJ",
    "://", "@", ":", "=", "==", " ", "\t", "\n", '"', "'", "-----BEGIN ", "PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----", "AccountKey=", "sig=", "Bearer ", "bearer\t", "Basic ",
    "password", "PASSWORD", "Passwd", "pwd", "secret", "SECRET_", "api_key", "apiKey", "token",
    "Token", "credential", "credentials", "\u212a", "\u0130", "\u017f", "\u00e9", "_", ".", "/",
    "+", "%", "~", "$", "${", "}", "[REDACTED", "abcdefghij", "ABCDEFGHIJ", "0123456789",
    "a1B2c3D4e5F6g7H8", "hunter2", "postgres", "https", "question 12", "task-00042", "pass",
    "--", "-p", "mysql ", "sshpass ", "machine ", "login ", "default ", ":5432:", ":*:", "- ",
    "X-Api-Key", "x-auth-token",
]
BASE64_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def full(text: str) -> str:
    """The full pipeline, no prefilter, no memo."""
    return redactor._clean(text, redactor.Redactions())


def assert_prefilter_holds(text: str) -> None:
    plain_changed = redactor._clean_plain(text, redactor.Redactions()) != text
    if plain_changed:
        assert redactor._may_hold_plain_secret(text), f"prefilter let through {text!r}"
    cleaned = full(text)
    if cleaned != text and not plain_changed:
        assert redactor._may_encode_secret(text), f"base64 prefilter let through {text!r}"
    assert redactor.redact_text(text) == cleaned, text


def variants(secret: str, rng: random.Random) -> list[str]:
    """The secret in other contexts, spellings and encodings."""
    out = [secret, f"before {secret} after", f"x{secret}", f"{secret}.", secret.upper(),
           secret.lower(), secret.swapcase(), json.dumps({"out": secret}),
           json.dumps([secret])[1:-1], secret.replace(" ", "\t"), secret.replace("=", " = "),
           secret.replace(":", " : "), secret.replace("k", "\u212a"), secret[: len(secret) // 2],
           secret[1:], base64.b64encode(secret.encode()).decode(),
           "run " + base64.urlsafe_b64encode(("x" + secret).encode()).decode() + " end"]
    for _ in range(12):
        chars = list(secret)
        for _ in range(rng.randint(1, 3)):
            position = rng.randrange(len(chars))
            chars[position] = rng.choice(BASE64_CHARS + " -_.:=\"'\n\u212a\u017f")
        out.append("".join(chars))
        cut = rng.randrange(len(secret) + 1)
        out.append(secret[:cut] + rng.choice(PIECES) + secret[cut:])
    return out


@pytest.mark.parametrize("secret", CORPUS)
def test_every_corpus_secret_and_its_variants_pass_the_prefilter(secret: str) -> None:
    rng = random.Random(secret)
    assert full(secret) != secret, secret  # the corpus holds secrets only
    for text in variants(secret, rng):
        assert_prefilter_holds(text)


def test_random_strings_from_the_patterns_pieces_pass_the_prefilter() -> None:
    rng = random.Random(17)
    caught = 0
    for _ in range(6000):
        parts = [rng.choice(PIECES) for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.5:
            parts.append("".join(rng.choice(BASE64_CHARS) for _ in range(rng.randint(8, 48))))
        rng.shuffle(parts)
        text = "".join(parts)
        assert_prefilter_holds(text)
        caught += full(text) != text
    assert caught > 500  # the generator does produce secrets, not only clean text


def test_clean_text_is_rejected_by_the_prefilter() -> None:
    """The point of it: ordinary run-document strings skip the patterns."""
    for text in ("task-00042", "question 12", "exact_match", "pass", "fail", "infra_error",
                 "The capital of Japan is Tokyo.", "0" * 64, "tokens_in", "passed"):
        assert not redactor._may_hold_plain_secret(text), text
        assert not redactor._may_encode_secret(text), text


def test_the_memo_returns_what_the_full_pipeline_does_and_stays_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redactor, "_MEMO_MAX_ENTRIES", 50)
    monkeypatch.setattr(redactor, "_MEMO", {})
    for n in range(300):
        text = f"line {n} password={n}abc" if n % 3 == 0 else f"line {n}"
        assert redactor.redact_text(text) == full(text)
        assert redactor.redact_text(text) == full(text)  # a memo hit
        assert len(redactor._MEMO) <= 50
    long = "word " * 2000 + "sk-" + "a1B2c3D4" * 4
    assert redactor.redact_text(long) == full(long) != long
