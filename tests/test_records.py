"""Records: exact timestamps, content-hash ids."""

from __future__ import annotations

import pytest

from meridian import records
from meridian.records import InvalidRecord


@pytest.mark.parametrize("ts", ["2024-W01-1T00:00:00Z", "20240101T000000Z", "2024-01-01 00:00:00Z",
                                "2024-01-01Z", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00.000000+00:00"])
def test_only_one_timestamp_shape_is_accepted(ts: str) -> None:
    line = records.make("test.x", {"a": 1}, writer="w").model_copy(update={"ts": ts}).line()
    with pytest.raises(InvalidRecord, match="^ts: must be a UTC timestamp like 2026-11-30T12:00:00.000000Z$"):
        records.parse_line(line)


def test_ids_hash_content_and_memory_ids_ignore_time_and_writer() -> None:
    a = records.make("test.x", {"a": 1}, writer="w", ts="2026-01-01T00:00:00.000000Z")
    b = records.make("test.x", {"a": 1}, writer="w", ts="2026-01-01T00:00:00.000001Z")
    assert a.id != b.id
    m1 = records.make("memory.note", {"a": 1}, writer="w", ts="2026-01-01T00:00:00.000000Z")
    m2 = records.make("memory.note", {"a": 1}, writer="v", ts="2027-01-01T00:00:00.000000Z")
    assert m1.id == m2.id
    assert records.parse_line(m1.line()) == m1
