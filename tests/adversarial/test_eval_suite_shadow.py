"""Attack (rt4 F6): the change adds a file named like the bundled suite the CI workflow
runs (``reference``) at the repository root: the bundled suite with every task's
definition touched. `meridian eval run reference` took that file, every task was
"changed (not compared)", and `eval compare --fail-on-regression` said "No regressions
among 0 compared task(s)" and exited 0 for a 22/23 -> 7/23 agent.

Layers: suite resolution (a bare bundled name always means the bundled suite; a
project file is named as a path) and the compare gate (tasks of the baseline that are
not compared fail `--fail-on-regression` unless `--accept-changed-tasks` accepts them;
no task compared never passes). The workflow-level attack is
tests/packaging/test_ci_suite_shadow.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.evals.suite import bundled_suites
from tests.adversarial.conftest import Proc

RUN = ("--offline", "--limit", "5", "--no-isolation", "--workers", "2")


@pytest.fixture
def human(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDECODE", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_ENTRYPOINT", raising=False)


def _touched(text: str, task_ids: list[str] | None = None) -> str:
    """The suite with tasks' definitions touched: all (via defaults) or the given ids."""
    if task_ids is None:
        out, count = re.subn(r"(?m)^(  difficulty: \w+)$", r"\1\n  metadata: {locale: en}", text)
    else:
        out, count = text, 0
        for task_id in task_ids:
            out, n = re.subn(rf"(?m)^(  - id: {task_id})$", r"\1\n    metadata: {locale: en}", out)
            count += n
    assert count >= 1
    return out


def _baseline(cli: Callable[..., Proc], suite: str) -> None:
    assert cli("eval", "run", suite, "--agent", "reference-v2", *RUN).code == 0
    assert cli("baseline", "pin", "main", "latest").code == 0


def _compare(cli: Callable[..., Proc], *flags: str) -> tuple[Proc, dict[str, object]]:
    result = cli("eval", "compare", "latest", "baseline:main", "--fail-on-regression",
                 "--json", *flags)
    return result, json.loads(result.out)


def test_a_root_file_named_like_a_bundled_suite_does_not_replace_it(
        project: Path, cli: Callable[..., Proc], human: None) -> None:
    _baseline(cli, "reference")
    bundled = bundled_suites()["reference"].read_text(encoding="utf-8")
    (project / "reference").write_text(_touched(bundled), encoding="utf-8")
    run = cli("eval", "run", "reference", "--agent", "reference-v1", *RUN)
    assert run.code == 0, run
    assert "note: reference is the bundled suite; ./reference is not used" in run.err
    result, document = _compare(cli)
    assert document["compared"] == 5 and document["changed"] == [], result
    assert document["baseline_uncompared"] == []


def test_a_suite_with_every_task_definition_touched_fails_the_gate(
        project: Path, cli: Callable[..., Proc], human: None) -> None:
    _baseline(cli, "reference")
    bundled = bundled_suites()["reference"].read_text(encoding="utf-8")
    (project / "reference").write_text(_touched(bundled), encoding="utf-8")
    assert cli("eval", "run", "./reference", "--agent", "reference-v1", *RUN).code == 0
    result, document = _compare(cli)
    assert result.code == 1, result
    assert document["compared"] == 0
    assert "gate: no task compared: all 5 task(s) of the baseline run changed definition" in result.err
    # a human's flag does not accept a comparison of nothing
    accepted, _ = _compare(cli, "--accept-changed-tasks")
    assert accepted.code == 1 and "gate: no task compared" in accepted.err


def test_a_removed_task_is_not_compared_silently(
        project: Path, cli: Callable[..., Proc], human: None) -> None:
    bundled = bundled_suites()["reference"].read_text(encoding="utf-8")
    (project / "mine.yaml").write_text(bundled, encoding="utf-8")
    _baseline(cli, "mine.yaml")
    # the first task (multiply) leaves the suite: --limit 5 now runs tasks 2..6
    without = re.sub(r"(?ms)^  - id: multiply\n.*?(?=^  - id: )", "", bundled)
    (project / "mine.yaml").write_text(without, encoding="utf-8")
    assert cli("eval", "run", "mine.yaml", "--agent", "reference-v2", *RUN).code == 0
    result, document = _compare(cli)
    assert result.code == 1 and "multiply" in document["baseline_uncompared"], result
    assert "1 of the baseline run's 5 task(s) not compared" in result.err


# --- must pass -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["./reference", "suites/reference.yaml", "mine", "mine.yml"])
def test_a_projects_own_suite_named_as_a_path_or_unbundled_name_is_used(
        project: Path, cli: Callable[..., Proc], name: str) -> None:
    path = project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("suite: mine\ntasks:\n  - {id: only, input: 'What is 6 * 7?', "
                    "expected: 42, grader: numeric_tolerance}\n", encoding="utf-8")
    result = cli("eval", "run", name, "--agent", "reference-v2", "--no-store", "--json",
                 "--no-isolation")
    assert result.code == 0, result
    assert json.loads(result.out)["suite"] == "mine"
    assert "not used" not in result.err


def test_a_directory_named_like_the_bundled_suite_is_a_clear_error_as_a_path(
        project: Path, cli: Callable[..., Proc]) -> None:
    (project / "reference").mkdir()
    result = cli("eval", "run", "./reference", "--agent", "reference-v2", "--no-store")
    assert result.code == 2 and "./reference: not a file" in result.err, result
    assert result.err.count("\n") == 1


def test_one_changed_task_gets_a_clear_line_and_passes_with_the_explicit_flag(
        project: Path, cli: Callable[..., Proc], human: None) -> None:
    bundled = bundled_suites()["reference"].read_text(encoding="utf-8")
    (project / "suite.yaml").write_text(bundled, encoding="utf-8")
    _baseline(cli, "./suite.yaml")
    (project / "suite.yaml").write_text(_touched(bundled, ["multiply"]), encoding="utf-8")
    assert cli("eval", "run", "./suite.yaml", "--agent", "reference-v2", *RUN).code == 0
    result, document = _compare(cli)
    assert result.code == 1, result
    assert document["baseline_uncompared"] == ["multiply"] and document["compared"] == 4
    assert ("gate: 1 of the baseline run's 5 task(s) not compared (definition changed or "
            "removed since B): multiply; accept with --accept-changed-tasks, or pin a new "
            "baseline") in result.err
    accepted, document = _compare(cli, "--accept-changed-tasks")
    assert accepted.code == 0, accepted
    assert document["gate_failures"] == [] and document["accepted_changed_tasks"] == ["multiply"]
    assert "gate: accepted 1 task(s) of B not compared" in accepted.err
    markdown = cli("eval", "compare", "latest", "baseline:main", "--fail-on-regression",
                   "--accept-changed-tasks", "--format", "markdown")
    assert markdown.code == 0 and "**Accepted by --accept-changed-tasks:** 1 task(s)" in markdown.out
