"""Write(dedupe=True) reads a stream's ids once, then only what was appended since."""

from __future__ import annotations

from pathlib import Path

import pytest

from meridian import gitio
from meridian.ledger import Ledger, Write
from meridian.verify import verify

STREAM = "memory/notes"


def _note(ledger: Ledger, text: str) -> Write:
    return Write(summary=text, dedupe=True).add(STREAM, ledger.record("memory.note", {"text": text}))


def test_a_copy_written_by_another_writer_since_the_last_read_is_skipped(repo: Path) -> None:
    mine, theirs = Ledger.open(repo), Ledger.open(repo)
    mine.emit("test.append", {"n": 0})
    assert mine.commit(_note(mine, "first")).written  # mine has read the stream now
    assert theirs.commit(_note(theirs, "second")).written
    # "second" arrived after mine last read the stream: it is found among the new lines
    result = mine.commit(_note(mine, "second"))
    assert not result.written and result.commit is None
    assert mine.commit(_note(mine, "third")).written
    assert sorted(r.data["text"] for r in mine.records(STREAM)) == ["first", "second", "third"]
    assert verify(mine, full=True).ok


def test_a_retry_after_losing_the_race_skips_what_the_winner_wrote(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine, theirs = Ledger.open(repo), Ledger.open(repo)
    mine.commit(_note(mine, "warm"))
    real = gitio.create_commit
    raced = []

    def racing_create_commit(*args: object, **kwargs: object) -> object:
        if not raced:  # another writer lands the same memory between our read and our CAS
            raced.append(True)
            theirs.commit(_note(theirs, "contended"))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gitio, "create_commit", racing_create_commit)
    result = mine.commit(_note(mine, "contended"))
    assert raced and not result.written
    assert [r.data["text"] for r in mine.records(STREAM)].count("contended") == 1


def test_after_a_merge_re_sharded_the_stream_the_ids_are_read_again(repo: Path) -> None:
    mine = Ledger.open(repo)
    mine.commit(_note(mine, "base"))
    other = Ledger(mine.repo, "meridian/other")
    gitio.set_ref(mine.repo, other.refname, mine.tip(), expected=None)  # type: ignore[arg-type]
    mine.commit(_note(mine, "ours"))
    other.commit(_note(other, "theirs"))
    assert mine.integrate(other.tip(), summary="merge")[0] == "merged"  # type: ignore[arg-type]
    assert not mine.commit(_note(mine, "theirs")).written
    assert mine.commit(_note(mine, "new")).written
    assert sorted(r.data["text"] for r in mine.records(STREAM)) == ["base", "new", "ours", "theirs"]
