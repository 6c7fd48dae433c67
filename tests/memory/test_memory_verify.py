"""``meridian memory verify``: a line corrupted by hand on the state branch is found."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.ledger import Ledger
from meridian.memory import store
from meridian.memory.verify import check_memory


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def edit_on_state_branch(repo: Path, tmp_path: Path, path: str, line_number: int,
                         new_line: str) -> None:
    """Replace one line of ``path`` on meridian/state with a real commit (git worktree)."""
    worktree = tmp_path / "state-worktree"
    git(repo, "worktree", "add", "-q", str(worktree), "meridian/state")
    target = worktree / path
    lines = target.read_text().splitlines()
    lines[line_number - 1] = new_line
    target.write_text("\n".join(lines) + "\n")
    git(worktree, "commit", "-q", "-am", "hand edit")
    git(repo, "worktree", "remove", "--force", str(worktree))


@pytest.fixture
def corrections(ledger: Ledger) -> str:
    """Three stored corrections; returns the shard path."""
    store.add(ledger, "corrections", {"gate": "api", "predicted_hours": 8, "actual_hours": 6})
    store.add(ledger, "corrections", {"gate": "web", "predicted_hours": 2, "actual_hours": 3})
    store.add(ledger, "corrections", {"gate": "db", "predicted_hours": 1, "actual_hours": 1})
    [shard] = ledger.shards("memory/corrections")
    return shard


def _line(ledger: Ledger, shard: str, number: int) -> dict:
    raw = ledger.read(shard).splitlines()[number - 1]  # type: ignore[union-attr]
    return json.loads(raw)


def test_intact_memory_verifies(ledger: Ledger, corrections: str,
                                capsys: pytest.CaptureFixture[str]) -> None:
    store.add(ledger, "semantic", {"text": "p", "confidence": 0.5})
    store.add(ledger, "episodic", {"session": "s", "event": "note", "notes": "n"})
    assert check_memory(ledger) == []
    assert main(["memory", "verify"]) == 0
    assert capsys.readouterr().out == "memory on meridian/state: intact\n"


def test_schema_violation_edited_by_hand_is_reported_as_file_line(
        repo: Path, tmp_path: Path, ledger: Ledger, corrections: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    record = _line(ledger, corrections, 2)
    record["data"]["actual_hours"] = -3
    edit_on_state_branch(repo, tmp_path, corrections, 2, json.dumps(record))
    expected = f"meridian/state:{corrections}:2: corrections.actual_hours: must be > 0"
    assert check_memory(Ledger.open(repo)) == [expected]
    assert main(["memory", "verify"]) == 1
    assert capsys.readouterr().out == (
        f"{expected}\nmemory on meridian/state: CORRUPT (1 bad line(s))\n")


def test_valid_looking_value_changed_by_hand_breaks_the_content_id(
        repo: Path, tmp_path: Path, ledger: Ledger, corrections: str) -> None:
    record = _line(ledger, corrections, 1)
    record["data"].update(actual_hours=4.0, ratio=0.5)  # consistent, but not what was written
    edit_on_state_branch(repo, tmp_path, corrections, 1, json.dumps(record))
    [problem] = check_memory(Ledger.open(repo))
    assert problem.startswith(f"meridian/state:{corrections}:1: id {record['id']} does not "
                              "match its content (expected ")


def test_unparseable_line_is_reported(repo: Path, tmp_path: Path, ledger: Ledger,
                                      corrections: str) -> None:
    edit_on_state_branch(repo, tmp_path, corrections, 3, '{"id": "truncated')
    [problem] = check_memory(Ledger.open(repo))
    assert problem.startswith(f"meridian/state:{corrections}:3: not valid JSON")


def test_record_of_another_kind_in_a_memory_stream_is_reported(
        repo: Path, tmp_path: Path, ledger: Ledger, corrections: str) -> None:
    record = _line(ledger, corrections, 1)
    record["kind"] = "memory.semantic"
    edit_on_state_branch(repo, tmp_path, corrections, 1, json.dumps(record))
    [problem] = check_memory(Ledger.open(repo))
    assert problem == (f"meridian/state:{corrections}:1: kind 'memory.semantic' does not belong "
                       "in memory/corrections (expected 'memory.correction')")


def test_duplicate_line_is_reported(repo: Path, tmp_path: Path, ledger: Ledger,
                                    corrections: str) -> None:
    first = ledger.read(corrections).splitlines()[0].decode()  # type: ignore[union-attr]
    edit_on_state_branch(repo, tmp_path, corrections, 3, first)
    [problem] = check_memory(Ledger.open(repo))
    assert problem.startswith(f"meridian/state:{corrections}:3: duplicate of {corrections}:1")


def test_verify_json_report(repo: Path, tmp_path: Path, ledger: Ledger, corrections: str,
                            capsys: pytest.CaptureFixture[str]) -> None:
    edit_on_state_branch(repo, tmp_path, corrections, 3, "garbage")
    assert main(["memory", "verify", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert report["problems"][0].startswith(f"meridian/state:{corrections}:3: not valid JSON")


def test_no_state_branch_is_empty_not_corrupt(repo: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["memory", "verify"]) == 0
    assert capsys.readouterr().out == "memory on meridian/state: empty (no state branch yet)\n"


@pytest.mark.parametrize("bad_line", ['{"id": "x"}', "[1, 2]", '{"id": "truncated'])
def test_commands_that_read_memory_stop_at_a_corrupt_line_with_file_line(
        repo: Path, tmp_path: Path, ledger: Ledger, corrections: str, bad_line: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    edit_on_state_branch(repo, tmp_path, corrections, 2, bad_line)
    capsys.readouterr()
    for argv in (["memory", "list", "corrections"], ["memory", "list", "corrections", "--json"],
                 ["calibration"],
                 ["memory", "add", "corrections", "--json", '{"gate": "api", "root_cause": "x"}']):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"meridian: meridian/state:{corrections}:2: "), (argv, err)
        assert err.endswith("(run `meridian memory verify`)\n")


def test_export_passes_a_corrupt_line_through_byte_for_byte(
        repo: Path, tmp_path: Path, ledger: Ledger, corrections: str,
        capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    worktree = tmp_path / "state-worktree"
    git(repo, "worktree", "add", "-q", str(worktree), "meridian/state")
    with (worktree / corrections).open("ab") as handle:
        handle.write(b"\xff\xfe not utf-8\n")
    git(worktree, "commit", "-q", "-am", "hand edit")
    git(repo, "worktree", "remove", "--force", str(worktree))
    capfdbinary.readouterr()
    assert main(["memory", "export", "corrections"]) == 0
    out = capfdbinary.readouterr().out
    assert out.endswith(b"\n\xff\xfe not utf-8\n")
    assert len(out.splitlines()) == 4
