"""Attack: launder a stub through a reopen. The gate passed; a stub is committed past the
hooks (``--no-verify``); the gate is reopened and submitted. A reopen that started the
change at HEAD made the stub "pre-existing": neither blocking nor costing points.

Layers: state derivation (a reopen keeps the base the gate had, the commit it was first
started at, so what was committed after its last pass is judged as new) and CI
(``meridian ci --base REV`` widens the change to the first base the gate recorded that
is an ancestor of REV: a range whose base already holds the stub does not hide it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.adversarial.conftest import Proc, commit_all, pass_gate, write
from tests.adversarial.integrity_support import forge_pass
from tests.conftest import git

STUB = 'def multiply(a: int, b: int) -> int:\n    """Multiply."""\n    raise NotImplementedError\n'
SPEC = "# Spec\nThe area of a rectangle, its sides non-negative, documented.\n"


def _passed_then_stub(project: Path, cli: Callable[..., Proc]) -> str:
    """spec and impl passed; then a stub committed past the hooks. Returns the commit of
    the stub."""
    pass_gate(cli, project, "spec", "spec/spec.md", SPEC)
    pass_gate(cli, project, "impl", "src/area.py")
    write(project, "src/extra.py", STUB)
    git(project, "add", "-A")
    git(project, "commit", "-q", "--no-verify", "-m", "extra")
    return git(project, "rev-parse", "HEAD").strip()


def test_a_stub_committed_after_a_pass_is_new_after_a_reopen(
        project: Path, cli: Callable[..., Proc]) -> None:
    _passed_then_stub(project, cli)
    assert cli("gate", "reopen", "impl", "--reason", "more work").code == 0
    result = cli("gate", "submit", "impl", "--json")
    assert result.code != 0, result
    issues = json.loads(result.out)["verdict"]["issues"]
    [stub] = [i for i in issues if i["file"] == "src/extra.py" and i["check"] == "stub_code"]
    assert stub["severity"] == "high" and stub["pre_existing"] is False, stub


def test_reopening_twice_still_judges_it(project: Path, cli: Callable[..., Proc]) -> None:
    """The base is the gate's, not the previous reopen's: a second cycle keeps it."""
    _passed_then_stub(project, cli)
    assert cli("gate", "reopen", "impl", "--reason", "more work").code == 0
    assert cli("gate", "submit", "impl").code != 0
    assert cli("gate", "reopen", "impl", "--reason", "again").code == 0
    write(project, "src/notes.py", '"""Notes."""\nNOTES = 1\n')
    commit_all(project, "notes")
    result = cli("gate", "submit", "impl", "--json")
    assert result.code != 0, result
    issues = json.loads(result.out)["verdict"]["issues"]
    assert any(i["file"] == "src/extra.py" and not i["pre_existing"] for i in issues), issues


def test_ci_with_a_base_holding_the_stub_still_judges_it_as_new(
        project: Path, cli: Callable[..., Proc]) -> None:
    """A pass on the stub (here forged by plumbing, as older Meridian wrote one after a
    reopen at HEAD) re-checked with ``--base`` at the stub's commit: the gate's recorded
    first base is older, so the stub is in the change."""
    stub_commit = _passed_then_stub(project, cli)
    write(project, "src/notes.py", '"""Notes."""\nNOTES = 1\n')
    commit_all(project, "notes")
    forge_pass(project, "impl")  # its gate.started names HEAD: a base hiding everything
    result = cli("ci", "--no-fetch", "--json", "--base", stub_commit)
    assert result.code == 1, result
    report = json.loads(result.out)
    [impl] = [g for g in report["gates"] if g["gate"] == "impl"]
    assert not impl["ok"], impl
    assert any("src/extra.py:3" in d for d in impl["details"]), impl


def test_ci_ignores_a_recorded_base_that_is_not_an_ancestor(
        project: Path, cli: Callable[..., Proc]) -> None:
    """A clean range re-checked from its base: a recorded base after it (the forger's
    choice) neither narrows nor widens the change; a pre-existing stub before the gate
    ever started stays pre-existing."""
    write(project, "src/legacy.py", STUB)
    commit_all(project, "legacy")
    pass_gate(cli, project, "spec", "spec/spec.md", SPEC)
    pass_gate(cli, project, "impl", "src/area.py")
    base = git(project, "rev-parse", "HEAD~1").strip()
    result = cli("ci", "--no-fetch", "--json", "--base", base)
    assert result.code == 0, result
