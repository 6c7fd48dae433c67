"""The mutation smoke check through `meridian gate submit` in real repositories: each
changed function's body replaced by a raise, the gate's real checks (pytest) run
against it in a temporary copy of the tree."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from meridian.evaluators.models import Verdict
from meridian.ledger import Ledger
from tests.gates.conftest import commit_all, write

PYTEST = '"$MERIDIAN_PYTHON" -m pytest -q -p no:cacheprovider tests'

PRICES = '''
def net(amount, rate):
    """The amount with tax."""
    return amount * (1 + rate)


def label(amount):
    return f"{amount:.2f} EUR"
'''


def _gate(mutation: str = "", checks: str = f"[{json.dumps(PYTEST)}]",
          extra: str = "") -> str:
    return f"""
gates:
  - id: shop
    description: prices
    acceptance: prices are computed and labelled
    artifacts: ["src/**/*.py", "tests/**/*.py"]
    checks: {checks}
{mutation}{extra}"""


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Offline evaluator; temporary copies under a directory of the test's own."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    return temp


@pytest.fixture
def shop(project: Path, write_gates) -> Path:
    """A committed src-layout package whose tests reach it through PYTHONPATH (as an
    editable install would: pointing at the real tree, not the copy)."""
    write_gates(_gate())
    write(project, "src/shop/__init__.py", "")
    write(project, "src/shop/prices.py", PRICES)
    write(project, "tests/test_prices.py", """
        from shop.prices import label, net


        def test_net():
            assert net(100, 0.2) == 120


        def test_label():
            assert label(3) == "3.00 EUR"
        """)
    commit_all(project, "shop")
    return project


@pytest.fixture(autouse=True)
def real_tree_on_path(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(repo / "src"))


def _verdict(root: Path) -> Verdict:
    records = [r for r in Ledger.open(root).records("events")
               if r.kind in ("gate.passed", "gate.failed")]
    return Verdict.model_validate(Ledger.open(root).read_json(records[-1].data["verdict"]))


def _outcomes(verdict: Verdict) -> dict[str, str]:
    assert verdict.mutation is not None
    return {m.function: m.outcome for m in verdict.mutation.mutants}


def _change_prices(root: Path, old: str, new: str) -> None:
    path = root / "src/shop/prices.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_a_changed_function_whose_test_asserts_on_something_else_blocks_the_gate(
        shop: Path, cli, offline: Path) -> None:
    write(shop, "src/shop/prices.py", PRICES + '''

def discount(amount, percent):
    if percent < 0:
        raise ValueError("negative discount")
    return amount * (100 - percent) / 100
''')
    write(shop, "tests/test_discount.py", """
        from shop.prices import net


        def test_discount():
            assert net(100, 0.5) == 150  # named for discount, asserts on net
        """)
    commit_all(shop, "discount, before the gate")
    assert cli("gate", "start", "shop").code == 0
    _change_prices(shop, "return amount * (100 - percent) / 100",
                   "return round(amount * (100 - percent) / 100, 2)")
    before = _files(shop)
    result = cli("gate", "submit", "shop")
    assert result.code == 2, result
    line = _def_line(shop, "def discount")
    assert (f"high    src/shop/prices.py:{line}  changed function discount is not exercised "
            "by the gate's checks (they still pass with its body removed) [mutation]"
            ) in result.out
    assert _outcomes(_verdict(shop)) == {"discount": "survived"}
    assert "meridian: mutation smoke check: 1 changed function(s)" in result.err
    assert "mutant 1/1 survived in" in result.err
    assert f"discount (src/shop/prices.py:{line})" in result.err
    # The user's work tree is exactly as it was, and no copy is left behind.
    assert _files(shop) == before
    assert list(offline.iterdir()) == []


def _files(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}


def _def_line(root: Path, prefix: str, path: str = "src/shop/prices.py") -> int:
    return next(n for n, text in enumerate((root / path).read_text().splitlines(), 1)
                if text.lstrip().startswith(prefix))


def test_a_changed_function_whose_test_mocks_it_through_a_fixture_blocks_the_gate(
        shop: Path, cli) -> None:
    write(shop, "src/shop/rates.py", '''
        def fetch_rate(country):
            """The VAT rate of a country."""
            rates = {"FR": 0.2, "DE": 0.19}
            return rates[country]
        ''')
    write(shop, "tests/conftest.py", """
        import pytest

        from shop import rates


        @pytest.fixture
        def fixed_rate(monkeypatch):
            monkeypatch.setattr(rates, "fetch_rate", lambda country: 0.2)
        """)
    write(shop, "tests/test_rates.py", """
        from shop import rates


        def test_fetch_rate(fixed_rate):
            assert rates.fetch_rate("FR") == 0.2
        """)
    commit_all(shop, "rates")
    assert cli("gate", "start", "shop").code == 0
    (shop / "src/shop/rates.py").write_text((shop / "src/shop/rates.py").read_text().replace(
        '"DE": 0.19', '"DE": 0.19, "IT": 0.22'))
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 2, result
    assert ("high    src/shop/rates.py:1  changed function fetch_rate is not exercised by the "
            "gate's checks (they still pass with its body removed) [mutation]") in result.out
    assert _outcomes(_verdict(shop)) == {"fetch_rate": "survived"}


def test_a_well_tested_change_is_silent_and_passes(shop: Path, cli) -> None:
    assert cli("gate", "start", "shop").code == 0
    _change_prices(shop, "return amount * (1 + rate)", "return round(amount * (1 + rate), 2)")
    _change_prices(shop, 'return f"{amount:.2f} EUR"', 'return f"{amount:.2f} EUR".strip()')
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 0, result.out
    assert "[mutation]" not in result.out
    assert "mutation smoke check: 2 killed in" in result.out
    verdict = _verdict(shop)
    assert verdict.passed and _outcomes(verdict) == {"net": "killed", "label": "killed"}
    assert verdict.mutation is not None and verdict.mutation.workers >= 1
    for mutant in verdict.mutation.mutants:
        assert mutant.file == "src/shop/prices.py" and mutant.duration_s > 0
        assert "failed (exit 1)" in mutant.detail  # the copy's mutant ran, not the real tree
    assert [m.line for m in verdict.mutation.mutants] == [1, 6]
    why = cli("why", "shop")
    assert "mutation smoke check: 2 killed" in why.out
    assert "killed    src/shop/prices.py:1  net" in why.out


def test_mutation_false_switches_it_off(shop: Path, cli, write_gates) -> None:
    write_gates(_gate(mutation="    mutation: false\n"))
    commit_all(shop, "no mutation")
    assert cli("gate", "start", "shop").code == 0
    write(shop, "src/shop/prices.py", PRICES + "\n\ndef unused(x):\n    return x * 2\n")
    result = cli("gate", "submit", "shop")
    assert result.code == 0, result.out
    assert "mutation" not in result.out and "mutant" not in result.err
    assert _verdict(shop).mutation is None


def test_functions_beyond_max_functions_are_reported_as_not_tried(
        shop: Path, cli, write_gates) -> None:
    write_gates(_gate(mutation="    mutation: {max_functions: 1}\n"))
    commit_all(shop, "budget")
    assert cli("gate", "start", "shop").code == 0
    _change_prices(shop, "return amount * (1 + rate)", "return round(amount * (1 + rate), 2)")
    _change_prices(shop, 'return f"{amount:.2f} EUR"', 'return f"{amount:.2f} EUR".strip()')
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 0, result.out
    outcomes = _outcomes(_verdict(shop))
    assert sorted(outcomes.values()) == ["killed", "not_tried"]  # which one: drawn
    left = next(name for name, outcome in outcomes.items() if outcome == "not_tried")
    line = _def_line(shop, f"def {left}")
    assert f"not tried src/shop/prices.py:{line}  {left}: beyond max_functions 1" in result.out
    assert ("low     (project)  mutation smoke check: 1 changed function(s) not tried (beyond "
            f"max_functions 1): {left} (src/shop/prices.py:{line})") in result.out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_a_check_that_hangs_under_a_mutant_is_killed_with_its_process_tree_at_the_budget(
        shop: Path, cli, write_gates, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # a budget a loaded machine still starts pytest within (under load, 6 s was not)
    write_gates(_gate(mutation="    mutation: {timeout_s: 12}\n"))
    pids = tmp_path / "pids"
    monkeypatch.setenv("SHOP_PIDS", str(pids))
    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # one at a time: a known order
    write(shop, "tests/test_ready.py", """
        import os
        import subprocess
        import sys
        import time

        from shop.prices import label, net


        def test_waits_until_net_answers():
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            with open(os.environ["SHOP_PIDS"], "a") as out:
                out.write(f"{os.getpid()} {child.pid}\\n")
            while True:  # a retry loop: under the mutant it never ends
                try:
                    assert net(1, 1) == 2
                    break
                except RuntimeError:
                    time.sleep(0.05)
            child.kill()
            child.wait()
        """)
    commit_all(shop, "a retrying test")
    assert cli("gate", "start", "shop").code == 0
    _change_prices(shop, "return amount * (1 + rate)", "return round(amount * (1 + rate), 2)")
    _change_prices(shop, 'return f"{amount:.2f} EUR"', 'return f"{amount:.2f} EUR".strip()')
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 0, result  # a timeout is not a survivor
    report = _verdict(shop).mutation
    assert report is not None
    assert {m.function: m.outcome for m in report.mutants} == {
        "net": "timeout", "label": "not_tried"}
    assert "the 12s budget ran out" in report.mutants[1].detail
    assert "outlived" in report.mutants[0].detail
    assert report.duration_s < 60  # bounded by the budget, not by the test's 600 s sleep
    started = [int(pid) for line in pids.read_text().split() for pid in [line]]
    # The real run, the baseline, the control and the mutant: 2 pids each.
    assert len(started) == 8
    assert report.control is not None and report.control.outcome == "survived"
    assert not [pid for pid in started if _alive(pid)]
    assert "low     (project)  mutation smoke check: 1 changed function(s) not tried" \
        in result.out


def test_checks_that_fail_in_a_copy_of_the_tree_block_with_a_way_out(
        shop: Path, cli, write_gates) -> None:
    """The checks passed on the work tree and fail in the copy without any mutant: a
    high issue (checks that notice the copy, e.g. an agent's test failing on purpose
    there, would otherwise keep the check from ever running), saying what to do."""
    (shop / ".gitignore").write_text("local.cfg\n")
    (shop / "local.cfg").write_text("ok\n")  # ignored: not in the copies
    write_gates(_gate(checks=f'["test -f local.cfg", {json.dumps(PYTEST)}]'))
    commit_all(shop, "a check needing an ignored file")
    assert cli("gate", "start", "shop").code == 0
    _change_prices(shop, "return amount * (1 + rate)", "return round(amount * (1 + rate), 2)")
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 2, result.out
    report = _verdict(shop).mutation
    assert report is not None and report.note.startswith("could not run")
    assert [m.outcome for m in report.mutants] in (["error"], ["not_tried"])
    assert "high    (project)  mutation smoke check could not run: the gate's checks pass on " \
        "the work tree but fail in a temporary copy of it without any mutant (`test -f " \
        "local.cfg` failed (exit 1)): checks that depend on where they run" in result.out
    assert "switch the check off for this gate with `mutation: false`" in result.out
    assert "raise mutation.max_functions" not in result.out  # not a budget matter


def test_without_a_base_commit_survivors_are_reported_without_blocking(repo: Path, cli) -> None:
    Ledger.open(repo).emit("meridian.init", {"branch": "meridian/state"})
    write(repo, ".meridian/gates.yaml", _gate())
    write(repo, "src/shop/__init__.py", "")
    write(repo, "src/shop/prices.py", PRICES)
    write(repo, "tests/test_prices.py", """
        from shop.prices import net


        def test_net():
            assert net(100, 0.5) == 150
        """)
    assert cli("gate", "start", "shop").code == 0
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 0, result.out
    assert ("medium  src/shop/prices.py:6  changed function label is not exercised by the "
            "gate's checks (they still pass with its body removed) (no base commit: every "
            "function counted as changed, old code included; not blocking unless "
            "evaluator.block_pre_existing) [mutation]") in result.out


def test_an_inline_exception_exempts_a_function_and_is_listed(shop: Path, cli) -> None:
    assert cli("gate", "start", "shop").code == 0
    write(shop, "src/shop/prices.py", PRICES + '''

# meridian: allow mutation -- called by the billing cron, tested in the billing repo
def monthly(amount):
    return amount / 12
''')
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 0, result.out
    line = _def_line(shop, "# meridian: allow mutation")
    assert (f"allowed src/shop/prices.py:{line}  mutation line {line + 1}: monthly: not "
            "mutated -- called by the billing cron, tested in the billing repo (written "
            "during this gate)") in result.out
    assert _verdict(shop).mutation.mutants == []


def test_a_function_run_while_the_checks_load_counts_as_killed(shop: Path, cli) -> None:
    write(shop, "src/shop/registry.py", '''
        HANDLERS = {}


        def register(name):
            def wrap(fn):
                HANDLERS[name] = fn
                return fn
            return wrap


        @register("vat")
        def vat(amount):
            return amount * 0.2
        ''')
    write(shop, "tests/test_registry.py", """
        from shop import registry


        def test_vat_registered():
            assert registry.vat(10) == 2
        """)
    commit_all(shop, "registry")
    assert cli("gate", "start", "shop").code == 0
    path = shop / "src/shop/registry.py"
    path.write_text(path.read_text().replace("return wrap", "return wrap  # decorator"))
    result = cli("gate", "submit", "shop", "--quiet")
    assert result.code == 0, result.out
    [mutant] = _verdict(shop).mutation.mutants
    assert (mutant.function, mutant.outcome) == ("register", "killed")
    assert "error" in mutant.detail.lower() or "failed" in mutant.detail


@pytest.mark.parametrize(("value", "expected"), [
    ("3", ("gates[0].mutation: expected false (switched off), true (the defaults) or a "
           "mapping with max_functions: (an integer >= 1) and timeout_s: (seconds > 0)")),
    ("{max_functions: 0}", "gates[0].mutation.max_functions"),
    ("{timeout_s: -1}", "gates[0].mutation.timeout_s"),
    ("{timeout: 5}", "gates[0].mutation.timeout"),
])
def test_a_bad_mutation_setting_is_one_line_naming_the_field(
        shop: Path, cli, write_gates, value: str, expected: str) -> None:
    write_gates(_gate(mutation=f"    mutation: {value}\n"))
    result = cli("gate", "submit", "shop")
    assert result.code == 2
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert ".meridian/gates.yaml:" in result.err and expected in result.err, result.err


def test_the_published_schema_takes_what_the_loader_takes() -> None:
    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[2] / ".meridian-template" / "schemas"
                         / "gates.schema.json").read_text())
    for value in (False, True, {"max_functions": 3}, {"timeout_s": 60.5, "enabled": True}):
        jsonschema.validate({"gates": [{"id": "g", "mutation": value}]}, schema)
    for value in (3, {"max_functions": 0}, {"timeout": 5}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"gates": [{"id": "g", "mutation": value}]}, schema)
