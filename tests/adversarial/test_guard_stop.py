"""Stop and SubagentStop: help rather than trap.

Layer: the Claude Code Stop/SubagentStop hooks. A subagent is held only when it wrote
the unfinished gate's artifacts in its task (a read-only explorer stops freely); retry
chains are counted per agent id, so parallel subagents never share a counter; the cap
stays below Claude Code's own (8 consecutive blocks end a turn, unrecorded), and the
release Meridian grants is recorded on the state branch.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from meridian.ledger import Ledger
from tests.adversarial.guard_support import base_env, hook, make_project, tool


@pytest.fixture
def working(tmp_path: Path) -> tuple[Path, Path]:
    """Gate schema in progress with artifacts changed and never submitted."""
    home = tmp_path / "home"
    root = make_project(tmp_path / "project", home)
    subprocess.run([sys.executable, "-P", "-m", "meridian", "gate", "start", "schema"],
                   cwd=root, env=base_env(home), check=True, capture_output=True)
    (root / "schema").mkdir()
    (root / "schema" / "shapes.py").write_text("x = 1\n")
    return root, home


def _write_as(root: Path, home: Path, agent: str, path: str) -> None:
    outcome = hook(root, home, "PreToolUse", {**tool("Write", file_path=str(root / path),
                                                     content="x = 2\n"),
                                              "agent_id": agent, "agent_type": "general-purpose"})
    assert (outcome.code, outcome.out) == (0, ""), outcome


def _subagent_stop(root: Path, home: Path, agent: str, active: bool) -> dict | None:
    outcome = hook(root, home, "SubagentStop", {
        "stop_hook_active": active, "agent_id": agent, "agent_type": "general-purpose",
        "agent_transcript_path": "/dev/null", "last_assistant_message": "done"})
    assert outcome.code == 0 and outcome.err == "", outcome
    return outcome.decision


def _releases(root: Path) -> list[dict]:
    return [r.data for r in Ledger.open(root).records("events")
            if r.kind == "gate.blocked" and r.data.get("released_by_retry_cap")]


def test_a_read_only_subagent_stops_freely(working: tuple[Path, Path]) -> None:
    root, home = working
    assert _subagent_stop(root, home, "explorer-1", active=False) is None
    # the main agent, whose session changed the gate's files, is held
    outcome = hook(root, home, "Stop", {"stop_hook_active": False})
    assert outcome.decision and outcome.decision["decision"] == "block"


def test_a_subagent_that_wrote_the_gate_is_held_and_counted_on_its_own(
        working: tuple[Path, Path]) -> None:
    root, home = working
    _write_as(root, home, "writer-a", "schema/shapes.py")
    _write_as(root, home, "writer-b", "schema/more.py")
    _write_as(root, home, "docs-writer", "docs/notes.md")  # no gate's file
    first = _subagent_stop(root, home, "writer-a", active=False)
    assert first and first["decision"] == "block" and "gate submit schema" in first["reason"]
    assert _subagent_stop(root, home, "writer-a", active=True)["decision"] == "block"
    assert _subagent_stop(root, home, "writer-b", active=False)["decision"] == "block"
    stops = root / ".git" / "meridian" / "claude-stops"
    assert (stops / "guard-session.writer-a").read_text() == "2\n"
    assert (stops / "guard-session.writer-b").read_text() == "1\n"
    assert _subagent_stop(root, home, "docs-writer", active=False) is None


def test_the_cap_releases_and_is_recorded(working: tuple[Path, Path]) -> None:
    root, home = working
    config = root / ".meridian" / "config.yaml"
    config.write_text(config.read_text().replace(
        "  block_stale_on_push: true\n", "  block_stale_on_push: true\n  claude_stop_retry_cap: 2\n"))
    _write_as(root, home, "writer", "schema/shapes.py")
    assert _subagent_stop(root, home, "writer", active=False)["decision"] == "block"
    assert _subagent_stop(root, home, "writer", active=True)["decision"] == "block"
    released = _subagent_stop(root, home, "writer", active=True)
    assert released and set(released) == {"systemMessage"}
    [event] = _releases(root)
    assert event["event"] == "SubagentStop" and event["blocks"] == 2
    # released: the subagent's record of writes is gone with it
    assert not (root / ".git" / "meridian" / "claude-agents" / "guard-session.writer").exists()


def test_a_cap_at_or_above_claude_codes_own_is_refused(working: tuple[Path, Path]) -> None:
    root, home = working
    config = root / ".meridian" / "config.yaml"
    config.write_text(config.read_text().replace(
        "  block_stale_on_push: true\n", "  block_stale_on_push: true\n  claude_stop_retry_cap: 8\n"))
    status = subprocess.run([sys.executable, "-P", "-m", "meridian", "status"], cwd=root,
                            env=base_env(home), capture_output=True, text=True, check=False)
    assert status.returncode == 2 and "claude_stop_retry_cap" in status.stderr, status
    # the Stop hook cannot decide either way: it says so without blocking (exit 1)
    outcome = hook(root, home, "Stop", {"stop_hook_active": False})
    assert outcome.code == 1 and "claude_stop_retry_cap" in outcome.err, outcome
