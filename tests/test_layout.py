"""Shard layout: months fan out into groups, and branches in the older flat layout keep working."""

from __future__ import annotations

import json
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


def test_appends_across_shards_63_64_65_and_the_next_group_keep_every_shard(
        repo: Path, small_shards: None) -> None:
    ledger = Ledger.open(repo)
    before: list[str] = []
    for n in range(270):  # about two records a shard: past shard 127 into g0002
        ledger.emit("test.append", {"n": n})
        after = ledger.shards("events")
        # an append only adds to the newest shard or opens the next one
        assert after[:len(before) - 1] == before[:-1] and len(after) - len(before) in (0, 1), n
        before = after
    month = before[0].split("/")[1]
    assert before[63:66] == [f"events/{month}/0063.jsonl", f"events/{month}/g0001/00.jsonl",
                             f"events/{month}/g0001/01.jsonl"]
    assert f"events/{month}/g0001/63.jsonl" in before
    assert f"events/{month}/g0002/00.jsonl" in before
    assert [r.data["n"] for r in ledger.records()] == list(range(270))
    assert verify(ledger).ok and verify(ledger, full=True).ok


def test_an_edited_record_in_a_group_and_a_deleted_group_are_caught(
        repo: Path, small_shards: None) -> None:
    ledger = Ledger.open(repo)
    _emit(ledger, 140)
    assert verify(ledger).ok
    clean = Ledger(ledger.repo, "meridian/clean")  # the same history, for the second attack
    gitio.set_ref(ledger.repo, clean.refname, ledger.tip(), expected=None)  # type: ignore[arg-type]
    grouped = [p for p in ledger.shards("events") if "/g0001/" in p]
    target = grouped[5]
    data = ledger.read(target) or b""
    _commit_files(ledger, {target: data.replace(b'"n":', b'"n":1', 1)})
    for full in (False, True):
        report = verify(ledger, full=full)
        assert not report.ok and report.problems[0].reason == "changed after it was written"
    # on the untouched copy, its whole first group removed in one commit
    repo_ = ledger.repo
    tip = clean.tip()
    assert tip is not None
    month = target.split("/")[1]
    root = gitio.commit_tree(repo_, tip)
    events = repo_[root["events"].id]
    builder = repo_.TreeBuilder(repo_[events[month].id])
    builder.remove("g0001")
    month_tree = builder.write()
    builder = repo_.TreeBuilder(events)
    builder.insert(month, month_tree, pygit2.enums.FileMode.TREE)
    events_tree = builder.write()
    builder = repo_.TreeBuilder(root)
    builder.insert("events", events_tree, pygit2.enums.FileMode.TREE)
    gitio.create_commit(repo_, clean.refname, builder.write(), [tip], "drop a group\n",
                        expected=tip)
    for full in (False, True):
        report = verify(clean, full=full)
        assert not report.ok
        assert {p.reason for p in report.problems} == \
            {"shard deleted: its records were removed after they were written"}


def test_a_flat_branch_and_its_grouped_continuation_converge_whichever_merges(
        repo: Path, small_shards: None) -> None:
    """A branch an older version wrote (70 flat shards in a month) is extended on two
    clones, each crossing into groups; merging either way gives the same tree."""
    ledger = Ledger.open(repo)
    # 70 flat shards, however many records of this size a small shard holds
    emitted = 0
    while len(ledger.shards("events")) < 71:
        _emit(ledger, 1, start=emitted)
        emitted += 1
    shards = ledger.shards("events")[:70]
    month = shards[0].split("/")[1]
    flat = {f"events/{month}/{i:04d}.jsonl": ledger.read(p) or b"" for i, p in enumerate(shards)}
    repo_ = ledger.repo
    tree = gitio.update_tree(repo_, None, {p: repo_.create_blob(d) for p, d in flat.items()})
    old = gitio.create_commit(repo_, "refs/heads/old", tree, [], "older version\n",
                              expected=None)
    kept = [json.loads(line)["data"]["n"] for data in flat.values()
            for line in data.decode().splitlines() if line.strip()]
    ours, theirs = Ledger(repo_, "ours"), Ledger(repo_, "theirs")
    for branch in (ours, theirs):
        gitio.set_ref(repo_, branch.refname, old, expected=None)
    assert verify(ours, full=True).ok and ours.shards("events")[-1].endswith("/0069.jsonl")
    _emit(ours, 10, start=1000)
    _emit(theirs, 10, start=2000)
    assert any("/g0001/" in p for p in ours.shards("events"))
    a_tip, b_tip = ours.tip(), theirs.tip()
    assert a_tip is not None and b_tip is not None
    assert ours.integrate(b_tip, summary="merge")[0] == "merged"
    assert theirs.integrate(a_tip, summary="merge")[0] == "merged"
    assert ours.tree().id == theirs.tree().id
    assert sorted(r.data["n"] for r in ours.records()) == \
        sorted([*kept, *range(1000, 1010), *range(2000, 2010)])
    for side in (ours, theirs):
        report = verify(side, full=True)
        assert report.ok, report.problems


def test_a_branch_of_64_kib_shards_is_read_verified_and_extended_with_16_kib_ones(
        repo: Path, tmp_path: Path) -> None:
    """Shards were closed at 64 KiB before issue #17 made them 16 KiB: a branch written
    then (its open shard already past 16 KiB) keeps every byte; the next append opens
    the next shard instead of rewriting the 40 KiB one, and verify (incremental and
    full) and a merge with a clone still holding the old shards accept it all."""
    from meridian import merge

    assert layout.SHARD_BYTES == 16 * 1024
    ledger = Ledger.open(repo)
    old_size = 64 * 1024
    records = [ledger.record("test.append", {"n": n, "pad": "x" * 150}) for n in range(500)]
    month = records[0].month
    shards: dict[str, bytes] = {}
    buffer, number = b"", 0
    for record in records:  # what the 64 KiB writer produced (merge.shard_lines then)
        line = (record.line() + "\n").encode()
        if buffer and len(buffer) + len(line) > old_size:
            shards[layout.shard_path("events", month, number)] = buffer
            buffer, number = b"", number + 1
        buffer += line
    shards[layout.shard_path("events", month, number)] = buffer
    assert len(shards) >= 2 and len(buffer) > layout.SHARD_BYTES  # an open shard past 16 KiB
    last = len(shards) - 1
    _commit_files(ledger, shards)
    old_tip = ledger.tip()
    assert verify(ledger, full=True).ok
    _emit(ledger, 3, start=500)
    paths = ledger.shards("events")
    assert paths == [*shards, layout.shard_path("events", month, last + 1)]
    for path, data in shards.items():
        assert ledger.read(path) == data  # nothing old rewritten
    assert [r.data["n"] for r in ledger.records()] == list(range(503))
    report = verify(ledger)
    assert report.ok and report.commits == 3, report.problems
    assert verify(ledger, full=True).ok
    # a clone still at the 64 KiB tip with writes of its own merges with this one
    other = gitio.create_commit(
        ledger.repo, "refs/heads/clone",
        gitio.update_tree(ledger.repo, gitio.commit_tree(ledger.repo, old_tip), {
            layout.shard_path("events", month, last): ledger.repo.create_blob(
                shards[layout.shard_path("events", month, last)]
                + (ledger.record("test.append", {"n": "clone"}).line() + "\n").encode())}),
        [old_tip], "clone\n", expected=None)
    tree, added = merge.merge_trees(ledger.repo, ledger.tree(), ledger.tree(other))
    assert added == 1
    merged = gitio.create_commit(ledger.repo, ledger.refname, tree, [ledger.tip(), other],
                                 "merge\n", expected=ledger.tip())
    assert merged == ledger.tip()
    assert len(list(ledger.records())) == 504
    assert verify(ledger).ok and verify(ledger, full=True).ok
