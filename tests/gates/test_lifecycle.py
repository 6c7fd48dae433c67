"""The gate lifecycle in real repositories: start, submit, stale, reopen, why."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from meridian import gitio
from meridian.evaluators.models import Verdict
from meridian.ledger import Ledger
from tests.evaluators.evaluator_helpers import tool_use_message
from tests.gates.conftest import commit_all, write

STUB = """
def add(a, b):
    return a + b


def divide(a, b):
    raise NotImplementedError
"""
REAL = """
def add(a, b):
    return a + b


def divide(a, b):
    if b == 0:
        raise ZeroDivisionError("divide by zero")
    return a / b
"""
TESTS = """
import pytest

from calc import add, divide


def test_add():
    assert add(2, 3) == 5


def test_divide_by_zero():
    with pytest.raises(ZeroDivisionError):
        divide(1, 0)
"""
TWO_GATES = """
gates:
  - id: design
    description: what the calculator does
    acceptance: DESIGN.md says which operations exist.
    artifacts: [DESIGN.md]
  - id: calc
    needs: [design]
    description: the calculator
    acceptance: add and divide work; dividing by zero raises ZeroDivisionError.
    artifacts: ["src/**/*.py"]
"""
CALC_GATE = """
gates:
  - id: calc
    description: the calculator
    acceptance: add and divide work; dividing by zero raises ZeroDivisionError.
    artifacts: ["src/**/*.py", "tests/**/*.py"]
    estimate_hours: 2
    checks:
      - run: '"$MERIDIAN_PYTHON" -m pytest -q -p no:cacheprovider tests'
        timeout: 120
"""


@pytest.fixture
def calc_project(project: Path, write_gates) -> Path:
    write_gates(CALC_GATE)
    write(project, "tests/conftest.py", "import sys\nsys.path.insert(0, 'src')\n")
    write(project, "tests/test_calc.py", TESTS.replace("\n\ndef test_divide_by_zero", "\n\ndef _x")
          .replace("with pytest.raises(ZeroDivisionError):\n        divide(1, 0)", "assert divide"))
    commit_all(project, "calculator tests")
    # The stub is the gate's own work (written after the base commit the gate starts
    # from): a stub already committed before the gate started would be pre-existing.
    write(project, "src/calc.py", STUB)
    return project


def _verdict_at(project: Path, path: str) -> Verdict:
    return Verdict.model_validate(Ledger.open(project).read_json(path))


def test_start_is_refused_while_a_need_has_not_passed(project, write_gates, cli, events) -> None:
    write_gates(TWO_GATES)
    result = cli("gate", "start", "calc")
    assert result.code == 2
    assert result.err == "meridian: cannot start calc: its needs have not passed: design (open)\n"
    blocked = events("gate.blocked")
    assert [(b.data["gate"], b.data["source"]) for b in blocked] == [("calc", "gate")]
    assert events("gate.started") == []

    status = cli("status")
    assert status.code == 0
    assert status.out.splitlines()[1:3] == [
        "1  design  open    ready: meridian gate start design",
        "2  calc    locked  needs design (open)",
    ]


def test_submit_is_refused_while_a_need_has_not_passed(project, write_gates, cli, events) -> None:
    write_gates(TWO_GATES)
    result = cli("gate", "submit", "calc")
    assert result.code == 2
    assert result.err == "meridian: cannot submit calc: its needs have not passed: design (open)\n"

    # A need that regresses after the dependent started blocks the dependent's submit too.
    write(project, "DESIGN.md", "# Design\n\nThe calculator adds and divides numbers.\n")
    write(project, "src/calc.py", REAL)
    assert cli("gate", "start", "design").code == 0
    assert cli("gate", "submit", "design").code == 0
    assert cli("gate", "start", "calc").code == 0
    assert cli("gate", "reopen", "design", "--reason", "add multiplication").code == 0
    result = cli("gate", "submit", "calc")
    assert result.code == 2
    assert result.err == ("meridian: cannot submit calc: its needs have not passed: "
                          "design (in_progress)\n")
    assert [b.data["reason"].split(":")[0] for b in events("gate.blocked")] == [
        "cannot submit calc", "cannot submit calc"]
    assert "waiting on design (in_progress)" in cli("status").out


def test_planted_stub_fails_with_its_file_and_line_then_passes_when_replaced(
        calc_project, cli, events) -> None:
    assert cli("gate", "start", "calc", "--estimate", "1.5").code == 0

    failed = cli("gate", "submit", "calc", "--self-score", "9", "--quiet")
    assert failed.code == 2
    assert failed.err.startswith("meridian: gate calc failed: overall ")
    lines = failed.out.splitlines()
    issue_lines = [ln.strip() for ln in lines if ln.startswith("    ")
                   and ln.split()[0] in ("high", "medium", "low")]
    assert issue_lines[0].startswith("high    src/calc.py:6  "), failed.out
    assert "NotImplementedError" in issue_lines[0]
    assert "  next: fix the issues above, then: meridian gate submit calc" in lines

    fail_event = events("gate.failed")[-1]
    verdict = _verdict_at(calc_project, fail_event.data["verdict"])
    assert verdict.passed is False
    assert verdict.self_score == 9
    stub = [i for i in verdict.issues if i.file == "src/calc.py"]
    assert stub and stub[0].severity == "high" and stub[0].line == 6
    assert fail_event.data["subject"] == verdict.subject
    assert "failed" in cli("status").out.splitlines()[1]

    write(calc_project, "src/calc.py", REAL)
    write(calc_project, "tests/test_calc.py", TESTS)
    passed = cli("gate", "submit", "calc", "--quiet")
    assert passed.code == 0, passed
    assert passed.out.startswith("gate calc: PASSED  overall ")
    assert "    ok    \"$MERIDIAN_PYTHON\" -m pytest" in passed.out
    pass_event = events("gate.passed")[-1]
    verdict = _verdict_at(calc_project, pass_event.data["verdict"])
    assert verdict.passed and not [i for i in verdict.issues if i.severity == "high"]
    assert cli("status").out.splitlines()[1].split()[:3] == ["1", "calc", "passed"]

    # Calibration: the --estimate given at start, against the time in progress.
    corrections = list(Ledger.open(calc_project).records("memory/corrections"))
    assert [(c.data["gate"], c.data.get("predicted_hours")) for c in corrections] == [("calc", 1.5)]


def test_verdict_document_and_outcome_event_are_one_commit(calc_project, cli) -> None:
    cli("gate", "start", "calc")
    assert cli("gate", "submit", "calc").code == 2
    ledger = Ledger.open(calc_project)
    tip = next(ledger.history())
    assert tip.trailers["Meridian-Event"] == "gate.failed"
    assert tip.trailers["Meridian-Gate"] == "calc"
    verdict_path = tip.trailers["Meridian-Verdict"]
    parent = tip.parents[0]
    assert ledger.read(verdict_path, at=tip.oid) is not None
    assert ledger.read(verdict_path, at=parent) is None
    evidence = ledger.read_json(verdict_path.replace("verdicts/", "evidence/", 1))
    assert evidence["checks"][0]["exit_code"] == 0
    assert "1 passed" in evidence["checks"][0]["output"]
    assert evidence["artifacts"] == ["src/calc.py", "tests/conftest.py", "tests/test_calc.py"]
    assert [r.kind for r in ledger.records("events")][-1] == "gate.failed"


def test_a_passed_gate_goes_stale_when_an_artifact_changes(calc_project, cli) -> None:
    write(calc_project, "src/calc.py", REAL)
    write(calc_project, "tests/test_calc.py", TESTS)
    cli("gate", "start", "calc")
    assert cli("gate", "submit", "calc").code == 0
    assert cli("status", "--strict").code == 0

    write(calc_project, "src/calc.py", REAL + "\n\ndef sub(a, b):\n    return a - b\n")
    status = cli("status", "--strict")
    assert status.code == 1
    assert status.out.splitlines()[1] == (
        "1  calc  stale  artifacts changed since the verdict (src/calc.py); submit again")
    assert status.err == ("meridian: stale gate(s): calc: artifacts changed since the verdict "
                          "(src/calc.py); submit them again\n")
    as_json = json.loads(cli("status", "--json").out)
    assert as_json["stale"] == ["calc"]
    assert as_json["gates"][0]["changed_files"] == ["src/calc.py"]

    # Same bytes again: the tree id matches the verdict's subject, so not stale.
    write(calc_project, "src/calc.py", REAL)
    assert cli("status", "--strict").code == 0
    # A new file under the globs changes the artifact set.
    write(calc_project, "src/extra.py", "VALUE = 1\n")
    assert "calc  stale" in cli("status").out
    # An ignored file does not.
    (calc_project / "src" / "extra.py").unlink()
    write(calc_project, ".gitignore", "build/\n")
    write(calc_project, "src/build/generated.py", "X = 1\n")
    assert cli("status", "--strict").code == 0


def test_a_stale_need_does_not_count_as_passed(project, write_gates, cli) -> None:
    write_gates(TWO_GATES)
    write(project, "DESIGN.md", "# Design\n\nThe calculator adds and divides numbers.\n")
    write(project, "src/calc.py", REAL)
    cli("gate", "start", "design")
    assert cli("gate", "submit", "design").code == 0
    write(project, "DESIGN.md", "# Design\n\nThe calculator only adds.\n")
    result = cli("gate", "start", "calc")
    assert result.code == 2
    assert result.err == "meridian: cannot start calc: its needs have not passed: design (stale)\n"
    assert cli("status").out.splitlines()[2].split()[:3] == ["2", "calc", "locked"]


def test_stale_gate_can_be_submitted_again(calc_project, cli) -> None:
    write(calc_project, "src/calc.py", REAL)
    write(calc_project, "tests/test_calc.py", TESTS)
    cli("gate", "start", "calc")
    assert cli("gate", "submit", "calc").code == 0
    again = cli("gate", "submit", "calc")
    assert again.code == 2
    assert "calc already passed and its artifacts are unchanged" in again.err
    write(calc_project, "src/calc.py", REAL + "\n\ndef sub(a, b):\n    return a - b\n")
    write(calc_project, "tests/test_calc.py", TESTS.replace("import add, divide",
                                                            "import add, divide, sub")
          + "\n\ndef test_sub():\n    assert sub(5, 3) == 2\n")
    assert cli("gate", "submit", "calc").code == 0
    assert cli("status", "--strict").code == 0


def _command_evaluator(tmp_path: Path, scores: dict[str, float], label: str = "pass",
                       issues: list[dict] | None = None, exit_code: int = 0,
                       raw: str | None = None) -> str:
    """A command evaluator that saves the bundle it was given and prints a fixed verdict."""
    script = tmp_path / "evaluator.py"
    verdict = raw if raw is not None else json.dumps(
        {"verdict": label, "scores": scores, "issues": issues or []})
    script.write_text(
        "import sys, pathlib\n"
        f"pathlib.Path({str(tmp_path / 'bundle.json')!r}).write_text(sys.stdin.read())\n"
        f"print({verdict!r})\n"
        f"sys.exit({exit_code})\n"
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def _gate_with_evaluator(command: str, threshold: float = 7.0) -> str:
    return f"""
    gates:
      - id: docs
        acceptance: README explains usage.
        artifacts: [README.md, "docs/**", "missing/**"]
        checks:
          - run: echo checking docs && echo second line
          - run: sleep 5
            timeout: 0.3
        evaluate:
          evaluator: command
          command: {json.dumps(command)}
          threshold: {threshold}
    """


def test_bundle_holds_acceptance_artifacts_checks_and_the_diff_since_start(
        project, write_gates, cli, tmp_path, events) -> None:
    command = _command_evaluator(tmp_path, dict.fromkeys(
        ("completeness", "correctness", "robustness", "spec_adherence"), 9))
    write_gates(_gate_with_evaluator(command))
    write(project, "docs/guide.md", "# Guide\n\nold line\n")
    commit_all(project, "docs")
    head = gitio.head_commit(gitio.open_repo(project))
    assert cli("gate", "start", "docs").code == 0
    assert events("gate.started")[-1].data["base_commit"] == head
    write(project, "docs/guide.md", "# Guide\n\nnew line\n")

    result = cli("gate", "submit", "docs")
    bundle = json.loads((tmp_path / "bundle.json").read_text())
    assert bundle["acceptance"] == "README explains usage."
    assert [a["path"] for a in bundle["artifacts"]] == ["README.md", "docs/guide.md"]
    assert bundle["unmatched_globs"] == ["missing/**"]
    assert "-old line\n+new line\n" in bundle["diff"]
    assert "README.md" not in bundle["diff"]  # unchanged since the gate started
    first, slow = bundle["checks"]
    assert first["exit_code"] == 0 and first["output"] == "checking docs\nsecond line\n"
    assert slow["timed_out"] is True and slow["exit_code"] is None
    assert "killed after the 0.3s timeout" in slow["output"]
    assert bundle["subject"] == events("gate.submitted")[-1].data["subject"]
    # The timed-out check and the unmatched glob are high-severity issues whatever the
    # evaluator scored, so the lying "pass" label and the 9s do not pass the gate.
    assert result.code == 2
    verdict = _verdict_at(project, events("gate.failed")[-1].data["verdict"])
    high = [i.message for i in verdict.issues if i.severity == "high"]
    assert any("sleep 5" in m and "timed out" in m for m in high), high
    assert any("missing/**" in m for m in high), high


def test_a_lying_command_evaluator_fails_the_gate(project, write_gates, cli, tmp_path) -> None:
    command = _command_evaluator(tmp_path, {"completeness": 3, "correctness": 2,
                                            "robustness": 4, "spec_adherence": 3}, label="pass")
    write_gates(f"""
        gates:
          - id: docs
            artifacts: [README.md]
            evaluate: {{evaluator: command, command: {json.dumps(command)}}}
    """)
    cli("gate", "start", "docs")
    result = cli("gate", "submit", "docs")
    assert result.code == 2
    assert result.out.startswith("gate docs: FAILED  overall ")
    assert "why it failed: overall" in result.out


def test_evaluator_unavailable_leaves_the_gate_unchanged(project, write_gates, cli, tmp_path,
                                                         events) -> None:
    command = _command_evaluator(tmp_path, {}, raw="this is not json")
    write_gates(f"""
        gates:
          - id: docs
            artifacts: [README.md]
            evaluate: {{evaluator: command, command: {json.dumps(command)}}}
    """)
    cli("gate", "start", "docs")
    result = cli("gate", "submit", "docs")
    assert result.code == 2
    assert "was unavailable" in result.err
    assert "neither pass nor fail" in result.err
    assert result.err.rstrip().endswith("submit again when it is back: meridian gate submit docs")
    assert [e.kind for e in events() if e.kind.startswith("gate.")] == [
        "gate.started", "gate.submitted", "gate.evaluator_unavailable"]
    assert events("gate.evaluator_unavailable")[0].data["evaluator"].startswith("command")
    assert cli("status").out.splitlines()[1].split()[:3] == ["1", "docs", "in_progress"]


def test_artifacts_changed_by_a_check_refuse_the_submission(project, write_gates, cli,
                                                             events) -> None:
    # The verdict would bind check results to files the checks did not run on.
    write_gates("""
        gates:
          - id: docs
            artifacts: ["docs/**"]
            checks:
              - run: echo generated >> docs/guide.md
    """)
    write(project, "docs/guide.md", "# Guide\n\nInstall with pip.\n")
    cli("gate", "start", "docs")
    result = cli("gate", "submit", "docs", "--quiet")
    assert result.code == 2
    assert result.err == (
        "meridian: cannot submit docs: its artifacts changed while its checks ran "
        "(docs/guide.md); a check must not write to the artifacts. Submit again once they "
        "are stable: meridian gate submit docs\n")
    assert [e.kind for e in events() if e.kind.startswith("gate.")] == [
        "gate.started", "gate.blocked"]
    assert cli("status").out.splitlines()[1].split()[:3] == ["1", "docs", "in_progress"]


def test_a_symlinked_artifact_is_read_as_its_link_not_its_target(project, write_gates, cli,
                                                                 tmp_path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("SECRET FROM OUTSIDE THE REPOSITORY\n")
    command = _command_evaluator(tmp_path, dict.fromkeys(
        ("completeness", "correctness", "robustness", "spec_adherence"), 9))
    write_gates(f"""
        gates:
          - id: docs
            artifacts: ["docs/**"]
            evaluate: {{evaluator: command, command: {json.dumps(command)}}}
    """)
    write(project, "docs/guide.md", "# Guide\n")
    (project / "docs" / "notes.md").symlink_to(secret)
    cli("gate", "start", "docs")
    assert cli("gate", "submit", "docs").code == 0
    bundle = json.loads((tmp_path / "bundle.json").read_text())
    assert {a["path"]: a["content"] for a in bundle["artifacts"]} == {
        "docs/guide.md": "# Guide\n", "docs/notes.md": str(secret)}
    assert "SECRET" not in (tmp_path / "bundle.json").read_text()


def test_reopen_and_why_tell_the_story(calc_project, cli) -> None:
    assert cli("gate", "reopen", "calc", "--reason", "x").code == 2
    cli("gate", "start", "calc")
    assert cli("gate", "start", "calc").code == 2
    cli("gate", "submit", "calc", "--self-score", "8")
    write(calc_project, "src/calc.py", REAL)
    write(calc_project, "tests/test_calc.py", TESTS)
    assert cli("gate", "submit", "calc").code == 0
    assert cli("gate", "reopen", "calc", "--reason", "divide must round").code == 0
    assert cli("status").out.splitlines()[1].split()[:3] == ["1", "calc", "in_progress"]
    Ledger.open(calc_project).emit("gate.blocked", {"source": "pre-commit",
                                                    "reason": "stub code staged",
                                                    "files": ["src/calc.py"]})

    why = cli("why", "calc")
    assert why.code == 0
    text = why.out
    kinds = [line.split()[1] for line in text.splitlines()
             if line.startswith("  20")]
    assert kinds == ["started", "submitted", "failed", "submitted", "passed", "reopened",
                     "blocked"]
    assert "self-score 8" in text
    assert "      high    src/calc.py:6  " in text
    assert "by pre-commit: stub code staged (src/calc.py)" in text
    assert "reason: divide must round" in text

    story = json.loads(cli("why", "calc", "--json").out)["story"]
    failed = next(s for s in story if s["kind"] == "gate.failed")
    assert failed["verdict_document"]["passed"] is False

    show = json.loads(cli("gate", "show", "calc", "--json").out)
    assert show["status"]["state"] == "in_progress"
    assert show["verdict"]["passed"] is True


def test_corrupt_memory_blocks_submit_naming_the_line(calc_project, cli, events) -> None:
    from meridian.ledger import Write

    cli("gate", "start", "calc")
    ledger = Ledger.open(calc_project)
    ledger.commit(Write(summary="corrupt", blobs={
        "memory/semantic/2026-01/0000.jsonl": b'{"not": "a record"}\n'}))
    result = cli("gate", "submit", "calc")
    assert result.code == 2
    assert result.err.startswith("meridian: cannot submit calc: stored memory is corrupt: "
                                 "meridian/state:memory/semantic/2026-01/0000.jsonl:1: ")
    assert events("gate.submitted") == []
    assert events("gate.blocked")[-1].data["source"] == "gate"


def test_unknown_gate_and_no_state_branch(repo_with_commit, cli) -> None:
    (repo_with_commit / ".meridian").mkdir()
    (repo_with_commit / ".meridian" / "gates.yaml").write_text("gates:\n  - id: a\n")
    result = cli("gate", "start", "a")
    assert result.code == 2
    assert result.err == (f"meridian: no state branch 'meridian/state' in {repo_with_commit}; "
                          "run `meridian init` first\n")
    Ledger.open(repo_with_commit).emit("meridian.init", {"branch": "meridian/state"})
    result = cli("gate", "start", "zz")
    assert result.code == 2
    assert result.err == "meridian: .meridian/gates.yaml: no gate 'zz' (gates: a)\n"
    for estimate in ("0", "nan", "inf"):
        result = cli("gate", "start", "a", "--estimate", estimate)
        assert result.code == 2
        assert result.err == f"meridian: --estimate: expected hours > 0, got {estimate}\n"


def test_misconfigured_evaluator_gives_no_verdict_and_leaves_the_gate(project, write_gates, cli,
                                                                     events) -> None:
    write_gates("""
        gates:
          - id: docs
            artifacts: [README.md]
            evaluate: {evaluator: command}
    """)
    cli("gate", "start", "docs")
    result = cli("gate", "submit", "docs", "--quiet")
    assert result.code == 2
    assert result.err.startswith("meridian: evaluator.command: required when evaluator.kind is "
                                 "'command'")
    assert events("gate.evaluator_unavailable")[0].data["reason"].startswith("configuration error")
    assert cli("status").out.splitlines()[1].split()[:3] == ["1", "docs", "in_progress"]


def test_a_command_evaluator_run_from_a_hook_sees_the_project(project, write_gates, cli,
                                                              tmp_path, monkeypatch) -> None:
    # A hook (pre-commit in another repository, say) exports variables that pin git to
    # its repository; the evaluator's git must see the project it judges instead.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert subprocess.run(["git", "init", "-q", str(elsewhere)], check=False).returncode == 0
    script = tmp_path / "where.py"
    script.write_text(
        "import json, subprocess\n"
        "top = subprocess.run(['git', 'rev-parse', '--show-toplevel'], capture_output=True,\n"
        "                     text=True).stdout.strip()\n"
        "scores = dict.fromkeys(['completeness', 'correctness', 'robustness',"
        " 'spec_adherence'], 9)\n"
        "print(json.dumps({'scores': scores, 'issues': [], 'summary': top}))\n")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    write_gates(f"""
        gates:
          - id: docs
            artifacts: [README.md]
            evaluate: {{evaluator: command, command: {json.dumps(command)}}}
    """)
    assert cli("gate", "start", "docs").code == 0
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(elsewhere))
    result = cli("gate", "submit", "docs", "--json")
    assert result.code == 0, result
    assert json.loads(result.out)["verdict"]["summary"] == str(project.resolve())


@pytest.mark.parametrize("kind", ["heuristic", "command", "anthropic"])
def test_a_failing_check_fails_the_gate_whichever_evaluator_runs(
        project, write_gates, cli, tmp_path, messages_api, events, kind) -> None:
    perfect = dict.fromkeys(("completeness", "correctness", "robustness", "spec_adherence"), 10)
    evaluate = f"{{evaluator: {kind}}}"
    if kind == "command":
        command = _command_evaluator(tmp_path, perfect, label="pass")
        evaluate = f"{{evaluator: command, command: {json.dumps(command)}}}"
    messages_api.answer((200, {}, tool_use_message(
        {"scores": perfect, "issues": [], "summary": "Flawless.", "verdict": "pass"})))
    config = project / ".meridian" / "config.yaml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(f"evaluator:\n  anthropic: {{base_url: {json.dumps(messages_api.url)}}}\n")
    write_gates(f"""
        gates:
          - id: docs
            acceptance: README explains usage.
            artifacts: [README.md]
            checks: ["echo boom && exit 3"]
            evaluate: {evaluate}
    """)
    assert cli("gate", "start", "docs").code == 0
    result = cli("gate", "submit", "docs")
    assert result.code == 2, result
    verdict = _verdict_at(project, events("gate.failed")[-1].data["verdict"])
    # Exactly one issue for the check: the evaluators' objective finding, no duplicate.
    assert [(i.severity, i.check, i.message) for i in verdict.issues] == [
        ("high", "failing_check", "check `echo boom && exit 3` failed with exit code 3: boom")]
    assert verdict.overall >= verdict.threshold  # the scores alone would have passed
    assert verdict.evaluator.split(":")[0] == kind
    assert len(messages_api.requests) == (kind == "anthropic")


def test_a_rules_file_cannot_switch_the_failing_check_finding_off() -> None:
    from meridian.gates.lifecycle import heuristic_checks

    assert heuristic_checks(frozenset({"heuristic:failing_check", "heuristic:stub_code",
                                       "hook:staged_heuristics"})) == {"stub_code"}
