"""A verdict is bound to the gate's definition: editing it after a pass makes the gate stale."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from meridian import gitio
from meridian.gates import artifacts
from meridian.ledger import Ledger, Write
from meridian.records import canonical_json
from tests.gates.conftest import write

TOKEN = "correct horse battery staple"
DIGEST = hashlib.sha256(TOKEN.encode()).hexdigest()

NOTES_GATE = """
gates:
  - id: notes
    description: release notes
    acceptance: NOTES.md lists the changes.
    artifacts: [NOTES.md]
    checks:
      - run: test -s NOTES.md
        timeout: 30
    evaluate: {threshold: 6}
"""
TWO_GATES = """
gates:
  - id: notes
    acceptance: NOTES.md lists the changes.
    artifacts: [NOTES.md]
  - id: site
    needs: [notes]
    acceptance: site/index.html shows the notes.
    artifacts: ["site/**"]
"""


def _pass(project: Path, cli, gate: str = "notes") -> None:
    assert cli("gate", "start", gate).code == 0
    result = cli("gate", "submit", gate)
    assert result.code == 0, result


@pytest.fixture
def notes(project: Path, write_gates, cli) -> Path:
    write_gates(NOTES_GATE)
    write(project, "NOTES.md", "# Notes\n\n- Faster start-up.\n")
    _pass(project, cli)
    return project


def _status_json(cli) -> dict:
    return json.loads(cli("status", "--json").out)


def test_the_verdict_and_its_event_carry_the_hash_of_the_definition(notes, events) -> None:
    passed = events("gate.passed")[-1].data
    ledger = Ledger.open(notes)
    verdict = ledger.read_json(passed["verdict"])
    evidence = ledger.read_json(passed["verdict"].replace("verdicts/", "evidence/", 1))
    assert evidence["definition"] == {
        "gate": {
            "acceptance": "NOTES.md lists the changes.",
            "artifacts": ["NOTES.md"],
            "checks": [{"run": "test -s NOTES.md", "timeout": 30.0}],
            "evaluate": {"threshold": 6.0, "evaluator": None, "command": None},
            "approval": None,
            "features": None,
        },
        # The config's defaults (kind auto: the model counts, the command does not),
        # with the gate's threshold.
        "evaluator": {"kind": "auto", "threshold": 6.0, "model": "claude-sonnet-4-6"},
    }
    expected = hashlib.sha256(canonical_json(evidence["definition"]).encode()).hexdigest()
    assert passed["spec_hash"] == verdict["spec_hash"] == expected


@pytest.mark.parametrize(("old", "new", "changed"), [
    ("evaluate: {threshold: 6}", "evaluate: {threshold: 0}",
     "evaluate, evaluator.threshold"),
    ("""    checks:
      - run: test -s NOTES.md
        timeout: 30
""", "", "checks"),
    ("acceptance: NOTES.md lists the changes.", "acceptance: NOTES.md exists.", "acceptance"),
    ("evaluate: {threshold: 6}",
     """evaluate: {threshold: 6, evaluator: command, command: "echo '{}'"}""",
     "evaluate, evaluator.command, evaluator.kind, evaluator.model"),
])
def test_editing_the_gate_after_the_pass_makes_it_stale(notes, cli, old, new, changed) -> None:
    path = notes / ".meridian" / "gates.yaml"
    original = path.read_text()
    assert old in original
    path.write_text(original.replace(old, new))

    status = cli("status", "--strict")
    assert status.code == 1
    reason = f"gate definition changed since the verdict ({changed})"
    assert status.out.splitlines()[1] == f"1  notes  stale  {reason}; submit again"
    assert status.err == f"meridian: stale gate(s): notes: {reason}; submit them again\n"
    listed = _status_json(cli)
    assert listed["stale"] == ["notes"]
    gate = listed["gates"][0]
    assert gate["changed_definition"] == changed.split(", ")
    assert gate["spec_hash"] != gate["current_spec_hash"]
    assert gate["changed_files"] is None  # the artifacts did not change

    # Putting the definition back is the same definition: passed again.
    path.write_text(original)
    assert cli("status", "--strict").code == 0


def test_editing_the_evaluator_in_config_makes_it_stale(notes, cli) -> None:
    lying = "echo '{\"scores\": {\"completeness\": 10, \"correctness\": 10, " \
            "\"robustness\": 10, \"spec_adherence\": 10}, \"issues\": []}'"
    write(notes, ".meridian/config.yaml", f"""
        evaluator:
          kind: command
          command: {json.dumps(lying)}
    """)
    status = cli("status", "--strict")
    assert status.code == 1
    assert ("gate definition changed since the verdict "
            "(evaluator.command, evaluator.kind, evaluator.model)") in status.out
    # A threshold in the config does not reach a gate that sets its own.
    write(notes, ".meridian/config.yaml", "evaluator: {threshold: 0}\n")
    assert cli("status", "--strict").code == 0


def test_settings_that_decide_nothing_leave_the_gate_passed(notes, cli) -> None:
    path = notes / ".meridian" / "gates.yaml"
    path.write_text(path.read_text().replace("description: release notes",
                                             "description: what changed\n    estimate_hours: 3"))
    write(notes, ".meridian/config.yaml", """
        approval: {allow_non_interactive: true}
        evaluator:
          kind: auto
          anthropic: {max_tokens: 1000}
    """)
    assert cli("status", "--strict").code == 0


def test_both_artifacts_and_definition_changed(notes, cli) -> None:
    path = notes / ".meridian" / "gates.yaml"
    path.write_text(path.read_text().replace("threshold: 6", "threshold: 1"))
    write(notes, "NOTES.md", "# Notes\n\n- Nothing.\n")
    line = cli("status").out.splitlines()[1]
    assert line == ("1  notes  stale  gate definition changed since the verdict "
                    "(evaluate, evaluator.threshold); artifacts changed since the verdict "
                    "(NOTES.md); submit again")


def test_a_need_whose_definition_changed_blocks_its_dependent(project, write_gates, cli) -> None:
    path = write_gates(TWO_GATES)
    write(project, "NOTES.md", "# Notes\n\n- Faster start-up.\n")
    _pass(project, cli)
    path.write_text(path.read_text().replace("lists the changes", "lists nothing"))
    result = cli("gate", "start", "site")
    assert result.code == 2
    assert result.err == "meridian: cannot start site: its needs have not passed: notes (stale)\n"
    # Submitting again under the new definition passes it and unblocks the dependent.
    assert cli("gate", "submit", "notes").code == 0
    assert cli("gate", "start", "site").code == 0


def test_a_verdict_recorded_before_definitions_were_hashed_is_not_compared(
        project, write_gates, cli) -> None:
    path = write_gates(NOTES_GATE)
    write(project, "NOTES.md", "# Notes\n\n- Faster start-up.\n")
    repo = gitio.open_repo(project)
    subject = artifacts.snapshot(repo, project, ["NOTES.md"]).subject
    ledger = Ledger.open(project)
    # The events an older Meridian wrote: a gate.passed without spec_hash.
    ledger.emit("gate.started", {"gate": "notes"})
    ledger.emit("gate.submitted", {"gate": "notes", "subject": subject})
    # ... with its verdict document in the same commit (a pass without one is forged).
    verdict = {"gate": "notes", "evaluator": "heuristic", "subject": subject,
               "scores": {d: 9.0 for d in ("completeness", "correctness", "robustness",
                                           "spec_adherence")},
               "overall": 9.0, "threshold": 6.0, "passed": True, "issues": []}
    record = ledger.record("gate.passed", {
        "gate": "notes", "verdict": "verdicts/notes/old.json", "overall": 9.0,
        "threshold": 6.0, "evaluator": "heuristic", "subject": subject})
    ledger.commit(Write(summary="gate.passed notes",
                        blobs={"verdicts/notes/old.json": json.dumps(verdict).encode()})
                  .add("events", record))
    path.write_text(path.read_text().replace("threshold: 6", "threshold: 0"))
    assert cli("status", "--strict").code == 0
    gate = _status_json(cli)["gates"][0]
    assert (gate["state"], gate["spec_hash"]) == ("passed", None)
    # The artifacts are still compared.
    write(project, "NOTES.md", "# Notes\n")
    assert cli("status", "--strict").code == 1


def test_approval_is_refused_when_the_definition_changed_after_the_verdict(
        project, write_gates, cli, events, terminal) -> None:
    path = write_gates(f"""
        gates:
          - id: release
            acceptance: CHANGELOG.md describes the release.
            artifacts: [CHANGELOG.md]
            approval: {{token_sha256: {DIGEST}}}
    """)
    write(project, "CHANGELOG.md", "# Changelog\n\n## 1.0\n\n- First release.\n")
    _pass(project, cli, "release")
    path.write_text(path.read_text().replace("describes the release", "exists"))
    result = cli("gate", "approve", "release", "--token", TOKEN)
    assert result.code == 2
    assert result.err == ("meridian: cannot approve release: its definition (gates.yaml entry "
                          "or evaluator settings) changed since the verdict; submit again: "
                          "meridian gate submit release\n")
    assert events("gate.approved") == []
    assert events("gate.blocked")[-1].data["reason"].startswith("cannot approve release")


def test_changing_the_approval_token_after_approval_makes_the_gate_stale(
        project, write_gates, cli, terminal) -> None:
    path = write_gates(f"""
        gates:
          - id: release
            acceptance: CHANGELOG.md describes the release.
            artifacts: [CHANGELOG.md]
            approval: {{token_sha256: {DIGEST}}}
    """)
    write(project, "CHANGELOG.md", "# Changelog\n\n## 1.0\n\n- First release.\n")
    _pass(project, cli, "release")
    assert cli("gate", "approve", "release", "--token", TOKEN).code == 0
    assert cli("status", "--strict").code == 0
    other = hashlib.sha256(b"another token").hexdigest()
    path.write_text(path.read_text().replace(DIGEST, other))
    assert "gate definition changed since the verdict (approval)" in cli("status").out
