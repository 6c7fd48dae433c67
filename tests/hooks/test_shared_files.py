"""The shared-file rule: a file owned by several gates is refused only when every owner is
locked; a change to a passed owner's file is allowed and names the gate it makes stale.

Real repositories, real `git commit` through the installed hook, Claude Code payloads
through the command `init --claude` wrote, and `meridian owners` for the same answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.hooks.gate_view import decide_path
from tests.conftest import git
from tests.hooks.conftest import CLEAN_MODULE, Proc, blocked_events, run_git, write
from tests.hooks.test_claude import _decision, _write_payload, claude

# impl and hardening both own src/** (intended: hardening fixes what it finds in src/);
# docs and release both own NOTES.md.
SHARED = """\
version: 1
gates:
  - id: design
    artifacts: ["DESIGN.md"]
  - id: impl
    needs: [design]
    artifacts: ["src/**", "tests/unit/**"]
  - id: hardening
    needs: [impl]
    artifacts: ["src/**", "tests/edge/**"]
  - id: docs
    needs: [hardening]
    artifacts: ["docs/**", "NOTES.md"]
  - id: release
    needs: [docs]
    artifacts: ["CHANGELOG.md", "NOTES.md"]
"""

EDGE_TEST = """\
from src.m import area


def test_zero_sides():
    assert area(0, 3) == 0
"""


@pytest.fixture
def shared(repo_with_commit: Path, cli: Callable[..., Proc]) -> Path:
    root = repo_with_commit
    assert cli("init", "--claude").code == 0  # git hooks and Claude Code hooks
    write(root, ".meridian/gates.yaml", SHARED)
    write(root, "DESIGN.md", "# Design\n\nOne function, area(width, height).\n")
    git(root, "add", "-A")
    assert run_git(root, "commit", "-q", "-m", "meridian setup").code == 0
    assert cli("gate", "start", "design").code == 0
    assert cli("gate", "submit", "design").code == 0
    return root


def _commit(root: Path, files: dict[str, str]) -> Proc:
    for relative, text in files.items():
        write(root, relative, text)
    assert run_git(root, "add", "--", *files).code == 0
    return run_git(root, "commit", "-q", "-m", "work")


def test_the_gate_in_progress_commits_a_file_it_shares_with_a_locked_gate(
        shared: Path, cli: Callable[..., Proc]) -> None:
    assert cli("gate", "start", "impl").code == 0
    result = _commit(shared, {"src/m.py": CLEAN_MODULE})
    assert result.code == 0, result
    assert result.err == ""
    # ...and Claude may write it too.
    decision = claude(shared, "PreToolUse", _write_payload(shared, "src/m.py"))
    assert decision.code == 0 and decision.out.strip() in ("", "{}"), decision


def test_a_file_only_locked_gates_own_is_refused_naming_the_gate(
        shared: Path, cli: Callable[..., Proc]) -> None:
    assert cli("gate", "start", "impl").code == 0
    result = _commit(shared, {"tests/edge/test_zero.py": EDGE_TEST})
    assert result.code == 1, result
    assert ("- 1 staged file(s) belong to gate hardening, which is locked: its needs have not "
            "passed: impl (in_progress)") in result.err
    assert "next: finish impl first: meridian gate submit impl" in result.err
    [event] = blocked_events(shared, "pre-commit")
    assert event.data["gate"] == "hardening" and event.data["files"] == ["tests/edge/test_zero.py"]
    decision = _decision(claude(shared, "PreToolUse",
                                _write_payload(shared, "tests/edge/test_zero.py")))
    assert decision["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "belongs to gate hardening, which is locked" in \
        decision["hookSpecificOutput"]["permissionDecisionReason"]


def test_a_file_every_owner_of_which_is_locked_names_them_all(
        shared: Path, cli: Callable[..., Proc]) -> None:
    result = _commit(shared, {"NOTES.md": "# Notes\n\nWritten before their time.\n"})
    assert result.code == 1, result
    assert ("- 1 staged file(s) belong to gates docs, release, all of them locked: docs needs "
            "hardening (locked); release needs docs (locked)") in result.err


def test_changing_a_passed_gate_s_file_is_allowed_and_names_the_gate_going_stale(
        shared: Path, cli: Callable[..., Proc]) -> None:
    assert cli("gate", "start", "impl").code == 0
    assert _commit(shared, {"src/m.py": CLEAN_MODULE}).code == 0
    write(shared, "tests/unit/test_m.py", "from src.m import area\n\n\ndef test_area():\n"
          "    assert area(2, 3) == 6\n")
    git(shared, "add", "tests")
    assert run_git(shared, "commit", "-q", "-m", "tests").code == 0
    assert cli("gate", "submit", "impl").code == 0
    # hardening is open (startable), impl passed: the shared file is writable, and the
    # commit says which passed gate it makes stale.
    result = _commit(shared, {"src/m.py": CLEAN_MODULE + "\n\nUNIT = 1.0\n"})
    assert result.code == 0, result
    assert result.err == ("meridian pre-commit: warning: src/m.py belongs to gate impl, which "
                          "passed: this change makes impl stale until it is submitted again "
                          "(meridian gate submit impl)\n")
    statuses = {g["gate"]: g["state"] for g in json.loads(cli("status", "--json").out)["gates"]}
    assert statuses["impl"] == "stale"


def test_owners_says_who_owns_a_path_and_what_a_commit_does(
        shared: Path, cli: Callable[..., Proc]) -> None:
    assert cli("gate", "start", "impl").code == 0
    result = cli("owners", "src/m.py", "tests/edge/x.py", "README.md", "DESIGN.md")
    assert result.code == 2  # one of them would be refused
    assert result.out.splitlines() == [
        "src/m.py: impl (in_progress), hardening (locked)",
        "  commit: allowed: work of impl",
        "tests/edge/x.py: hardening (locked)",
        ("  commit: refused: every gate that owns it is locked (hardening); hardening needs "
         "impl (in_progress)"),
        "README.md: (no gate)",
        "  commit: allowed: owned by no gate",
        "DESIGN.md: design (passed)",
        "  commit: allowed; makes passed gate design stale until submitted again",
    ]
    data = json.loads(cli("owners", "--json", "src/m.py").out)
    assert data == {"paths": [{
        "path": "src/m.py", "allowed": True, "goes_stale": [], "locked": {},
        "owners": [{"gate": "impl", "state": "in_progress"},
                   {"gate": "hardening", "state": "locked"}],
        "effect": "allowed: work of impl"}]}
    assert cli("owners", "src/m.py").code == 0


def test_owners_refuses_a_path_outside_the_repository(shared: Path,
                                                      cli: Callable[..., Proc]) -> None:
    result = cli("owners", "/etc/passwd")
    assert result.code == 2
    assert result.err == f"meridian: /etc/passwd: not inside the repository ({shared})\n"


@pytest.mark.parametrize(("owners", "allowed", "stale"), [
    ([], True, []),
    ([("a", "locked")], False, []),
    ([("a", "locked"), ("b", "locked")], False, []),
    ([("a", "locked"), ("b", "open")], True, []),
    ([("a", "passed"), ("b", "locked")], True, ["a"]),
    ([("a", "stale"), ("b", "in_progress")], True, ["a"]),
    ([("a", "failed"), ("b", "submitted")], True, []),
])
def test_the_rule_on_plain_values(owners: list[tuple[str, str]], allowed: bool,
                                  stale: list[str]) -> None:
    decision = decide_path("f", owners, {g: [("x", "open")] for g, s in owners if s == "locked"})
    assert (decision.allowed, decision.goes_stale) == (allowed, stale)
