# ruff: noqa: F811  (the fixtures imported below are named as parameters)
"""Attacks on the mutation smoke check by an agent whose checks notice they run in
its copy of the tree, or notice the mutant, and fail on purpose there: every mutant
"killed" (or the check "could not run") would let a hollow test pass the gate."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from meridian.gates import mutation
from tests.gates.conftest import commit_all, write
from tests.gates.test_mutation import (  # noqa: F401  (fixtures)
    _change_prices,
    _verdict,
    offline,
    real_tree_on_path,
    shop,
)

HOLLOW = """
    from shop.prices import label


    def test_label():
        assert label(3) == "3.00 EUR"
    """


def _hollow_change(root: Path) -> None:
    """``net`` changed; its only test now asserts on ``label``."""
    (root / "tests/test_prices.py").write_text(HOLLOW.replace("\n    ", "\n"))
    _change_prices(root, "return amount * (1 + rate)", "return round(amount * (1 + rate), 2)")


def test_checks_that_fail_on_purpose_in_the_copy_block_the_gate(shop: Path, cli) -> None:
    """The conftest notices the copy's directory name and fails there: the baseline
    fails in the copy while the checks passed on the work tree."""
    write(shop, "tests/conftest.py", """
        import os

        import pytest


        def pytest_sessionstart(session):
            if "meridian-mutation" in os.getcwd():
                pytest.exit("not here", returncode=1)
        """)
    commit_all(shop, "a conftest")
    assert cli("gate", "start", "shop").code == 0
    _hollow_change(shop)
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 2, result.out
    assert "high    (project)  mutation smoke check could not run: the gate's checks pass " \
        "on the work tree but fail in a temporary copy of it without any mutant" in result.out
    assert _verdict(shop).passed is False


def test_checks_that_fail_whenever_a_source_file_differs_from_the_real_tree_block_the_gate(
        shop: Path, cli) -> None:
    """The conftest compares the copy's sources with the real tree (its absolute path
    written in): the baseline copy is identical and passes, every mutant differs and is
    "killed". A behaviour-neutral control mutant catches it."""
    write(shop, "tests/conftest.py", f"""
        from pathlib import Path

        import pytest

        REAL = Path({str(shop)!r})


        def pytest_sessionstart(session):
            here = Path.cwd()
            if here == REAL:
                return
            for path in (here / "src").rglob("*.py"):
                if path.read_bytes() != (REAL / path.relative_to(here)).read_bytes():
                    pytest.exit("tampered", returncode=1)
        """)
    commit_all(shop, "a conftest")
    assert cli("gate", "start", "shop").code == 0
    _hollow_change(shop)
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 2, result.out
    assert "the gate's checks fail (or hang) when a changed file is rewritten without changing what it does" \
        in result.out
    report = _verdict(shop).mutation
    assert report is not None and report.control is not None
    assert report.control.outcome == "killed"


def test_checks_that_grep_for_the_mutant_block_the_gate(shop: Path, cli) -> None:
    write(shop, "tests/conftest.py", """
        from pathlib import Path

        import pytest


        def pytest_sessionstart(session):
            for path in (Path.cwd() / "src").rglob("*.py"):
                if "RuntimeError" in path.read_text():
                    pytest.exit("a mutant", returncode=1)
        """)
    commit_all(shop, "a conftest")
    assert cli("gate", "start", "shop").code == 0
    _hollow_change(shop)
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 2, result.out
    assert "without changing what it does" in result.out


def test_checks_that_hang_whenever_a_source_file_differs_block_the_gate(
        shop: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """A timeout is not a survivor: checks that hang under any rewrite would make every
    mutant time out and the gate pass. Under the control they hang too."""
    monkeypatch.setattr(mutation, "MIN_CHECK_LIMIT_S", 3.0)
    write(shop, "tests/conftest.py", f"""
        import time
        from pathlib import Path

        REAL = Path({str(shop)!r})


        def pytest_sessionstart(session):
            here = Path.cwd()
            for path in (here / "src").rglob("*.py"):
                if path.read_bytes() != (REAL / path.relative_to(here)).read_bytes():
                    time.sleep(600)
        """)
    commit_all(shop, "a conftest")
    assert cli("gate", "start", "shop").code == 0
    _hollow_change(shop)
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 2, result.out
    report = _verdict(shop).mutation
    assert report is not None and report.control is not None
    assert report.control.outcome == "timeout"
    assert {m.function: m.outcome for m in report.mutants} == {"net": "timeout"}
    assert "the gate's checks fail (or hang) when a changed file is rewritten" in result.out


def test_an_honest_suite_passes_the_control_and_says_so(shop: Path, cli) -> None:
    assert cli("gate", "start", "shop").code == 0
    _change_prices(shop, "return amount * (1 + rate)", "return round(amount * (1 + rate), 2)")
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 0, result.out
    report = _verdict(shop).mutation
    assert report is not None and report.control is not None
    assert report.control.outcome == "survived"
    assert {m.function: m.outcome for m in report.mutants} == {"net": "killed"}


def test_copies_left_by_a_run_that_was_killed_are_removed_by_the_next(
        shop: Path, cli, offline: Path) -> None:
    """`kill -9` of `gate submit` skips its `finally`: the next run sweeps copies whose
    process is gone, and leaves those of a live run (and foreign names) alone."""
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = offline / f"meridian-mutation-{dead.pid}-abc123"
    (stale / "tree-0/src").mkdir(parents=True)
    (stale / "tree-0/src/big.py").write_text("x = 1\n")
    live = offline / f"meridian-mutation-{os.getppid()}-def456"
    live.mkdir()
    foreign = offline / "meridian-mutation-notapid"
    foreign.mkdir()
    assert cli("gate", "start", "shop").code == 0
    _change_prices(shop, "return amount * (1 + rate)", "return round(amount * (1 + rate), 2)")
    assert cli("gate", "submit", "shop", "--quiet").code == 0
    assert sorted(p.name for p in offline.iterdir()) == sorted([live.name, foreign.name])


def test_over_max_functions_the_place_of_a_function_in_the_change_does_not_spare_it() -> None:
    """An agent that knows the budget puts what its tests do not reach last (the last
    file, the last lines): the functions tried are drawn by a hash of the change."""
    from meridian.gates.graph import MutationSpec

    spared: set[str] = set()
    for variant in range(12):
        source = f"# revision {variant}\n" + "".join(
            f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(4))
        chosen = mutation.plan({"src/m.py": source.encode()}, None, [],
                               MutationSpec(max_functions=3))
        assert len(chosen.targets) == 3 and len(chosen.beyond) == 1
        assert [t.line for t in chosen.targets] == sorted(t.line for t in chosen.targets)
        again = mutation.plan({"src/m.py": source.encode()}, None, [],
                              MutationSpec(max_functions=3))
        assert again.beyond == chosen.beyond  # stable for one change
        spared.add(chosen.beyond[0].qualname)
    assert len(spared) > 1  # not always the last one, nor any fixed place


def test_bytecode_of_the_real_tree_never_runs_in_place_of_a_mutant(shop: Path, cli) -> None:
    """A `__pycache__` git does not ignore (no .gitignore) holding an unchecked-hash
    .pyc of the real module: copied, Python would run it and never read the mutant, so a
    well-tested function would "survive". Bytecode is not copied."""
    import importlib.util
    import py_compile

    assert cli("gate", "start", "shop").code == 0
    _change_prices(shop, "return amount * (1 + rate)", "return round(amount * (1 + rate), 2)")
    source = shop / "src/shop/prices.py"
    py_compile.compile(str(source), cfile=importlib.util.cache_from_source(str(source)),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 0, result.out
    assert {m.function: m.outcome for m in _verdict(shop).mutation.mutants} == {"net": "killed"}
