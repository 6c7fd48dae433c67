"""A gate requiring hardened features, judged from the JUnit report its checks write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meridian.evaluators.models import Verdict
from meridian.ledger import Ledger
from tests.gates.conftest import commit_all, write

FEATURES = """
version: 1
features:
  - id: login
    tests:
      happy_path: [tests/test_login.py::test_valid_password]
      edge_cases: [tests/test_login.py::test_unicode_password]
      failure_modes: [tests/test_login.py::test_wrong_password]
  - id: export
    tests:
      happy_path: [tests/test_export.py::test_csv]
"""
LOGIN = """
def login(password):
    return password == "s3cret" or password == "s3crét"
"""
LOGIN_TESTS = """
from login import login


def test_valid_password():
    assert login("s3cret")


def test_unicode_password():
    assert login("s3crét")
"""
WRONG_PASSWORD_TEST = """

def test_wrong_password():
    assert not login("guess")
"""
PYTEST = '"$MERIDIAN_PYTHON" -m pytest -q -p no:cacheprovider'


def _gate(check: str, features: str = "{hardened: [login]}") -> str:
    return f"""
        gates:
          - id: auth
            acceptance: users sign in with their password.
            artifacts: ["src/**", "tests/**"]
            checks:
              - run: {json.dumps(check)}
                timeout: 120
            features: {features}
    """


@pytest.fixture
def auth(project: Path, write_gates) -> Path:
    write(project, ".gitignore", "build/\nreports/\n")
    write(project, ".meridian/features.yaml", FEATURES)
    write(project, "src/login.py", LOGIN)
    write(project, "tests/conftest.py", "import sys\nsys.path.insert(0, 'src')\n")
    write(project, "tests/test_login.py", LOGIN_TESTS)  # no failure-mode test yet
    write_gates(_gate(f"{PYTEST} --junitxml=build/junit.xml tests"))
    commit_all(project, "login")
    return project


def _verdict(project: Path, events) -> Verdict:
    outcome = [e for e in events() if e.kind in ("gate.passed", "gate.failed")][-1]
    return Verdict.model_validate(Ledger.open(project).read_json(outcome.data["verdict"]))


def _issues(verdict: Verdict) -> list[tuple[str, str | None, str | None, str]]:
    return [(i.severity, i.file, i.check, i.message) for i in verdict.issues]


def test_a_required_feature_must_be_hardened_by_the_report_the_checks_write(
        auth, cli, events) -> None:
    assert cli("gate", "start", "auth").code == 0
    result = cli("gate", "submit", "auth")
    assert result.code == 2, result
    verdict = _verdict(auth, events)
    assert _issues(verdict) == [(
        "high", ".meridian/features.yaml", "feature_not_hardened",
        ("feature login: not hardened (failure_modes: tests/test_login.py::test_wrong_password: "
         "not found in the report)"))]
    assert ("    high    .meridian/features.yaml  feature login: not hardened (failure_modes: "
            "tests/test_login.py::test_wrong_password: not found in the report) "
            "[feature_not_hardened]") in result.out
    computed = events("features.computed")
    assert [(c.data["junit"], c.data["working_ids"], c.data["hardened_ids"])
            for c in computed] == [("build/junit.xml", ["login"], [])]

    write(auth, "tests/test_login.py", LOGIN_TESTS + WRONG_PASSWORD_TEST)
    result = cli("gate", "submit", "auth")
    assert result.code == 0, result
    assert _issues(_verdict(auth, events)) == []
    assert events("features.computed")[-1].data["hardened_ids"] == ["login"]
    passed = events("gate.passed")[-1].data
    evidence = Ledger.open(auth).read_json(passed["verdict"].replace("verdicts/", "evidence/", 1))
    assert evidence["features"] == {"junit": "build/junit.xml", "required": ["login"],
                                    "hardened": ["login"], "issues": []}
    assert evidence["definition"]["gate"]["features"] == {"hardened": ["login"],
                                                          "junit": "build/junit.xml"}

    # meridian health shows the completion the submission recorded.
    health = json.loads(cli("health", "--json").out)
    assert (health["completion"]["hardened"], health["completion"]["total"]) == (1, 2)


def test_no_check_writes_the_report(auth, write_gates, cli, events) -> None:
    write_gates(_gate(f"{PYTEST} tests"))
    # A report left from an earlier run (or written by hand) is not evidence: removed.
    write(auth, "build/junit.xml",
          '<testsuite><testcase classname="tests.test_login" name="test_wrong_password"/>'
          '</testsuite>')
    cli("gate", "start", "auth")
    assert cli("gate", "submit", "auth").code == 2
    assert not (auth / "build" / "junit.xml").exists()
    assert _issues(_verdict(auth, events)) == [(
        "high", "build/junit.xml", "junit_report",
        ("JUnit report build/junit.xml was not written: no check of this gate writes it; "
         "add one that does, e.g. `pytest --junitxml=build/junit.xml`"))]
    assert events("features.computed") == []


def test_the_check_that_should_write_the_report_is_named(auth, write_gates, cli,
                                                         events) -> None:
    check = "echo --junitxml=reports/junit.xml && exit 4"
    write_gates(_gate(check, "{hardened: [login], junit: reports/junit.xml}"))
    cli("gate", "start", "auth")
    assert cli("gate", "submit", "auth").code == 2
    issues = _issues(_verdict(auth, events))
    assert ("high", "reports/junit.xml", "junit_report",
            (f"JUnit report reports/junit.xml was not written: check `{check}` should write "
             "it (it exited 4)")) in issues


def test_a_malformed_report_is_a_high_issue(auth, write_gates, cli, events) -> None:
    write_gates(_gate("mkdir -p build && printf '<testsuite>' > build/junit.xml"))
    cli("gate", "start", "auth")
    assert cli("gate", "submit", "auth").code == 2
    (issue,) = _verdict(auth, events).issues
    assert (issue.severity, issue.file, issue.check) == ("high", "build/junit.xml", "junit_report")
    assert issue.message.startswith("the JUnit report the checks wrote cannot be read: "
                                    "build/junit.xml:1: malformed JUnit XML: no element found")


def test_without_a_features_file_each_required_feature_is_an_issue(auth, write_gates, cli,
                                                                   events) -> None:
    (auth / ".meridian" / "features.yaml").unlink()
    write_gates(_gate(f"{PYTEST} --junitxml=build/junit.xml tests",
                      "{hardened: [login, export]}"))
    assert cli("status").code == 0  # unknown ids are checked only against a features file
    cli("gate", "start", "auth")
    assert cli("gate", "submit", "auth").code == 2
    assert [i.message for i in _verdict(auth, events).issues] == [
        f"feature {f}: must be hardened, but .meridian/features.yaml does not exist to say "
        "which tests prove it" for f in ("login", "export")]


def test_editing_a_required_features_tests_makes_the_passed_gate_stale(auth, cli) -> None:
    write(auth, "tests/test_login.py", LOGIN_TESTS + WRONG_PASSWORD_TEST)
    cli("gate", "start", "auth")
    assert cli("gate", "submit", "auth").code == 0
    features = auth / ".meridian" / "features.yaml"
    # Another feature's tests decide nothing for this gate.
    features.write_text(features.read_text().replace("test_csv", "test_tsv"))
    assert cli("status", "--strict").code == 0
    features.write_text(features.read_text().replace(
        "failure_modes: [tests/test_login.py::test_wrong_password]",
        "failure_modes: [tests/test_login.py::test_valid_password]"))
    status = cli("status", "--strict")
    assert status.code == 1
    assert "gate definition changed since the verdict (feature_tests)" in status.out


@pytest.mark.parametrize(("features", "where", "message"), [
    ("{hardened: [login, logout]}", "gates[0].features.hardened[1]",
     "unknown feature 'logout' (features in .meridian/features.yaml: login, export)"),
    ("{hardened: [login, login]}", "gates[0].features.hardened[1]",
     "'login' is already listed in hardened"),
    ("{hardened: [login], junit: ../junit.xml}", "gates[0].features.junit",
     "'../junit.xml': expected a '/'-separated path inside the repository, relative to its root"),
    ("{hardened: [login], junit: ./build/junit.xml}", "gates[0].features.junit",
     "'./build/junit.xml': write it as 'build/junit.xml' (a file, no './' or '//')"),
    ("{hardened: [login], report: x.xml}", "gates[0].features.report", "unknown key"),
])
def test_feature_requirements_are_validated_with_file_and_line(auth, write_gates, cli, features,
                                                                where, message) -> None:
    path = write_gates(_gate("true", features))
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1)
                if "features:" in text)
    result = cli("status")
    assert result.code == 2
    assert result.err == f"meridian: .meridian/gates.yaml:{line}: {where}: {message}\n"
