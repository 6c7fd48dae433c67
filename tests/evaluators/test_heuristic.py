"""The offline evaluator: real findings at exact lines, documented scores, determinism."""

from __future__ import annotations

import subprocess
import sys

import pytest

from meridian.config import EvaluatorSettings
from meridian.errors import ConfigError
from meridian.evaluators import CHECK_IDS, CheckResult, Issue, evaluate, scan_files
from meridian.evaluators.findings import Finding
from meridian.evaluators.heuristic import (
    PENALTIES,
    SEVERITY_FACTOR,
    HeuristicEvaluator,
    as_issue,
    score,
)
from meridian.evaluators.scan import scan_findings
from tests.evaluators.evaluator_helpers import REAL_CODE, REAL_TEST, make_bundle

HEURISTIC = EvaluatorSettings(kind="heuristic")


def found(issues: list[Issue]) -> set[tuple[str | None, int | None, str | None, str]]:
    return {(i.file, i.line, i.check, i.severity) for i in issues}


# -- Python stubs --------------------------------------------------------------------

STUBS = '''\
"""Payments."""


def charge(amount):
    raise NotImplementedError


def refund(amount):
    pass


def receipt(order):
    return None  # TODO build the receipt


def void(order):
    ...
'''


def test_planted_stubs_are_high_issues_at_their_exact_lines() -> None:
    issues = scan_files({"src/pay.py": STUBS})
    assert found(issues) == {
        ("src/pay.py", 5, "stub_code", "high"),   # raise NotImplementedError
        ("src/pay.py", 8, "stub_code", "high"),   # def refund: pass-only body
        ("src/pay.py", 13, "stub_code", "high"),  # marked `return None`
        ("src/pay.py", 16, "stub_code", "high"),  # def void: ...-only body
    }
    by_line = {i.line: i.message for i in issues}
    assert "NotImplementedError" in by_line[5]
    assert "`refund`" in by_line[8] and "`pass`" in by_line[8]
    assert "`return None`" in by_line[13] and "TODO" in by_line[13]


def test_planted_stub_fails_the_gate_and_real_code_passes() -> None:
    stubbed = evaluate(make_bundle({"src/shop/cart.py": "def total(prices):\n    pass\n",
                                    "tests/test_cart.py": REAL_TEST}), HEURISTIC)
    assert not stubbed.passed
    assert stubbed.blocking()[0].where() == "src/shop/cart.py:1"
    assert stubbed.blocking()[0].severity == "high"

    real = evaluate(make_bundle(), HEURISTIC)
    assert real.issues == []
    assert real.passed
    assert real.overall >= 8.5
    assert real.evaluator == "heuristic"


def test_placeholder_return_counts_a_todo_in_the_comment_block_above_the_function() -> None:
    source = "# TODO: real lookup\ndef find(key):\n    return {}\n"
    assert found(scan_files({"m.py": source})) == {("m.py", 3, "stub_code", "high")}


def test_a_guard_clause_in_a_function_with_a_todo_elsewhere_is_real_code() -> None:
    source = """\
import json


def load(path):
    # TODO: support yaml as well
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    if not data:
        return {}
    return data


def lookup(key):
    if key:
        # TODO: the real lookup
        return None
    return key
"""
    assert found(scan_files({"src/load.py": source})) == {
        ("src/load.py", 5, "stub_code", "low"),  # the bare marker
        ("src/load.py", 17, "stub_code", "high"),  # the return right under its TODO
    }


def test_placeholder_return_without_a_marker_is_real_code() -> None:
    source = "def first(items):\n    if not items:\n        return None\n    return items[0]\n"
    assert scan_files({"m.py": source}) == []


def test_abstract_protocol_and_overload_bodies_are_not_stubs() -> None:
    source = '''\
import abc
from typing import Protocol, overload


class Store(abc.ABC):
    @abc.abstractmethod
    def get(self, key):
        raise NotImplementedError


class Reader(Protocol):
    def read(self) -> bytes: ...


@overload
def parse(x: int) -> int: ...
@overload
def parse(x: str) -> str: ...
def parse(x):
    return x
'''
    assert scan_files({"src/api.py": source}) == []


def test_docstring_only_body_and_not_implemented_messages_are_stubs() -> None:
    source = '''\
def plan():
    """Make the plan."""


def ship():
    raise RuntimeError("not implemented yet")


def label():
    return "not implemented yet"


def hint():
    return "placeholder"


def status():
    return "TODO"
'''
    # A returned literal is data ("placeholder" is an HTML attribute, "TODO" a to-do
    # app's status), unless the whole string is an admission.
    assert found(scan_files({"m.py": source})) == {
        ("m.py", 1, "stub_code", "high"), ("m.py", 6, "stub_code", "high"),
        ("m.py", 10, "stub_code", "high")}


def test_markers_are_low_unless_inside_a_stub_and_strings_are_not_comments() -> None:
    source = '''\
def add(a, b):
    # TODO: overflow handling
    return a + b


def later():
    # FIXME: write it
    pass


PATTERN = "# TODO inside a string is not a comment"
# XXX remove after the migration
'''
    issues = scan_files({"m.py": source})
    assert found(issues) == {
        ("m.py", 2, "stub_code", "low"),
        ("m.py", 6, "stub_code", "high"),  # the stub absorbs the marker on line 7
        ("m.py", 12, "stub_code", "low"),
    }
    stub = next(i for i in issues if i.line == 6)
    assert "line 7" in stub.message and "FIXME" in stub.message


def test_a_comment_admitting_a_placeholder_is_medium() -> None:
    issues = scan_files({"m.py": "RATE = 0.2  # placeholder until finance confirms\n"})
    assert found(issues) == {("m.py", 1, "stub_code", "medium")}


# -- Python tests that cannot fail, skipped tests --------------------------------------

def test_a_test_without_any_assertion_is_hollow() -> None:
    source = '''\
import pytest
from unittest import mock

from shop.cart import total


def test_total_runs():
    total([1.0])


def test_always_true():
    assert True


def test_pass_only():
    pass


def test_checks_value():
    assert total([1.0]) == 1.0


def test_expects_error():
    with pytest.raises(ValueError):
        total([1.0], discount=2)


def test_uses_helper():
    assert_total_is([1.0], 1.0)


def test_mock_assertion():
    charge = mock.Mock()
    charge.assert_not_called()


def test_private_helper_that_checks():
    _check_total([2.0], 2.0)


@pytest.fixture
def test_prices():
    return [1.0, 2.0]


def helper_without_assert():
    total([])
'''
    issues = scan_files({"tests/test_cart.py": source})
    assert found(issues) == {
        ("tests/test_cart.py", 7, "hollow_test", "high"),
        ("tests/test_cart.py", 11, "hollow_test", "high"),
        ("tests/test_cart.py", 15, "hollow_test", "high"),
    }
    assert "always hold" in next(i.message for i in issues if i.line == 11)


def test_assertions_about_constants_do_not_make_a_test_able_to_fail() -> None:
    source = '''\
import unittest


def test_compares_literals():
    assert 1 == 1


class TestCart(unittest.TestCase):
    def test_true_is_true(self):
        self.assertTrue(True)

    def test_reads_the_code(self):
        self.assertEqual(total([1.0]), 1.0)

    def test_mock_without_arguments(self):
        charge.assert_called_once()
'''
    issues = scan_files({"tests/test_cart.py": source})
    assert found(issues) == {("tests/test_cart.py", 4, "hollow_test", "high"),
                             ("tests/test_cart.py", 9, "hollow_test", "high")}
    switched_off = "def test_total():\n    return\n    assert total([1.0]) == 1.0\n"
    assert found(scan_files({"tests/test_off.py": switched_off})) == {
        ("tests/test_off.py", 1, "hollow_test", "high")}
    assert all("always hold" in i.message for i in issues)


def test_raise_not_implemented_constant_and_todo_errors_are_stubs() -> None:
    source = '''\
def charge(amount):
    raise NotImplemented


def refund(amount):
    raise RuntimeError("TODO: refunds")
'''
    assert found(scan_files({"src/pay.py": source})) == {
        ("src/pay.py", 2, "stub_code", "high"), ("src/pay.py", 6, "stub_code", "high")}


def test_unittest_assert_methods_count_and_non_test_files_have_no_hollow_tests() -> None:
    unittest_source = '''\
import unittest


class TestCart(unittest.TestCase):
    def test_equal(self):
        self.assertEqual(1 + 1, 2)

    def test_raises(self):
        with self.assertRaises(KeyError):
            {}["x"]

    def test_fails_explicitly(self):
        if 1 + 1 != 2:
            self.fail("arithmetic broke")
'''
    assert scan_files({"tests/test_unit.py": unittest_source}) == []
    # A `test_` function outside a test file is ordinary code, not a test.
    assert scan_files({"src/util.py": "def test_connection(host):\n    return ping(host)\n"}) == []


def test_skipped_xfail_and_commented_out_tests_are_flagged() -> None:
    source = '''\
import unittest

import pytest

pytestmark = pytest.mark.skipif(True, reason="flaky")


@pytest.mark.skip(reason="later")
def test_a():
    assert 1 == 2


@pytest.mark.xfail
def test_b():
    assert 1 == 2


def test_c():
    pytest.skip("not today")
    assert 1 == 2


# def test_d():
#     assert 1 == 2


class TestE(unittest.TestCase):
    @unittest.skip("broken")
    def test_e(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_f(self):
        self.assertEqual(1, 2)
'''
    issues = scan_files({"tests/test_skips.py": source})
    # Unconditional skips, a constant skipif, a non-strict xfail, expectedFailure and a
    # commented-out test switch a test off: high (blocking when the change adds them).
    assert {(i.line, i.check) for i in issues} == {
        (5, "skipped_test"), (8, "skipped_test"), (13, "skipped_test"), (19, "skipped_test"),
        (23, "skipped_test"), (28, "skipped_test"), (32, "skipped_test"),
        (18, "hollow_test"),  # its only assertion comes after the unconditional skip
    }
    assert all(i.severity == "high" for i in issues)


# -- JavaScript / TypeScript ------------------------------------------------------------

JS_SOURCE = '''\
export function fetchUser(id: string): User {
  throw new Error("Method not implemented.");
}
const slashes = /\\/\\/ TODO/g;
const text = "// TODO inside a string";
export function total(items: number[]): number {
  // TODO: sum the items
  return 0;
}
export const half = (a: number) => a / 2; // FIXME rounding
'''

JS_TEST = '''\
import { total } from "../api";

describe("api", () => {
  it("sums", () => {
    expect(total([1, 2])).toBe(3);
  });
  it("runs without checking anything", () => {
    total([1]);
  });
  it.skip("later", () => { expect(1).toBe(1); });
  test.todo("write me");
  xit("old", () => { expect(1).toBe(2); });
  it("pending");
  test("expression body", () => expect(total([])).toBe(0));
  // it("commented out", () => {
  //   expect(1).toBe(1);
  // });
  it("title mentions expect( but body does not", async () => {
    const label = "expect(";
    render(<p>Don't</p>);
  });
  it("node assert", () => {
    assert.strictEqual(total([2]), 2);
  });
});
'''


def test_js_stubs_and_markers_ignore_strings_and_regex_literals() -> None:
    issues = scan_files({"src/api.ts": JS_SOURCE})
    assert found(issues) == {
        ("src/api.ts", 2, "stub_code", "high"),  # the throw on line 2
        ("src/api.ts", 8, "stub_code", "high"),  # marked `return 0`
        ("src/api.ts", 10, "stub_code", "low"),  # a bare marker comment
    }


def test_an_exported_js_function_with_an_empty_body_is_a_stub() -> None:
    source = """\
export function total(items: number[]): number {}
export async function load<T>(id: string): Promise<T> {
  // TODO: fetch it
}
function noop() {}
export function handler(cb = () => {}) { return cb(); }
export function shape(): { x: number } { return { x: 1 }; }
export function overloaded(x: string): string;
"""
    issues = scan_files({"src/api.ts": source})
    assert found(issues) == {("src/api.ts", 1, "stub_code", "high"),
                             ("src/api.ts", 2, "stub_code", "high")}
    assert [i.message for i in issues] == ["function `total` is a stub: its body is empty",
                                           "function `load` is a stub: its body is empty"]


def test_js_hollow_skipped_and_pending_tests() -> None:
    issues = scan_files({"src/__tests__/api.test.tsx": JS_TEST})
    assert {(i.line, i.check, i.severity) for i in issues} == {
        (7, "hollow_test", "high"),
        (10, "skipped_test", "high"),
        (11, "skipped_test", "high"),
        (12, "skipped_test", "high"),
        (13, "skipped_test", "high"),
        (15, "skipped_test", "high"),
        (18, "hollow_test", "high"),
    }


@pytest.mark.parametrize("path", ["web/cart.spec.js", "web/test/cart.mjs", "web/cart.test.cjs"])
def test_js_test_files_are_recognised_by_name_or_directory(path: str) -> None:
    source = 'test("adds", () => {\n  add(1, 2);\n});\n'
    assert found(scan_files({path: source})) == {(path, 1, "hollow_test", "high")}


def test_js_calls_named_it_outside_test_files_are_not_tests() -> None:
    assert scan_files({"web/iterate.js": "const it = iter();\nit(1);\n"}) == []


# -- bundle-level checks, scores, switches ------------------------------------------------

def test_missing_artifact_and_failing_checks_are_high() -> None:
    bundle = make_bundle(unmatched=["docs/API.md"], checks=[
        CheckResult(command="pytest -q", exit_code=1, output="F\n1 failed, 1 passed in 0.1s"),
        CheckResult(command="npm test", exit_code=None, timed_out=True, duration_s=30),
        CheckResult(command="ruff check .", exit_code=0),
    ])
    verdict = evaluate(bundle, HEURISTIC)
    assert not verdict.passed
    assert [(i.check, i.file, i.message) for i in verdict.issues] == [
        ("failing_check", None, "check `npm test` timed out after 30s"),
        ("failing_check", None,
         "check `pytest -q` failed with exit code 1: 1 failed, 1 passed in 0.1s"),
        ("missing_artifact", "docs/API.md", "declared artifact `docs/API.md` matched no file"),
    ]
    assert verdict.scores["correctness"] == 10 - 2 * PENALTIES["failing_check"]["correctness"]


def test_empty_files_are_medium_except_conventional_empty_files() -> None:
    issues = scan_files({"src/app.py": " \n\n", "src/__init__.py": "", "py.typed": "",
                         "docs/API.md": ""})
    assert found(issues) == {("src/app.py", 1, "empty_file", "medium"),
                             ("docs/API.md", 1, "empty_file", "medium")}


def test_unparseable_python_is_reported_and_other_text_only_for_markers() -> None:
    issues = scan_files({"src/broken.py": "def f(:\n    return 1\n",
                         "DATA_CONTRACT.md": "# Baseline\nTBD\n\n# Metric\naccuracy\n"})
    assert found(issues) == {("src/broken.py", 1, "syntax_error", "high"),
                             ("DATA_CONTRACT.md", 2, "stub_code", "low")}


def test_a_stub_hidden_in_a_file_that_does_not_parse_cannot_pass() -> None:
    hidden = "def f(:\n    pass\n\n\ndef g():\n    raise NotImplementedError\n"
    verdict = evaluate(make_bundle({"src/shop/cart.py": hidden}), HEURISTIC)
    assert not verdict.passed
    assert [(i.severity, i.check, i.where()) for i in verdict.issues] == [
        ("high", "syntax_error", "src/shop/cart.py:1")]


def test_a_gate_with_no_evidence_at_all_cannot_pass() -> None:
    verdict = evaluate(make_bundle({}, checks=[], artifact_globs=[]), HEURISTIC)
    assert not verdict.passed
    assert [(i.severity, i.check, i.message) for i in verdict.issues] == [
        ("high", "missing_artifact", ("the gate has no artifact file and no check: there is "
                                      "no evidence to judge; declare `artifacts:` or `checks:`"))]
    # A check alone is evidence.
    assert evaluate(make_bundle({}, artifact_globs=[]), HEURISTIC).passed


def test_disabled_checks_are_not_run() -> None:
    files = {"src/pay.py": STUBS, "tests/test_x.py": "def test_x():\n    run()\n", "e.py": ""}
    everything = {i.check for i in scan_files(files)}
    assert everything == {"stub_code", "hollow_test", "empty_file"}
    remaining = scan_files(files, frozenset({"stub_code", "empty_file"}))
    assert {i.check for i in remaining} == {"hollow_test"}

    bundle = make_bundle({"src/pay.py": STUBS}, unmatched=["docs/*.md"],
                         checks=[CheckResult(command="false", exit_code=1)])
    verdict = evaluate(bundle, HEURISTIC, disabled_checks=frozenset(CHECK_IDS))
    assert verdict.issues == []
    assert verdict.passed


def test_an_unknown_check_id_is_a_config_error_naming_the_known_ones() -> None:
    with pytest.raises(ConfigError) as err:
        scan_files({}, frozenset({"stub_codes"}))
    assert str(err.value) == (
        "unknown heuristic check id 'stub_codes' (known: missing_artifact, failing_check, "
        "stub_code, hollow_test, skipped_test, empty_file, syntax_error, swallowed_error)")


def test_scores_subtract_documented_penalties_and_clamp_at_zero() -> None:
    one_stub = [Issue(severity="high", check="stub_code", message="x")]
    assert score(one_stub) == {"completeness": 7.0, "correctness": 8.0, "robustness": 10.0,
                               "spec_adherence": 10.0}
    low = [Issue(severity="low", check="stub_code", message="x")]
    assert score(low)["completeness"] == 10 - 3.0 * SEVERITY_FACTOR["low"]
    many = [Issue(severity="high", check="missing_artifact", message="x")] * 5
    assert score(many)["completeness"] == 0.0
    assert score([]) == dict.fromkeys(score([]), 10.0)


def test_a_clean_bundle_with_a_few_todos_still_passes() -> None:
    code = REAL_CODE + "\n\n# TODO: support currencies\n# TODO: support coupons\n"
    verdict = evaluate(make_bundle({"src/shop/cart.py": code, "tests/test_cart.py": REAL_TEST}),
                       HEURISTIC, self_score=9.0)
    assert verdict.passed and verdict.overall >= 8.5
    assert [i.severity for i in verdict.issues] == ["low", "low"]
    assert verdict.self_score == 9.0


def test_the_assessment_is_deterministic() -> None:
    files = {"src/pay.py": STUBS, "src/api.ts": JS_SOURCE,
             "src/__tests__/api.test.tsx": JS_TEST, "tests/test_cart.py": REAL_TEST}
    bundle = make_bundle(files, unmatched=["b/*", "a/*"])
    reversed_bundle = bundle.model_copy(update={"artifacts": list(reversed(bundle.artifacts))})
    first = HeuristicEvaluator().assess(bundle)
    assert HeuristicEvaluator().assess(bundle) == first
    assert HeuristicEvaluator().assess(reversed_bundle) == first


def test_the_heuristic_path_never_imports_the_anthropic_sdk() -> None:
    program = ("import sys\n"
               "from meridian.evaluators import evaluate\n"
               "from meridian.evaluators.heuristic import scan_files\n"
               "scan_files({'a.py': 'def f():\\n    pass\\n'})\n"
               "print('anthropic' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_the_scan_gives_plain_findings_that_become_the_same_issues() -> None:
    files = {"src/pay.py": STUBS, "src/api.ts": JS_SOURCE, "tests/test_cart.py": REAL_TEST,
             "notes.md": "TODO: write the notes\n",
             "src/load.py": "def load(path):\n    # TODO: read the file\n    pass\n"}
    findings = scan_findings(files)
    assert findings and all(type(f) is Finding for f in findings)
    assert [as_issue(f) for f in findings] == scan_files(files)
    # The marker folded into the stub's message survives the plain value (a replace, not
    # a model copy).
    load = next(f for f in findings if f.file == "src/load.py")
    assert load.message == ("function `load` is a stub: its body is only `pass` "
                            "(marked at line 2: # TODO: read the file)")
    assert load.where() == "src/load.py:1"


def test_the_scan_and_the_package_import_no_pydantic() -> None:
    program = ("import sys\n"
               "import meridian.evaluators\n"
               "from meridian.evaluators.scan import scan_findings\n"
               "found = scan_findings({'a.py': 'def f():\\n    pass\\n'})\n"
               "print(len(found), 'pydantic' in sys.modules)\n"
               "from meridian.evaluators import Issue\n"
               "print('pydantic' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["1", "False", "True"]
