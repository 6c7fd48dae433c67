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
