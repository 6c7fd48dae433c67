"""The state branch packs its own loose objects, losing nothing to concurrent writers or kills."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from meridian import ledger as ledger_module
from meridian.ledger import Ledger
from meridian.verify import verify
from tests.conftest import git

WRITER_SCRIPT = textwrap.dedent(
    """
    import sys
    from meridian import ledger as ledger_module
    ledger_module.PACK_EVERY = int(sys.argv[4])
    ledger_module.PACKS_PER_LEVEL = 2
    ledger = ledger_module.Ledger.open(sys.argv[1])
    for i in range(int(sys.argv[3])):
        record = ledger.emit("test.append", {"writer": sys.argv[2], "n": i})
        print(record.id, flush=True)  # acknowledged: the commit is on the branch
    """
)


def _loose_objects(repo: Path) -> int:
    counts = dict(line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())
    return int(counts["count"])


def _packs(repo: Path) -> list[Path]:
    return sorted((repo / ".git" / "objects" / "pack").glob("pack-*.pack"))


def _assert_intact(repo: Path) -> None:
    """Every object reachable from the branch is present and sound, and verify agrees."""
    proc = subprocess.run(["git", "fsck", "--strict", "--no-dangling", "--no-progress"],
                          cwd=repo, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = verify(Ledger.open(repo), full=True)
    assert report.ok, report.problems


def test_appends_pack_their_loose_objects_and_packs_merge_by_level(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger_module, "PACK_EVERY", 8)
    monkeypatch.setattr(ledger_module, "PACKS_PER_LEVEL", 3)
    monkeypatch.setattr(ledger_module, "RETIRE_SECONDS", 0.0)
    ledger = Ledger.open(repo)
    for n in range(100):
        ledger.emit("test.append", {"n": n})
        # an append writes one small pack and no loose object; never more than one
        # interval of them besides the merged packs (at most 2 per level here) and the
        # packs the last pack merged (8 small ones and a level's 3), deleted by the next
        assert _loose_objects(repo) == 0
        assert len(_packs(repo)) <= 8 + 2 * 3 + (8 + 3)
    ledger.pack()
    ledger.pack()  # deletes what the one before merged
    # 13 packs of at most 8 appends, merged 3 at a time: a handful of packs, not 100
    assert 1 <= len(_packs(repo)) <= 5
    assert [r.data["n"] for r in ledger.records()] == list(range(100))
    _assert_intact(repo)
    # git itself reads every object from the packs
    assert git(repo, "rev-list", "--count", "meridian/state").strip() == "100"


HOLDER_SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from meridian import ledger as ledger_module
    ledger = ledger_module.Ledger.open(sys.argv[1])
    fd = os.open(ledger._local_name("pack", ".lock"), os.O_CREAT | os.O_RDWR, 0o644)
    assert ledger_module._try_lock(fd)
    print("held", flush=True)
    time.sleep(120)
    """
)


def test_a_running_packer_is_not_raced_and_a_killed_one_blocks_nothing(repo: Path) -> None:
    ledger = Ledger.open(repo)
    for n in range(5):
        ledger.emit("test.append", {"n": n})
    holder = subprocess.Popen([sys.executable, "-c", HOLDER_SCRIPT, str(repo)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert ledger.pack() is None  # held by a live process: skipped, nothing touched
        assert len(_packs(repo)) == 5  # the appends' own packs, not merged
        # a lock file that exists and is old does not count: only the OS lock does
        lock = ledger.local_dir / "pack-meridian__state.lock"
        old = time.time() - 3600
        os.utime(lock, (old, old))
        assert ledger.pack() is None
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=30)
    # its holder killed, the lock is free at once (no waiting for it to look stale)
    assert lock.exists()
    assert ledger.pack() is not None
    # one pack holds all; the 5 it merged are deleted by a pack RETIRE_SECONDS later
    assert _loose_objects(repo) == 0 and len(_packs(repo)) == 1 + 5
    _assert_intact(repo)


def test_concurrent_writers_packing_as_they_go_lose_nothing(repo: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", WRITER_SCRIPT, str(repo), f"w{p}", "25", "3"],
                              stdout=subprocess.PIPE, text=True) for p in range(6)]
    for proc in procs:
        proc.communicate(timeout=300)
        assert proc.returncode == 0
    records = list(Ledger.open(repo).records())
    assert sorted((r.data["writer"], r.data["n"]) for r in records) == \
        sorted((f"w{p}", i) for p in range(6) for i in range(25))
    assert len(_packs(repo)) >= 1
    _assert_intact(repo)


def test_writers_and_packers_killed_at_random_lose_no_acknowledged_record(repo: Path) -> None:
    rng = random.Random(17)
    acknowledged: set[str] = set()
    for wave in range(6):
        procs = [subprocess.Popen([sys.executable, "-c", WRITER_SCRIPT, str(repo),
                                   f"k{wave}-{p}", "400", "2"],
                                  stdout=subprocess.PIPE, text=True) for p in range(4)]
        firsts = [proc.stdout.readline() for proc in procs]  # type: ignore[union-attr]
        # every writer is appending now (and packing every other append): kill each at
        # a random moment, mid-append or mid-pack
        for proc in procs:
            time.sleep(rng.uniform(0.05, 0.5))
            proc.send_signal(signal.SIGKILL)
        for proc, first in zip(procs, firsts, strict=True):
            out, _ = proc.communicate(timeout=60)
            acknowledged.update(line for line in (first + out).split() if len(line) == 32)
    assert len(acknowledged) > 20, "the writers were killed before writing anything"
    ledger = Ledger.open(repo)
    stored = {r.id for r in ledger.records()}
    assert acknowledged <= stored
    _assert_intact(repo)
    # whatever a killed packer left (a temporary pack, loose copies) does not
    # stop the next one; after it, every object of the branch is in a pack. (Objects of
    # attempts that lost the compare-and-swap, or were killed, are unreachable: they stay
    # loose for `git gc` to prune, as git's own do.)
    ledger.emit("test.append", {"after": "kills"})
    ledger.pack()
    reachable = {line.split()[0] for line in
                 git(repo, "rev-list", "--objects", "meridian/state").splitlines()}
    objects = repo / ".git" / "objects"
    loose = {d.name + f.name for d in objects.iterdir() if len(d.name) == 2 for f in d.iterdir()}
    assert not reachable & loose
    _assert_intact(repo)


EMPTY_DIRS_SCRIPT = textwrap.dedent(
    """
    import os, sys
    objects = sys.argv[1]
    while True:  # what `git prune-packed` does to each object directory it empties
        for name in os.listdir(objects):
            if len(name) == 2:
                try:
                    os.rmdir(os.path.join(objects, name))
                except OSError:
                    pass
    """
)


def test_writers_racing_a_pruner_of_object_directories_are_never_refused(repo: Path) -> None:
    """`git prune-packed` (run by a concurrent packer) removes an object directory it
    emptied; libgit2 creates that directory, then renames the object into it. Every
    object write (blob, tree, commit) that loses that race is written again: no
    legitimate append fails. (The window is microseconds: a tree write that lost it was
    seen as a refused append about once in 600 under load; this run catches it only
    sometimes, never falsely.)"""
    Ledger.open(repo).emit("test.append", {"first": True})
    pruner = subprocess.Popen([sys.executable, "-c", EMPTY_DIRS_SCRIPT,
                               str(repo / ".git" / "objects")])
    try:
        procs = [subprocess.Popen([sys.executable, "-c", WRITER_SCRIPT, str(repo), f"r{p}",
                                   "150", "1000000"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for p in range(3)]
        outcomes = [proc.communicate(timeout=600) for proc in procs]
    finally:
        pruner.kill()
        pruner.wait()
    for proc, (_, err) in zip(procs, outcomes, strict=True):
        assert proc.returncode == 0, err
    records = [r for r in Ledger.open(repo).records() if "writer" in r.data]
    assert len(records) == 3 * 150
    _assert_intact(repo)


def _loose_append(ledger: Ledger, n: int) -> None:
    """One record appended as loose objects (libgit2's own writes: what an older Meridian,
    or a merge of two histories, leaves on the branch)."""
    from meridian import gitio, layout

    record = ledger.record("test.append", {"n": n})
    tip = ledger.tip()
    base = None if tip is None else gitio.commit_tree(ledger.repo, tip)
    path = layout.shard_path("events", record.month, 0)
    old = ledger.read(path) or b""
    blob = gitio.write_blob(ledger.repo, old + record.line().encode() + b"\n")
    tree = gitio.update_tree(ledger.repo, base, {path: blob})
    gitio.create_commit(ledger.repo, ledger.refname, tree, [] if tip is None else [tip],
                        f"test.append\n\nMeridian-Record: {record.id}\n", expected=tip)


def test_a_pack_deletes_exactly_the_loose_copies_its_index_lists(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Loose objects on the branch (a merge's, an older version's) are packed by git. The
    loose copies go by the new pack's index (no `git prune-packed` per pack); an
    index that cannot be read falls back to `git prune-packed`; a packer killed after
    its pack was written leaves loose copies that the sweep of every PACKS_PER_LEVEL-th
    pack removes. Nothing is ever unreadable."""
    from meridian import gitio

    monkeypatch.setattr(ledger_module, "PACK_EVERY", 10**9)  # packs run by hand here
    monkeypatch.setattr(ledger_module, "PACKS_PER_LEVEL", 3)
    ledger = Ledger.open(repo)
    for n in range(6):
        _loose_append(ledger, n)
    stranger = ledger.repo.create_blob(b"not the ledger's, loose\n")  # no pack holds it
    name = ledger.pack()
    assert name is not None
    ids = gitio.pack_object_ids(ledger.repo, name)
    assert ids is not None and len(ids) >= 6 * 4
    objects = repo / ".git" / "objects"
    assert not any((objects / i[:2] / i[2:]).exists() for i in ids)
    assert (objects / str(stranger)[:2] / str(stranger)[2:]).exists()
    assert set(ids) == {line.split()[0] for line in git(
        repo, "verify-pack", "-v", str(objects / "pack" / f"{name}.idx")).splitlines()
        if len(line.split()) > 2 and len(line.split()[0]) == 40}
    _assert_intact(repo)

    # a packer killed between its pack and the deletion: the next packs leave those
    # copies (their packs do not hold them again) until the sweep
    for n in range(6, 9):
        _loose_append(ledger, n)
    since = ledger.tip()
    for n in range(9, 12):
        _loose_append(ledger, n)
    orphan = gitio.pack_new_objects(ledger.repo, ledger.tip(), since)
    assert orphan is not None
    left = gitio.pack_object_ids(ledger.repo, orphan)
    assert left and all((objects / i[:2] / i[2:]).exists() for i in left)
    ledger.pack()  # pack 2 of the level: its own copies only
    assert all((objects / i[:2] / i[2:]).exists() for i in left)
    _loose_append(ledger, 12)
    ledger.pack()  # pack 3 of 3: the sweep
    assert not any((objects / i[:2] / i[2:]).exists() for i in left)
    assert _loose_objects(repo) == 1  # the stranger, packed by no one
    _assert_intact(repo)

    # an index that cannot be read: `git prune-packed` does the deletion
    monkeypatch.setattr(gitio, "pack_object_ids", lambda repo, name: None)
    for n in range(13, 16):
        _loose_append(ledger, n)
    ledger.pack()
    assert _loose_objects(repo) == 1
    assert [r.data["n"] for r in ledger.records()] == list(range(16))
    _assert_intact(repo)


@pytest.mark.parametrize("killed_after", ["pack written", "half the loose copies deleted"])
def test_a_packer_killed_after_writing_its_pack_leaves_no_reachable_loose_object(
        repo: Path, killed_after: str) -> None:
    """A packer killed between writing its pack and recording it leaves loose copies of
    objects a pack holds; the next packer packs around them (they are packed already), so
    without knowing a packer died it would delete only its own pack's copies and leave
    these loose until a level merge. It knows: the marker a dead packer leaves."""
    ledger = Ledger.open(repo)
    for n in range(10):
        ledger.emit("test.append", {"n": n})
    from meridian import gitio

    # what the killed packer did: its in-progress marker, then its pack, then maybe part
    # of its pruning, then death (no state file, no marker removal)
    ledger._local_name("pack", ".running").touch()
    name = gitio.pack_new_objects(ledger.repo, ledger.tip(), None)
    assert name is not None
    if killed_after != "pack written":
        ids = gitio.pack_object_ids(ledger.repo, name) or []
        gitio.prune_loose(ledger.repo, ids[: len(ids) // 2])
    ledger.emit("test.append", {"after": "kill"})
    assert ledger.pack() is not None
    reachable = {line.split()[0] for line in
                 git(repo, "rev-list", "--objects", "meridian/state").splitlines()}
    objects = repo / ".git" / "objects"
    loose = {d.name + f.name for d in objects.iterdir() if len(d.name) == 2 for f in d.iterdir()}
    assert not reachable & loose
    assert not ledger._local_name("pack", ".running").exists()
    _assert_intact(repo)


def test_packs_meridian_keeps_never_set_off_git_gc_auto(repo: Path) -> None:
    """A burst of appends (merged packs kept a while for readers) never leaves as many
    packs as gc.autoPackLimit: one pack more of the user's (a fetch) would make every
    `git commit` repack the whole repository in the background."""
    git(repo, "config", "gc.autoPackLimit", "30")
    ledger = Ledger.open(repo)
    for n in range(700):
        ledger.emit("test.append", {"n": n})
        assert len(_packs(repo)) < 30, n
    (repo / "f").write_text("x\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "user")
    git(repo, "repack", "-q")  # the user's own pack
    before = set(_packs(repo))
    git(repo, "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet")
    assert set(_packs(repo)) == before  # git saw no reason to repack
    assert [r.data["n"] for r in ledger.records()] == list(range(700))
    _assert_intact(repo)


def test_what_a_merge_keeps_is_compressed_though_an_appends_pack_is_not(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An append's pack stores its shard and trees at zlib level 0 (merged soon); the
    merged pack holds every full object compressed, and a document past the delta limit
    (copied by merges as it is) is compressed in the append's pack already."""
    import json
    import zlib

    from meridian import packfile
    from meridian.ledger import Write

    monkeypatch.setattr(ledger_module, "PACK_EVERY", 8)
    monkeypatch.setattr(ledger_module, "RETIRE_SECONDS", 0.0)
    ledger = Ledger.open(repo)
    directory = repo / ".git" / "objects" / "pack"
    for n in range(7):
        ledger.emit("test.append", {"n": n, "text": "compressible " * 20})
    small = [p.stem for p in directory.glob("pack-*.pack")]
    packfile._WRITTEN.clear()  # read from disk
    stored = [(e, packfile.inflate(e)) for name in small
              for e in packfile.read(directory, name) or []]
    shards = [(e, data) for e, data in stored if e.kind == packfile.BLOB]
    assert shards and all(len(e.raw) - e.body >= len(data) for e, data in shards)  # level 0
    document = json.dumps({"big": ["x" * 100] * 20_000}).encode()  # > DELTA_MAX_BYTES
    ledger.commit(Write(summary="doc", records=[("events", ledger.record("test.doc", {"n": 7}))],
                        blobs={"docs/big.json": document}))
    packfile._WRITTEN.clear()
    new = {p.stem: packfile.read(directory, p.stem) or []
           for p in directory.glob("pack-*.pack") if p.stem not in small}
    entries = max(new.values(), key=len)  # the 8th append merged all 8 (theirs are retired)
    assert len(entries) > 8 * 3
    for entry in entries:
        if entry.kind in packfile.TYPE_NAMES:
            data = zlib.decompress(entry.raw[entry.body:])
            if len(data) > 200:
                assert len(entry.raw) - entry.body < len(data) * 0.8, (entry.kind, len(data))
    sizes = {len(packfile.inflate(e)): len(e.raw) for e in entries if e.kind == packfile.BLOB}
    assert sizes[len(document)] < len(document) // 10
    _assert_intact(repo)


# --- a level's merge: packs copied whole, one block each --------------------------------


def _verify_pack(repo: Path, name: str) -> str:
    """`git verify-pack -v`: the pack's and index's checksums, and every entry's CRC."""
    return git(repo, "verify-pack", "-v", str(repo / ".git" / "objects" / "pack" / f"{name}.idx"))


def test_a_level_merge_copies_packs_whole_and_git_reads_every_object(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Merged packs (deltas against bases in the same pack) are copied as one block each:
    the offsets move, the CRC of each entry is the source index's, and git checks both
    (verify-pack) and reads every object (fsck, rev-list)."""
    from meridian import gitio, packfile

    monkeypatch.setattr(ledger_module, "PACK_EVERY", 10**9)  # packs run by hand here
    ledger = Ledger.open(repo)
    directory = repo / ".git" / "objects" / "pack"
    merged = []
    for batch in range(3):
        for n in range(6):
            ledger.emit("test.append", {"batch": batch, "n": n, "text": "shard line " * 8})
        merged.append(ledger.pack())
    assert all(merged) and len(set(merged)) == 3
    sources = [packfile.load(directory, name) for name in merged]
    assert all(sources)
    written = packfile.concatenate(directory, sources)  # type: ignore[arg-type]
    out = _verify_pack(repo, written.name)
    deltas = [line for line in out.splitlines() if " blob " in line and len(line.split()) >= 7]
    assert deltas  # the sources' deltas, still deltas (their bases moved with them)
    every = {oid for source in sources for oid in source.ids}  # type: ignore[union-attr]
    assert set(written.ids) == every and len(written.ids) == len(every)
    for name in merged:
        gitio.remove_packs(ledger.repo, [name])  # only the concatenated copy is left
    _assert_intact(repo)
    assert git(repo, "rev-list", "--count", "meridian/state").strip() == "18"
    assert [r.data["n"] for r in Ledger.open(repo).records()] == list(range(6)) * 3


def test_a_level_merge_of_packs_sharing_an_object_lists_it_once(repo: Path) -> None:
    """Two packs holding the same object cannot be concatenated (an index lists an id
    once): ``concatenate`` refuses, and the level's merge copies entries one by one."""
    from meridian import packfile

    ledger = Ledger.open(repo)
    directory = repo / ".git" / "objects" / "pack"

    def blob(text: bytes) -> tuple[int, bytes, bytes]:
        return packfile.BLOB, text, packfile.object_id(packfile.BLOB, text)

    first = packfile.write(directory, [blob(b"x\n"), blob(b"shared\n")])
    second = packfile.write(directory, [blob(b"shared\n"), blob(b"z\n")])
    loaded = [packfile.load(directory, written.name) for written in (first, second)]
    with pytest.raises(ValueError, match="two of the packs"):
        packfile.concatenate(directory, loaded)  # type: ignore[arg-type]
    retired: dict[str, float] = {}
    merged = ledger._merge_level([first.name, second.name], lambda name: None, retired)
    assert merged is not None
    held = packfile.load(directory, merged)
    assert held is not None
    assert sorted(held.ids) == sorted({*first.ids, *second.ids}) and len(held.ids) == 3
    assert set(retired) == {first.name, second.name}
    _verify_pack(repo, merged)
    for text in (b"x\n", b"shared\n", b"z\n"):
        oid = packfile.object_id(packfile.BLOB, text).hex()
        assert git(repo, "cat-file", "-p", oid) == text.decode()


def test_a_damaged_pack_is_not_copied_into_a_level_merge(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A byte flipped in a merged pack: ``load`` refuses it (its checksum), so no new pack
    with a fresh checksum launders the damage."""
    from meridian import packfile

    monkeypatch.setattr(ledger_module, "PACK_EVERY", 10**9)
    ledger = Ledger.open(repo)
    directory = repo / ".git" / "objects" / "pack"
    for n in range(4):
        ledger.emit("test.append", {"n": n})
    name = ledger.pack()
    assert name is not None and packfile.load(directory, name) is not None
    path = directory / f"{name}.pack"
    data = bytearray(path.read_bytes())
    data[40] ^= 0xFF
    path.chmod(0o644)
    path.write_bytes(bytes(data))
    assert packfile.load(directory, name) is None


def test_a_loose_commit_behind_a_packed_merge_is_found(repo: Path) -> None:
    """The look for loose commits follows the first parents by hand; from a merge on it
    walks every parent: a loose commit on the merged side is found though the merge
    commit itself is packed."""
    import pygit2

    from meridian import gitio, packfile

    ledger = Ledger.open(repo)
    for n in range(3):
        ledger.emit("test.append", {"n": n})
    base = ledger.tip()
    assert base is not None
    handle = ledger.repo
    directory = repo / ".git" / "objects" / "pack"
    assert not gitio.loose_commit_since(handle, base, None)  # appends write packs only
    sig = pygit2.Signature("t", "t@example.com", 1_700_000_000, 0)
    tree = gitio.commit_tree_id(handle, base)
    side = handle.create_commit(None, sig, sig, "side\n", tree, [base])  # loose
    data = gitio.commit_bytes(tree, [base, side], sig, "merge\n")
    packfile.write(directory, [(packfile.COMMIT, data, packfile.object_id(packfile.COMMIT, data))])
    merge = pygit2.Oid(raw=packfile.object_id(packfile.COMMIT, data))
    fresh = pygit2.Repository(str(repo))
    assert gitio.loose_commit_since(fresh, merge, base)
    # the same history with the side commit packed too: nothing loose
    _, raw = fresh.odb.read(side)
    packfile.write(directory, [(packfile.COMMIT, raw, side.raw)])
    gitio.prune_loose(fresh, [str(side)])
    assert not gitio.loose_commit_since(pygit2.Repository(str(repo)), merge, base)
    # and a loose commit on the first-parent chain itself
    top = fresh.create_commit(None, sig, sig, "top\n", tree, [merge])
    assert gitio.loose_commit_since(pygit2.Repository(str(repo)), top, base)
