"""Attack: a pass consistent in every way the clone can check, written with git plumbing
(no Meridian code) or by ``python -c`` calling the ledger, whose verdict is made up.

Layer: the state derivation cannot tell it from a real one (``status`` shows it passed:
it is consistent); CI can. ``meridian ci`` rebuilds the artifact tree of the checked-out
commit and re-runs the gate's checks and the offline scan on it, and exits 1 naming the
gate and what does not reproduce. A made-up verdict over files the commit does not hold
is a stale pass there, named with both trees.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from tests.adversarial.conftest import Proc, commit_all, pass_gate, write
from tests.adversarial.integrity_support import forge_pass
from tests.conftest import git

FAILING_CHECK = f'{sys.executable} -c "import sys; print(\'2 != 3\'); sys.exit(3)"'
PASSING_CHECK = f'{sys.executable} -c "print(42)"'


def with_check(project: Path, gate_globs: str, command: str) -> None:
    gates = (project / ".meridian" / "gates.yaml").read_text().replace(
        f"artifacts: [{gate_globs}]",
        f"artifacts: [{gate_globs}]\n    checks: [{json.dumps(command)}]")
    write(project, ".meridian/gates.yaml", gates)
    commit_all(project, "checks")


def states(cli: Callable[..., Proc]) -> dict[str, str]:
    result = cli("status", "--json")
    assert result.code == 0, result
    return {g["gate"]: g["state"] for g in json.loads(result.out)["gates"]}


def test_a_plumbed_consistent_pass_whose_checks_fail_is_caught_by_ci_only(
        project: Path, cli: Callable[..., Proc], tmp_path: Path) -> None:
    with_check(project, '"spec/**"', FAILING_CHECK)
    write(project, "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    commit_all(project, "spec")
    assert cli("gate", "start", "spec").code == 0  # the state branch exists, as in real use
    forge_pass(project, "spec")
    assert states(cli)["spec"] == "passed"  # local derivation cannot tell
    assert cli("verify", "--full").code == 0
    assert cli("gate", "start", "impl").code == 0  # and it unlocks the dependant locally
    summary = tmp_path / "ci.md"
    result = cli("ci", "--no-fetch", "--summary", str(summary))
    assert result.code == 1, result
    text = summary.read_text()
    headline = next(line for line in text.splitlines() if line.startswith("- gate spec:"))
    assert "its pass does not reproduce" in headline
    assert "its checks do not reproduce (1 of 1 fail" in headline and "exit 3" in headline
    assert "check FAILED (exit 3)" in text and "2 != 3" in text
    report = json.loads(cli("ci", "--no-fetch", "--json").out)
    [spec] = report["gates"]
    assert spec["gate"] == "spec" and not spec["ok"]
    assert any("checks do not reproduce" in r for r in spec["reasons"])


def test_a_python_c_consistent_pass_over_a_stub_fails_the_offline_scan(
        project: Path, cli: Callable[..., Proc]) -> None:
    """The same forgery through the library (``python -c 'Ledger...'``): no check to fail,
    but the offline scan re-run in CI finds the stub the made-up verdict did not."""
    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    write(project, "src/area.py", "def area(w, h):\n    raise NotImplementedError\n")
    commit_all(project, "impl stub")
    from tests.adversarial.test_integrity_ci import _forge_consistent_pass

    _forge_consistent_pass(project, "impl", ["src/**"])
    assert states(cli)["impl"] == "passed"
    result = cli("ci", "--no-fetch")
    assert result.code == 1
    assert "- gate impl: its pass does not reproduce: the offline scan fails it" in result.out
    assert "src/area.py" in result.out


def test_a_made_up_verdict_over_a_tree_the_commit_does_not_hold_fails_ci(
        project: Path, cli: Callable[..., Proc]) -> None:
    write(project, "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    commit_all(project, "spec")
    assert cli("gate", "start", "spec").code == 0
    forge_pass(project, "spec", subject="ab" * 20)  # a tree id nobody evaluated
    head = git(project, "rev-parse", "HEAD").strip()
    result = cli("ci", "--no-fetch", "--json")
    assert result.code == 1, result
    report = json.loads(result.out)
    [stale] = report["stale"]
    assert stale.startswith("`spec`:") and "abababababab" in stale
    assert f"artifacts at {head[:12]}" in stale and "does not hold" in stale
    assert report["gates"] == []  # nothing stands passed to re-check


def test_a_genuine_pass_over_the_same_check_reproduces(project: Path,
                                                       cli: Callable[..., Proc]) -> None:
    with_check(project, '"spec/**"', PASSING_CHECK)
    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    result = cli("ci", "--no-fetch")
    assert result.code == 0, result
    assert "### Passes that do not reproduce" not in result.out
