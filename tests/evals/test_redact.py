"""Secrets are recognised, replaced, counted, and ordinary text is left alone."""

from __future__ import annotations

import base64
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
    ("gitlab-token", "glpat-AbCdEfGhIjKlMnOpQrSt"),
    ("google-api-key", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("huggingface-token", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"),
    ("stripe-key", "sk_live_AbCdEfGhIjKlMnOpQrStUvWx"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("url-credentials", "https://deploy:hunter2pass@example.com/repo.git"),
    ("basic-auth", "Basic " + base64.b64encode(b"deploy:hunter2").decode()),
    ("private-key", PRIVATE_KEY),
]
ANTHROPIC = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


@pytest.mark.parametrize(("kind", "secret"), SECRETS)
def test_each_kind_of_secret_is_replaced_and_counted(kind: str, secret: str) -> None:
    found = Redactions()
    text = redact_text(f"before {secret} after", found)
    assert secret not in text
    assert "hunter2" not in text
    assert f"[REDACTED:{kind}]" in text
    assert text.startswith("before ") and text.endswith(" after")
    assert found.counts == {kind: 1}
    assert find_secrets(text) == []


def test_bearer_token_keeps_the_scheme() -> None:
    text = redact_text("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig")
    assert text == "Authorization: Bearer [REDACTED:bearer-token]"
    assert redact_text("bearer\t  abcdefghijkl") == "bearer\t  [REDACTED:bearer-token]"


def test_url_credentials_keep_the_scheme_and_host() -> None:
    assert (redact_text("clone https://me:hunter2@example.com/x.git")
            == "clone https://[REDACTED:url-credentials]@example.com/x.git")


@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
@pytest.mark.parametrize("plain", [ANTHROPIC, f"x-api-key: {ANTHROPIC}", "password=hunter2",
                                   f'{{"key": "{ANTHROPIC}", "n": 1}}'])
def test_a_base64_encoded_secret_is_replaced_whole(plain: str, encode: object) -> None:
    encoded = encode(plain.encode()).decode()  # type: ignore[operator]
    found = Redactions()
    for text in (encoded, f"blob={encoded}", f"data:application/json;base64,{encoded}"):
        clean = redact_text(text, found)
        assert encoded not in clean and "[REDACTED:base64-secret]" in clean
        assert find_secrets(text) == ["base64-secret"] and find_secrets(clean) == []
    assert found.counts == {"base64-secret": 3}


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
    "task-ant-farm", "reset the token bucket", "basic arithmetic is basic",
    "Basic YWJjZGVm", "/usr/local/lib/python3.11/site-packages/meridian/evals/redact.py",
    "test_a_planted_api_key_never_reaches_git_history", base64.b64encode(b"x" * 60).decode(),
    "https://example.com/a:b@c", "user@example.com",
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
        "count": 2, "ok": True, "none": None, "empty": {"token": ""},
        key: "a key used as a mapping key",
    }
    found = Redactions()
    clean = redact(document, found)
    text = json.dumps(clean)
    assert key not in text and "Basic abc" not in text and "1234" not in text
    assert clean["count"] == 2 and clean["ok"] is True and clean["none"] is None
    assert clean["steps"][0]["input"]["n"] == 3
    assert clean["empty"] == {"token": ""}  # nothing there to hide
    assert clean["steps"][0]["input"]["headers"]["x-api-key"] == "[REDACTED:secret-value]"
    assert found.counts["anthropic-key"] == 2
    assert found.describe().startswith("2 anthropic-key")
    assert find_secrets(text) == []
    assert redact(clean) == clean  # idempotent: already-redacted values stay as they are


def test_keys_ending_in_a_secret_name_are_redacted_whole() -> None:
    clean = redact({"headers": {"X-Auth-Token": "abc123", "Set-Cookie": "s=1", "x-api-key": "k"},
                    "github_token": 7, "max_tokens": 30, "tokenizer": "bpe", "num_tokens": 3})
    assert clean == {"headers": {"X-Auth-Token": "[REDACTED:secret-value]",
                                 "Set-Cookie": "[REDACTED:secret-value]",
                                 "x-api-key": "[REDACTED:secret-value]"},
                     "github_token": "[REDACTED:secret-value]", "max_tokens": 30,
                     "tokenizer": "bpe", "num_tokens": 3}


@pytest.mark.parametrize("document", [
    {"api_key": None}, {"token": {}}, {"password": []}, {"X-Auth-Token": None},
])
def test_a_redacted_document_passes_the_final_scan(document: dict) -> None:
    """JSON's own ``"api_key": null`` is no secret; the final scan of the bytes must not
    refuse it (that refusal loses a whole run at save time)."""
    text = json.dumps(redact(document), indent=2)
    assert find_secrets(text, assignments=False) == []
    assert find_secrets(text) == ["secret-value"]  # what the heuristic alone would say
