"""rt4 F6 at the workflow layer: a file the pull request commits at the repository root
under the workflow's SUITE name (``reference``) does not replace the bundled suite, so a
regressing agent fails the evaluate job instead of passing with "0 compared".

The shipped workflow's steps run against a bare remote with the helpers of
test_ci_template.py (imported, not copied)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import git
from tests.packaging.test_ci_template import (  # noqa: F401  (remote_project is a fixture)
    checkout_of,
    meridian,
    pinned_and_synced,
    remote_project,
    run_evaluate_job,
    workflow,
)


def _touched_copy_of_the_bundled_suite() -> str:
    """The bundled suite with every task's definition touched (one metadata line each)."""
    from meridian.evals.suite import bundled_suites

    text = bundled_suites()[workflow()["env"]["SUITE"]].read_text(encoding="utf-8")
    touched, count = re.subn(r"(?m)^(  difficulty: \w+)$", r"\1\n  metadata: {locale: en}", text)
    assert count >= 1  # the defaults block: every task inherits it
    return touched


def test_a_root_file_named_like_the_bundled_suite_does_not_replace_it_in_ci(
        remote_project: tuple[Path, Path], tmp_path: Path) -> None:  # noqa: F811
    project, bare = remote_project
    suite = workflow()["env"]["SUITE"]
    assert "/" not in suite and not suite.endswith((".yaml", ".yml"))  # a bundled name
    pinned_and_synced(project)
    # the pull request: a regressing agent, plus ./reference = the bundled suite re-touched
    (project / suite).write_text(_touched_copy_of_the_bundled_suite(), encoding="utf-8")
    git(project, "add", suite)
    git(project, "commit", "-q", "-m", "locale fixture")
    git(project, "push", "-q", "origin", "main")
    job = run_evaluate_job(checkout_of(bare, tmp_path, "shadow"), tmp_path, AGENT="reference-v1")
    assert job["outputs"]["compare"] == {"exit_code": "1", "compared": "true"}, job["log"]
    assert job["code"] == 1 and job["log"][-1][0] == "Fail on regression"
    run_step = next(out for name, _, out in job["log"] if name == "Run the suite")
    assert f"./{suite} is not used" in run_step
    assert "0 compared" not in job["summary"] and "regression" in job["summary"].lower()


def test_the_same_file_named_as_a_path_is_the_projects_suite_and_is_not_compared_silently(
        remote_project: tuple[Path, Path], tmp_path: Path) -> None:  # noqa: F811
    """Must-pass side: ``./reference`` is the project's file; compared with a baseline of
    the bundled suite, every task changed, so the gate fails with a line saying so."""
    project, _ = remote_project
    suite = workflow()["env"]["SUITE"]
    pinned_and_synced(project)
    (project / suite).write_text(_touched_copy_of_the_bundled_suite(), encoding="utf-8")
    meridian(project, "eval", "run", f"./{suite}", "--agent", "reference-v1", "--offline")
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "meridian", "eval", "compare", "latest",
                           "baseline:main", "--fail-on-regression", "--accept-changed-tasks"],
                          cwd=project, capture_output=True, text=True, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "gate: no task compared" in proc.stderr
