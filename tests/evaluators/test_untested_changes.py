"""The untested-change rule (``skipped_test``: a changed module every test of which is
switched off) on the ways a suite is switched off that it used to miss, and on a
module whose running tests reach it through attributes (no false block)."""

from __future__ import annotations

import pytest

from meridian.evaluators.scan import untested_changes

CODE = {"src/pkg/__init__.py": "", "src/pkg/mod.py": "def f(x):\n    return x + 1\n"}
CHANGED = {"src/pkg/mod.py": [(2, 2)]}


@pytest.mark.parametrize("test_file", [
    # pytestmark with an annotation
    ("import pytest\nfrom pkg.mod import f\npytestmark: list = [pytest.mark.skip(reason='x')]\n\n"
     "def test_f():\n    assert f(1) == 2\n"),
    # the module skipping itself at the top
    ("import pytest\npytest.skip('later', allow_module_level=True)\nfrom pkg.mod import f\n\n"
     "def test_f():\n    assert f(1) == 2\n"),
    # a TestCase whose setUp skips every test
    ("import unittest\nfrom pkg.mod import f\n\nclass TestF(unittest.TestCase):\n"
     "    def setUp(self):\n        self.skipTest('later')\n\n"
     "    def test_f(self):\n        self.assertEqual(f(1), 2)\n"),
    # unittest.skip on the class (held before; kept)
    ("import unittest\nfrom pkg.mod import f\n\n@unittest.skip('later')\n"
     "class TestF(unittest.TestCase):\n    def test_f(self):\n        self.assertEqual(f(1), 2)\n"),
])
def test_a_suite_switched_off_for_the_whole_file_or_class_is_caught(test_file: str) -> None:
    found = untested_changes({**CODE, "tests/test_f.py": test_file}, CHANGED)
    assert [f.severity for f in found] == ["high"]
    assert "every test of it is switched off" in found[0].message


@pytest.mark.parametrize("test_file", [
    ("import pytest\nimport sys\nif sys.platform == 'win32':\n"
     "    pytest.skip('posix only', allow_module_level=True)\nfrom pkg.mod import f\n\n"
     "def test_f():\n    assert f(1) == 2\n"),
    ("import unittest\nfrom pkg.mod import f\n\nclass TestF(unittest.TestCase):\n"
     "    def setUp(self):\n        self.value = f(1)\n\n"
     "    def test_f(self):\n        self.assertEqual(self.value, 2)\n"),
])
def test_a_conditional_or_no_skip_is_not_caught(test_file: str) -> None:
    assert untested_changes({**CODE, "tests/test_f.py": test_file}, CHANGED) == []


@pytest.mark.parametrize("running", [
    "import pkg\n\ndef test_f():\n    assert pkg.mod.f(1) == 2\n",
    "import pkg as p\n\ndef test_f():\n    assert p.mod.f(1) == 2\n",
])
def test_a_running_test_reaching_the_module_through_its_package_is_a_running_test(
        running: str) -> None:
    """A legacy test file of the module is skipped; another one runs it through
    ``pkg.mod``: the module has a running test, nothing blocks."""
    files = {**CODE,
             "tests/test_old.py": "import pytest\nfrom pkg.mod import f\n\n"
                                  "@pytest.mark.skip(reason='legacy')\n"
                                  "def test_f():\n    assert f(1) == 2\n",
             "other_tests/test_new.py": running}
    assert untested_changes(files, CHANGED) == []
