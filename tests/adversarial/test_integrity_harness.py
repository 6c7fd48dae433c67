"""Attack: weaken the harness with a program and let every later check obey it.

Layer: local guardrails (the pre-commit hook records ``harness.changed``) and state
derivation (the next gate command catches up a commit that skipped the hook); the
record is what ``meridian ci`` lists for the pushed range.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from meridian.ledger import Ledger
from tests.adversarial.conftest import Proc, run_git
from tests.conftest import git

WEAKEN = """
import re, pathlib
path = pathlib.Path(".meridian/gates.yaml")
text = path.read_text()
text = text.replace("    needs: [spec]\\n", "")
text = text.replace('artifacts: ["src/**"]', 'artifacts: ["src/**"]\\n    evaluate: {evaluator: command, command: "echo 10"}')
path.write_text(text)
"""


def _harness_events(cli: Callable[..., Proc]) -> list[dict]:
    result = cli("log", "--kind", "harness.changed", "--json")
    assert result.code == 0, result
    return [dict(r.data) for r in Ledger.open(".").records() if r.kind == "harness.changed"]


def test_a_program_made_weakening_is_recorded_at_commit(project: Path,
                                                        cli: Callable[..., Proc]) -> None:
    assert cli("hooks", "install").code == 0
    env = {**os.environ, "CLAUDECODE": "1"}  # as Claude Code sets for its Bash tool
    subprocess.run([sys.executable, "-c", WEAKEN], cwd=project, check=True)
    git(project, "add", ".meridian/gates.yaml")
    committed = run_git(project, "commit", "-m", "simplify the gates", env=env)
    assert committed.code == 0, committed
    [event] = [e for e in _harness_events(cli) if e["source"] == "pre-commit"]
    assert event["weakening"] is True and event["agent_session"] is True
    [change] = [c for c in event["changes"] if c.startswith("gate impl:")]
    assert "needs [spec] removed" in change and "evaluate.evaluator: None -> command" in change
    # The status shows it, and catching up does not record the same change twice.
    status = cli("status")
    assert "needs [spec] removed" in status.out and "WEAKENS enforcement" in status.out
    assert len([e for e in _harness_events(cli) if "gate impl:" in " ".join(e["changes"])]) == 1


def test_a_no_verify_rule_retirement_is_caught_up_by_the_next_gate_command(project: Path,
                                                            cli: Callable[..., Proc]) -> None:
    assert cli("hooks", "install").code == 0
    rules = project / ".meridian" / "rules.yaml"
    text = rules.read_text()
    start = text.index("id: no-stub-code")
    status_at = text.index("status: active", start)
    rules.write_text(text[:status_at] + "status: retired\n    retired_reason: faster\n"
                     "    retired_on: 2026-01-01" + text[status_at + len("status: active"):])
    git(project, "add", ".meridian/rules.yaml")
    assert run_git(project, "commit", "--no-verify", "-m", "quietly").code == 0
    commit = git(project, "rev-parse", "HEAD").strip()
    assert not [e for e in _harness_events(cli) if "no-stub-code" in " ".join(e["changes"])]
    assert cli("gate", "start", "spec").code == 0
    [event] = [e for e in _harness_events(cli) if "rule no-stub-code retired" in e["changes"]]
    assert event["commit"] == commit and event["source"] == "catch-up"
    assert event["weakening"] is True


def test_health_shows_the_latest_harness_changes_weakening_marked(
        project: Path, cli: Callable[..., Proc]) -> None:
    import json

    assert cli("hooks", "install").code == 0
    env = {**os.environ, "CLAUDECODE": "1"}
    subprocess.run([sys.executable, "-c", WEAKEN], cwd=project, check=True)
    git(project, "add", ".meridian/gates.yaml")
    assert run_git(project, "commit", "-m", "simplify the gates", env=env).code == 0
    config = project / ".meridian" / "config.yaml"
    config.write_text(config.read_text() + "\n# a comment only\n")
    (project / "NOTES.md").write_text("x\n")
    git(project, "add", "-A")
    assert run_git(project, "commit", "-m", "notes").code == 0
    report = json.loads(cli("health", "--json").out)
    changes = report["harness"]
    assert changes and len(changes) <= 5
    weakening = [c for c in changes if c["weakening"]]
    assert weakening and weakening[0]["agent_session"] is True
    assert any("needs [spec] removed" in text for text in weakening[0]["changes"])
    assert changes == sorted(changes, key=lambda c: c["ts"], reverse=True)  # newest first
    text = " ".join(cli("health").out.split())
    assert "Harness changes (latest" in text and "weaken enforcement" in text
    assert "needs [spec] removed" in text and "WEAKENS enforcement" in text
    assert "during an agent session" in text
