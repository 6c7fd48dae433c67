"""Attack: poison the caches under ``.git/meridian`` the way an agent with a shell would.

The hooks keep two caches: the project facts (``hook-project.json``, keyed by the bytes
of config, gate graph and rules) and the gate snapshot (``gate-snapshot-<branch>.json``,
keyed by the state tip, with a checksum). Both are plain files the agent can rewrite,
recomputing any key or checksum, because nothing local is secret from the same user.

Layer: the pre-commit hook trusts the caches for speed (a drift guard, see
docs/security.md); the pre-push hook, the last local gate before anything leaves the
machine, derives everything again from the files and the state branch, never from a
cache; ``meridian ci`` is the authority behind both.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from meridian import gitio
from meridian.gates import snapshot as snapshot_module
from meridian.hooks import project as project_module
from tests.adversarial.conftest import CLEAN_MODULE, Proc, commit_all, pass_gate, run_git, write
from tests.conftest import git


def _meridian_dir(root: Path) -> Path:
    return gitio.meridian_dir(gitio.open_repo(str(root)))


def _poison_project_cache(root: Path) -> None:
    """``gates: []`` in the facts, the key left matching the files: nothing is locked."""
    path = _meridian_dir(root) / project_module.CACHE_NAME
    document = json.loads(path.read_text())
    document["facts"]["gates"] = []
    document["facts"]["has_graph"] = False
    path.write_text(json.dumps(document))


def _poison_snapshot(root: Path, branch: str = "meridian/state") -> None:
    """Every gate ``passed`` in the snapshot, its checksum recomputed as Meridian does."""
    path = snapshot_module.cache_path(gitio.open_repo(str(root)), branch)
    document = json.loads(path.read_text())
    fields = document["fields"]
    template = {name: None for name in fields}
    for gate in ("spec", "impl", "release"):
        fold = dict(document["folds"].get(gate) or template)
        fold["phase"] = "passed"
        document["folds"][gate] = fold
    document["checksum"] = snapshot_module._checksum(
        document["tip"], document["last_ts"], fields, document["folds"])
    path.write_text(json.dumps(document))


def _warm(root: Path) -> None:
    """Let the hooks write their caches (a commit of an unlocked file)."""
    write(root, "NOTES.txt", "warm the caches\n")
    commit_all(root, "warm")


def _remote_refs(bare: Path) -> str:
    return git(bare, "for-each-ref", "--format=%(refname) %(objectname)")


def _sneak(root: Path) -> str:
    write(root, "src/area.py", CLEAN_MODULE)
    git(root, "add", "src/area.py")
    assert run_git(root, "commit", "--no-verify", "-m", "sneak impl in").code == 0
    return git(root, "rev-parse", "HEAD").strip()


def test_a_poisoned_project_cache_does_not_open_the_push(
        project: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    assert cli("hooks", "install").code == 0
    _warm(project)
    assert run_git(project, "push", "-q", "origin", "main").code == 0
    before = _remote_refs(remote)
    _poison_project_cache(project)
    commit = _sneak(project)
    pushed = run_git(project, "push", "origin", "main")
    assert pushed.code != 0, pushed
    assert commit[:10] in pushed.err and "src/area.py" in pushed.err
    assert _remote_refs(remote) == before


def test_a_rechecksummed_snapshot_does_not_open_the_push(
        project: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    assert cli("hooks", "install").code == 0
    assert cli("gate", "start", "spec").code == 0  # a state tip and a snapshot to poison
    _warm(project)
    assert run_git(project, "push", "-q", "origin", "main").code == 0
    before = _remote_refs(remote)
    _poison_snapshot(project)
    commit = _sneak(project)
    pushed = run_git(project, "push", "origin", "main")
    assert pushed.code != 0, pushed
    assert commit[:10] in pushed.err and "gate impl" in pushed.err
    assert _remote_refs(remote) == before
    # status derives from the ledger, never from the snapshot.
    shown = {g["gate"]: g["state"] for g in json.loads(cli("status", "--json").out)["gates"]}
    assert shown["spec"] == "in_progress" and shown["impl"] != "passed", shown


def test_both_caches_poisoned_a_branch_and_a_tag_push_are_refused(
        project: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    assert cli("hooks", "install").code == 0
    assert cli("gate", "start", "spec").code == 0
    _warm(project)
    assert run_git(project, "push", "-q", "origin", "main").code == 0
    before = _remote_refs(remote)
    git(project, "checkout", "-q", "-b", "feature")
    _poison_project_cache(project)
    _poison_snapshot(project)
    commit = _sneak(project)
    git(project, "tag", "v-sneak", commit)
    for refspec in ("feature", "v-sneak", "refs/heads/feature:refs/heads/main"):
        pushed = run_git(project, "push", "origin", refspec)
        assert pushed.code != 0, (refspec, pushed)
        assert "src/area.py" in pushed.err, (refspec, pushed)
    assert _remote_refs(remote) == before


def test_the_genuine_pass_still_pushes_after_caches_were_poisoned(
        project: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    """The defence is a recompute, not a refusal of everything: truth still pushes."""
    assert cli("hooks", "install").code == 0
    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    _poison_project_cache(project)
    _poison_snapshot(project)
    write(project, "src/area.py", CLEAN_MODULE)
    commit_all(project, "impl is open now")
    pushed = run_git(project, "push", "origin", "main")
    assert pushed.code == 0, pushed


def test_an_agent_cannot_commit_a_new_token_env_approval(
        project: Path, cli: Callable[..., Proc]) -> None:
    """Attack: point release's approval at a variable the agent can read (``$USER``).

    Layer: config validation, in the pre-commit hook and every command (token_env is
    refused in new configs); a --no-verify commit of it is a harness change CI lists."""
    assert cli("hooks", "install").code == 0
    gates = project / ".meridian" / "gates.yaml"
    gates.write_text(gates.read_text().replace(
        "    artifacts: [\"release/**\"]\n",
        "    artifacts: [\"release/**\"]\n    approval: {token_env: USER}\n"))
    git(project, "add", ".meridian/gates.yaml")
    committed = run_git(project, "commit", "-m", "approval from the environment")
    assert committed.code != 0, committed
    assert "token_env is refused in new configs; use token_sha256" in committed.err
