"""``meridian init --ci github``: the workflow template, copied and never clobbered."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from tests.hooks.conftest import Proc

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / ".meridian-template" / "ci" / "github-actions.yml"


def test_init_ci_github_copies_the_workflow_once(repo_with_commit: Path,
                                                 cli: Callable[..., Proc]) -> None:
    result = cli("init", "--no-hooks", "--ci", "github")
    assert result.code == 0
    assert "created .github/workflows/meridian.yml" in result.out.splitlines()
    workflow = repo_with_commit / ".github" / "workflows" / "meridian.yml"
    assert workflow.read_text() == TEMPLATE.read_text()
    workflow.write_text("# my edits\n")
    again = cli("init", "--no-hooks", "--ci", "github")
    assert "  kept .github/workflows/meridian.yml (exists; not overwritten)" in again.out.splitlines()
    assert workflow.read_text() == "# my edits\n"


def test_an_unknown_ci_name_is_a_usage_error(repo_with_commit: Path,
                                             cli: Callable[..., Proc]) -> None:
    result = cli("init", "--no-hooks", "--ci", "jenkins")
    assert result.code == 2
    assert "invalid choice: 'jenkins'" in result.err


def test_the_workflow_fetches_state_compares_comments_and_fails() -> None:
    workflow = yaml.safe_load(TEMPLATE.read_text())
    steps = workflow["jobs"]["evaluate"]["steps"]
    scripts = "\n".join(str(step.get("run", "")) for step in steps)
    assert 'git ls-remote --exit-code --heads origin "${MERIDIAN_STATE}"' in scripts
    assert 'git fetch --no-tags origin "+refs/heads/${MERIDIAN_STATE}:refs/heads/${MERIDIAN_STATE}"' \
        in scripts
    assert '"+refs/tags/meridian/*:refs/tags/meridian/*"' in scripts
    assert 'python -m pip install "meridian-gates>=0.1,<1"' in scripts
    assert 'meridian eval run "$SUITE" --agent "$AGENT" --offline --json' in scripts
    assert workflow["env"]["SUITE"] == "reference"  # a bundled suite: works in any repository
    # the run this job stored, against the baseline read before the suite ran
    assert ('meridian eval compare "$RUN_ID" "$BASELINE_RUN" --format markdown \\\n'
            "  --fail-on-regression > meridian-compare.md") in scripts
    names = [step.get("name") for step in steps]
    assert names.index("Read the pinned baseline") < names.index("Run the suite")
    comment_job = workflow["jobs"]["comment"]
    comment = next(step for step in comment_job["steps"]
                   if step.get("uses", "").startswith("actions/github-script"))
    assert "createComment" in comment["with"]["script"]
    assert "github.event_name == 'pull_request'" in comment_job["if"]
    fail = steps[-1]
    assert fail["if"] == "steps.compare.outputs.exit_code != '0'"
    assert 'exit "${{ steps.compare.outputs.exit_code }}"' in fail["run"]
    assert workflow["permissions"] == {"contents": "read"}
    assert comment_job["permissions"] == {"pull-requests": "write"}
    # YAML 1.1 reads the key `on` as True; GitHub reads it as the triggers.
    assert workflow[True] == {"pull_request": None, "push": {"branches": ["main"]}}
    # A fork's read-only token cannot comment: that must not fail the job by itself.
    assert comment["continue-on-error"] is True
    compare = next(step for step in steps if step.get("id") == "compare")
    assert "set +e\n" in compare["run"]  # the exit code is kept for the last step
    assert "code=$?" in compare["run"] and 'echo "exit_code=$code" >> "$GITHUB_OUTPUT"' in compare["run"]
