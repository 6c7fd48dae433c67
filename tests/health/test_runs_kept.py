"""Health's runs section is kept (``aggregate._RunsKept``): when nothing under ``runs/``
and no baseline tag changed, the report's evaluation figures, cost lines and weekly
spend come from it without reading the run index (so health does not grow with the
number of stored runs), and any change to the runs (a new run, a prune, a baseline
pinned or moved) or a kept file that does not check out gives the fresh answer."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from meridian.evals import store
from meridian.health import aggregate, build_report
from tests.health.conftest import Crafted, Writer, save_run

TODAY = date(2026, 11, 30)


def _report(crafted: Crafted) -> dict:
    document = json.loads(build_report(crafted.ledger, crafted.root, today=TODAY).model_dump_json())
    document.pop("generated_at", None)
    return document


def _fresh(crafted: Crafted) -> dict:
    aggregate._RunsKept(crafted.ledger).path.unlink(missing_ok=True)
    return _report(crafted)


def _no_index(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run index was read")

    monkeypatch.setattr(store, "index", refuse)


def test_an_unchanged_runs_directory_is_not_read_again(
        crafted: Crafted, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _report(crafted)
    assert first["evaluation"]["runs"] >= 2 and first["evaluation"]["suites"]
    Writer(crafted.ledger).event("2026-11-25T09:00:00.000000Z", "session.started",
                                 {"session": "s-1", "source": "claude"})
    with monkeypatch.context() as patch:
        _no_index(patch)
        kept = _report(crafted)
    assert kept["evaluation"] == first["evaluation"] and kept["cost"] == first["cost"]
    assert kept == _fresh(crafted)


@pytest.mark.parametrize("change", ["new run", "pin", "prune"])
def test_a_change_to_the_runs_gives_the_fresh_answer(crafted: Crafted, change: str) -> None:
    if change == "prune":
        save_run(crafted.ledger, "r" * 12, ["fail", "fail", "pass"], 0.5)
    before = _report(crafted)
    if change == "new run":
        save_run(crafted.ledger, "r" * 12, ["fail", "fail", "pass"], 0.5)
    elif change == "pin":
        store.pin_baseline(crafted.ledger, "other", crafted.run_b)
    else:
        assert store.prune(crafted.ledger, keep=1) == [crafted.run_b]  # run A: the baseline
    after = _report(crafted)
    assert after != before
    assert after == _fresh(crafted)


def test_moving_a_baseline_tag_alone_does_not_move_the_baseline(crafted: Crafted) -> None:
    """A tag is no part of the tree and no record: moved with git alone (no event), the
    kept answer is not reused as it was (the key holds the tags) and the figures are
    still those of the pinned baseline (the ``baseline.pinned`` event), as a fresh
    computation gives them."""
    before = _report(crafted)
    pinned = {b.name: b for b in store.baselines(crafted.ledger)}
    assert pinned, "the crafted history pins a baseline"
    name = next(iter(pinned))
    other = crafted.run_a if pinned[name].run_id != crafted.run_a else crafted.run_b
    commit = store.commit_of_run(crafted.ledger, other)
    from meridian import gitio

    crafted.ledger.pin_tag(store.BASELINE_PREFIX + name, gitio.Oid(hex=commit))
    moved = {b.name: b for b in store.baselines(crafted.ledger)}[name]
    assert moved.run_id == pinned[name].run_id and moved.tag_differs == commit
    after = _report(crafted)
    assert after["evaluation"] == before["evaluation"]
    assert after == _fresh(crafted)


@pytest.mark.parametrize("poison", ["checksum", "key", "answer", "garbage", "fifo"])
def test_a_kept_answer_that_does_not_check_out_is_ignored(crafted: Crafted, poison: str) -> None:
    import hashlib
    import os

    expected = _report(crafted)
    path: Path = aggregate._RunsKept(crafted.ledger).path
    digest, _, body = path.read_bytes().partition(b"\n")
    document = json.loads(body)
    if poison == "checksum":
        document["answer"]["health"]["runs"] = 999
        path.write_bytes(digest + b"\n" + json.dumps(document).encode())
    elif poison in ("key", "answer"):
        if poison == "key":
            document["key"]["runs"] = "0" * 40
            document["answer"]["health"]["runs"] = 999
        else:
            document["answer"]["weeks"] = {"2026-W47": ["x", 0, 0, 0]}
        body = json.dumps(document).encode()
        path.write_bytes(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    elif poison == "garbage":
        path.write_bytes(b"\x00" * 100)
    else:
        path.unlink()
        os.mkfifo(path)
    assert _report(crafted) == expected  # a FIFO would hang here
