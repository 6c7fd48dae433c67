"""Secrets are recognised, replaced, counted, and ordinary text is left alone."""

from __future__ import annotations

import json

import pytest

from meridian.evals.redact import Redactions, find_secrets, redact, redact_text

PRIVATE_KEY = """-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACDxKq3
-----END OPENSSH PRIVATE KEY-----"""

SECRETS = [
    ("anthropic-key", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    ("openai-key", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123"),
    ("openai-key", "sk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    ("aws-access-key", "AKIAIOSFODNN7EXAMPLE"),
    ("github-token", "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("github-token", "gho_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("github-token", "github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789"),
    ("slack-token", "xoxb-123456789012-abcdefghijkl"),
    ("slack-token", "xoxp-123456789012-abcdefghijkl"),
    ("private-key", PRIVATE_KEY),
]


@pytest.mark.parametrize(("kind", "secret"), SECRETS)
def test_each_kind_of_secret_is_replaced_and_counted(kind: str, secret: str) -> None:
    found = Redactions()
    text = redact_text(f"before {secret} after", found)
    assert secret not in text
    assert f"[REDACTED:{kind}]" in text
    assert text.startswith("before ") and text.endswith(" after")
    assert found.counts == {kind: 1}
    assert find_secrets(text) == []


def test_bearer_token_keeps_the_scheme() -> None:
    text = redact_text("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig")
    assert text == "Authorization: Bearer [REDACTED:bearer-token]"


@pytest.mark.parametrize("text", [
    "password=hunter2", "PASSWORD: hunter2", "api_key=abc123", "token=abc", "secret = s3cr3t",
    '{"password": "hunter2"}', "client_secret='xyz'",
])
def test_assignments_keep_the_name_and_lose_the_value(text: str) -> None:
    clean = redact_text(text)
    assert "hunter2" not in clean and "abc123" not in clean and "s3cr3t" not in clean
    assert "xyz" not in clean and "=abc" not in clean
    assert "[REDACTED:secret-value]" in clean
    assert find_secrets(clean) == []


def test_an_unterminated_private_key_is_redacted_to_the_end() -> None:
    text = redact_text("key follows\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow...")
    assert text == "key follows\n[REDACTED:private-key]"


@pytest.mark.parametrize("text", [
    "the desk-top is skeleton-shaped", "tokens_in=5 max_tokens: 30", "sk-short",
    "AKIA is a prefix", "the ghp_ prefix alone", "bearer of bad news", "passwords are hard",
    "task-ant-farm", "reset the token bucket",
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    found = Redactions()
    assert redact_text(text, found) == text
    assert found.total == 0


def test_structural_redaction_keeps_shape_and_cleans_keys_and_values() -> None:
    key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    document = {
        "steps": [{"input": {"headers": {"x-api-key": key, "Authorization": "Basic abc"},
                             "password": 1234, "n": 3},
                   "output": f"called with {key}"}],
        "count": 2, "ok": True, "none": None, "empty_secret": {"token": ""},
        key: "a key used as a mapping key",
    }
    found = Redactions()
    clean = redact(document, found)
    text = json.dumps(clean)
    assert key not in text and "Basic abc" not in text and "1234" not in text
    assert clean["count"] == 2 and clean["ok"] is True and clean["none"] is None
    assert clean["steps"][0]["input"]["n"] == 3
    assert clean["empty_secret"] == {"token": ""}  # nothing there to hide
    assert clean["steps"][0]["input"]["headers"]["x-api-key"] == "[REDACTED:secret-value]"
    assert found.counts["anthropic-key"] == 2
    assert found.describe().startswith("2 anthropic-key")
    assert find_secrets(text) == []
    assert redact(clean) == clean  # idempotent: already-redacted values stay as they are
