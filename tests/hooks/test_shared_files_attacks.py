"""Attacks on the shared-file rule (a file is refused only when every owner is locked).

Layer: the pre-commit hook, the Claude Code PreToolUse hook and `meridian owners` give
one answer (``gate_view``); the harness record (``harness.changed``) marks a gate graph
change that makes a locked gate's file writable as weakening, since under this rule a
new owner that is not locked unlocks the file for everyone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from meridian.harness import describe
from meridian.ledger import Ledger
from tests.conftest import git
from tests.hooks.conftest import CLEAN_MODULE, Proc, run_git, write
from tests.hooks.test_claude import _decision, _write_payload, claude
from tests.hooks.test_shared_files import SHARED, _commit, shared  # noqa: F401 (fixture)

UNIT_TEST = "from src.m import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n"


def test_owners_agrees_with_the_hooks_when_a_passed_owner_s_need_was_reopened(
        shared: Path, cli: Callable[..., Proc]) -> None:  # noqa: F811
    assert cli("gate", "start", "impl").code == 0
    assert _commit(shared, {"src/m.py": CLEAN_MODULE, "tests/unit/test_m.py": UNIT_TEST}).code == 0
    assert cli("gate", "submit", "impl").code == 0
    assert cli("gate", "reopen", "design", "--reason", "the design changes").code == 0
    # impl passed but its need was taken back: it waits for design again, like hardening.
    hook = _commit(shared, {"src/m.py": CLEAN_MODULE + "\n\nUNIT = 1.0\n"})
    assert hook.code == 1, hook
    assert "belong to gates impl, hardening, all of them locked" in hook.err
    decision = _decision(claude(shared, "PreToolUse", _write_payload(shared, "src/m.py")))
    assert decision["hookSpecificOutput"]["permissionDecision"] == "deny"
    owners = cli("owners", "--json", "src/m.py")
    assert owners.code == 2, owners
    [path] = json.loads(owners.out)["paths"]
    assert path["allowed"] is False
    assert [o["state"] for o in path["owners"]] == ["locked", "locked"]
    assert path["locked"]["impl"] == [{"need": "design", "state": "in_progress"}]


def test_a_new_gate_sharing_a_locked_gate_s_files_is_a_weakening_change(
        shared: Path, cli: Callable[..., Proc]) -> None:  # noqa: F811
    """The attack: add a gate without needs that also owns tests/edge/** (hardening's,
    locked), and the file is writable (its new owner is open). It is the graph change
    that must be marked."""
    assert cli("gate", "start", "impl").code == 0
    grabbed = SHARED + "  - id: scratch\n    artifacts: [\"tests/**\"]\n"
    write(shared, ".meridian/gates.yaml", grabbed)
    git(shared, "add", ".meridian/gates.yaml")
    assert run_git(shared, "commit", "-q", "-m", "a scratch gate").code == 0
    events = [dict(r.data) for r in Ledger.open(shared).records() if r.kind == "harness.changed"]
    [event] = [e for e in events if any("scratch" in c for c in e["changes"])]
    assert event["weakening"] is True, event
    assert any("shares files with gate" in c and "hardening" in c for c in event["changes"])


def test_overlap_is_judged_per_glob() -> None:
    before = SHARED.encode()

    def added(artifacts: str) -> list[str]:
        after = (SHARED + f"  - id: extra\n    artifacts: {artifacts}\n").encode()
        out = describe(".meridian/gates.yaml", before, after)
        return [c for c in out.changes if "extra" in c] + (["WEAK"] if out.weakening else [])

    assert added('["site/**"]') == ["gate extra added"]  # owns nothing another gate owns
    assert added('["DESIGN.md.bak"]') == ["gate extra added"]  # a literal, not a prefix
    assert "WEAK" in added('["DESIGN.md"]')
    assert "WEAK" in added('["src/m.py"]')  # inside impl's and hardening's src/**
    assert "WEAK" in added('["**/*.py"]')  # everything
    assert "WEAK" in added('["NOTES.*"]')
    # A gate that widens its own artifacts onto another gate's is marked too.
    widened = SHARED.replace('artifacts: ["DESIGN.md"]', 'artifacts: ["DESIGN.md", "docs/**"]')
    out = describe(".meridian/gates.yaml", before, widened.encode())
    assert out.weakening and any("shares files with gate docs" in c for c in out.changes)


def test_a_first_gates_file_with_intended_shared_files_is_not_weakening() -> None:
    out = describe(".meridian/gates.yaml", None, SHARED.encode())
    assert out.weakening is False, out.changes


def test_owners_of_a_directory_is_an_error_not_no_gate(shared: Path,  # noqa: F811
                                                       cli: Callable[..., Proc]) -> None:
    (shared / "src").mkdir(exist_ok=True)
    result = cli("owners", "src")
    assert result.code == 2
    assert result.err == "meridian: src: a directory; name a file in it (e.g. src/FILE)\n"
