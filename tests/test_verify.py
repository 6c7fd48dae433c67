"""`meridian verify` proves the state branch append-only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.ledger import Ledger
from meridian.verify import cache_path, verify
from tests.conftest import git


def _populated(repo: Path, n: int = 4) -> Ledger:
    assert main(["init", "--no-hooks"]) == 0
    ledger = Ledger.open(repo)
    for i in range(n):
        ledger.emit("test.append", {"n": i})
    return ledger


def _tamper(repo: Path, tmp_path: Path, edit) -> str:  # type: ignore[no-untyped-def]
    """Commit ``edit(shard_path)`` on the state branch by hand, as a person could."""
    checkout = tmp_path / "tamper"
    git(repo, "worktree", "add", "-q", str(checkout), "meridian/state")
    shard = next(checkout.glob("events/*/0000.jsonl"))
    edit(shard)
    git(checkout, "commit", "-q", "-a", "-m", "innocent looking change")
    sha = git(checkout, "rev-parse", "HEAD").strip()
    git(repo, "worktree", "remove", "--force", str(checkout))
    return sha


def test_clean_branch_verifies_and_caches(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = _populated(repo)
    assert main(["verify"]) == 0
    assert "OK; checked 5 commits" in capsys.readouterr().out
    assert cache_path(ledger).read_text().strip() == str(ledger.tip())
    ledger.emit("test.append", {"n": 99})
    report = verify(ledger)
    assert report.ok and report.incremental and report.commits == 1


def test_edit_of_an_old_record_is_tampering(repo: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    ledger = _populated(repo)
    assert main(["verify"]) == 0
    victim = list(ledger.records())[2]

    def edit(shard: Path) -> None:
        lines = shard.read_text().splitlines()
        raw = json.loads(lines[2])
        raw["data"]["n"] = 1000
        lines[2] = json.dumps(raw, separators=(",", ":"))
        shard.write_text("\n".join(lines) + "\n")

    sha = _tamper(repo, tmp_path, edit)
    capsys.readouterr()
    assert main(["verify"]) == 1
    out = capsys.readouterr().out
    assert f"commit {sha[:12]}" in out
    assert f"/0000.jsonl:3: record {victim.id} changed after it was written" in out


def test_deleted_record_is_tampering(repo: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    ledger = _populated(repo)
    victim = list(ledger.records())[1]

    def delete(shard: Path) -> None:
        lines = shard.read_text().splitlines()
        del lines[1]
        shard.write_text("\n".join(lines) + "\n")

    sha = _tamper(repo, tmp_path, delete)
    capsys.readouterr()
    assert main(["verify", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    problem = report["problems"][0]
    assert (problem["commit"], problem["line"], problem["record"]) == (sha, 2, victim.id)
    assert problem["path"].startswith("events/") and problem["path"].endswith("/0000.jsonl")
    assert problem["reason"] == "removed after it was written"


def test_appended_forged_line_is_invalid(repo: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _populated(repo)

    def forge(shard: Path) -> None:
        with shard.open("a") as fh:
            fh.write('{"id":"00000000000000000000000000000000","ts":"2026-01-01T00:00:00.000000Z",'
                     '"kind":"test.forged","writer":"x","data":{"gate":"g"}}\n')

    _tamper(repo, tmp_path, forge)
    assert main(["verify"]) == 1
    assert "does not match its content" in capsys.readouterr().out


def test_rewritten_history_is_detected(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = _populated(repo)
    assert main(["verify"]) == 0
    git(repo, "update-ref", "refs/heads/meridian/state", "meridian/state~2")
    ledger.emit("test.append", {"n": "replacement"})
    capsys.readouterr()
    assert main(["verify"]) == 1
    assert "history rewritten" in capsys.readouterr().out
    # The evidence is kept: a full re-check does not erase it (see tests/adversarial).
    assert main(["verify", "--full"]) == 1
    assert "history rewritten" in capsys.readouterr().out


def test_verify_without_state_branch_is_a_usage_error(repo: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify"]) == 2
    assert capsys.readouterr().err == (
        "meridian: no state branch meridian/state: run `meridian init` first\n")


def _merge_by_hand(repo: Path, tmp_path: Path, edit=None) -> str:  # type: ignore[no-untyped-def]
    """A side branch appends a record; a person merges it with `-s ours` (dropping it)."""
    ledger = Ledger.open(repo)
    base = ledger.tip()
    side = Ledger(ledger.repo, "side")
    git(repo, "branch", "side", str(base))
    side.emit("test.append", {"n": "side"})
    ledger.emit("test.append", {"n": "main"})
    checkout = tmp_path / "merge"
    git(repo, "worktree", "add", "-q", str(checkout), "meridian/state")
    git(checkout, "merge", "-q", "-s", "ours", "--no-commit", "side")
    if edit is not None:
        edit(checkout)
        git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "merge side")
    sha = git(checkout, "rev-parse", "HEAD").strip()
    git(repo, "worktree", "remove", "--force", str(checkout))
    return sha


def test_a_merge_that_drops_a_parents_record_is_tampering(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _populated(repo, 1)
    sha = _merge_by_hand(repo, tmp_path)
    capsys.readouterr()
    assert main(["verify"]) == 1
    out = capsys.readouterr().out
    assert f"commit {sha[:12]}: events:" in out and "merge dropped a record of a parent" in out


def test_a_merge_that_adds_junk_is_tampering(repo: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _populated(repo, 1)

    def junk(checkout: Path) -> None:
        (checkout / "runs").mkdir(exist_ok=True)
        (checkout / "runs" / "evil.json").write_text("not json")
        shard = next(checkout.glob("events/*/0000.jsonl"))
        shard.write_text(shard.read_text() + '{"no": "id"}\n')

    _merge_by_hand(repo, tmp_path, junk)
    capsys.readouterr()
    assert main(["verify", "--full"]) == 1
    out = capsys.readouterr().out
    assert "runs/evil.json: merge added a document no parent had" in out
    assert "merge holds a malformed line" in out
    assert "merge dropped a record of a parent" in out


def test_a_second_copy_of_a_memory_record_is_tampering(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from meridian.ledger import Write

    _populated(repo, 0)
    ledger = Ledger.open(repo)
    original = ledger.record("memory.note", {"text": "x"})
    ledger.commit(Write(summary="memory", dedupe=True).add("memory/notes", original))
    forged = original.model_copy(update={"writer": "Mallory <m@evil>", "ts": "2026-01-01T00:00:00.000000Z"})
    assert forged.id == original.id  # memory ids hash content only
    checkout = tmp_path / "forge"
    git(repo, "worktree", "add", "-q", str(checkout), "meridian/state")
    shard = next(checkout.glob("memory/notes/*/0000.jsonl"))
    shard.write_text(shard.read_text() + forged.line() + "\n")
    git(checkout, "commit", "-q", "-am", "forge")
    capsys.readouterr()
    assert main(["verify"]) == 1
    assert f"record {original.id} duplicates a record already in the stream" in capsys.readouterr().out


def test_a_shard_without_a_final_newline_is_refused(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _populated(repo, 0)
    record = Ledger.open(repo).record("test.append", {"n": 1})

    def glue(shard: Path) -> None:
        shard.write_text(shard.read_text() + record.line())  # no newline

    _tamper(repo, tmp_path, glue)
    assert main(["verify"]) == 1
    assert "shard does not end with a newline" in capsys.readouterr().out


def test_verify_imports_only_the_models_of_the_kinds_it_meets(repo: Path) -> None:
    import subprocess
    import sys

    _populated(repo, 2)
    Ledger.open(repo).emit("gate.started", {"gate": "g"})
    # (the branch as the hooks open it: Ledger.open would read the config, with yaml)
    script = ("import sys; from meridian import gitio; from meridian.ledger import Ledger; "
              "from meridian.verify import verify; "
              "assert verify(Ledger(gitio.open_repo('.')), full=sys.argv[1] == 'full').ok; "
              "print(sorted(m for m in sys.modules if m.startswith(('meridian.', 'pydantic'))))")

    def imported(mode: str) -> str:
        return subprocess.run([sys.executable, "-c", script, mode], cwd=repo,
                              capture_output=True, text=True, check=True).stdout

    out = imported("full")
    assert "meridian.gates.events" in out
    assert "meridian.evals.store" not in out and "meridian.memory.schemas" not in out
    # new blocks (what the hooks write) are proved valid without any model (record_check)
    Ledger.open(repo).emit("gate.blocked", {"gate": "g", "source": "claude", "reason": "r2",
                                            "files": ["a.py"], "session": "s"})
    out = imported("incremental")
    assert "meridian.gates.events" not in out and "'pydantic'" not in out, out
    Ledger.open(repo).emit("gate.submitted", {"gate": "g", "subject": "0" * 40})
    assert "meridian.gates.events" in imported("incremental")


def test_a_replayed_event_is_tampering_even_in_a_new_shard(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A verbatim copy of an event (a gate passed twice, a cost counted twice) is valid
    # on its own: only its id gives it away, in the same shard or a later one.
    _populated(repo, 2)
    checkout = tmp_path / "replay"
    git(repo, "worktree", "add", "-q", str(checkout), "meridian/state")
    shard = next(checkout.glob("events/*/0000.jsonl"))
    first = shard.read_text().splitlines()[0]
    shard.write_text(shard.read_text() + first + "\n")
    git(checkout, "commit", "-q", "-am", "replay in the same shard")
    (shard.parent / "0001.jsonl").write_text(first + "\n")
    git(checkout, "add", ".")
    git(checkout, "commit", "-q", "-m", "replay in a new shard")
    rid = json.loads(first)["id"]
    capsys.readouterr()
    assert main(["verify"]) == 1
    out = capsys.readouterr().out
    assert f"0000.jsonl:{len(shard.read_text().splitlines())}: record {rid} duplicates a record already in the stream" in out
    assert f"0001.jsonl:1: record {rid} duplicates a record already in the stream" in out


def test_a_record_filed_under_another_month_is_refused(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Readers and the duplicate check find a record by the month of its time.
    ledger = _populated(repo, 0)
    record = ledger.record("test.append", {"n": 1}, ts="2020-01-02T03:04:05.000006Z")
    checkout = tmp_path / "misfile"
    git(repo, "worktree", "add", "-q", str(checkout), "meridian/state")
    shard = checkout / "events" / "2021-05" / "0000.jsonl"
    shard.parent.mkdir(parents=True)
    shard.write_text(record.line() + "\n")
    git(checkout, "add", ".")
    git(checkout, "commit", "-q", "-m", "misfile")
    capsys.readouterr()
    assert main(["verify"]) == 1
    assert (f"events/2021-05/0000.jsonl:1: record {record.id} stored under 2021-05 but its "
            "time 2020-01-02T03:04:05.000006Z is not in it") in capsys.readouterr().out


# --- the index of verified ids (meridian.idindex): a cache, never trust ----------------


def _replay(repo: Path, tmp_path: Path) -> tuple[str, str]:
    """Commit a verbatim copy of the first event by hand: (its id, the commit)."""
    rid = ""

    def copy_first(shard: Path) -> None:
        nonlocal rid
        first = shard.read_text().splitlines()[0]
        rid = json.loads(first)["id"]
        shard.write_text(shard.read_text() + first + "\n")

    sha = _tamper(repo, tmp_path, copy_first)
    return rid, sha


def _indexed(repo: Path) -> Ledger:
    """A verified branch of a few events whose ids are in the index."""
    from meridian import idindex

    ledger = _populated(repo)
    assert verify(ledger).ok
    assert idindex.index_path(ledger, "events").is_file()
    return ledger


def _rewrite_index(ledger: Ledger, key: str, ids: set[str]) -> None:
    """Write a well-formed index (checksum and all) claiming ``ids`` at ``key``."""
    from meridian import idindex

    binary, other = idindex._split(ids)
    idindex._write_whole(idindex.index_path(ledger, "events"), "events", key,
                         b"".join(sorted(binary)), set(other))


def _duplicate_found(ledger: Ledger, rid: str) -> bool:
    return any(p.record == rid and p.reason == "duplicates a record already in the stream"
               for p in verify(ledger).problems)


def test_the_index_lets_verify_read_only_the_new_lines(repo: Path) -> None:
    from meridian import idindex

    ledger = _indexed(repo)
    for n in range(3):
        ledger.emit("test.append", {"n": 100 + n})
        report = verify(ledger)
        assert report.ok and report.commits == 1
    loaded = idindex.load(ledger, "events", ledger.tip())
    assert loaded.loaded_at == ledger.tip() and not loaded.trusted  # all from the file
    assert all(r.id in loaded for r in ledger.records())


def test_an_index_missing_an_id_does_not_hide_a_duplicate(repo: Path, tmp_path: Path) -> None:
    from meridian import idindex

    ledger = _indexed(repo)
    path = idindex.index_path(ledger, "events")
    first = next(iter(ledger.records()))
    data = path.read_bytes()
    raw = bytes.fromhex(first.id)
    assert raw in data
    path.write_bytes(data.replace(raw, b""))  # a hand edit: the checksum no longer holds
    rid, _ = _replay(repo, tmp_path)
    assert rid == first.id
    assert _duplicate_found(ledger, rid)


def test_an_index_with_an_extra_id_invents_no_duplicate(repo: Path, tmp_path: Path) -> None:
    ledger = _indexed(repo)
    record = ledger.record("test.append", {"n": "new"})
    known = {r.id for r in ledger.records()}
    _rewrite_index(ledger, str(ledger.tip()), known | {record.id})  # checksum recomputed
    from meridian.ledger import Write

    ledger.commit(Write(summary="append").add("events", record))
    report = verify(ledger)
    assert report.ok, report.problems  # the claimed id was checked against the commits
    # and a real duplicate is still found afterwards
    rid, _ = _replay(repo, tmp_path)
    assert _duplicate_found(ledger, rid)


@pytest.mark.parametrize("key", ["foreign", "code commit", "older"])
def test_an_index_under_a_wrong_key_is_recomputed(repo: Path, tmp_path: Path, key: str) -> None:
    ledger = _indexed(repo)
    ids = {r.id for r in ledger.records()}
    first = next(iter(ledger.records())).id
    if key == "foreign":
        named = "ab" * 20  # no such commit here
    elif key == "code commit":
        git(repo, "commit", "-q", "--allow-empty", "-m", "code")
        named = git(repo, "rev-parse", "HEAD").strip()  # exists, not on the state branch
    else:  # an ancestor's true ids (an index left from earlier): caught up from git
        from meridian import gitio, idindex

        named = git(repo, "rev-parse", "meridian/state~2").strip()
        ids = idindex.scan_ids(ledger, "events", gitio.Oid(hex=named)) | {first}
    _rewrite_index(ledger, named, ids - {first} if key != "older" else ids)
    rid, _ = _replay(repo, tmp_path)
    assert _duplicate_found(ledger, rid)


def test_a_deleted_index_is_rebuilt(repo: Path, tmp_path: Path) -> None:
    from meridian import idindex

    ledger = _indexed(repo)
    path = idindex.index_path(ledger, "events")
    path.unlink()
    ledger.emit("test.append", {"n": "after"})
    assert verify(ledger).ok
    assert path.is_file()
    assert idindex.load(ledger, "events", ledger.tip()).loaded_at == ledger.tip()
    path.unlink()
    rid, _ = _replay(repo, tmp_path)
    assert _duplicate_found(ledger, rid)


@pytest.mark.parametrize("cut", ["half the file", "a torn segment", "garbage"])
def test_a_torn_index_is_rebuilt(repo: Path, tmp_path: Path, cut: str) -> None:
    from meridian import idindex

    ledger = _indexed(repo)
    path = idindex.index_path(ledger, "events")
    ledger.emit("test.append", {"n": "segment"})
    assert verify(ledger).ok
    data = path.read_bytes()
    assert b"\n+ " in data  # the second verify appended a segment
    if cut == "half the file":
        path.write_bytes(data[: len(data) // 2])
    elif cut == "a torn segment":
        path.write_bytes(data[:-3])
    else:
        path.write_bytes(b"\0" * len(data))
    rid, _ = _replay(repo, tmp_path)
    assert _duplicate_found(ledger, rid)
    if cut == "a torn segment":  # the base before the torn segment still serves
        assert idindex._parse(path.read_bytes()[:-3] + b"xyz", "events") is not None


def test_index_lookups_match_the_stream_through_segments_and_compaction(repo: Path) -> None:
    from meridian import idindex

    ledger = _indexed(repo)
    for n in range(idindex.COMPACT_SEGMENTS + 3):
        ledger.emit("test.append", {"n": 1000 + n})
        assert verify(ledger).ok
    parsed, _ = idindex._read_file(ledger, "events")
    assert parsed is not None and parsed.clean
    assert len(parsed.segments) < idindex.COMPACT_SEGMENTS  # compacted once on the way
    loaded = idindex.load(ledger, "events", ledger.tip())
    stored = {r.id for r in ledger.records()}
    assert not loaded.trusted and all(rid in loaded for rid in stored)
    assert "0" * 32 not in loaded and "not-an-id" not in loaded


def test_a_long_lived_writer_appends_only_its_new_ids(repo: Path) -> None:
    from meridian import idindex
    from meridian.ledger import Write

    ledger = _populated(repo, 0)
    written = []
    for n in range(12):
        record = ledger.record("memory.note", {"text": f"note {n}"})
        ledger.commit(Write(summary="memory", dedupe=True).add("memory/notes", record))
        written.append(record.id)
    parsed, _ = idindex._read_file(ledger, "memory/notes")
    assert parsed is not None and parsed.clean
    assert all(len(binary) + len(other) == 1 for binary, other in parsed.segments)
    fresh = idindex.load(ledger, "memory/notes", ledger.tip())
    assert fresh.loaded_at == ledger.tip() and all(rid in fresh for rid in written)
    again = ledger.record("memory.note", {"text": "note 3"})
    result = Ledger(ledger.repo, ledger.branch).commit(
        Write(summary="memory", dedupe=True).add("memory/notes", again))
    assert result.commit is None and [r.id for r in result.skipped] == [again.id]


def test_temporaries_of_killed_index_rewrites_are_swept_and_live_ones_kept(repo: Path) -> None:
    """A writer killed between writing ``ids-*.idx.<pid>.tmp`` and renaming it leaves the
    file behind; the next rewrite removes those of dead writers, never a live one's."""
    from meridian import idindex

    ledger = _indexed(repo)
    path = idindex.index_path(ledger, "events")
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout.strip()
        old = time.time() - 2 * idindex.STALE_TEMPORARY_SECONDS
        leftovers = {
            "dead": path.with_name(f"{path.name}.{dead}.tmp"),  # killed writer: swept
            "live": path.with_name(f"{path.name}.{proc.pid}.tmp"),  # running: kept
            "fresh": path.with_name(f"{path.name}.{int(dead) + 1}.tmp"),  # seconds old: kept
            "other": path.with_name(f"{path.name}.notapid.tmp"),  # not ours: kept
        }
        for name, file in leftovers.items():
            file.write_bytes(b"half an index")
            if name != "fresh":
                os.utime(file, (old, old))
        tip = str(ledger.tip())
        _rewrite_index(ledger, tip, idindex.scan_ids(ledger, "events", ledger.tip()))
        assert not leftovers["dead"].exists()
        assert all(leftovers[name].exists() for name in ("live", "fresh", "other"))
        ancient = time.time() - 2 * idindex.ORPHAN_TEMPORARY_SECONDS
        os.utime(leftovers["live"], (ancient, ancient))  # a day old: the pid was reused
        assert idindex.sweep_temporaries(path) == 1
        assert not leftovers["live"].exists()
    finally:
        proc.kill()
        proc.wait()
    assert verify(ledger).ok


def test_a_rewrite_killed_before_its_rename_leaves_a_temporary_the_next_one_sweeps(
        repo: Path) -> None:
    from meridian import idindex

    ledger = _indexed(repo)
    path = idindex.index_path(ledger, "events")
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from meridian import idindex\n"
        "os.replace = lambda *a: os.kill(os.getpid(), 9)\n"  # killed just before the rename
        f"idindex._write_whole(Path({str(path)!r}), 'events', {str(ledger.tip())!r}, b'', set())\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], check=False)
    assert proc.returncode == -9
    left = list(path.parent.glob(f"{path.name}.*.tmp"))
    assert len(left) == 1
    old = time.time() - 2 * idindex.STALE_TEMPORARY_SECONDS
    os.utime(left[0], (old, old))
    ledger.emit("test.append", {"n": 99})
    ids = idindex.load(ledger, "events", ledger.tip())
    idindex._write_whole(path, "events", str(ids.at), *ids._state())
    assert list(path.parent.glob(f"{path.name}.*.tmp")) == []
    assert verify(ledger).ok
