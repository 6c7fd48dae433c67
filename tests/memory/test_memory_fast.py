"""The pydantic-free check of a memory write (``meridian.memory.kinds``) against the models.

Whatever the fast path accepts, the model accepts with the very same stored data; what
the fast path declines goes to the model. Generated inputs (every field valid, then
each one replaced by values of other types, out of bounds, empty, surrogates, str
subclasses, extra and missing keys) hold the two side by side, and the command
refuses a bad write with the model's message after importing no pydantic for a good one.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from meridian import records
from meridian.memory import kinds, schemas
from meridian.records import InvalidRecord


class Text(str):
    pass


ODD_VALUES: list[Any] = [None, "", " ", "x", Text("sub"), "\ud800", "é", 0, 1, 0.5, -0.1, 1.5,
                         True, float("nan"), float("inf"), [], ["a"], ["a", 1], ("a",),
                         [Text("a")], ["\udfff"], {}, {"a": 1}, "2026-11-30T10:00:00Z",
                         "2026-11-30T10:00:00", "2026-13-30T10:00:00Z", "note", "gate_passed",
                         "block", 1.0, 0.0, 7]

VALID = {
    "memory.episodic": [
        {"session": "s1", "event": "note"},
        {"session": "s1", "event": "note", "notes": "a lesson", "outcome": "ok"},
        {"session": "s1", "event": "gate_passed", "gate": "api", "at": "2026-11-30T10:00:00Z"},
        {"at": "2026-11-30T10:00:00.123456Z", "event": "block", "session": "s2", "gate": None},
        {"session": "é", "event": "session_started", "notes": None},
    ],
    "memory.semantic": [
        {"text": "write the failing test first", "confidence": 0.7},
        {"text": "t", "confidence": 0.0, "context": "python", "tags": ["x"], "session": "s"},
        {"confidence": 1.0, "text": "t", "source_gates": ["a", "b"], "source_projects": []},
        {"text": "t", "confidence": 0.25, "context": None, "session": None, "tags": []},
    ],
}
SPECS = {spec.kind: spec for spec in kinds.KINDS.values()}


def _model(kind: str, data: Any) -> dict[str, Any] | None:
    try:
        return schemas.validate(SPECS[kind], data)
    except InvalidRecord:
        return None


def _variants(kind: str) -> list[Any]:
    model = SPECS[kind].model
    fields = list(model.model_fields)
    out: list[Any] = []
    for base in VALID[kind]:
        out.append(base)
        for key in [*fields, "unknown"]:
            without = {k: v for k, v in base.items() if k != key}
            out.append(without)
            for value in ODD_VALUES:
                out.append({**base, key: value})
        for first, second in itertools.combinations(fields, 2):
            out.append({**base, first: None, second: ""})
    out += [None, [], "text", 3, Text("x")]
    return out


@pytest.mark.parametrize("kind", sorted(kinds.FAST))
def test_whatever_the_fast_path_accepts_the_model_stores_identically(kind: str) -> None:
    accepted = declined = 0
    for data in _variants(kind):
        fast = kinds.fast_data(kind, data)
        model = _model(kind, data)
        if fast is None:
            declined += 1
            continue
        accepted += 1
        assert model is not None, f"fast path accepted what the model refuses: {data!r}"
        assert fast == model and list(fast) == list(model), data  # same keys, same order
        assert json.dumps(fast) == json.dumps(model)
        assert [type(v) for v in fast.values()] == [type(v) for v in model.values()]
        # and the record stored is the same: same line, same content id
        assert records.record_id(kind, "t", "w", fast) == records.record_id(kind, "t", "w", model)
    assert accepted >= len(VALID[kind]) * 5 and declined > accepted / 4


@pytest.mark.parametrize("kind", sorted(kinds.FAST))
def test_every_valid_example_takes_the_fast_path(kind: str) -> None:
    for data in VALID[kind]:
        assert kinds.fast_data(kind, data) == _model(kind, data)


@pytest.mark.parametrize(("kind", "data", "message"), [
    ("episodic", {"session": "s", "event": "party"}, "episodic.event: must be one of"),
    ("episodic", {"session": "s", "event": "gate_passed"}, "episodic.gate: required for a gate_passed event"),
    ("episodic", {"session": "", "event": "note"}, "episodic.session: must not be empty"),
    ("episodic", {"session": "s", "event": "note", "at": "2026-11-30T10:00:00"},
     "episodic.at: must be a UTC timestamp ending in Z"),
    ("episodic", {"session": "s", "event": "note", "extra": 1}, "episodic.extra: unknown key"),
    ("semantic", {"text": "t", "confidence": 2.0}, "semantic.confidence: must be <= 1"),
    ("semantic", {"text": "t", "confidence": True}, "semantic.confidence: must be a number"),
    ("semantic", {"text": "t", "confidence": 0.5, "tags": ["a", 1]}, "semantic.tags\\[1\\]: must be a string"),
])
def test_refusals_keep_the_models_field_path_message(kind: str, data: dict[str, Any],
                                                      message: str) -> None:
    with pytest.raises(InvalidRecord, match=f"^{message}"):
        kinds.validate(kinds.memory_kind(kind), data)
    field = message.split(":")[0].split("\\[")[0]  # the ledger's own wording and path
    with pytest.raises(InvalidRecord, match=f"^{field}"):
        records.validate_data(kinds.memory_kind(kind).kind, data)


def test_memory_add_imports_no_pydantic_or_yaml_and_still_refuses_with_one_line(
        repo_with_commit: Path) -> None:
    """The command's start-up: a valid episodic write loads neither pydantic nor yaml (the
    config's branch comes from the cache of its validated bytes); an invalid one is
    refused by the model's message, exit 2, nothing stored."""
    from meridian.ledger import Ledger

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        probe = ("import sys\nfrom meridian.cli import main\ncode = main(sys.argv[1:])\n"
                 "loaded = [m for m in ('pydantic', 'yaml') if m in sys.modules]\n"
                 "print('LOADED', ','.join(loaded) or '-')\nraise SystemExit(code)\n")
        return subprocess.run([sys.executable, "-c", probe, *args], cwd=repo_with_commit,
                              capture_output=True, text=True, check=False)

    assert run("init", "--no-hooks").returncode == 0
    note = json.dumps({"session": "s1", "event": "note", "notes": "fast"})
    first = run("memory", "add", "episodic", "--json", note)  # validates the config once
    assert first.returncode == 0, first.stderr
    second = run("memory", "add", "episodic", "--json",
                 json.dumps({"session": "s1", "event": "note", "notes": "second"}))
    assert second.returncode == 0, second.stderr
    assert "stored episodic" in second.stdout and "LOADED -" in second.stdout
    tip = Ledger.open(repo_with_commit).tip()
    bad = run("memory", "add", "episodic", "--json",
              json.dumps({"session": "s1", "event": "gate_passed"}))
    assert bad.returncode == 2
    assert bad.stderr == "meridian: episodic.gate: required for a gate_passed event\n"
    assert Ledger.open(repo_with_commit).tip() == tip
    # a config edited since is validated again: a bad one is refused, not cached past
    config = repo_with_commit / ".meridian" / "config.yaml"
    config.write_text(config.read_text() + "\nbranch: [not, a, branch]\n")
    broken = run("memory", "add", "episodic", "--json", note)
    assert broken.returncode == 2 and "config.yaml" in broken.stderr
    assert broken.stderr.count("\n") == 1
