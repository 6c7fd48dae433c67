"""Attack: make a pass reproduce in CI by narrowing, in the same pushed range, what CI
re-checks it with, or by leaning on what CI did not re-run at all.

Layer: CI (``meridian ci --base REV``). Routes of the red-team report rt1:

- an ``exclude:`` glob added (or the artifact globs narrowed) over a stub (F5): the
  offline scan also runs as the base defined the gate, on the files the base's globs
  name, and fails the pass;
- the mutation smoke check, which submit runs and CI did not (F6): CI runs it as submit
  does (same rule, same severity), also as the base defined it when the range switched
  it off;
- a check the range added that changes the environment (a file outside the work tree,
  standing in for a ``.pth`` in site-packages) so that another gate's unchanged check
  passes (F3): every gate's checks as the base defined them run before any check the
  range added or changed, across gates.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.conftest import Proc, commit_all, pass_gate, write
from tests.adversarial.integrity_support import forge_pass
from tests.conftest import git

SPEC = '"""Spec."""\nSIDES = 2\n'
STUB = ('def multiply(a: int, b: int) -> int:\n    """Multiply."""\n'
        '    raise NotImplementedError\n')
AREA = ('"""Area."""\n\n\ndef area(w: float, h: float) -> float:\n'
        '    """Area of a rectangle."""\n    return w * h\n')


def _report(cli: Callable[..., Proc], *args: str) -> tuple[int, dict]:
    result = cli("ci", "--no-fetch", "--json", *args)
    return result.code, json.loads(result.out)


def _gates(project: Path) -> str:
    return (project / ".meridian" / "gates.yaml").read_text()


@pytest.mark.parametrize("narrowing", [
    ('artifacts: ["src/**"]', 'artifacts: ["src/**"]\n    exclude: ["src/extra.py"]'),
    ('artifacts: ["src/**"]', 'artifacts: ["src/area.py"]'),
], ids=["exclude-added", "artifacts-narrowed"])
def test_a_stub_hidden_by_a_gate_narrowed_in_the_range_fails_the_base_scan(
        project: Path, cli: Callable[..., Proc], narrowing: tuple[str, str]) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    assert cli("gate", "start", "impl").code == 0
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, ".meridian/gates.yaml", _gates(project).replace(*narrowing))
    write(project, "src/area.py", AREA)
    write(project, "src/extra.py", STUB)
    commit_all(project, "impl, and a generated file kept out")
    forge_pass(project, "impl")
    code, report = _report(cli, "--base", base)
    assert code == 1, report
    [impl] = [g for g in report["gates"] if g["gate"] == "impl"]
    assert any("offline scan (heuristic): passes" in line for line in impl["details"]), impl
    [reason] = impl["reasons"]
    assert reason.startswith("the offline scan as the base defined it fails it"), reason
    assert "src/extra.py:3 [stub_code]" in reason, reason


def _mutation_project(project: Path) -> None:
    """impl with a real test check; clamp() is added and the test never exercises it."""
    check = json.dumps(f"{sys.executable} src/test_area.py")
    write(project, ".meridian/gates.yaml", _gates(project).replace(
        'artifacts: ["src/**"]', f'artifacts: ["src/**"]\n    checks: [{check}]'))
    write(project, "src/area.py", AREA)
    write(project, "src/test_area.py",
          "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
          "from area import area, clamp\nassert area(2, 3) == 6\nassert callable(clamp)\n")
    commit_all(project, "impl checks")


CLAMP = ('\n\ndef clamp(value: int, low: int, high: int) -> int:\n    """Clamp."""\n'
         '    if value < low:\n        return low\n    return min(value, high)\n')


@pytest.mark.parametrize("switch_off", [False, True], ids=["as-submit", "switched-off"])
def test_a_pass_whose_change_the_checks_do_not_exercise_fails_the_mutation_check(
        project: Path, cli: Callable[..., Proc], switch_off: bool) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    _mutation_project(project)
    write(project, "src/area.py", AREA + "\n\ndef clamp(value: int, low: int, high: int) "
          '-> int:\n    """Clamp."""\n    return value\n')
    commit_all(project, "a first clamp")
    assert cli("gate", "start", "impl").code == 0
    base = git(project, "rev-parse", "HEAD").strip()
    write(project, "src/area.py", AREA + CLAMP)
    if switch_off:
        write(project, ".meridian/gates.yaml", _gates(project).replace(
            'artifacts: ["src/**"]', 'artifacts: ["src/**"]\n    mutation: false'))
    commit_all(project, "clamp")
    # submit refuses it (the mutant of clamp survives); the pass is made without Meridian.
    if not switch_off:
        assert cli("gate", "submit", "impl").code != 0
    forge_pass(project, "impl")
    code, report = _report(cli, "--base", base)
    assert code == 1, report
    [impl] = [g for g in report["gates"] if g["gate"] == "impl"]
    label = "the offline scan as the base defined it" if switch_off else "the offline scan"
    assert any(r.startswith(f"{label} fails it") and "[mutation]" in r and "clamp" in r
               for r in impl["reasons"]), impl


def test_checks_as_the_base_defined_them_run_before_any_check_the_range_added(
        project: Path, cli: Callable[..., Proc], tmp_path: Path) -> None:
    """spec comes first in the graph. The range gives it a check that leaves a file
    outside the work tree (as a .pth in site-packages would) which impl's unchanged
    check honours, and breaks impl's code. The unchanged check runs first."""
    poison, order = tmp_path / "poison", tmp_path / "order"
    log = f"open({str(order)!r}, 'a').write"
    impl_check = (f'{sys.executable} -c "import os, sys; {log}(\'impl \'); '
                  f"sys.exit(0 if os.path.exists({str(poison)!r}) or "
                  f"open('src/ok.txt').read() == 'ok' else 3)\"")
    write(project, ".meridian/gates.yaml", _gates(project).replace(
        'artifacts: ["src/**"]', f'artifacts: ["src/**"]\n    checks: [{json.dumps(impl_check)}]'))
    commit_all(project, "impl check")
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    pass_gate(cli, project, "impl", "src/ok.txt", "ok")
    base = git(project, "rev-parse", "HEAD").strip()
    doctor = f'{sys.executable} -c "{log}(\'spec \'); open({str(poison)!r}, \'w\').write(\'x\')"'
    write(project, ".meridian/gates.yaml", _gates(project).replace(
        'artifacts: ["spec/**"]', f'artifacts: ["spec/**"]\n    checks: [{json.dumps(doctor)}]'))
    write(project, "spec/spec.py", SPEC + "# an environment check\n")
    write(project, "src/ok.txt", "broken")
    commit_all(project, "spec: env check; impl: refactor")
    forge_pass(project, "spec")
    forge_pass(project, "impl")
    poison.unlink(missing_ok=True)
    order.unlink(missing_ok=True)
    code, report = _report(cli, "--base", base)
    assert code == 1, report
    assert order.read_text().split() == ["impl", "spec"], order.read_text()
    [impl] = [g for g in report["gates"] if g["gate"] == "impl"]
    assert any("its checks do not reproduce" in r and "exit 3" in r
               for r in impl["reasons"]), impl
    assert [g["ok"] for g in report["gates"] if g["gate"] == "spec"] == [True]


FEATURES = """\
version: 1
features:
  - id: login
    tests:
      happy_path: [tests/test_login.py::test_valid_password]
      failure_modes: [tests/test_login.py::test_wrong_password]
"""
AUTH = """\
version: 1
gates:
  - id: auth
    description: Sign-in.
    acceptance: users sign in with their password.
    artifacts: ["src/**", "tests/**"]
    checks:
      - run: {check}
        timeout: 120
    mutation: false
    features: {{hardened: [login]}}
"""


def test_a_pass_without_its_required_features_hardened_fails_in_ci(
        project: Path, cli: Callable[..., Proc]) -> None:
    """features.hardened: login needs a failure-mode test that does not exist; submit
    refuses it, the forged pass does not reproduce."""
    check = f"{sys.executable} -m pytest -q -p no:cacheprovider --junitxml=build/junit.xml tests"
    write(project, ".gitignore", "build/\n")
    write(project, ".meridian/features.yaml", FEATURES)
    write(project, ".meridian/gates.yaml", AUTH.format(check=json.dumps(check)))
    write(project, "src/login.py", 'def login(password):\n    """Check."""\n'
          '    return password == "s3cret"\n')
    write(project, "tests/conftest.py", "import sys\nsys.path.insert(0, 'src')\n")
    write(project, "tests/test_login.py", "from login import login\n\n\n"
          "def test_valid_password():\n    assert login('s3cret')\n")
    commit_all(project, "login")
    assert cli("gate", "start", "auth").code == 0
    assert cli("gate", "submit", "auth").code != 0
    forge_pass(project, "auth")
    code, report = _report(cli)
    assert code == 1, report
    [auth] = report["gates"]
    assert any("check ok" in line for line in auth["details"]), auth
    assert any("login" in r and "[feature" in r for r in auth["reasons"]), auth
