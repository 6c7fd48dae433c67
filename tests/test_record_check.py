"""``meridian.record_check.valid`` against the models (``records.parse_line``).

The hooks' verify accepts a line on ``valid`` alone, so it must never accept what the
models refuse; for ``gate.blocked`` (the kind the hooks write) it must also accept what
they accept, or every hook would pay for pydantic anyway. The same lines, valid and
malformed in every field, go to both and the verdicts are compared.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from typing import Any, get_args

import pytest

from meridian import record_check, records
from meridian.errors import MeridianError
from meridian.gates import events

WRITER = "Dev Eloper <dev@example.com>"
TS = "2026-11-30T12:00:00.123456Z"


def _models_accept(line: str) -> bool:
    try:
        records.parse_line(line)
    except MeridianError:
        return False
    return True


def _line(raw: Any, *, rehash: bool) -> str:
    if isinstance(raw, dict) and "id" in raw and not raw["id"]:
        raw = {**raw, "id": "0" * 32}
    if rehash and isinstance(raw, dict) and isinstance(raw.get("data"), dict):
        try:
            raw = {**raw, "id": records.record_id(raw["kind"], raw["ts"], raw["writer"],
                                                  raw["data"])}
        except (KeyError, TypeError, AttributeError, UnicodeEncodeError):
            pass
    text = json.dumps(raw, ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate: stored lines can only hold its escape
        text = json.dumps(raw)
    return text


BASE_DATA = {"gate": "api", "source": "claude", "reason": "Meridian: api/app.py is locked",
             "files": ["api/app.py"], "event": "PreToolUse", "session": "s1", "tool": "Write"}

DATA_VARIANTS: list[Any] = [
    {}, {"source": "gate"}, {"source": "gate", "reason": ""}, {"reason": "r"},
    {"source": "gate", "reason": "r", "gate": None}, {"source": "gate", "reason": "r", "gate": ""},
    {"source": "gate", "reason": "r", "gate": 3}, {"source": "gate", "reason": "r", "gate": True},
    {"source": "gate", "reason": "r", "gate": ["api"]},
    {"source": "nobody", "reason": "r"}, {"source": "Claude", "reason": "r"},
    {"source": 1, "reason": "r"}, {"source": None, "reason": "r"},
    {"source": "pre-push", "reason": None}, {"source": "pre-push", "reason": 7},
    {"source": "evaluator", "reason": "r", "files": None},
    {"source": "evaluator", "reason": "r", "files": []},
    {"source": "evaluator", "reason": "r", "files": ["a", "b"]},
    {"source": "evaluator", "reason": "r", "files": "a"},
    {"source": "evaluator", "reason": "r", "files": [1]},
    {"source": "evaluator", "reason": "r", "files": [None]},
    {"source": "evaluator", "reason": "r", "files": {"a": 1}},
    {"source": "pre-commit", "reason": "r", "rule": "hook:x", "attempt": 2, "nested": {"a": [1]}},
    {"source": "pre-commit", "reason": "café ✓ \u2028", "extra": float("inf")},
    {"source": "pre-commit", "reason": "r", "released_by_retry_cap": True, "blocks": 3.5},
    # escaped lone surrogates: JSON reads them, no id can hash them
    {"source": "gate", "reason": "\ud800"}, {"source": "gate", "reason": "r", "\udc00": 1},
    {"source": "gate", "reason": "r", "gate": "\ud800"},
    {"source": "gate", "reason": "r", "files": ["\udfff"]},
    [], "text", None, 5,
]

RECORD_VARIANTS: list[dict[str, Any]] = [
    {}, {"id": "A" * 32}, {"id": "a" * 31}, {"id": "a" * 33}, {"id": 5}, {"id": None},
    {"id": "g" * 32}, {"id": "a" * 32 + "\n"},
    {"ts": "2026-11-30T12:00:00Z"}, {"ts": "2026-11-30 12:00:00.000000Z"},
    {"ts": "2026-13-30T12:00:00.000000Z"}, {"ts": "2026-02-30T12:00:00.000000Z"},
    {"ts": "2026-11-30T25:00:00.000000Z"}, {"ts": "2026-11-30T12:00:00.000000+00:00"},
    {"ts": 1700000000}, {"ts": None}, {"ts": TS + "\n"},
    {"kind": "gate.started"}, {"kind": "Gate.blocked"}, {"kind": 3},
    {"writer": 5}, {"writer": None}, {"writer": ""}, {"writer": ["a"]}, {"writer": "\ud800"},
]


def _cases() -> list[tuple[Any, bool]]:
    base = {"id": "", "ts": TS, "kind": events.BLOCKED, "writer": WRITER, "data": BASE_DATA}
    cases: list[tuple[Any, bool]] = []
    for data, rehash in itertools.product(DATA_VARIANTS, (True, False)):
        cases.append(({**base, "data": data}, rehash))
    for change, rehash in itertools.product(RECORD_VARIANTS, (True, False)):
        cases.append(({**base, **change}, rehash))
    for missing in ("id", "ts", "kind", "writer", "data"):
        cases.append(({k: v for k, v in base.items() if k != missing}, True))
    cases += [({**base, "extra": 1}, True), (["not", "a", "record"], False), ("x", False),
              (None, False)]
    return cases


@pytest.mark.parametrize(("raw", "rehash"), _cases())
def test_valid_agrees_with_the_models(raw: Any, rehash: bool) -> None:
    line = _line(raw, rehash=rehash)
    assert record_check.valid(line) == _models_accept(line), line
    assert record_check.valid(line.encode()) == _models_accept(line), line


def test_lines_the_ledger_writes_are_valid_and_other_kinds_go_to_the_models() -> None:
    for data in (BASE_DATA, {"source": "gate", "reason": "r"},
                 {"source": "pre-push", "reason": "x", "gate": "api", "files": []}):
        record = records.make(events.BLOCKED, data, writer=WRITER)
        assert record_check.valid(record.line()) and _models_accept(record.line())
    started = records.make(events.STARTED, {"gate": "api"}, writer=WRITER)
    assert _models_accept(started.line()) and not record_check.valid(started.line())


def test_text_that_is_not_a_record_is_not_valid() -> None:
    good = records.make(events.BLOCKED, BASE_DATA, writer=WRITER).line()
    for line in ("", "{", good[:-1], good + "x", b"\xff\xfe", good.replace('"id"', '"ID"'),
                 # a key stated twice: JSON keeps the last, as the models see it
                 good.replace('{"id":', '{"id":"' + "0" * 32 + '","id":', 1)):
        assert record_check.valid(line) == _models_accept(line), line


def test_the_sources_are_the_models() -> None:
    assert frozenset(get_args(events.BlockSource)) == record_check.BLOCK_SOURCES


def test_checking_a_line_imports_no_pydantic() -> None:
    line = json.dumps(json.loads(records.make(events.BLOCKED, BASE_DATA, writer=WRITER).line()))
    code = ("import sys; from meridian import record_check, verify; "
            f"assert record_check.valid({line!r}); "
            "print(sorted(m for m in ('pydantic', 'yaml') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
