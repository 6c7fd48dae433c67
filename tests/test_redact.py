"""The shared redactor: every kind the state branch must never hold, and what it leaves alone."""

from __future__ import annotations

import json

import pytest

from meridian import redact as redactor
from meridian.evals import redact as evals_redact
from meridian.redact import Redactions, find_secrets, redact, redact_bytes, redact_text

AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
FINE_GRAINED = ("github_pat_11ABCDEFG0" + "abcdefghijklmnopqrstuv" + "_"
                + "WXYZabcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTU")
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdefghijkl\n"
       "-----END RSA PRIVATE KEY-----")

# (text holding a secret, the secret part that must disappear)
PLANTED = [
    ("DATABASE_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    ("export AWS_SECRET_ACCESS_KEY=" + AWS_SECRET, AWS_SECRET),
    ("STRIPE_SECRET: whatever-value-9", "whatever-value-9"),
    ('{"dbPassword": "correct horse battery"}', "correct horse"),
    ("MY_APP_API_KEY='q1w2e3r4t5'", "q1w2e3r4t5"),
    (f"id {AWS_ID} key {AWS_SECRET}", AWS_SECRET),
    (f"aws_access_key_id = {AWS_ID}\naws_secret = {AWS_SECRET}", AWS_SECRET),
    (f"{AWS_ID}:{AWS_SECRET}", AWS_SECRET),
    ("//registry.npmjs.org/:_authToken=npm_" + "a" * 18 + "B" * 18, "npm_" + "a" * 18),
    ("npm token npm_" + "abcDEF123456" * 3, "npm_abcDEF"),
    ("password for upload: pypi-AgEIcHlwaS5vcmcCJGQ4ZjI1YjY1LTYxNjctNDRhNi1iZjZjLTUwM2Y1ZDc1NTAwZQ",
     "pypi-AgEIcHlwaS5vcmc"),
    ("slack xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-1234567890"),
    ("hook https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
     "T00000000/B00000000"),
    ("SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq", "SG.abcdefghij"),
    ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
     + "A" * 40 + "b" * 46 + "==;EndpointSuffix=core.windows.net", "A" * 40),
    ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey="
     + "k" * 43 + "=", "k" * 43),
    ("https://acct.blob.core.windows.net/c?sv=2021&sig=" + "AbC%2Fdef" * 5, "AbC%2Fdef"),
    ("client secret abc8Q~" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7", "8Q~a1B2c3"),
    (f"token {FINE_GRAINED}", FINE_GRAINED[:30]),
    (f"key:\n{PEM}\nend", "MIIEowIBAAKCAQEA"),
    (json.dumps({"out": PEM}), "MIIEowIBAAKCAQEA"),
    ("postgres://app:s3cr3t@db.internal:5432/app", "s3cr3t"),
    ("redis://:p@ss@cache:6379/0", "p@ss"),
    ("mysql://root:pa:ss@localhost/db", "pa:ss"),
    # rt1 F11: a secret name whose value is not written ``name = value``
    ("password:\n  - Tr0ub4dor3xyzzy", "Tr0ub4dor3xyzzy"),
    ("db:\n  password:\n    - 'first-pw-1'\n    - second-pw-2\n", "second-pw-2"),
    ("db:\n  password:\n    - 'first-pw-1'\n    - second-pw-2\n", "first-pw-1"),
    ("deploy --password S3cretpw --verbose", "S3cretpw"),
    ("deploy --password=S3cretpw", "S3cretpw"),
    ('deploy --db-password "two words"', "two words"),
    ("gh --api-key k3y-v4lue-77 --token t0k3n-v4lue", "k3y-v4lue-77"),
    ("gh --api-key k3y-v4lue-77 --token t0k3n-v4lue", "t0k3n-v4lue"),
    ("mysql -h db -u root -pS3cretpw app", "S3cretpw"),
    ("mysqldump -u root -p'S3 cret' app > dump.sql", "S3 cret"),
    ("sshpass -p S3cretpw ssh deploy@host", "S3cretpw"),
    ("machine github.com login bob password Hunter2Secretxyz", "Hunter2Secretxyz"),
    ("machine h\n  login u\n  password Hunter2x9\n", "Hunter2x9"),
    ("db.internal:5432:app:alice:pgP4ss-9tq", "pgP4ss-9tq"),
    ("localhost:*:*:postgres:pw\\:with-colon", "pw\\:with-colon"),
    ("X-Api-Key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a3928"),
    ("> x-api-key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a3928"),
    ("request headers X-Auth-Token: abc123def456", "abc123def456"),
    # cold read: a quoted value is a value whatever it starts with (the YAML list-marker
    # guard is for unquoted values), in an assignment, a JSON key, a flag or a glued -p
    ('password = "- hunter2"', "hunter2"),
    ("password: '- hunter2'", "hunter2"),
    ('DB_PASSWORD="--hunter2"', "hunter2"),
    ('{"api_key": "-hunter2"}', "hunter2"),
    ('{"token": "- two words"}', "two words"),
    ('password = "-"', '"-"'),
    ('deploy --password "- hunter2"', "hunter2"),
    ("deploy --token '--hunter2'", "hunter2"),
    ("mysql -u root -p'-hunter2' app", "hunter2"),
    ("password:\n  - '- hunter2'\n  - \"--second\"\n", "hunter2"),
    ("password:\n  - '- hunter2'\n  - \"--second\"\n", "second"),
]


@pytest.mark.parametrize(("text", "secret"), PLANTED)
def test_every_planted_secret_is_removed(text: str, secret: str) -> None:
    found = Redactions()
    clean = redact_text(text, found)
    assert secret not in clean
    assert "[REDACTED:" in clean and found.total >= 1
    assert find_secrets(clean) == []
    assert redact_text(clean) == clean  # idempotent


def test_assignment_names_are_kept_and_quotes_survive() -> None:
    assert redact_text("DATABASE_PASSWORD=hunter2") == "DATABASE_PASSWORD=[REDACTED:secret-value]"
    text = redact_text('{"password": "hunter2", "n": 1}')
    assert json.loads(text) == {"password": "[REDACTED:secret-value]", "n": 1}


@pytest.mark.parametrize("text", [
    "commit 3f2a9c1e8d7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 and tree 9f8e7d6c5b4a3f2a9c1e8d7b6a5f4e3d2c1b0a9f",
    f"an access key id alone {AWS_ID}",  # redacted as an id, but no other token touched
    "PASSWORD_FILE is read from $DB_PASSWORD", "password=$DB_PASSWORD", "token=${GITHUB_TOKEN}",
    "approval.token_sha256: changed", "max_tokens: 30 input_tokens=5",
    "https://example.com/path?a=1", "see https://user@example.com/x",
    # must stay readable: test names and results, usage lines, flags with no value,
    # other tools' -p, linters' path:line:col:code lines, times, prose
    "password_field_test PASSED", "tests/test_auth.py::test_password_reset PASSED [ 50%]",
    "test_token_refresh FAILED", "usage: tool [--password PASSWORD] [--token <token>]",
    "docker login --password-stdin", "run --token-file t.txt --key 2", "--token $TOKEN",
    "pytest -p no:cacheprovider", "mysql -p app", "src/a.py:10:5:E501:line-too-long",
    "12:30:45", "the password is checked before the token expires",
    "the test-api-key: fixture failed", "passed 15/15 (100.0%)",
    # a dash that is no value: a following flag, an empty YAML list item, a variable
    "deploy --password --verbose", "mysql -u root -p -h db app", "password: - ",
    'login --token "$TOKEN"', 'login --token "${TOKEN}"',
    'password: "${DB_PASSWORD}"', "the password - see docs", "token counts: -1",
    "test_password_reset - ok",
])
def test_ordinary_text_keeps_its_non_secret_parts(text: str) -> None:
    clean = redact_text(text)
    if AWS_ID in text:
        assert clean == text.replace(AWS_ID, "[REDACTED:aws-access-key]")
    else:
        assert clean == text


def test_a_forty_character_hex_digest_next_to_an_access_key_id_is_not_a_secret() -> None:
    digest = "3f2a9c1e8d7b6a5f4e3d2c1b0a9f8e7d6c5b4a39"
    clean = redact_text(f"{AWS_ID} built at {digest}")
    assert digest in clean and AWS_ID not in clean


def test_structural_keys_in_camel_and_screaming_case() -> None:
    clean = redact({"SecretAccessKey": "x", "AWS_SECRET_ACCESS_KEY": "y", "dbPassword": "z",
                    "tokenizer": "bpe", "max_tokens": 3, "passed": True, "subject": "abc"})
    assert clean == {"SecretAccessKey": "[REDACTED:secret-value]",
                     "AWS_SECRET_ACCESS_KEY": "[REDACTED:secret-value]",
                     "dbPassword": "[REDACTED:secret-value]", "tokenizer": "bpe",
                     "max_tokens": 3, "passed": True, "subject": "abc"}


def test_redact_bytes_keeps_json_valid_and_leaves_clean_documents_byte_identical() -> None:
    clean_doc = b'{\n  "a": 1\n}\n'
    assert redact_bytes(clean_doc, "verdicts/g/x.json") is clean_doc
    dirty = json.dumps({"checks": [{"output": "DATABASE_PASSWORD=hunter2 " + PEM}]}).encode()
    out = redact_bytes(dirty, "evidence/g/x.json")
    assert b"hunter2" not in out and b"MIIEow" not in out
    assert json.loads(out)["checks"][0]["output"].startswith("DATABASE_PASSWORD=[REDACTED")
    assert redact_bytes(b"\xff\xfe binary", "x.bin") == b"\xff\xfe binary"
    assert b"s3cr3t" not in redact_bytes(b"url postgres://a:s3cr3t@h/db", "notes.txt")


def test_the_evals_module_is_the_same_redactor() -> None:
    assert evals_redact.redact_text is redactor.redact_text
    assert evals_redact.Redactions is redactor.Redactions


@pytest.mark.parametrize("line, secret", [("run --api-key K7Q2ZP4M9W", "K7Q2ZP4M9W"),
                                          ("mysql --password S3CR3T9X db", "S3CR3T9X")])
def test_an_all_capitals_flag_value_with_digits_is_a_secret_not_a_placeholder(
        line: str, secret: str) -> None:
    from meridian.redact import redact_text

    out = redact_text(line)
    assert secret not in (out[0] if isinstance(out, tuple) else out)
