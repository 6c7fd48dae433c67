"""A change that leaves code with no running test blocks, even when the skips were
already there: through `meridian gate submit` in real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tests.gates.conftest import commit_all, write

GATE = """
gates:
  - id: shop
    description: prices and carts
    acceptance: prices are computed
    artifacts: ["src/**/*.py", "tests/**/*.py"]
"""

PRICES = '''
def net(amount, rate):
    return amount * (1 + rate)
'''
CART = '''
def total(items):
    return sum(items)
'''


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")


def _seed(root: Path, write_gates, price_tests: str) -> None:
    write_gates(GATE)
    write(root, "src/shop/__init__.py", "")
    write(root, "src/shop/prices.py", PRICES)
    write(root, "src/shop/cart.py", CART)
    write(root, "tests/test_prices.py", price_tests)
    write(root, "tests/test_cart.py", """
        from shop.cart import total


        def test_total():
            assert total([1, 2]) == 3
        """)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "shop, with a skipped test")


SKIPPED = """
    import pytest

    from shop.prices import net


    @pytest.mark.skip(reason="flaky on CI")
    def test_net():
        assert net(100, 0.5) == 150
    """


def test_a_change_to_code_whose_only_test_was_already_skipped_blocks(
        project: Path, write_gates, cli) -> None:
    _seed(project, write_gates, SKIPPED)
    assert cli("gate", "start", "shop").code == 0
    write(project, "src/shop/prices.py", PRICES.replace("amount * (1 + rate)",
                                                        "round(amount * (1 + rate), 2)"))
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 2, result
    assert ("high    src/shop/prices.py:2  the change touches `src/shop/prices.py` and every "
            "test of it is switched off (1 test(s) in tests/test_prices.py; first at "
            "tests/test_prices.py:6: test skipped unconditionally: `@pytest.mark.skip`): the "
            "code ships with no running test [skipped_test]") in result.out
    # The skip itself is still reported where it is, as pre-existing.
    assert "tests/test_prices.py:6  test skipped unconditionally" in result.out


def test_a_change_elsewhere_leaves_the_old_skip_pre_existing(project: Path, write_gates,
                                                             cli) -> None:
    _seed(project, write_gates, SKIPPED)
    assert cli("gate", "start", "shop").code == 0
    write(project, "src/shop/cart.py", CART.replace("sum(items)", "sum(items, 0)"))
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 0, result
    assert "ships with no running test" not in result.out
    assert "pre-existing" in next(ln for ln in result.out.splitlines()
                                  if "tests/test_prices.py:6" in ln)


@pytest.mark.parametrize("tests", [
    # another test of the module still runs
    SKIPPED + "\n\ndef test_net_zero():\n    assert net(0, 0.5) == 0\n",
    # a conditional skip with a reason: it runs where the condition does not hold
    SKIPPED.replace('@pytest.mark.skip(reason="flaky on CI")',
                    '@pytest.mark.skipif(sys.platform == "win32", reason="no tz database")')
    .replace("import pytest", "import sys\n\n    import pytest"),
])
def test_a_module_with_a_running_test_is_not_left_untested(project: Path, write_gates, cli,
                                                           tests: str) -> None:
    _seed(project, write_gates, tests)
    assert cli("gate", "start", "shop").code == 0
    write(project, "src/shop/prices.py", PRICES.replace("amount * (1 + rate)",
                                                        "round(amount * (1 + rate), 2)"))
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 0, result
    assert "ships with no running test" not in result.out


def test_a_feature_whose_listed_tests_are_all_switched_off_blocks_a_change_touching_it(
        project: Path, write_gates, cli) -> None:
    _seed(project, write_gates, """
        import pytest

        from shop.prices import net


        @pytest.mark.xfail(reason="rounding is being reworked")
        def test_net_rounds():
            assert net(1, 0.333) == 1.33


        class TestTax:
            @pytest.mark.skip(reason="later")
            def test_net_with_tax(self):
                assert net(100, 0.2) == 120


        def test_net_is_a_number():
            assert isinstance(net(1, 1), (int, float))
        """)
    write(project, ".meridian/features.yaml", """
        version: 1
        features:
          - id: pricing
            tests:
              happy_path: ["tests/test_prices.py::test_net_rounds"]
              edge_cases: ["tests.test_prices.TestTax.test_net_*"]
          - id: carts
            tests:
              happy_path: ["tests/test_cart.py::test_total"]
        """)
    commit_all(project, "features")
    assert cli("gate", "start", "shop").code == 0
    write(project, "src/shop/prices.py", PRICES.replace("amount * (1 + rate)",
                                                        "round(amount * (1 + rate), 2)"))
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 2, result
    assert ("high    src/shop/prices.py:2  feature `pricing` has no running test: all 2 of the "
            "tests the features file lists for it are switched off (first "
            "tests/test_prices.py:6: test marked xfail without strict=True") in result.out
    assert "every test of it is switched off" not in result.out  # one test still runs
    assert "`carts`" not in result.out
