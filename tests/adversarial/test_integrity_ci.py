"""Attack: write a pass that is consistent in every way the local layers can check, with
a made-up verdict, for work whose checks fail; push it.

Layer: CI (``meridian ci``), which re-runs the gate's checks and the offline scan on the
verdict's subject in a temporary worktree, outside the agent's reach. Also: the harness
changes of the pushed range are listed from the commits themselves.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from meridian import gitio
from meridian.gates import artifacts
from meridian.gates.definition import spec_hash
from meridian.gates.graph import load_graph
from meridian.ledger import Ledger, Write
from tests.adversarial.conftest import Proc, commit_all, pass_gate, write
from tests.conftest import git

FAILING_CHECK = f'{sys.executable} -c "import sys; sys.exit(3)"'


def _with_check(project: Path, command: str) -> None:
    gates = (project / ".meridian" / "gates.yaml").read_text().replace(
        'artifacts: ["spec/**"]', f'artifacts: ["spec/**"]\n    checks: [{json.dumps(command)}]')
    write(project, ".meridian/gates.yaml", gates)
    commit_all(project, "spec has a check")


def _forge_consistent_pass(project: Path, gate: str, globs: list[str]) -> None:
    """Everything the local state derivation checks holds: one commit adds the event and
    its verdict, same gate, subject and definition hash, a passing verdict."""
    repo = gitio.open_repo(project)
    subject = artifacts.snapshot(repo, project, globs).subject
    ledger = Ledger.open(project)
    ledger.emit("gate.started", {"gate": gate, "base_commit": gitio.head_commit(repo)})
    digest = spec_hash(load_graph(project), gate)
    scores = {d: 9.5 for d in ("completeness", "correctness", "robustness", "spec_adherence")}
    verdict = {"gate": gate, "evaluator": "heuristic", "subject": subject, "scores": scores,
               "overall": 9.5, "threshold": 7.0, "passed": True, "issues": [],
               "spec_hash": digest}
    path = f"verdicts/{gate}/20260101T000000-forged.json"
    record = ledger.record("gate.passed", {
        "gate": gate, "verdict": path, "overall": 9.5, "threshold": 7.0,
        "evaluator": "heuristic", "subject": subject, "scores": scores, "spec_hash": digest})
    ledger.commit(Write(summary=f"gate.passed {gate}", blobs={path: json.dumps(verdict).encode()})
                  .add("events", record))


def test_a_consistent_fake_pass_is_shown_passed_locally_and_fails_in_ci(
        project: Path, cli: Callable[..., Proc], tmp_path: Path) -> None:
    _with_check(project, FAILING_CHECK)
    write(project, "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    commit_all(project, "spec")
    _forge_consistent_pass(project, "spec", ["spec/**"])
    status = json.loads(cli("status", "--json").out)
    assert status["gates"][0]["state"] == "passed"  # the local layers cannot tell
    assert cli("verify", "--full").code == 0
    summary = tmp_path / "summary.md"
    result = cli("ci", "--no-fetch", "--summary", str(summary))
    assert result.code == 1, result
    text = summary.read_text()
    assert "## Meridian ci: FAILED" in text and "does not reproduce" in text
    assert "check FAILED (exit 3)" in text
    git(project, "worktree", "prune")
    assert "meridian-ci-" not in git(project, "worktree", "list")  # the worktree is gone


def test_a_genuine_pass_reproduces_in_ci(project: Path, cli: Callable[..., Proc]) -> None:
    _with_check(project, f'{sys.executable} -c "print(42)"')
    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    result = cli("ci", "--no-fetch", "--json")
    assert result.code == 0, result
    report = json.loads(result.out)
    assert report["ok"] and [g["gate"] for g in report["gates"]] == ["spec"]


def test_a_fake_pass_over_stub_code_fails_the_offline_scan_in_ci(
        project: Path, cli: Callable[..., Proc]) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    write(project, "src/area.py", "def area(w, h):\n    raise NotImplementedError\n")
    commit_all(project, "impl stub")
    _forge_consistent_pass(project, "impl", ["src/**"])
    result = cli("ci", "--no-fetch")
    assert result.code == 1
    assert "offline scan (heuristic): FAILS" in result.out and "src/area.py" in result.out


def test_ci_lists_a_program_made_harness_weakening_in_the_range(
        project: Path, cli: Callable[..., Proc]) -> None:
    base = git(project, "rev-parse", "HEAD").strip()
    gates = (project / ".meridian" / "gates.yaml").read_text().replace("    needs: [spec]\n", "")
    write(project, ".meridian/gates.yaml", gates)
    git(project, "add", "-A")
    git(project, "commit", "-q", "--no-verify", "-m", "drop a need")
    result = cli("ci", "--no-fetch", "--base", base, "--json")
    report = json.loads(result.out)
    [line] = report["harness_changes"]
    assert "gate impl: needs [spec] removed" in line and "weakens enforcement" in line
    assert report["harness_weakening"] is True


def test_init_ci_github_makes_the_harness_code_owned(project: Path,
                                                     cli: Callable[..., Proc]) -> None:
    result = cli("init", "--no-hooks", "--ci", "github")
    assert result.code == 0, result
    owners = (project / ".github" / "CODEOWNERS").read_text()
    for path in ("/.meridian/", "/.claude/", "/.github/workflows/", "/.pre-commit-config.yaml"):
        assert f"{path} test@meridian.invalid" in owners
    workflow = (project / ".github" / "workflows" / "meridian.yml").read_text()
    assert "meridian ci --no-fetch $every --base" in workflow and "fetch-depth: 0" in workflow


def test_an_existing_codeowners_file_is_kept_and_the_entry_printed(
        project: Path, cli: Callable[..., Proc]) -> None:
    write(project, "CODEOWNERS", "* @someone\n")
    result = cli("init", "--no-hooks", "--ci", "github")
    assert result.code == 0, result
    assert (project / "CODEOWNERS").read_text() == "* @someone\n"
    assert "/.meridian/ test@meridian.invalid" in result.out + result.err
    assert not (project / ".github" / "CODEOWNERS").exists()


def test_an_eval_only_project_passes_ci_with_its_state_branch_verified(
        repo_with_commit: Path, cli: Callable[..., Proc]) -> None:
    """No gate graph at all (a project that only runs evaluations): the CI template's
    `meridian ci` step must not fail it; the state branch is still verified."""
    assert cli("init", "--no-hooks").code == 0
    assert not (repo_with_commit / ".meridian" / "gates.yaml").exists()
    commit_all(repo_with_commit, "meridian setup")
    assert cli("eval", "run", "reference", "--agent", "reference-v1", "--offline",
               "--limit", "2").code == 0
    result = cli("ci", "--no-fetch", "--json")
    assert result.code == 0, result
    report = json.loads(result.out)
    assert report["ok"] and report["tip"] and not report["verify_problems"]
    assert any("no gate graph" in note for note in report["notes"])


def test_removing_the_gate_graph_does_not_turn_a_gated_project_green_in_ci(
        project: Path, cli: Callable[..., Proc]) -> None:
    """Attack: the gates are in the way, so delete .meridian/gates.yaml and push."""
    pass_gate(cli, project, "spec", "spec/spec.py")
    base = gitio.head_commit(gitio.open_repo(project))
    (project / ".meridian" / "gates.yaml").unlink()
    commit_all(project, "tidy up")
    result = cli("ci", "--no-fetch", "--base", str(base), "--json")
    assert result.code == 1, result
    report = json.loads(result.out)
    assert any("no gate graph" in p and "spec" in p for p in report["problems"])
    assert any("gates.yaml" in line for line in report["harness_changes"])
    assert "### Problems" in cli("ci", "--no-fetch").out
