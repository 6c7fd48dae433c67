"""Attacks on what `meridian ci` re-checks "as the base defined it" (rt4):

- F1: the range removes the gate graph and renames `branch:` in the config: `meridian
  ci` took the state branch from the pushed config, found none and passed;
- F8: a gate renamed in the range (core -> calc) made `gate start/submit` and `meridian
  ci` exit 2 (`no gate 'core'`) on the old id's pass; fixed by skipping such passes, a
  rename must not escape the re-checks keyed on the gate id: the new gate holding the
  removed gate's files is re-checked as the base defined the old one.

Layer: CI (and state derivation for the crash).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.adversarial.conftest import Proc, commit_all, pass_gate, write
from tests.conftest import git


def test_graph_removed_and_branch_renamed_in_one_range_fails(
        project: Path, cli: Callable[..., Proc]) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py")
    base = git(project, "rev-parse", "HEAD").strip()
    config = project / ".meridian" / "config.yaml"
    config.write_text(config.read_text().replace("branch: meridian/state",
                                                 "branch: meridian/state-v2"))
    git(project, "rm", "-q", ".meridian/gates.yaml")
    commit_all(project, "state per release; drop the gates file")
    for argv in (["--base", base], []):
        result = cli("ci", "--no-fetch", *argv)
        assert result.code == 1, (argv, result)
    assert "branch: changed in the range" in cli("ci", "--no-fetch", "--base", base).out


def test_a_gate_renamed_in_the_range_is_checked_as_the_base_defined_it(
        project: Path, cli: Callable[..., Proc]) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py")
    base = git(project, "rev-parse", "HEAD").strip()
    gates = project / ".meridian" / "gates.yaml"
    gates.write_text(gates.read_text().replace("- id: spec\n", "- id: design\n")
                     .replace("needs: [spec]", "needs: [design]"))
    commit_all(project, "rename gate spec to design")
    assert cli("gate", "start", "design").code == 0  # no `no gate 'spec'` crash
    write(project, "spec/more.py", '"""More."""\n')
    commit_all(project, "design work")
    assert cli("gate", "submit", "design").code == 0
    result = cli("ci", "--no-fetch", "--base", base)
    assert "no gate 'spec'" not in result.err, result
    assert "holding files of gate spec, which the range removed" in result.out, result.out
