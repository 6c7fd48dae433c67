"""Attacks on what counts as the harness.

1. ``evaluator: command`` with ``command: python3 tools/judge.py``: the judge is a file of
   the repository. Editing it into a rubber stamp (``strict = 4`` -> ``strict = 10``)
   changed neither gates.yaml nor config.yaml, so the pass stayed current and no harness
   change was recorded or listed.
   Layers: state derivation (the files a command names are in the gate's definition,
   ``spec_hash``: the pass turns stale, also in ``status``'s fast pass view), the gate
   commands' catch-up and ``meridian ci`` (the file is a harness file: its change is
   recorded and listed, marked as weakening).
2. Weakenings listed but not marked: config-level ``evaluator.require: model`` or
   ``evaluator.block_pre_existing: true`` dropped; a gates file moved with
   ``paths.gates`` whose later edits (a need dropped, an exclude added) were described
   by file name ("graph.yaml changed"), unmarked.
   Layer: ``meridian.harness.describe`` (the pre-commit record, the catch-up, CI's list).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from meridian.ledger import Ledger
from tests.adversarial.conftest import Proc, commit_all, write
from tests.conftest import git

JUDGE = """\
import json, sys
json.load(sys.stdin)
strict = {score}
print(json.dumps({{"scores": {{k: strict for k in ["completeness", "correctness",
                                                 "robustness", "spec_adherence"]}},
                  "issues": []}}))
"""
SPEC = "# Spec\nThe area of a rectangle, its sides non-negative, documented.\n"


def _states(cli: Callable[..., Proc]) -> dict[str, str]:
    result = cli("status", "--json")
    assert result.code == 0, result
    return {g["gate"]: g["state"] for g in json.loads(result.out)["gates"]}


def _judged(project: Path, score: int = 8) -> None:
    write(project, "tools/judge.py", JUDGE.format(score=score))
    gates = (project / ".meridian" / "gates.yaml").read_text()
    command = json.dumps(f"{sys.executable} tools/judge.py")
    write(project, ".meridian/gates.yaml", gates.replace(
        'artifacts: ["spec/**"]',
        f'artifacts: ["spec/**"]\n    evaluate:\n      evaluator: command\n'
        f'      command: {command}', 1))
    commit_all(project, "spec judged by tools/judge.py")


def _harness_events(project: Path) -> list[dict]:
    return [dict(r.data) for r in Ledger.open(project).records("events")
            if r.kind == "harness.changed"]


def _ci(cli: Callable[..., Proc], base: str) -> dict:
    result = cli("ci", "--no-fetch", "--json", "--base", base)
    return json.loads(result.out)


def test_editing_the_judge_program_makes_the_pass_stale_and_is_a_recorded_weakening(
        project: Path, cli: Callable[..., Proc]) -> None:
    _judged(project)
    assert cli("gate", "start", "spec").code == 0
    write(project, "spec/spec.md", SPEC)
    commit_all(project, "spec")
    assert cli("gate", "submit", "spec").code == 0
    assert _states(cli)["spec"] == "passed"
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, "tools/judge.py", JUDGE.format(score=10))
    commit_all(project, "judge: tidy")
    # The definition the verdict was decided under changed: the pass is stale.
    assert _states(cli)["spec"] == "stale"
    # The next gate command catches the change up, marked as weakening.
    assert cli("gate", "reopen", "spec", "--reason", "more").code == 0
    recorded = [e for e in _harness_events(project)
                if any(f["path"] == "tools/judge.py" for f in e["files"])]
    assert recorded, _harness_events(project)
    assert recorded[-1]["weakening"] is True
    assert "evaluator program tools/judge.py changed" in recorded[-1]["changes"]
    report = _ci(cli, base)
    assert report["harness_weakening"] is True, report
    assert any("tools/judge.py" in line and "weakens" in line
               for line in report["harness_changes"]), report["harness_changes"]


def test_a_program_named_by_the_config_evaluator_command_is_a_harness_file(
        project: Path, cli: Callable[..., Proc]) -> None:
    write(project, "tools/judge.py", JUDGE.format(score=8))
    config = project / ".meridian" / "config.yaml"
    text = config.read_text()
    assert "  kind: auto\n" in text
    config.write_text(text.replace(
        "  kind: auto\n",
        f"  kind: command\n  command: {json.dumps(sys.executable + ' ./tools/judge.py')}\n", 1))
    commit_all(project, "judge every gate with tools/judge.py")
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, "tools/judge.py", JUDGE.format(score=10))
    commit_all(project, "judge: tidy")
    report = _ci(cli, base)
    assert report["harness_weakening"] is True, report
    assert any("evaluator program tools/judge.py changed" in line
               for line in report["harness_changes"]), report["harness_changes"]


def test_dropping_a_config_level_stricter_judge_is_marked_weakening(
        project: Path, cli: Callable[..., Proc]) -> None:
    config = project / ".meridian" / "config.yaml"
    original = config.read_text()
    config.write_text(original.replace(
        "  kind: auto\n", "  kind: auto\n  require: model\n  block_pre_existing: true\n", 1))
    commit_all(project, "strict judge")
    base = git(project, "rev-parse", "HEAD").strip()
    config.write_text(original)
    commit_all(project, "config: tidy")
    report = _ci(cli, base)
    assert report["harness_weakening"] is True, report
    [line] = [c for c in report["harness_changes"] if "config: tidy" in c]
    assert "evaluator.require" in line and "evaluator.block_pre_existing" in line
    assert "weakens" in line
    # The same change recorded by the next gate command's catch-up.
    assert cli("gate", "start", "spec").code == 0
    [event] = [e for e in _harness_events(project)
               if any("evaluator.require" in c for c in e["changes"])
               and any(f["before"] and f["after"] for f in e["files"])
               and "model -> (default)" in " ".join(e["changes"])]
    assert event["weakening"] is True


def test_a_moved_gates_file_is_still_described_as_the_gates_file(
        project: Path, cli: Callable[..., Proc]) -> None:
    git(project, "mv", ".meridian/gates.yaml", ".meridian/graph.yaml")
    config = project / ".meridian" / "config.yaml"
    text = config.read_text()
    config.write_text(text.replace("  gates: .meridian/gates.yaml\n",
                                   "  gates: .meridian/graph.yaml\n")
                      if "  gates: .meridian/gates.yaml\n" in text
                      else text + "paths:\n  gates: .meridian/graph.yaml\n")
    commit_all(project, "gates file per release")
    base = git(project, "rev-parse", "HEAD").strip()
    graph = project / ".meridian" / "graph.yaml"
    gates = graph.read_text()
    assert "    needs: [spec]\n" in gates
    graph.write_text(gates.replace("    needs: [spec]\n", "", 1).replace(
        'artifacts: ["src/**"]', 'artifacts: ["src/**"]\n    exclude: ["src/gen/**"]', 1))
    commit_all(project, "graph: simplify")
    report = _ci(cli, base)
    assert report["harness_weakening"] is True, report
    [line] = [c for c in report["harness_changes"] if "graph: simplify" in c]
    assert "gate impl:" in line and "needs [spec] removed" in line, line
    assert "exclude [src/gen/**] added" in line and "weakens" in line, line
    assert cli("gate", "start", "spec").code == 0
    assert any("needs [spec] removed" in " ".join(e["changes"]) and e["weakening"]
               for e in _harness_events(project)), _harness_events(project)
