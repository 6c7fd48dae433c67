"""End to end with the gate lifecycle: corrupt memory blocks a submit, a retired rule
turns its heuristic check off, and a pass writes its correction."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from meridian.cli import main
from meridian.ledger import Ledger
from meridian.memory import store
from meridian.rules import write_default_rules

GATES = """\
version: 1
gates:
  - id: core
    artifacts: ["src/*.py"]
    evaluate:
      evaluator: heuristic
"""
STUBBED = '''\
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def divide(a: float, b: float) -> float:
    raise NotImplementedError
'''


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def project(repo_with_commit: Path) -> Path:
    """One heuristic-judged gate whose artifact holds a stub; default rules; gate started."""
    root = repo_with_commit
    Ledger.open(root).emit("meridian.init", {"branch": "meridian/state"})
    (root / ".meridian").mkdir()
    (root / ".meridian" / "gates.yaml").write_text(GATES)
    (root / "src").mkdir()
    (root / "src" / "calc.py").write_text(STUBBED)
    write_default_rules(root)
    assert main(["gate", "start", "core", "--estimate", "8"]) == 0
    return root


def test_corrupt_memory_blocks_gate_submit_and_names_the_line(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = Ledger.open(project)
    store.add(ledger, "corrections", {"gate": "core", "predicted_hours": 8, "actual_hours": 6})
    [shard] = ledger.shards("memory/corrections")
    worktree = tmp_path / "state"
    git(project, "worktree", "add", "-q", str(worktree), "meridian/state")
    record = json.loads((worktree / shard).read_text())
    record["data"]["actual_hours"] = 0
    (worktree / shard).write_text(json.dumps(record) + "\n")
    git(worktree, "commit", "-q", "-am", "hand edit")
    git(project, "worktree", "remove", "--force", str(worktree))
    capsys.readouterr()

    assert main(["gate", "submit", "core"]) == 2
    err = capsys.readouterr().err
    assert (f"stored memory is corrupt: meridian/state:{shard}:1: "
            "corrections.actual_hours: must be > 0") in err
    events = list(Ledger.open(project).records("events"))
    assert "gate.submitted" not in [e.kind for e in events]  # refused before evaluation
    [blocked] = [e for e in events if e.kind == "gate.blocked"]
    assert blocked.data["gate"] == "core" and f"{shard}:1" in blocked.data["reason"]


def test_retiring_the_stub_rule_turns_the_heuristic_stub_check_off(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["gate", "submit", "core", "--json"]) == 2
    failed = json.loads(capsys.readouterr().out)
    assert not failed["passed"]
    assert [i["check"] for i in failed["verdict"]["issues"]] == ["stub_code"]

    assert main(["rules", "retire", "no-stub-code", "--reason", "prototype stage"]) == 0
    capsys.readouterr()
    assert main(["gate", "submit", "core", "--json"]) == 0
    passed = json.loads(capsys.readouterr().out)
    assert passed["passed"]
    assert passed["verdict"]["issues"] == []

    # The pass wrote its correction: ratio = actual / predicted, predicted from --estimate.
    [correction] = list(store.iter_records(Ledger.open(project), "corrections"))
    data = correction.data
    assert data["gate"] == "core" and data["source"] == "gate_pass"
    assert data["predicted_hours"] == 8.0
    assert data["ratio"] == float(f"{data['actual_hours'] / 8.0:.4g}")
    assert data["ratio"] > 0, "a gate passed in seconds still has a ratio"


def test_activating_the_rule_again_turns_the_check_back_on(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "retire", "no-stub-code", "--reason", "prototype stage"]) == 0
    assert main(["rules", "activate", "no-stub-code"]) == 0
    capsys.readouterr()
    assert main(["gate", "submit", "core", "--json"]) == 2
    verdict = json.loads(capsys.readouterr().out)["verdict"]
    assert [i["check"] for i in verdict["issues"]] == ["stub_code"]
