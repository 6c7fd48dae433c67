"""Fixtures for memory tests: an initialised state branch and helpers to read it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from meridian.cli import main
from meridian.ledger import Ledger


@pytest.fixture
def ledger(repo: Path) -> Ledger:
    ledger = Ledger.open(repo)
    ledger.emit("meridian.init", {"branch": "meridian/state"})
    return ledger


@pytest.fixture
def add_memory() -> Callable[..., int]:
    """``meridian memory add KIND --json RECORD [EXTRA...]``; returns the exit code."""

    def add(kind: str, record: Any, *extra: str) -> int:
        return main(["memory", "add", kind, "--json", json.dumps(record), *extra])

    return add


@pytest.fixture
def stored() -> Callable[[Ledger, str], list[dict[str, Any]]]:
    """Every stored line of a stream, parsed."""

    def read(ledger: Ledger, stream: str) -> list[dict[str, Any]]:
        return [json.loads(line) for _, _, line in ledger.lines(stream)]

    return read
