"""`meridian verify` proves the state branch append-only."""

from __future__ import annotations

import json
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
    assert main(["verify", "--full"]) == 0


def test_verify_without_state_branch_is_a_usage_error(repo: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify"]) == 2
    assert capsys.readouterr().err == (
        "meridian: no state branch meridian/state: run `meridian init` first\n")
