"""The completion tracker: features.yaml + a JUnit report -> working and hardened."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meridian import features
from meridian.cli import main
from meridian.errors import ConfigError
from meridian.ledger import Ledger

DATA = Path(__file__).resolve().parent / "data" / "junit"
SAMPLE = DATA / "sample.xml"
FEATURES = DATA / "features.yaml"


def test_sample_report_percentages_and_missing_tests() -> None:
    report = features.compute(FEATURES, SAMPLE)
    assert report.tests_in_report == 14
    assert (report.total, report.working, report.hardened) == (5, 3, 1)
    assert (report.working_pct, report.hardened_pct) == (60.0, 20.0)
    assert features.hardened_ids(report) == {"login"}
    missing = {status.id: status.missing for status in report.features}
    assert missing == {
        "login": [],
        "export": [
            "edge_cases: tests/test_export.py::test_empty_table: skipped",
            "failure_modes: tests/test_export.py::test_disk_full: failed",
        ],
        "search": [
            "happy_path: tests/test_search.py::test_query: failed",
            "happy_path: tests/test_search.py::test_index_missing: failed",
            "edge_cases: no tests listed",
            "failure_modes: no tests listed",
        ],
        "billing": [
            "failure_modes: com.example.billing.InvoiceTest.testRefund*: not found in the report",
        ],
        "sharing": [
            "happy_path: no tests listed",
            "edge_cases: tests/test_share.py::test_expired_link: not found in the report",
            "failure_modes: no tests listed",
        ],
    }


def test_globs_classes_and_parametrised_cases_match() -> None:
    report = features.compute(FEATURES, SAMPLE)
    by_test = {r.test: r for status in report.features for r in status.tests}
    assert by_test["tests/test_login.py::test_unicode_*"].matched == 2
    assert by_test["tests/test_login.py::TestLockout::test_wrong_password_locks"].ok
    # a plain pytest id covers every parametrisation; the JUnit dotted form works too
    assert by_test["tests/test_export.py::test_csv"].matched == 2
    assert by_test["tests.test_export.test_disk_full"].failing == [
        "tests/test_export.py::test_disk_full"]


def _report(tmp_path: Path, body: str, name: str = "report.xml") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


def _features(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "features.yaml"
    path.write_text(text)
    return path


def test_one_parametrisation_by_exact_id_and_worst_outcome_wins(tmp_path: Path) -> None:
    junit = _report(tmp_path, """<testsuites>
      <testsuite name="a"><testcase classname="t.test_x" name="test_p[1]"/>
        <testcase classname="t.test_x" name="test_p[2]"><failure message="no"/></testcase>
        <testcase classname="t.test_x" name="test_rerun"/></testsuite>
      <testsuite name="b"><testcase classname="t.test_x" name="test_rerun"><error/></testcase>
      </testsuite></testsuites>""")
    spec = _features(tmp_path, """features:
  - id: one
    tests: {happy_path: ["t/test_x.py::test_p[1]"]}
  - id: both
    tests: {happy_path: ["t/test_x.py::test_p"]}
  - id: rerun
    tests: {happy_path: ["t/test_x.py::test_rerun"]}
""")
    report = features.compute(spec, junit)
    assert [(s.id, s.working) for s in report.features] == [
        ("one", True), ("both", False), ("rerun", False)]
    assert report.features[1].missing[0] == "happy_path: t/test_x.py::test_p[2]: failed"


def test_xunit1_file_attribute_and_bare_testsuite_root(tmp_path: Path) -> None:
    junit = _report(tmp_path, """<testsuite name="pytest">
      <testcase classname="pkg.checks.test_io" name="test_read" file="pkg/checks/test_io.py"/>
    </testsuite>""")
    spec = _features(tmp_path, """features:
  - id: io
    tests:
      happy_path: [pkg/checks/test_io.py::test_read]
      edge_cases: [pkg.checks.test_io.test_read]
      failure_modes: ["pkg/*::test_read"]
""")
    report = features.compute(spec, junit)
    assert report.features[0].hardened and report.hardened_pct == 100.0


def test_malformed_xml_names_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _report(tmp_path, "<testsuites>\n<testsuite>\n  <testcase name='a'>\n</testsuite>\n")
    _features(tmp_path, "features: []\n")
    assert main(["features", "--junit", "report.xml", "--features", "features.yaml"]) == 2
    assert capsys.readouterr().err == (
        "meridian: report.xml:4: malformed JUnit XML: mismatched tag (column 3)\n")


@pytest.mark.parametrize(("body", "message"), [
    ("", "report.xml:1: malformed JUnit XML: no element found (column 1)"),
    ("<html><body/></html>", ("report.xml:1: not a JUnit report: expected a <testsuites> or "
                              "<testsuite> root element, got <html>")),
])
def test_not_a_junit_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str,
                            message: str) -> None:
    monkeypatch.chdir(tmp_path)
    _report(tmp_path, body)
    with pytest.raises(ConfigError) as caught:
        features.parse_junit(Path("report.xml"))
    assert str(caught.value) == message


def test_missing_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"^nowhere\.xml: file not found$"):
        features.parse_junit(Path("nowhere.xml"))


@pytest.mark.parametrize(("text", "message"), [
    ("features:\n  - id: a\n    test: {}\n", "features.yaml:3: features[0].test: unknown key"),
    ("features:\n  - id: a\n  - id: a\n",
     "features.yaml:3: features[1].id: duplicate feature id 'a' (also features[0])"),
    ("features:\n  - id: a\n    tests:\n      edge_cases: ['']\n",
     "features.yaml:4: features[0].tests.edge_cases[0]: expected a test id, got an empty string"),
    ("- a\n", "features.yaml:1: expected a mapping with `version` and `features`"),
])
def test_features_file_errors_name_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 text: str, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    _features(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        features.load_features(Path("features.yaml"))
    assert str(caught.value) == message


def test_missing_hardened_explains(tmp_path: Path) -> None:
    report = features.compute(FEATURES, SAMPLE)
    assert features.missing_hardened(report, ["login", "billing", "nope"]) == [
        ("feature billing: not hardened (failure_modes: "
         "com.example.billing.InvoiceTest.testRefund*: not found in the report)"),
        f"feature nope: not listed in {report.features_file}",
    ]


def test_cli_json_records_features_computed(repo_with_commit: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    ledger = Ledger.open(repo_with_commit)
    ledger.emit("meridian.init", {"branch": ledger.branch})
    (repo_with_commit / ".meridian").mkdir()
    (repo_with_commit / ".meridian" / "features.yaml").write_text(FEATURES.read_text())
    assert main(["features", "--junit", str(SAMPLE), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert (printed["working_pct"], printed["hardened_pct"]) == (60.0, 20.0)
    latest = next(ledger.records(newest_first=True))
    assert latest.kind == "features.computed"
    assert latest.data == {
        "junit": str(SAMPLE), "total": 5, "working": 3, "hardened": 1,
        "working_pct": 60.0, "hardened_pct": 20.0,
        "working_ids": ["login", "export", "billing"], "hardened_ids": ["login"],
    }
    assert main(["verify"]) == 0  # the event validates against its registered model


def test_cli_table_without_a_state_branch(repo_with_commit: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["features", "--junit", str(SAMPLE), "--features", str(FEATURES)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "working 3/5 (60.0%), hardened 1/5 (20.0%) from 14 tests" in out
    assert "not recorded: no state branch" in out
    assert "tests/test_share.py::test_expired_link: not found in the report" in out
    assert not Ledger.open(repo_with_commit).exists()


SAMPLE_TESTS = '''\
import pytest


def test_ok():
    pass


def test_fail():
    assert 0


@pytest.mark.skip(reason="not yet")
def test_skip():
    pass


@pytest.mark.xfail
def test_xfail():
    assert 0


@pytest.mark.parametrize("v", ["a.b", "c/d", "e::f", "g[h]"])
def test_param(v):
    pass


class TestOuter:
    class TestInner:
        def test_nested(self):
            pass
'''


@pytest.mark.parametrize("family", ["xunit2", "xunit1"])
def test_a_real_pytest_report(tmp_path: Path, family: str) -> None:
    """The report pytest itself writes, with a dotted directory name, a nested class,
    parameters holding dots, slashes, colons and brackets, a skip and an xfail."""
    import subprocess
    import sys

    (tmp_path / "tests" / "v1.2").mkdir(parents=True)
    (tmp_path / "tests" / "test_a.py").write_text(SAMPLE_TESTS)
    (tmp_path / "tests" / "v1.2" / "test_b.py").write_text("def test_dot():\n    pass\n")
    junit = tmp_path / "report.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "-o", f"junit_family={family}", f"--junitxml={junit}", "tests"],
                   cwd=tmp_path, capture_output=True, check=False)
    spec = _features(tmp_path, """features:
  - id: params
    tests:
      happy_path: [tests/test_a.py::test_param]
      edge_cases: ["tests/test_a.py::test_param[g[h]]", "tests/test_a.py::test_param[e::f]"]
      failure_modes: [tests/test_a.py::TestOuter::TestInner::test_nested]
  - id: dotted
    tests:
      happy_path: [tests/v1.2/test_b.py::test_dot]
      edge_cases: ["tests/v1.2/*::test_dot"]
      failure_modes: [tests/test_a.py::test_ok]
  - id: skipped
    tests: {happy_path: [tests/test_a.py::test_ok, tests/test_a.py::test_skip]}
  - id: xfail
    tests: {happy_path: [tests/test_a.py::test_xfail]}
  - id: failing
    tests: {happy_path: [tests/test_a.py::test_fail]}
""")
    report = features.compute(spec, junit)
    assert report.tests_in_report == 10
    status = {s.id: (s.working, s.hardened) for s in report.features}
    assert status == {"params": (True, True), "dotted": (True, True), "skipped": (False, False),
                      "xfail": (False, False), "failing": (False, False)}
    by_test = {r.test: r for s in report.features for r in s.tests}
    assert by_test["tests/test_a.py::test_param"].matched == 4
    assert by_test["tests/test_a.py::test_param[g[h]]"].matched == 1
    assert report.features[2].missing == ["happy_path: tests/test_a.py::test_skip: skipped",
                                          "edge_cases: no tests listed",
                                          "failure_modes: no tests listed"]
    assert report.features[4].missing[0] == "happy_path: tests/test_a.py::test_fail: failed"


def test_a_project_without_features_yaml_is_told_where_to_start(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "r.xml").write_text("<testsuites/>")
    assert main(["features", "--junit", "r.xml", "--no-record"]) == 2
    assert capsys.readouterr().err == (
        "meridian: .meridian/features.yaml: file not found; list your features and the tests "
        "that prove them there (`meridian init --features` writes a commented example to start "
        "from)\n")
    # and it does: the example is valid as written, and init never overwrites it
    assert main(["init", "--no-hooks", "--features"]) == 0
    written = (repo / ".meridian" / "features.yaml").read_text()
    assert written.startswith("# yaml-language-server: $schema=schemas/features.schema.json\n")
    assert main(["features", "--junit", "r.xml", "--no-record"]) == 0
    (repo / ".meridian" / "features.yaml").write_text("version: 1\nfeatures: []\n")
    assert main(["init", "--no-hooks", "--features"]) == 0
    assert (repo / ".meridian" / "features.yaml").read_text() == "version: 1\nfeatures: []\n"
