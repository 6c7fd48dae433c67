"""The memory models, their error messages and the published JSON Schema files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from meridian import records
from meridian.memory.schemas import (
    JSON_SCHEMA_DIALECT,
    KINDS,
    UnknownKind,
    json_schema,
    memory_kind,
    schema_documents,
    validate,
)
from meridian.records import InvalidRecord

TEMPLATE_SCHEMAS = Path(__file__).resolve().parents[2] / ".meridian-template" / "schemas"


def test_published_schema_files_equal_the_generated_ones() -> None:
    generated = schema_documents()
    published = {p.name: p.read_text(encoding="utf-8") for p in TEMPLATE_SCHEMAS.glob("memory-*")}
    assert set(published) == {"memory-semantic.schema.json", "memory-episodic.schema.json",
                              "memory-correction.schema.json"}
    for name, text in generated.items():
        assert published[name] == text, (
            f"{name} is stale: run python -m meridian.memory.schemas .meridian-template/schemas")


@pytest.mark.parametrize("label", list(KINDS))
def test_each_schema_is_draft_2020_12_and_itself_valid(label: str) -> None:
    schema = json_schema(KINDS[label])
    assert schema["$schema"] == JSON_SCHEMA_DIALECT == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def _line(label: str, data: dict[str, Any]) -> dict[str, Any]:
    kind = KINDS[label]
    return json.loads(records.make(kind.kind, data, writer="A <a@b.c>").line())


@pytest.mark.parametrize(("label", "good", "bad"), [
    ("semantic", {"text": "auth takes 2x", "confidence": 0.5}, {"text": "x", "confidence": 2}),
    ("episodic", {"session": "s1", "event": "note", "notes": "hi"},
     {"session": "s1", "event": "coffee"}),
    ("corrections", {"gate": "api", "predicted_hours": 8, "actual_hours": 6},
     {"gate": "api", "predicted_hours": 8, "actual_hours": -1}),
])
def test_the_schema_accepts_what_the_model_stores_and_rejects_what_it_refuses(
        label: str, good: dict[str, Any], bad: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(json_schema(KINDS[label]))
    validator.validate(_line(label, good))
    line = _line(label, good)
    line["data"] = bad
    assert not validator.is_valid(line)
    with pytest.raises(InvalidRecord):
        validate(KINDS[label], bad)


@pytest.mark.parametrize(("label", "data", "message"), [
    ("corrections", {"gate": "api", "predicted_hours": 8, "actual_hours": 0},
     "corrections.actual_hours: must be > 0"),
    ("corrections", {"gate": "api", "predicted_hours": 0, "actual_hours": 3},
     "corrections.predicted_hours: must be > 0"),
    ("corrections", {"predicted_hours": 8, "actual_hours": 6},
     "corrections.gate: required field is missing"),
    ("corrections", {"gate": "api"},
     "corrections.actual_hours: required unless the record amends an earlier correction"),
    ("corrections", {"gate": "api", "predicted_hours": 8, "actual_hours": 6, "ratio": 1.33},
     "corrections.ratio: must equal actual_hours / predicted_hours = 6 / 8 = 0.75, got 1.33"),
    ("corrections", {"gate": "api", "actual_hours": 6, "ratio": 1},
     "corrections.ratio: needs both predicted_hours and actual_hours"),
    ("corrections", {"gate": "api", "amends": "a" * 32},
     "corrections: an amendment must add root_cause, next_action or hours"),
    ("semantic", {"text": "x", "confidence": 1.5}, "semantic.confidence: must be <= 1"),
    ("semantic", {"text": "", "confidence": 0.5}, "semantic.text: must not be empty"),
    ("semantic", {"text": "x", "confidence": 0.5, "colour": "red"}, "semantic.colour: unknown key"),
    ("semantic", {"text": "x", "confidence": "high"}, "semantic.confidence: must be a number"),
    ("episodic", {"session": "s1", "event": "gate_passed"},
     "episodic.gate: required for a gate_passed event"),
    ("episodic", {"event": "note"}, "episodic.session: required field is missing"),
    ("episodic", {"session": "s1", "event": "note", "at": "2026-11-30T10:00:00"},
     "episodic.at: must be a UTC timestamp ending in Z (2026-11-30T10:00:00Z)"),
    ("episodic", ["not", "an", "object"], "episodic: must be a JSON object"),
    # Strict like the published schema: what JSON Schema refuses, the model refuses.
    ("corrections", {"gate": "api", "predicted_hours": True, "actual_hours": 6},
     "corrections.predicted_hours: must be a number"),
    ("corrections", {"gate": "api", "predicted_hours": "8", "actual_hours": 6},
     "corrections.predicted_hours: must be a number"),
    ("semantic", {"text": 1, "confidence": 0.5}, "semantic.text: must be a string"),
    # Stored lines must stay JSON: no Infinity, no NaN, no ratio that overflows.
    ("corrections", {"gate": "api", "predicted_hours": float("inf"), "actual_hours": 6},
     "corrections.predicted_hours: must be a finite number"),
    ("corrections", {"gate": "api", "predicted_hours": 8, "actual_hours": float("inf")},
     "corrections.actual_hours: must be a finite number"),
    ("corrections", {"gate": "api", "predicted_hours": 1e-308, "actual_hours": 1e308},
     "corrections.ratio: actual_hours / predicted_hours = 1e+308 / 1e-308 is out of range"),
])
def test_invalid_records_are_refused_with_the_field_path(label: str, data: Any,
                                                         message: str) -> None:
    with pytest.raises(InvalidRecord) as raised:
        validate(KINDS[label], data)
    assert str(raised.value) == message


def test_ratio_is_actual_over_predicted_and_computed_when_absent() -> None:
    clean = validate(KINDS["corrections"], {"gate": "api", "predicted_hours": 8,
                                            "actual_hours": 6})
    assert clean["ratio"] == 0.75  # faster than predicted: below 1
    slower = validate(KINDS["corrections"], {"gate": "api", "predicted_hours": 4,
                                             "actual_hours": 6})
    assert slower["ratio"] == 1.5


def test_a_ratio_rounded_by_the_writer_is_accepted_and_stored_rounded_to_4_digits() -> None:
    clean = validate(KINDS["corrections"], {"gate": "api", "predicted_hours": 3,
                                            "actual_hours": 1, "ratio": 0.33})
    assert clean["ratio"] == 0.3333


def test_ledger_validation_uses_the_same_models() -> None:
    # records.make (the ledger's write path) refuses what memory add refuses.
    with pytest.raises(InvalidRecord):
        records.make("memory.correction", {"gate": "api", "predicted_hours": 8,
                                           "actual_hours": 0}, writer="A <a@b.c>")


@pytest.mark.parametrize(("name", "label"), [
    ("semantic", "semantic"), ("episodic", "episodic"), ("correction", "corrections"),
    ("corrections", "corrections"), ("Corrections", "corrections"),
])
def test_kind_names_accept_singular_and_plural(name: str, label: str) -> None:
    assert memory_kind(name).label == label


def test_unknown_kind_lists_the_known_ones() -> None:
    with pytest.raises(UnknownKind, match="expected one of: semantic, episodic, corrections"):
        memory_kind("procedural")
