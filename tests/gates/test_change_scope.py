"""The offline evaluator judges the gate's change: pre-existing findings, inline
exceptions, exclude globs, honest scores, auto fallback and require: model, through
real repositories and the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meridian.evaluators.models import Verdict
from meridian.ledger import Ledger
from tests.conftest import git
from tests.gates.conftest import commit_all, write

# Mature code with idioms that look like stubs and one real stub-shaped method.
LEGACY = '''
"""A cache with a null lock."""


class _NullLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


class Cache:
    def get(self, key):
        raise NotImplementedError  # the original author's unfinished method


def size(cache):
    return 0
'''

GATE = """
gates:
  - id: cache
    description: the cache
    acceptance: size() counts entries.
    artifacts: ["src/**/*.py"]
"""


def _verdict(root: Path, event) -> Verdict:
    return Verdict.model_validate(Ledger.open(root).read_json(event.data["verdict"]))


@pytest.fixture
def legacy(project: Path, write_gates) -> Path:
    write_gates(GATE)
    write(project, "src/cache.py", LEGACY)
    commit_all(project, "legacy code")
    return project


def test_findings_in_untouched_lines_are_pre_existing_and_do_not_block(legacy, cli, events):
    assert cli("gate", "start", "cache").code == 0
    text = (legacy / "src/cache.py").read_text().replace("return 0", "return len(cache)")
    (legacy / "src/cache.py").write_text(text)
    result = cli("gate", "submit", "cache")
    assert result.code == 0, result
    line = next(ln for ln in result.out.splitlines() if "src/cache.py:14" in ln)
    assert "pre-existing: outside the change, not blocking" in line
    verdict = _verdict(legacy, events("gate.passed")[-1])
    [old] = [i for i in verdict.issues if i.severity == "high"]
    assert (old.file, old.line, old.pre_existing) == ("src/cache.py", 14, True)
    assert events("gate.passed")[-1].data["pre_existing"] == 1


def test_a_stub_planted_in_a_changed_line_fails_with_file_and_line(legacy, cli, events):
    assert cli("gate", "start", "cache").code == 0
    text = (legacy / "src/cache.py").read_text().replace(
        "def size(cache):\n    return 0", "def size(cache):\n    pass")
    (legacy / "src/cache.py").write_text(text)
    result = cli("gate", "submit", "cache")
    assert result.code == 2
    assert "high    src/cache.py:17  function `size` is a stub" in result.out
    verdict = _verdict(legacy, events("gate.failed")[-1])
    assert [(i.line, i.pre_existing) for i in verdict.issues if i.severity == "high"] == [
        (14, True), (17, False)]
    # The last line counts what blocked, not the pre-existing finding beside it.
    assert result.err.endswith("1 high-severity issue(s) (1 more pre-existing, not blocking)\n")


def test_an_assertion_deleted_from_a_test_counts_as_a_change(project, write_gates, cli):
    write_gates(GATE.replace('["src/**/*.py"]', '["src/**/*.py", "tests/**/*.py"]'))
    write(project, "src/calc.py", "def add(a, b):\n    return a + b\n")
    write(project, "tests/test_calc.py",
          "from calc import add\n\n\ndef test_add():\n    total = add(1, 2)\n"
          "    assert total == 3\n")
    commit_all(project)
    assert cli("gate", "start", "cache").code == 0
    write(project, "tests/test_calc.py",
          "from calc import add\n\n\ndef test_add():\n    total = add(1, 2)\n")
    result = cli("gate", "submit", "cache")
    assert result.code == 2
    assert "tests/test_calc.py:4  test `test_add` cannot fail" in result.out


def test_block_pre_existing_makes_untouched_findings_block(legacy, write_gates, cli):
    write_gates(GATE.replace("    artifacts:", "    evaluate: {block_pre_existing: true}\n"
                                              "    artifacts:"))
    commit_all(legacy)
    assert cli("gate", "start", "cache").code == 0
    result = cli("gate", "submit", "cache")
    assert result.code == 2
    assert "src/cache.py:14" in result.out
    assert result.err.endswith("1 high-severity issue(s)\n"), result.err  # it blocked


def test_without_a_base_commit_everything_is_judged(repo: Path, cli):
    Ledger.open(repo).emit("meridian.init", {"branch": "meridian/state"})
    write(repo, ".meridian/gates.yaml", GATE)
    write(repo, "src/cache.py", LEGACY)
    assert cli("gate", "start", "cache").code == 0  # no commit yet: no base
    result = cli("gate", "submit", "cache")
    assert result.code == 2
    assert "high    src/cache.py:14" in result.out
    assert "pre-existing" not in result.out


def test_an_inline_exception_with_a_reason_is_allowed_listed_and_shown(legacy, cli, events):
    assert cli("gate", "start", "cache").code == 0
    text = (legacy / "src/cache.py").read_text().replace(
        "def size(cache):\n    return 0",
        "def size(cache):  # meridian: allow stub_code -- sized lazily by the caller\n    pass")
    (legacy / "src/cache.py").write_text(text)
    result = cli("gate", "submit", "cache")
    assert result.code == 0, result.out
    assert ("allowed src/cache.py:17  stub_code line 17: function `size` is a stub: its body is "
            "only `pass` -- sized lazily by the caller (written during this gate)") in result.out
    passed = events("gate.passed")[-1]
    assert (passed.data["suppressed"], passed.data["suppressed_added"]) == (1, 1)
    verdict = _verdict(legacy, passed)
    assert [(s.kind, s.reason, s.added) for s in verdict.suppressed] == [
        ("stub_code", "sized lazily by the caller", True)]
    evidence = json.loads(Ledger.open(legacy).read(passed.data["verdict"].replace(
        "verdicts/", "evidence/")) or b"{}")
    assert any("an inline exception was added during this gate" in n for n in evidence["notes"])
    why = cli("why", "cache")
    assert "1 allowed by inline exceptions (1 written during the gate)" in why.out
    assert "allowed src/cache.py:17" in why.out


def test_an_inline_exception_on_the_function_covers_a_raise_inside_it(legacy, cli):
    assert cli("gate", "start", "cache").code == 0
    text = (legacy / "src/cache.py").read_text().replace(
        "def size(cache):\n    return 0",
        "# meridian: allow stub_code -- the backend decides, see docs/cache.md\n"
        "def size(cache):\n    raise NotImplementedError")
    (legacy / "src/cache.py").write_text(text)
    result = cli("gate", "submit", "cache")
    assert result.code == 0, result.out
    assert "allowed src/cache.py:17  stub_code" in result.out


def test_an_inline_exception_without_a_reason_allows_nothing(legacy, cli):
    assert cli("gate", "start", "cache").code == 0
    text = (legacy / "src/cache.py").read_text().replace(
        "def size(cache):\n    return 0", "def size(cache):  # meridian: allow stub_code\n    pass")
    (legacy / "src/cache.py").write_text(text)
    result = cli("gate", "submit", "cache")
    assert result.code == 2
    assert "marker at line 17 was ignored: it gives no reason" in result.out


def test_an_inline_exception_for_another_kind_allows_nothing(legacy, cli):
    assert cli("gate", "start", "cache").code == 0
    text = (legacy / "src/cache.py").read_text().replace(
        "def size(cache):\n    return 0",
        "def size(cache):  # meridian: allow hollow_test -- wrong kind\n    pass")
    (legacy / "src/cache.py").write_text(text)
    assert cli("gate", "submit", "cache").code == 2


def test_exclude_globs_keep_files_out_of_the_scan_and_are_listed(project, write_gates, cli,
                                                                  events):
    write_gates(GATE.replace('    artifacts: ["src/**/*.py"]',
                             '    artifacts: ["src/**/*.py"]\n    exclude: ["src/vendor/**"]'))
    commit_all(project)
    assert cli("gate", "start", "cache").code == 0
    write(project, "src/vendor/six.py", "def moved():\n    pass\n")
    write(project, "src/app.py", "def run(x):\n    return x * 2\n")
    result = cli("gate", "submit", "cache")
    assert result.code == 0, result.out
    assert "excluded from the scan (exclude:): src/vendor/six.py" in result.out
    verdict = _verdict(project, events("gate.passed")[-1])
    assert verdict.excluded == ["src/vendor/six.py"]
    assert "src/vendor/six.py" in [a for a in json.loads(Ledger.open(project).read(
        events("gate.passed")[-1].data["verdict"].replace("verdicts/", "evidence/")))["artifacts"]]


def test_an_exclude_glob_is_validated_like_an_artifact_glob(project, write_gates, cli):
    write_gates(GATE.replace('    artifacts: ["src/**/*.py"]',
                             '    artifacts: ["src/**/*.py"]\n    exclude: ["/abs/**"]'))
    result = cli("status")
    assert result.code == 2
    assert "exclude" in result.err and "/abs/**" in result.err


def test_the_offline_verdict_says_what_it_did_not_judge(project, write_gates, cli, events,
                                                          monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    write_gates(GATE)
    commit_all(project)
    assert cli("gate", "start", "cache").code == 0
    write(project, "src/app.py", "def run(x):\n    return x * 2\n")
    result = cli("gate", "submit", "cache")
    assert result.code == 0, result
    assert "  scope: objective checks only" in result.out
    assert ("  not judged: correctness, robustness, spec_adherence (the overall is computed "
            "from completeness)") in result.out
    assert "evaluator kind auto fell back to the offline heuristic evaluator" in result.out
    passed = events("gate.passed")[-1]
    verdict = _verdict(project, passed)
    assert set(verdict.scores) == {"completeness"}
    assert "spec_adherence" in verdict.not_judged and verdict.scope == "objective checks only"
    assert verdict.fallback and "no ANTHROPIC_API_KEY" in verdict.fallback
    assert passed.data["scope"] == "objective checks only"
    status = cli("status")
    assert "(heuristic, scope: objective checks only)" in status.out
    assert json.loads(cli("status", "--json").out)["gates"][0]["scope"] == "objective checks only"
    assert "scope: objective checks only" in cli("why", "cache").out
    health = json.loads(cli("health", "--json").out)
    assert health["gates"]["objective_only_verdicts"] == 1


def test_require_model_means_the_heuristic_alone_cannot_pass(project, write_gates, cli,
                                                              monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    write_gates(GATE.replace("    artifacts:", "    evaluate: {require: model}\n    artifacts:"))
    commit_all(project)
    assert cli("gate", "start", "cache").code == 0
    write(project, "src/app.py", "def run(x):\n    return x * 2\n")
    result = cli("gate", "submit", "cache")
    assert result.code == 2
    assert "requires a model evaluator (evaluator require: model)" in result.out


def test_require_model_in_the_config_applies_to_every_gate(project, write_gates, cli):
    write_gates(GATE)
    config = project / ".meridian" / "config.yaml"
    config.write_text("evaluator:\n  kind: heuristic\n  require: model\n")
    git(project, "add", "-A")
    commit_all(project)
    assert cli("gate", "start", "cache").code == 0
    write(project, "src/app.py", "def run(x):\n    return x * 2\n")
    result = cli("gate", "submit", "cache")
    assert result.code == 2
    assert "requires a model evaluator" in result.out
    assert "fell back" not in result.out  # kind heuristic was chosen, not an auto fallback


def test_a_stored_verdict_without_the_new_fields_still_reads() -> None:
    old = {"gate": "g", "evaluator": "heuristic", "subject": "a" * 40, "overall": 10.0,
           "threshold": 7.0, "passed": True, "issues": [{"severity": "low", "message": "m"}],
           "scores": {"completeness": 10.0, "correctness": 10.0, "robustness": 10.0,
                      "spec_adherence": 10.0}}
    verdict = Verdict.model_validate(old)
    assert verdict.not_judged == [] and verdict.scope is None and verdict.suppressed == []
    assert verdict.issues[0].pre_existing is False


def test_reopening_a_failed_gate_keeps_its_base_so_a_committed_stub_is_still_judged(
        legacy, cli, events):
    # The attack: plant the stub, commit it past the hook, fail, reopen (its base would
    # be the new HEAD), submit: the stub would be "pre-existing". The fold keeps the base.
    assert cli("gate", "start", "cache").code == 0
    text = (legacy / "src/cache.py").read_text().replace(
        "def size(cache):\n    return 0", "def size(cache):\n    pass")
    (legacy / "src/cache.py").write_text(text)
    git(legacy, "add", "-A")
    git(legacy, "commit", "-q", "--no-verify", "-m", "size")
    assert cli("gate", "submit", "cache").code == 2
    assert cli("gate", "reopen", "cache", "--reason", "try again").code == 0
    result = cli("gate", "submit", "cache")
    assert result.code == 2, result
    assert "src/cache.py:17  function `size` is a stub" in result.out
    assert not events("gate.passed")


def test_a_moved_file_is_diffed_against_its_old_self(legacy, cli):
    # Moving a mature module must not make its pre-existing findings the gate's; a stub
    # planted in the move is caught at file:line.
    assert cli("gate", "start", "cache").code == 0
    text = (legacy / "src/cache.py").read_text()
    (legacy / "src/cache.py").unlink()
    (legacy / "src/store").mkdir()
    (legacy / "src/store/cache.py").write_text(text.replace("return 0", "return len(cache)"))
    result = cli("gate", "submit", "cache")
    assert result.code == 0, result
    assert "pre-existing" in result.out
    assert cli("gate", "reopen", "cache", "--reason", "move again").code == 0
    git(legacy, "add", "-A")
    git(legacy, "commit", "-q", "--no-verify", "-m", "moved")
    moved = (legacy / "src/store/cache.py").read_text()
    (legacy / "src/store/cache.py").unlink()
    (legacy / "src/cache_store.py").write_text(
        moved.replace("return len(cache)", "pass"))
    result = cli("gate", "submit", "cache")
    assert result.code == 2, result
    assert "src/cache_store.py:17  function `size` is a stub" in result.out
