"""The declared dependencies: lower bounds pinned for the lowest-versions run, every one a
floor that CI installs, and the test extra naming what the tests use."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

from tests.packaging.lowest import FAST_SUBSET, ROOT, lowest_pins

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _floor(requirement: Requirement) -> str | None:
    floors = [s.version for s in requirement.specifier if s.operator == ">="]
    return floors[0] if floors else None


def _normal(name: str) -> str:
    return name.lower().replace("_", "-")


def test_every_runtime_and_test_dependency_has_a_floor_and_an_upper_cap() -> None:
    for text in PROJECT["project"]["dependencies"]:
        requirement = Requirement(text)
        assert _floor(requirement), text
        assert any(s.operator == "<" for s in requirement.specifier), f"{text}: no upper cap"
    build = [Requirement(r) for r in PROJECT["build-system"]["requires"]]
    assert all(_floor(r) and any(s.operator == "<" for s in r.specifier) for r in build)


def test_the_constraints_pin_exactly_the_lower_bounds() -> None:
    declared = {}
    for text in PROJECT["project"]["dependencies"] + PROJECT["project"]["optional-dependencies"]["test"]:
        requirement = Requirement(text)
        declared[_normal(requirement.name)] = Version(_floor(requirement) or "0")
    assert {name: Version(pin) for name, pin in lowest_pins().items()} == declared


def test_pre_commit_is_not_a_runtime_dependency() -> None:
    runtime = {_normal(Requirement(r).name) for r in PROJECT["project"]["dependencies"]}
    assert "pre-commit" not in runtime
    assert "pre-commit" in {_normal(Requirement(r).name)
                            for r in PROJECT["project"]["optional-dependencies"]["test"]}


def test_the_test_extra_names_every_third_party_module_the_tests_import() -> None:
    """Each top-level module the tests import is the standard library, Meridian, a
    runtime dependency, a test-extra dependency, or the HTTP library the anthropic SDK
    brings (chosen at run time: tests/evaluators/evaluator_helpers.py)."""
    modules: set[str] = set()
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules.add(node.module.split(".")[0])
    project_modules = {"meridian", "tests"}
    # module name -> distribution, where they differ
    distributions = {"yaml": "pyyaml", "pre_commit": "pre-commit"}
    declared = {_normal(Requirement(r).name) for r in PROJECT["project"]["dependencies"]
                + PROJECT["project"]["optional-dependencies"]["test"]}
    brought_by_the_sdk = {"httpx", "httpx2"}
    local = {path.stem for path in (ROOT / "tests").rglob("*.py")}  # helper modules
    unknown = sorted(
        m for m in modules
        if m not in sys.stdlib_module_names and m not in project_modules | brought_by_the_sdk
        and m not in local and _normal(distributions.get(m, m)) not in declared)
    assert unknown == []


def test_the_fast_subset_names_existing_tests() -> None:
    for entry in FAST_SUBSET:
        assert (ROOT / entry.split("::")[0]).exists(), entry


def test_ci_installs_the_lowest_versions_after_the_readme_test_command() -> None:
    run = (ROOT / ".ci" / "run").read_text()
    readme_command = ("python3 -m venv .venv && . .venv/bin/activate && pip install -e "
                      "'.[test]' && pytest -q")
    assert readme_command in (ROOT / "README.md").read_text()
    assert run.index(readme_command) < run.index("-c .ci/constraints-lowest.txt '.[test]'")
    # set -e ignores a failure before the last && of a list: the line must exit on it
    assert f"{readme_command} || exit\n" in run


def test_the_readme_command_line_of_ci_run_stops_on_any_failure(tmp_path: Path) -> None:
    """The line as .ci/run has it, under .ci/run's own `set` options, with a step before
    the last `&&` failing: the script must stop with that status, not go on."""
    import subprocess

    run = (ROOT / ".ci" / "run").read_text()
    options = next(line for line in run.splitlines() if line.startswith("set -"))
    line = next(line for line in run.splitlines() if line.startswith("python3 -m venv .venv"))
    # the same shape with the README's commands replaced: venv ok, install fails (3)
    shape = line.replace("python3 -m venv .venv", "true").replace(
        ". .venv/bin/activate", "true").replace("pip install -e '.[test]'", "(exit 3)").replace(
        "pytest -q", "echo TESTS-RAN")
    script = f"{options}\n{shape}\necho WENT-ON\n"
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=30, check=False)
    assert proc.returncode == 3 and "WENT-ON" not in proc.stdout and "TESTS-RAN" not in proc.stdout
    assert ".venv-lowest/bin/python .ci/lowest.py" in run
    assert Path(ROOT / ".ci" / "lowest.py").is_file()


def test_no_project_url_is_guessed() -> None:
    """Until the project has real public addresses, pyproject names none: a made-up
    repository URL sends users to whoever owns (or later registers) that name."""
    assert "urls" not in PROJECT, PROJECT.get("urls")
