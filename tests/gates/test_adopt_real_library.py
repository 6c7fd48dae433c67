"""Adopting a small real library (tests/data/minicache, MIT) with the offline evaluator:
its first gate passes, and a stub planted in a changed line fails it with file:line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from meridian.evaluators.models import Verdict
from meridian.ledger import Ledger
from tests.gates.conftest import commit_all

LIBRARY = Path(__file__).resolve().parents[1] / "data" / "minicache"
GATE = """\
version: 1
gates:
  - id: adopt
    description: minicache as it is
    acceptance: the library and its tests, unchanged
    artifacts: ["src/**", "tests/**"]
    checks:
      - run: '"$MERIDIAN_PYTHON" -m pytest -q -p no:cacheprovider tests'
        timeout: 120
"""


def _adopt(root: Path) -> None:
    for name in ("src", "tests", "LICENSE"):
        source = LIBRARY / name
        if source.is_dir():
            shutil.copytree(source, root / name)
        else:
            shutil.copy(source, root / name)
    (root / ".meridian").mkdir(exist_ok=True)
    (root / ".meridian" / "gates.yaml").write_text(GATE)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no `claude` CLI: auto is the heuristic


def test_the_unmodified_library_passes_its_first_gate(project: Path, cli, events) -> None:
    _adopt(project)
    commit_all(project, "adopt minicache")
    assert cli("gate", "start", "adopt").code == 0
    result = cli("gate", "submit", "adopt", "--quiet")
    assert result.code == 0, result.out
    verdict = Verdict.model_validate(Ledger.open(project).read_json(
        events("gate.passed")[-1].data["verdict"]))
    assert not [i for i in verdict.issues if i.severity == "high"]


def test_judged_whole_without_a_base_commit_it_still_passes(repo: Path, cli) -> None:
    Ledger.open(repo).emit("meridian.init", {"branch": "meridian/state"})
    _adopt(repo)
    assert cli("gate", "start", "adopt").code == 0  # no commit: every line is judged
    result = cli("gate", "submit", "adopt", "--quiet")
    assert result.code == 0, result.out
    assert "pre-existing" not in result.out


def test_a_stub_planted_in_a_changed_line_fails_with_file_and_line(project: Path, cli) -> None:
    _adopt(project)
    commit_all(project, "adopt minicache")
    assert cli("gate", "start", "adopt").code == 0
    module = project / "src" / "minicache.py"
    text = module.read_text()
    lines = text.splitlines(keepends=True)
    first = next(n for n, line in enumerate(lines, 1) if "now = self.timer()" in line)
    planted = "".join(lines[:first - 1]) + "        raise NotImplementedError\n" + "".join(
        lines[first + 4:])
    module.write_text(planted)
    result = cli("gate", "submit", "adopt", "--quiet")
    assert result.code == 2
    assert f"high    src/minicache.py:{first}  `expire` raises NotImplementedError" \
        in result.out
    assert "pre-existing" not in result.out.split(f"minicache.py:{first}")[1].splitlines()[0]
