"""Shard layout: months fan out into groups, and branches in the older flat layout keep working."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from meridian import gitio, layout
from meridian.ledger import Ledger
from meridian.verify import verify

SMALL_SHARD = 300  # about one test record per shard


@pytest.fixture
def small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout, "SHARD_BYTES", SMALL_SHARD)


def _emit(ledger: Ledger, count: int, start: int = 0) -> None:
    for n in range(start, start + count):
        ledger.emit("test.append", {"n": n})


def _max_entries_on_paths(ledger: Ledger, paths: list[str]) -> int:
    repo, tree = ledger.repo, ledger.tree()
    biggest = 0
    for path in paths:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            node = gitio.tree_entry(repo, tree, "/".join(parts[:depth]))
            assert isinstance(node, pygit2.Tree)
            biggest = max(biggest, len(node))
    return biggest


def _commit_files(ledger: Ledger, files: dict[str, bytes], message: str = "plumbing\n") -> None:
    """A commit on the state branch writing ``files`` as they are (as an older version or
    a tamperer would)."""
    repo = ledger.repo
    tip = ledger.tip()
    base = None if tip is None else gitio.commit_tree(repo, tip)
    tree = gitio.update_tree(repo, base, {p: repo.create_blob(d) for p, d in files.items()})
    gitio.create_commit(repo, ledger.refname, tree, [] if tip is None else [tip], message,
                        expected=tip)


def test_shard_paths_are_flat_for_the_first_64_then_grouped() -> None:
    assert layout.shard_path("events", "2026-12", 0) == "events/2026-12/0000.jsonl"
    assert layout.shard_path("events", "2026-12", 63) == "events/2026-12/0063.jsonl"
    assert layout.shard_path("events", "2026-12", 64) == "events/2026-12/g0001/00.jsonl"
    assert layout.shard_path("memory/semantic", "2026-12", 200) == \
        "memory/semantic/2026-12/g0003/08.jsonl"
    for path, where in [("events/2026-12/0007.jsonl", ("events", "2026-12")),
                        ("events/2026-12/g0001/00.jsonl", ("events", "2026-12")),
                        ("memory/semantic/2026-01/g0012/63.jsonl", ("memory/semantic", "2026-01")),
                        ("runs/index/2026-01/0000.jsonl", ("runs/index", "2026-01"))]:
        assert layout.split_shard_path(path) == where
    assert layout.split_shard_path("runs/abc.json") is None
    assert layout.split_shard_path("events/g0001/00.jsonl") is None
    ordered = ["e/2026-01/0002.jsonl", "e/2026-01/0010.jsonl", "e/2026-01/10000.jsonl",
               "e/2026-01/g0001/00.jsonl", "e/2026-01/g0001/01.jsonl", "e/2026-01/g0002/00.jsonl",
               "e/2026-02/0000.jsonl"]
    assert layout.order_paths(reversed(ordered)) == ordered


def test_appends_past_64_shards_fan_out_so_no_tree_on_the_path_grows(
        repo: Path, small_shards: None) -> None:
    ledger = Ledger.open(repo)
    _emit(ledger, 200)
    shards = ledger.shards("events")
    assert len(shards) >= 150
    month = shards[0].split("/")[1]
    assert shards[:2] == [f"events/{month}/0000.jsonl", f"events/{month}/0001.jsonl"]
    assert shards[64] == f"events/{month}/g0001/00.jsonl"
    assert shards == layout.order_paths(shards)
    # a month tree: 64 flat shards plus one entry per group; a group: at most 64 shards
    assert _max_entries_on_paths(ledger, shards) <= 64 + len(shards) // 64
    group_sizes = [len(ledger.listdir(f"events/{month}/{name}"))
                   for name in ledger.listdir(f"events/{month}") if name.startswith("g")]
    assert group_sizes and max(group_sizes) <= 64
    assert [r.data["n"] for r in ledger.records()] == list(range(200))
    assert [r.data["n"] for r in ledger.records(newest_first=True)] == list(range(199, -1, -1))
    report = verify(ledger, full=True)
    assert report.ok, report.problems


def test_a_branch_in_the_flat_layout_is_read_verified_and_extended_in_groups(
        repo: Path, small_shards: None) -> None:
    ledger = Ledger.open(repo)
    records = [ledger.record("test.append", {"n": n}) for n in range(70)]
    month = records[0].month
    # what versions before groups wrote: 70 flat shards in one month
    _commit_files(ledger, {f"events/{month}/{n:04d}.jsonl": (r.line() + "\n").encode()
                           for n, r in enumerate(records)})
    assert verify(ledger, full=True).ok
    assert [r.data["n"] for r in ledger.records()] == list(range(70))
    _emit(ledger, 3, start=70)
    shards = ledger.shards("events")
    # shard 70 is the next number, so it is the group's: nothing of the flat ones moves
    assert shards[70:] == [f"events/{month}/g0001/06.jsonl", f"events/{month}/g0001/07.jsonl",
                           f"events/{month}/g0001/08.jsonl"]
    assert [r.data["n"] for r in ledger.records()] == list(range(73))
    report = verify(ledger)
    assert report.ok and report.commits == 3, report.problems


def test_a_record_replayed_from_a_flat_shard_into_a_group_is_caught(
        repo: Path, small_shards: None) -> None:
    ledger = Ledger.open(repo)
    _emit(ledger, 70)
    assert verify(ledger).ok
    victim = ledger.shards("events")[3]
    newest = ledger.shards("events")[-1]
    assert "/g0001/" in newest
    line = ledger.read(victim) or b""
    _commit_files(ledger, {newest: (ledger.read(newest) or b"") + line})
    report = verify(ledger)
    assert not report.ok
    assert [p.reason for p in report.problems] == ["duplicates a record already in the stream"]
    assert report.problems[0].path == newest


def test_a_stray_entry_in_a_month_does_not_misplace_the_next_append(
        repo: Path, small_shards: None) -> None:
    ledger = Ledger.open(repo)
    _emit(ledger, 70)
    month = ledger.shards("events")[0].split("/")[1]
    newest = ledger.shards("events")[-1]
    # sorts after every group name, so the newest group is not the month's last entry
    _commit_files(ledger, {f"events/{month}/zz-notes.json": b"{}"})
    _emit(ledger, 2, start=70)
    after = ledger.shards("events")
    assert after[:70] == ledger.shards("events", at=None)[:70]
    assert newest in after and after.index(newest) == 69
    assert [r.data["n"] for r in ledger.records()] == list(range(72))
    assert verify(ledger).ok


def test_a_merge_of_grouped_streams_keeps_every_record_and_verifies(
        repo: Path, small_shards: None) -> None:
    ours = Ledger.open(repo)
    _emit(ours, 10)
    theirs = Ledger(ours.repo, "meridian/other")
    gitio.set_ref(ours.repo, theirs.refname, ours.tip(), expected=None)  # type: ignore[arg-type]
    _emit(ours, 70, start=10)
    _emit(theirs, 70, start=1000)
    outcome, added = ours.integrate(theirs.tip(), summary="merge")  # type: ignore[arg-type]
    assert (outcome, added) == ("merged", 70)
    numbers = sorted(r.data["n"] for r in ours.records())
    assert numbers == sorted([*range(80), *range(1000, 1070)])
    assert any("/g0001/" in path for path in ours.shards("events"))
    report = verify(ours, full=True)
    assert report.ok, report.problems
    _emit(ours, 1, start=5000)  # appending after a merge finds the merged layout's newest shard
    assert verify(ours).ok
    assert ours.records(newest_first=True).__next__().data["n"] == 5000
