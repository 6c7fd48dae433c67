"""Approval: a human token after a passing verdict, never from a non-interactive shell."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from tests.gates.conftest import write

TOKEN = "correct horse battery staple"


@pytest.fixture
def release(project: Path, write_gates, cli) -> Path:
    """A gate with approval whose verdict has passed (heuristic evaluator)."""
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    write_gates(f"""
        gates:
          - id: release
            acceptance: CHANGELOG.md describes the release.
            artifacts: [CHANGELOG.md]
            approval: {{token_sha256: {digest}}}
    """)
    write(project, "CHANGELOG.md", "# Changelog\n\n## 1.0\n\n- First release.\n")
    assert cli("gate", "start", "release").code == 0
    submitted = cli("gate", "submit", "release")
    assert submitted.code == 0, submitted
    assert "next: a human approves it from a terminal: meridian gate approve release" in submitted.out
    return project


def _state(cli) -> list[str]:
    return cli("status").out.splitlines()[1].split()[:3]


def test_a_passing_verdict_waits_for_the_human(release, cli) -> None:
    assert _state(cli) == ["1", "release", "submitted"]
    assert "awaiting a human: meridian gate approve release --token TOKEN" in cli("status").out


def test_approve_is_refused_without_a_terminal(release, cli, events) -> None:
    result = cli("gate", "approve", "release", "--token", TOKEN)
    assert result.code == 2
    assert result.err.startswith(
        "meridian: refusing to approve release: standard input is not a terminal.")
    assert events("gate.approved") == []
    assert events("gate.blocked")[-1].data["source"] == "gate"
    assert _state(cli) == ["1", "release", "submitted"]


def test_a_wrong_token_is_refused(release, cli, events, terminal) -> None:
    result = cli("gate", "approve", "release", "--token", "guess")
    assert result.code == 2
    assert result.err == "meridian: wrong approval token for release\n"
    assert events("gate.approved") == []
    assert _state(cli) == ["1", "release", "submitted"]


def test_the_right_token_passes_the_gate_and_records_the_approver(release, cli, events,
                                                                  terminal) -> None:
    result = cli("gate", "approve", "release", "--token", TOKEN)
    assert result.code == 0, result
    approved = events("gate.approved")
    assert [a.data["approver"] for a in approved] == ["Meridian Test <test@meridian.invalid>"]
    assert approved[0].data["verdict"] == events("gate.passed")[-1].data["verdict"]
    assert _state(cli) == ["1", "release", "passed"]
    assert "approved by Meridian Test <test@meridian.invalid>" in cli("status").out
    assert cli("gate", "approve", "release", "--token", TOKEN).code == 2


def test_config_may_allow_non_interactive_approval(release, cli) -> None:
    (release / ".meridian" / "config.yaml").write_text("approval:\n  allow_non_interactive: true\n")
    assert cli("gate", "approve", "release", "--token", TOKEN).code == 0
    assert _state(cli) == ["1", "release", "passed"]


def test_artifacts_changed_after_the_verdict_must_be_resubmitted(release, cli, terminal) -> None:
    write(release, "CHANGELOG.md", "# Changelog\n\n## 1.1\n\n- Second release.\n")
    result = cli("gate", "approve", "release", "--token", TOKEN)
    assert result.code == 2
    assert result.err == ("meridian: cannot approve release: its artifacts changed since the "
                          "verdict; submit again: meridian gate submit release\n")


def test_token_env_compares_with_the_approvers_environment(project, write_gates, cli, terminal,
                                                           monkeypatch) -> None:
    # An existing config (HEAD already holds the token_env): still honoured, with a warning.
    write_gates("""
        gates:
          - id: ship
            artifacts: [README.md]
            approval: {token_env: SHIP_TOKEN}
    """)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "old config"], cwd=project,
                   check=True)
    started = cli("gate", "start", "ship")
    assert started.code == 0, started
    assert "token_env $SHIP_TOKEN is deprecated; use token_sha256 instead" in started.err
    assert cli("gate", "submit", "ship").code == 0
    unset = cli("gate", "approve", "ship", "--token", "abc")
    assert unset.code == 2
    assert "approval.token_env names $SHIP_TOKEN, which is not set" in unset.err
    monkeypatch.setenv("SHIP_TOKEN", "abc")
    assert cli("gate", "approve", "ship", "--token", "abd").code == 2
    assert cli("gate", "approve", "ship", "--token", "abc").code == 0


def test_token_env_is_refused_in_a_new_config(project, write_gates, cli) -> None:
    write_gates("gates:\n  - id: ship\n    approval: {token_sha256: \"%s\"}\n" % ("a" * 64))
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "config"], cwd=project, check=True)
    # Switching an approval to token_env (or adding one) is a new use: refused, exit 2.
    write_gates("gates:\n  - id: ship\n    approval: {token_env: USER}\n")
    refused = cli("status")
    assert refused.code == 2, refused
    assert refused.err.startswith("meridian: .meridian/gates.yaml:3: gates[0].approval.token_env:")
    assert "token_env is refused in new configs; use token_sha256 instead" in refused.err
    assert "Traceback" not in refused.err


def test_approve_on_a_gate_without_approval(project, write_gates, cli, terminal) -> None:
    write_gates("gates:\n  - id: plain\n")
    result = cli("gate", "approve", "plain", "--token", "x")
    assert result.code == 2
    assert result.err == "meridian: plain has no approval step (no `approval:` in .meridian/gates.yaml)\n"


def test_the_web_app_template_stores_a_hash_placeholder_no_token_matches(
        project, write_gates, cli, terminal) -> None:
    from meridian.templates import install_template

    install_template("web-app", project)
    template = (project / ".meridian" / "gates.yaml").read_text()
    assert "token_env" not in template
    assert "printf %s 'YOUR TOKEN' | sha256sum" in template
    deployed = template[template.index("  - id: deployed"):]
    assert '      token_sha256: "' + "0" * 64 + '"' in deployed

    # The placeholder, on a gate whose verdict passed: approving says what to do.
    write_gates(f"""
        gates:
          - id: release
            acceptance: CHANGELOG.md describes the release.
            artifacts: [CHANGELOG.md]
            approval: {{token_sha256: "{'0' * 64}"}}
    """)
    write(project, "CHANGELOG.md", "# Changelog\n\n## 1.0\n\n- First release.\n")
    assert cli("gate", "start", "release").code == 0
    assert cli("gate", "submit", "release").code == 0
    result = cli("gate", "approve", "release", "--token", "anything")
    assert result.code == 2
    assert result.err == ("meridian: release: approval.token_sha256 is still the template's "
                          "placeholder (64 zeros), which no token matches; put the sha256 of "
                          "your token there: printf %s TOKEN | sha256sum\n")
    assert _state(cli) == ["1", "release", "submitted"]
