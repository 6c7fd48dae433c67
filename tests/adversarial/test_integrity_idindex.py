"""Attack: poison the index of verified ids (``.git/meridian/ids-<branch>.<stream>.idx``).

The index is a plain file the agent can rewrite with a recomputed checksum. Dropping an
id from it is the same power as moving the verified-tip marker: the incremental
``meridian verify`` can be lied to that way. Layer: ``meridian verify --full`` (and
``meridian ci``, which runs it) reads no cache, so the duplicate it hid is found there,
whatever shape the history has (merges from ``sync`` included).
"""

from __future__ import annotations

import json
from pathlib import Path

from meridian import idindex
from meridian.cli import main
from meridian.ledger import Ledger, Write
from meridian.verify import verify
from tests.conftest import git


def _merged_branch(repo: Path, tmp_path: Path) -> tuple[Ledger, str]:
    """A state branch with a clean merge (a side branch wrote a note, the branch an
    event); returns the ledger and the merge commit."""
    assert main(["init", "--no-hooks"]) == 0
    ledger = Ledger.open(repo)
    for n in range(3):
        ledger.emit("test.append", {"n": n})
    git(repo, "branch", "side", str(ledger.tip()))
    side = Ledger(ledger.repo, "side")
    note = side.record("memory.note", {"text": "from the side"})
    side.commit(Write(summary="note", dedupe=True).add("memory/notes", note))
    ledger.emit("test.append", {"n": "main"})
    checkout = tmp_path / "merge"
    git(repo, "worktree", "add", "-q", str(checkout), "meridian/state")
    git(checkout, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    merge = git(checkout, "rev-parse", "HEAD").strip()
    git(repo, "worktree", "remove", "--force", str(checkout))
    return ledger, merge


def _replay_first_event(repo: Path, tmp_path: Path) -> str:
    checkout = tmp_path / "replay"
    git(repo, "worktree", "add", "-q", str(checkout), "meridian/state")
    shard = min(checkout.glob("events/*/0000.jsonl"))
    first = shard.read_text().splitlines()[0]
    shard.write_text(shard.read_text() + first + "\n")
    git(checkout, "commit", "-q", "-am", "replay")
    git(repo, "worktree", "remove", "--force", str(checkout))
    return str(json.loads(first)["id"])


def _forge_index(ledger: Ledger, key: str, ids: set[str]) -> None:
    binary, other = idindex._split(ids)
    idindex._write_whole(idindex.index_path(ledger, "events"), "events", key,
                         b"".join(sorted(binary)), set(other))


def test_full_verify_after_a_merge_reads_no_index(repo: Path, tmp_path: Path) -> None:
    ledger, merge = _merged_branch(repo, tmp_path)
    assert verify(ledger, full=True).ok
    rid = _replay_first_event(repo, tmp_path)
    ledger = Ledger.open(repo)
    # The agent drops the replayed id from the index, keyed at the merge, checksum and all.
    at_merge = idindex.scan_ids(ledger, "events", ledger.repo.revparse_single(merge).id)
    assert rid in at_merge
    _forge_index(ledger, merge, at_merge - {rid})
    report = verify(ledger, full=True)
    assert any(p.record == rid and p.reason == "duplicates a record already in the stream"
               for p in report.problems), report.problems


def _ambiguous(line: str, decoy: str) -> str:
    """``line`` with a second ``id`` key in front: JSON keeps the last, a reader that
    slices the first 39 bytes (the ledger's own lines start with the id) sees ``decoy``."""
    return '{"id":"' + decoy + '",' + line[1:]


def test_a_line_stating_two_ids_is_refused_and_never_indexed_under_the_decoy(
        repo: Path, tmp_path: Path) -> None:
    """The agent stores a record as a line whose first ``id`` is a decoy (the record's own
    id, which its content hashes to, comes last): an index built from the shards would
    file it under the decoy, so a later replay of the record would look new."""
    assert main(["init", "--no-hooks"]) == 0
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    assert verify(ledger).ok
    record = ledger.record("test.append", {"n": "hidden"})
    decoy = "0" * 32
    checkout = tmp_path / "ambiguous"
    git(repo, "worktree", "add", "-q", str(checkout), "meridian/state")
    shard = min(checkout.glob("events/*/0000.jsonl"))
    shard.write_text(shard.read_text() + _ambiguous(record.line(), decoy) + "\n")
    git(checkout, "commit", "-q", "-am", "an event")
    sha = git(checkout, "rev-parse", "HEAD").strip()
    git(repo, "worktree", "remove", "--force", str(checkout))
    ledger = Ledger.open(repo)
    at = ledger.tip()
    assert at is not None
    # what the index is built from reads the id JSON reads
    assert record.id in idindex.scan_ids(ledger, "events", at)
    assert decoy not in idindex.scan_ids(ledger, "events", at)
    for full in (False, True):
        problems = [p for p in verify(ledger, full=full).problems if p.commit == sha]
        assert any(p.record == record.id and "id" in p.reason and "twice" in p.reason
                   for p in problems), problems


def test_a_line_restating_its_kind_is_refused(repo: Path, tmp_path: Path) -> None:
    """A reader that looks for ``"kind":"gate.`` in the bytes and JSON would disagree."""
    assert main(["init", "--no-hooks"]) == 0
    ledger = Ledger.open(repo)
    ledger.emit("test.append", {"n": 0})
    record = ledger.record("test.append", {"n": "kind"})
    line = record.line()
    restated = line.replace('"kind":"test.append"', '"kind":"gate.passed","kind":"test.append"')
    checkout = tmp_path / "kind"
    git(repo, "worktree", "add", "-q", str(checkout), "meridian/state")
    shard = min(checkout.glob("events/*/0000.jsonl"))
    shard.write_text(shard.read_text() + restated + "\n")
    git(checkout, "commit", "-q", "-am", "an event")
    git(repo, "worktree", "remove", "--force", str(checkout))
    problems = verify(Ledger.open(repo)).problems
    assert any(p.record == record.id and "states kind twice" in p.reason for p in problems), \
        problems
