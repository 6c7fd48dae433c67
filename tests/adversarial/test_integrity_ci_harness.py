"""Attack: make a made-up pass reproduce in CI by weakening, in the same pushed range,
what CI re-checks it with: the gate's ``checks:`` in gates.yaml replaced by one that
passes, or the gate's evaluation threshold lowered so the offline scan passes.

Layer: CI (``meridian ci --base REV``). The pass is re-checked with the harness as the
pushed commit defines it *and*, where the range changed the gate's checks or evaluation
settings, as the base defined them: the base is what the reviewer already trusted, so
a range that weakens the harness cannot also be the thing that makes its own pass
reproduce. The pass fails naming the base's checks; the weakening is listed too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.adversarial.conftest import Proc, commit_all, write
from tests.adversarial.integrity_support import forge_pass
from tests.adversarial.test_integrity_fake_verdict import (
    FAILING_CHECK,
    PASSING_CHECK,
    states,
    with_check,
)
from tests.conftest import git

SPEC = '"""Spec."""\nSIDES = 2\n'


def _report(cli: Callable[..., Proc], *args: str) -> tuple[int, dict]:
    result = cli("ci", "--no-fetch", "--json", *args)
    return result.code, json.loads(result.out)


def test_checks_weakened_in_the_range_do_not_make_a_fake_pass_reproduce(
        project: Path, cli: Callable[..., Proc]) -> None:
    with_check(project, '"spec/**"', FAILING_CHECK)
    assert cli("gate", "start", "spec").code == 0
    base = git(project, "rev-parse", "HEAD").strip()
    # The agent's range: the failing check swapped for one that passes, the spec written,
    # and a pass consistent with the weakened definition forged by plumbing.
    gates = (project / ".meridian" / "gates.yaml").read_text()
    write(project, ".meridian/gates.yaml",
          gates.replace(json.dumps(FAILING_CHECK), json.dumps(PASSING_CHECK)))
    write(project, "spec/spec.py", SPEC)
    commit_all(project, "spec, and a friendlier check")
    forge_pass(project, "spec")
    assert states(cli)["spec"] == "passed"
    code, report = _report(cli, "--base", base)
    assert code == 1, report
    [spec] = [g for g in report["gates"] if g["gate"] == "spec"]
    assert not spec["ok"]
    assert any("as the base defined them" in r for r in spec["reasons"]), spec
    assert any("exit 3" in r for r in spec["reasons"]), spec
    assert report["harness_weakening"] or report["harness_changes"]


def test_a_threshold_lowered_in_the_range_does_not_make_a_poor_pass_reproduce(
        project: Path, cli: Callable[..., Proc]) -> None:
    gates = (project / ".meridian" / "gates.yaml").read_text()
    write(project, ".meridian/gates.yaml", gates.replace(
        'artifacts: ["spec/**"]', 'artifacts: ["spec/**"]\n    evaluate: {threshold: 9.9}'))
    commit_all(project, "a demanding spec gate")
    assert cli("gate", "start", "spec").code == 0
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, ".meridian/gates.yaml", gates.replace(
        'artifacts: ["spec/**"]', 'artifacts: ["spec/**"]\n    evaluate: {threshold: 0.5}'))
    write(project, "spec/spec.py", "SIDES = 2  # TODO: say what the code does\n")
    commit_all(project, "spec, and a friendlier threshold")
    forge_pass(project, "spec")
    code, report = _report(cli, "--base", base)
    assert code == 1, report
    [spec] = [g for g in report["gates"] if g["gate"] == "spec"]
    assert not spec["ok"] and any("as the base defined" in r for r in spec["reasons"]), spec


def test_an_unchanged_harness_is_rechecked_once(
        project: Path, cli: Callable[..., Proc]) -> None:
    """No weakening, no second run: a gate whose checks the range left alone is judged
    once, and a strengthened check that passes keeps the pass reproducing."""
    with_check(project, '"spec/**"', PASSING_CHECK)
    assert cli("gate", "start", "spec").code == 0
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, "spec/spec.py", SPEC)
    commit_all(project, "spec")
    forge_pass(project, "spec")
    code, report = _report(cli, "--base", base)
    assert code == 0, report
    [spec] = report["gates"]
    assert not any("as the base defined" in line for line in spec["details"]), spec


def test_a_need_dropped_in_the_range_still_counts(
        project: Path, cli: Callable[..., Proc]) -> None:
    """impl needed spec at the base; the range drops the need and forges impl's pass
    while spec never passed."""
    assert cli("gate", "start", "spec").code == 0
    base = git(project, "rev-parse", "HEAD").strip()
    gates = (project / ".meridian" / "gates.yaml").read_text()
    write(project, ".meridian/gates.yaml", gates.replace("    needs: [spec]\n", ""))
    write(project, "src/area.py", '"""Area."""\n\n\ndef area(w: float, h: float) -> float:\n'
          '    """Area of a rectangle."""\n    return w * h\n')
    commit_all(project, "impl, needing nothing")
    forge_pass(project, "impl")
    assert states(cli)["impl"] == "passed"
    code, report = _report(cli, "--base", base)
    assert code == 1, report
    [impl] = [g for g in report["gates"] if g["gate"] == "impl"]
    assert any("needs spec as the base defined it" in r for r in impl["reasons"]), impl


def test_a_check_added_in_the_range_cannot_doctor_the_tree_for_the_base_checks(
        project: Path, cli: Callable[..., Proc]) -> None:
    """The range adds a check (it reads as a strengthening) that rewrites the work tree
    CI re-checks in, so that the base's check, run after it, passes. CI runs the base's
    checks first, and puts the tree back after each set."""
    import sys
    base_check = (f'{sys.executable} -c "import sys; '
                  "sys.exit(0 if open('spec/spec.py').read().startswith('OK') else 3)\"")
    with_check(project, '"spec/**"', base_check)
    assert cli("gate", "start", "spec").code == 0
    base = git(project, "rev-parse", "HEAD").strip()
    doctor = f"{sys.executable} -c \"open('spec/spec.py', 'w').write('OK = 1\\n')\""
    gates = (project / ".meridian" / "gates.yaml").read_text()
    write(project, ".meridian/gates.yaml", gates.replace(
        f"checks: [{json.dumps(base_check)}]",
        f"checks: [{json.dumps(doctor)}, {json.dumps(base_check)}]"))
    write(project, "spec/spec.py", SPEC)
    commit_all(project, "spec, and one more check")
    forge_pass(project, "spec")
    code, report = _report(cli, "--base", base)
    assert code == 1, report
    [spec] = [g for g in report["gates"] if g["gate"] == "spec"]
    assert any("as the base defined them" in r for r in spec["reasons"]), spec
    assert (project / "spec" / "spec.py").read_text() == SPEC  # the clone is untouched
