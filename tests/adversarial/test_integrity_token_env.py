"""Attack: commit an ``approval.token_env`` with ``--no-verify``, so that it is "existing"
(HEAD's gates file holds it) and only warned about from then on, and push it.

Layer: local guardrails (pre-push reads the pushed commits: a token_env a pushed commit
added is refused, whatever HEAD says) and CI (``meridian ci`` refuses one the range's
base did not hold). The trusted point is what the remote or the base already had,
never this clone's HEAD.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.adversarial.conftest import Proc, run_git
from tests.conftest import git

APPROVAL = '    artifacts: ["release/**"]\n    approval: {token_env: USER}\n'


def _add_token_env(project: Path) -> None:
    gates = project / ".meridian" / "gates.yaml"
    gates.write_text(gates.read_text().replace('    artifacts: ["release/**"]\n', APPROVAL))
    git(project, "add", ".meridian/gates.yaml")


def _remote_main(bare: Path) -> str:
    return git(bare, "for-each-ref", "--format=%(objectname)", "refs/heads/main").strip()


def test_a_no_verify_token_env_is_refused_at_push_and_in_ci(
        project: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    assert cli("hooks", "install").code == 0
    assert cli("gate", "start", "spec").code == 0  # a state branch, as in real use
    assert run_git(project, "push", "-q", "origin", "main").code == 0
    base = git(project, "rev-parse", "HEAD").strip()
    before = _remote_main(remote)
    _add_token_env(project)
    assert run_git(project, "commit", "-m", "approval from $USER").code != 0  # pre-commit
    assert run_git(project, "commit", "-q", "--no-verify", "-m", "approval from $USER").code == 0
    sneaked = git(project, "rev-parse", "HEAD").strip()
    # Locally it is now "existing": commands load it with a warning only.
    status = cli("status")
    assert status.code == 0 and "token_env" in status.err and "deprecated" in status.err

    pushed = run_git(project, "push", "origin", "main")
    assert pushed.code != 0, pushed
    assert "gate release: approval.token_env $USER was added by pushed commit" in pushed.err
    assert sneaked[:10] in pushed.err and "token_sha256" in pushed.err
    assert _remote_main(remote) == before

    result = cli("ci", "--no-fetch", "--base", base, "--json")
    assert result.code == 1, result
    [problem] = json.loads(result.out)["problems"]
    assert "gate release: approval.token_env $USER is new since the base" in problem
    no_base = json.loads(cli("ci", "--no-fetch", "--json").out)
    assert any("$USER is new since the start of the history" in p for p in no_base["problems"])


def test_a_token_env_the_remote_already_had_still_pushes(
        project: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    """The legacy case the warning is for: the approval was on the remote (and at the
    base) before; pushing other work is not refused for it, and ci does not list it."""
    _add_token_env(project)
    git(project, "commit", "-q", "--no-verify", "-m", "a legacy approval")
    assert cli("gate", "start", "spec").code == 0
    git(project, "push", "-q", "--no-verify", "origin", "main")
    base = git(project, "rev-parse", "HEAD").strip()
    assert cli("hooks", "install").code == 0
    (project / "NOTES.md").write_text("more\n")
    git(project, "add", "NOTES.md")
    git(project, "commit", "-q", "-m", "notes")
    pushed = run_git(project, "push", "origin", "main")
    assert pushed.code == 0, pushed
    report = json.loads(cli("ci", "--no-fetch", "--base", base, "--json").out)
    assert report["problems"] == []
