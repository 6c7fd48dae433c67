"""Attack (rt3 F1): a stub committed by any route that is not `git commit` runs no
pre-commit hook (`git commit-tree` + `reset --soft` or `update-ref`, `cherry-pick`,
`git am`, `fast-import`, a commit in a clone without hooks fetched back), and pre-push
checked integrity, locked files and regressions but never the pushed content for stubs:
the stub reached the remote.

Layer: pre-push. It runs the pre-commit hook's staged scan (`hook:staged_heuristics`)
over what the push adds: the pushed tip's gate files against the commits the remote
has, refusing the same findings (exit 1 from git, a `gate.blocked` event).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.ledger import EVENTS, Ledger
from tests.adversarial.conftest import Proc, pass_gate, write
from tests.conftest import git
from tests.hooks.conftest import run_git

STUB = '''\
def multiply(a: int, b: int) -> int:
    """Multiply."""
    raise NotImplementedError
'''
FINE = '''\
def multiply(a: int, b: int) -> int:
    """Multiply."""
    return a * b
'''


@pytest.fixture
def working(project: Path, remote: Path, cli: Callable[..., Proc]) -> Path:
    """spec passed, impl in progress, hooks installed, main and the state on the remote."""
    assert cli("hooks", "install").code == 0
    pass_gate(cli, project, "spec", "spec/spec.py")
    assert cli("gate", "start", "impl").code == 0
    assert run_git(project, "push", "-q", "origin", "main").code == 0
    assert cli("sync").code == 0
    return project


def _refused(project: Path, remote: Path, *push: str) -> Proc:
    result = run_git(project, "push", "-q", "origin", *(push or ("main",)))
    assert result.code == 1, result
    assert "high-severity finding(s) in the files pushed by" in result.err, result.err
    assert "src/extra.py:3" in result.err and "gate impl" in result.err, result.err
    return result


def _plumbing_commit(project: Path) -> str:
    git(project, "add", "src/extra.py")
    tree = git(project, "write-tree").strip()
    return git(project, "commit-tree", tree, "-p", "HEAD", "-m", "calc: multiply").strip()


def _commit_tree_reset(project: Path, tmp_path: Path) -> None:
    git(project, "reset", "-q", "--soft", _plumbing_commit(project))


def _commit_tree_update_ref(project: Path, tmp_path: Path) -> None:
    git(project, "update-ref", "refs/heads/main", _plumbing_commit(project))
    git(project, "reset", "-q")


def _hookless_clone(project: Path, tmp_path: Path) -> None:
    git(project, "reset", "-q", "--hard")
    clone = tmp_path / "hookless"
    git(tmp_path, "clone", "-q", str(project), str(clone))
    write(clone, "src/extra.py", STUB)
    git(clone, "add", "src/extra.py")
    git(clone, "commit", "-q", "-m", "calc: multiply")
    git(project, "fetch", "-q", str(clone), "main:refs/heads/stubbed")
    git(project, "merge", "-q", "--ff-only", "stubbed")


def _am(project: Path, tmp_path: Path) -> None:
    git(project, "reset", "-q", "--hard")
    clone = tmp_path / "patcher"
    git(tmp_path, "clone", "-q", str(project), str(clone))
    write(clone, "src/extra.py", STUB)
    git(clone, "add", "src/extra.py")
    git(clone, "commit", "-q", "-m", "calc: multiply")
    patch = git(clone, "format-patch", "-1", "--stdout")
    subprocess.run(["git", "am", "-q"], cwd=project, input=patch, text=True, check=True)


def _cherry_pick(project: Path, tmp_path: Path) -> None:
    commit = _plumbing_commit(project)  # on no branch: the stash or another clone's commit
    git(project, "reset", "-q", "--hard")
    git(project, "cherry-pick", commit)


def _fast_import(project: Path, tmp_path: Path) -> None:
    git(project, "reset", "-q")
    head = git(project, "rev-parse", "HEAD").strip()
    data = STUB.encode()
    stream = (b"commit refs/heads/main\ncommitter A <a@example.com> 1700000000 +0000\n"
              b"data 5\nstub\nfrom " + head.encode() + b"\nM 100644 inline src/extra.py\n"
              + f"data {len(data)}\n".encode() + data + b"\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=project, input=stream, check=True)
    git(project, "reset", "-q", "--hard")


ROUTES = {"commit-tree+reset": _commit_tree_reset, "commit-tree+update-ref": _commit_tree_update_ref,
          "hookless-clone": _hookless_clone, "am": _am, "cherry-pick": _cherry_pick,
          "fast-import": _fast_import}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_stub_committed_past_the_pre_commit_hook_does_not_leave_the_clone(
        working: Path, remote: Path, tmp_path: Path, route: str) -> None:
    project = working
    write(project, "src/extra.py", STUB)
    git(project, "add", "src/extra.py")
    control = run_git(project, "commit", "-q", "-m", "stub")
    assert control.code == 1 and "src/extra.py:3" in control.err  # pre-commit refuses it
    ROUTES[route](project, tmp_path)
    assert "NotImplementedError" in git(project, "show", "HEAD:src/extra.py")

    _refused(project, remote)
    assert "extra.py" not in git(remote, "ls-tree", "-r", "--name-only", "main")
    blocked = [r for r in Ledger.open(project).records(EVENTS)
               if r.kind == "gate.blocked" and r.data.get("source") == "pre-push"]
    assert blocked and blocked[-1].data["gate"] == "impl"
    assert blocked[-1].data.get("rule") == "hook:staged_heuristics"


def test_a_new_branch_and_a_second_remote_ref_are_scanned_too(
        working: Path, remote: Path, tmp_path: Path) -> None:
    project = working
    write(project, "src/extra.py", STUB)
    _commit_tree_reset(project, tmp_path)
    _refused(project, remote, "HEAD:refs/heads/feature")
    _refused(project, remote, "main", "HEAD:refs/heads/other")
    assert not git(remote, "for-each-ref", "refs/heads/feature", "refs/heads/other").strip()


def test_only_what_the_push_adds_counts(working: Path, remote: Path, tmp_path: Path,
                                        cli: Callable[..., Proc]) -> None:
    """A stub a pushed commit added and a later pushed commit removed is not pushed; the
    remote's own lines are not this push's: neither is refused."""
    project = working
    write(project, "src/extra.py", STUB)
    _commit_tree_reset(project, tmp_path)
    write(project, "src/extra.py", FINE)
    git(project, "add", "src/extra.py")
    git(project, "commit", "-q", "-m", "calc: multiply, done")
    assert run_git(project, "push", "-q", "origin", "main").code == 0
    write(project, "src/other.py", FINE.replace("multiply", "times"))
    git(project, "add", "src/other.py")
    git(project, "commit", "-q", "-m", "calc: times")
    result = run_git(project, "push", "-q", "origin", "main")
    assert result.code == 0, result
