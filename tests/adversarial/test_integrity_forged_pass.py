"""Attack: make ``meridian status`` say passed without earning it.

Layer: state derivation (``meridian.gates.evidence``, folded by ``gates/state.py``, and
``meridian verify``). A pass counts only when the commit that added it also added the
verdict it names, that verdict is of the same gate, subject and definition, and passes
Meridian's own rule. The one forgery it cannot see, a made-up but consistent verdict,
is ``meridian ci``'s to catch (tests/adversarial/test_integrity_ci.py).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian import gitio
from meridian.errors import MeridianError
from meridian.gates import artifacts
from meridian.ledger import Ledger, Write
from meridian.records import Record, record_id
from tests.adversarial.conftest import CLEAN_MODULE, Proc, commit_all, pass_gate, write
from tests.conftest import git

FORGED = "forged or inconsistent"


def _subject(root: Path, globs: list[str]) -> str:
    return artifacts.snapshot(gitio.open_repo(root), root, globs).subject


def _states(cli: Callable[..., Proc]) -> dict[str, str]:
    result = cli("status", "--json")
    assert result.code == 0, result
    return {g["gate"]: g["state"] for g in json.loads(result.out)["gates"]}


def _pass_event(gate: str, subject: str, verdict: str) -> dict[str, object]:
    return {"gate": gate, "verdict": verdict, "overall": 10.0, "threshold": 7.0,
            "evaluator": "heuristic", "subject": subject,
            "scores": {"completeness": 10.0, "correctness": 10.0, "robustness": 10.0,
                       "spec_adherence": 10.0}}


def _assert_never_passed(cli: Callable[..., Proc], gate: str) -> None:
    assert _states(cli)[gate] == "forged"
    status = cli("status")
    line = next(ln for ln in status.out.splitlines() if f" {gate} " in f" {ln} ")
    assert FORGED in line and " passed " not in line.replace(FORGED, "")
    assert cli("status", "--strict").code == 1
    why = cli("why", gate)
    assert why.out.startswith(f"{gate}: {FORGED}")
    verify = cli("verify", "--full")
    assert verify.code == 1 and FORGED in verify.out


def test_a_pass_emitted_with_no_verdict_is_forged(project: Path,
                                                  cli: Callable[..., Proc]) -> None:
    """`python -c 'Ledger.emit(...)'`: the events an agent can append in one line."""
    write(project, "spec/notes.py", CLEAN_MODULE)
    commit_all(project)
    ledger = Ledger.open(project)
    ledger.emit("gate.started", {"gate": "spec"})
    subject = _subject(project, ["spec/**"])
    ledger.emit("gate.passed", _pass_event("spec", subject, "verdicts/spec/made-up.json"))
    _assert_never_passed(cli, "spec")
    # The dependant stays locked: its start is refused and so is a commit of its files.
    result = cli("gate", "start", "impl")
    assert result.code == 2 and "spec (forged)" in result.err


def test_a_pass_borrowing_another_gates_verdict_is_forged(project: Path,
                                                          cli: Callable[..., Proc]) -> None:
    pass_gate(cli, project, "spec", "spec/notes.py")
    ledger = Ledger.open(project)
    [spec_verdict] = ledger.listdir("verdicts/spec")
    document = ledger.read(f"verdicts/spec/{spec_verdict}")
    assert document is not None
    ledger.emit("gate.started", {"gate": "impl"})
    write(project, "src/area.py", CLEAN_MODULE)
    commit_all(project)
    subject = _subject(project, ["src/**"])
    # Route 1: name the spec verdict. Route 2: copy it under impl, in the same commit.
    ledger.emit("gate.passed", _pass_event("impl", subject, f"verdicts/spec/{spec_verdict}"))
    _assert_never_passed(cli, "impl")
    record = ledger.record("gate.passed", _pass_event("impl", subject, "verdicts/impl/copy.json"))
    ledger.commit(Write(summary="gate.passed impl", blobs={"verdicts/impl/copy.json": document})
                  .add("events", record))
    _assert_never_passed(cli, "impl")
    assert "is for gate 'spec'" in cli("why", "impl").out


def test_a_verdict_that_fails_meridians_rule_does_not_pass(project: Path,
                                                           cli: Callable[..., Proc]) -> None:
    """A verdict document written with the event, labelled passed, with a high issue."""
    write(project, "spec/notes.py", CLEAN_MODULE)
    commit_all(project)
    subject = _subject(project, ["spec/**"])
    ledger = Ledger.open(project)
    ledger.emit("gate.started", {"gate": "spec"})
    verdict = {"gate": "spec", "evaluator": "heuristic", "subject": subject,
               "scores": {"completeness": 10.0, "correctness": 10.0, "robustness": 10.0,
                          "spec_adherence": 10.0},
               "overall": 10.0, "threshold": 7.0, "passed": True,
               "issues": [{"severity": "high", "message": "the tests are hollow"}]}
    record = ledger.record("gate.passed", _pass_event("spec", subject, "verdicts/spec/v.json"))
    ledger.commit(Write(summary="gate.passed spec",
                        blobs={"verdicts/spec/v.json": json.dumps(verdict).encode()})
                  .add("events", record))
    _assert_never_passed(cli, "spec")
    assert "does not pass Meridian's rule" in cli("why", "spec").out


def test_a_record_from_the_future_is_refused_on_write(project: Path) -> None:
    ledger = Ledger.open(project)
    record = ledger.record("gate.started", {"gate": "spec"}, ts="2099-01-01T00:00:00.000000Z")
    tip = ledger.tip()
    with pytest.raises(MeridianError, match="stamped 2099-01-01.*after now"):
        ledger.commit(Write(summary="from the future").add("events", record))
    assert ledger.tip() == tip


def _plumb_commit(root: Path, branch: str, files: dict[str, bytes], message: str,
                  env: dict[str, str] | None = None) -> str:
    """Append to the state branch with git plumbing only (no Meridian code at all)."""
    index = root / ".git" / "forger-index"
    base = {**os.environ, "GIT_INDEX_FILE": str(index), **(env or {})}

    def run(*args: str, data: bytes | None = None) -> bytes:
        return subprocess.run(["git", *args], cwd=root, env=base, input=data,
                              capture_output=True, check=True).stdout

    parent = run("rev-parse", f"refs/heads/{branch}").decode().strip()
    run("read-tree", parent)
    for path, data in files.items():
        blob = run("hash-object", "-w", "--stdin", data=data).decode().strip()
        run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    tree = run("write-tree").decode().strip()
    commit = run("commit-tree", tree, "-p", parent, "-m", message).decode().strip()
    run("update-ref", f"refs/heads/{branch}", commit, parent)
    index.unlink()
    return commit


def test_a_pass_stamped_in_2099_by_plumbing_does_not_survive_reopen(
        project: Path, cli: Callable[..., Proc]) -> None:
    """Plumbing writes a well-formed pass (verdict and all) stamped 2099, in a commit
    dated 2099. Folding is by ledger order, so a later reopen wins; verify flags it."""
    write(project, "spec/notes.py", CLEAN_MODULE)
    commit_all(project)
    assert cli("gate", "start", "spec").code == 0
    subject = _subject(project, ["spec/**"])
    ledger = Ledger.open(project)
    ts = "2099-01-01T00:00:00.000000Z"
    verdict = {"gate": "spec", "evaluator": "heuristic", "subject": subject,
               "scores": {"completeness": 10.0, "correctness": 10.0, "robustness": 10.0,
                          "spec_adherence": 10.0}, "overall": 10.0, "threshold": 7.0,
               "passed": True, "issues": []}
    data = _pass_event("spec", subject, "verdicts/spec/2099.json")
    data["issues"] = {}
    data["usage"] = {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    rid = record_id("gate.passed", ts, ledger.writer, data)
    line = Record(id=rid, ts=ts, kind="gate.passed", writer=ledger.writer, data=data).line()
    shard = "events/2099-01/0000.jsonl"
    _plumb_commit(project, "meridian/state",
                  {shard: (line + "\n").encode(),
                   "verdicts/spec/2099.json": json.dumps(verdict).encode()},
                  "gate.passed spec", env={"GIT_COMMITTER_DATE": "4070908800 +0000",
                                           "GIT_AUTHOR_DATE": "4070908800 +0000"})
    assert _states(cli)["spec"] == "passed"  # consistent, for now
    verify = cli("verify", "--full")
    assert verify.code == 1 and "commit dated in the future" in verify.out
    assert cli("gate", "reopen", "spec", "--reason", "redo").code == 0
    assert _states(cli)["spec"] == "in_progress"  # the reopen is later in the ledger


def test_a_record_stamped_after_its_commit_is_flagged(project: Path,
                                                      cli: Callable[..., Proc]) -> None:
    write(project, "spec/notes.py", CLEAN_MODULE)
    commit_all(project)
    ledger = Ledger.open(project)
    ts = "2099-01-01T00:00:00.000000Z"
    data: dict[str, object] = {"gate": "spec"}
    line = Record(id=record_id("gate.started", ts, ledger.writer, data), ts=ts,
                  kind="gate.started", writer=ledger.writer, data=data).line()
    commit = _plumb_commit(project, "meridian/state",
                           {"events/2099-01/0000.jsonl": (line + "\n").encode()}, "start")
    verify = cli("verify")
    assert verify.code == 1
    assert f"commit {commit[:12]}" in verify.out and "a record from the future" in verify.out


def test_an_approval_counts_only_for_the_verdict_it_names(project: Path,
                                                          cli: Callable[..., Proc]) -> None:
    gates = (project / ".meridian" / "gates.yaml").read_text().replace(
        'artifacts: ["spec/**"]',
        'artifacts: ["spec/**"]\n    approval: {token_sha256: "' + "ab" * 32 + '"}')
    write(project, ".meridian/gates.yaml", gates)
    commit_all(project, "approval")
    pass_gate(cli, project, "spec", "spec/notes.py")
    assert _states(cli)["spec"] == "submitted"  # awaiting a human
    ledger = Ledger.open(project)
    ledger.emit("gate.approved", {"gate": "spec", "approver": "agent <a@b>",
                                  "verdict": "verdicts/spec/another.json",
                                  "subject": _subject(project, ["spec/**"])})
    assert _states(cli)["spec"] == "submitted"
    git(project, "status")  # the work tree is untouched by all of this
