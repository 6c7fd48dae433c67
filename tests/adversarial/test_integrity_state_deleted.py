"""Attack: delete the state branch, so that gate states are "unknown" and the hooks skip
the lock checks, then write, commit and push a locked gate's files.

Layer: local guardrails (``meridian/hooks/state_gone.py``, called by the pre-commit,
pre-push and Claude Code PreToolUse hooks). A missing branch with evidence in this clone
that it existed (the verified-tip marker, the gate snapshot or event-order cache, a
remote-tracking copy) is tamper evidence: the commit and the push are refused and the
write denied, each saying how to restore the branch. A project that never had one keeps
working as before.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.adversarial.guard_support import base_env, hook, make_project, run, tool

STATE = "meridian/state"


def _git(root: Path, home: Path, *args: str, check: bool = True):  # type: ignore[no-untyped-def]
    return run(["git", *args], root, base_env(home), check=check)


def _meridian(root: Path, home: Path, *args: str):  # type: ignore[no-untyped-def]
    return run([sys.executable, "-P", "-m", "meridian", *args], root, base_env(home),
               check=False)


def _started(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    root = make_project(tmp_path / "project", home)
    assert _meridian(root, home, "gate", "start", "schema").returncode == 0
    (root / "schema").mkdir()
    (root / "schema" / "v1.json").write_text('{"type": "object"}\n')
    _git(root, home, "add", "-A")
    _git(root, home, "commit", "-qm", "schema work")  # through the hook: it verifies
    return root, home


def _stage_api(root: Path, home: Path) -> None:
    (root / "api").mkdir(exist_ok=True)
    (root / "api" / "app.py").write_text("def handler():\n    return 1\n")
    _git(root, home, "add", "api/app.py")


def test_a_deleted_state_branch_locks_everything_until_restored(tmp_path: Path) -> None:
    root, home = _started(tmp_path)
    tip = _git(root, home, "rev-parse", STATE).stdout.strip()
    _git(root, home, "branch", "-D", STATE)

    _stage_api(root, home)
    refused = _git(root, home, "commit", "-m", "api while the branch is gone", check=False)
    assert refused.returncode != 0, refused
    assert f"the state branch {STATE} is missing" in refused.stderr
    assert f"git update-ref refs/heads/{STATE} {tip}" in refused.stderr  # how to restore it

    write = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / "api/app.py"),
                                                content="x = 1\n"))
    assert write.denied and "gate api" in write.reason and "missing" in write.reason, write
    readme = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / "README.md"),
                                                 content="# notes\n"))
    assert not readme.denied, readme  # a file of no gate stays writable

    bare = tmp_path / "remote.git"
    run(["git", "init", "-q", "--bare", str(bare)], tmp_path, base_env(home))
    _git(root, home, "remote", "add", "origin", str(bare))
    _git(root, home, "commit", "-q", "--no-verify", "-m", "api, hook skipped")
    pushed = _git(root, home, "push", "origin", "main", check=False)
    assert pushed.returncode != 0 and "is missing" in pushed.stderr, pushed
    _git(root, home, "reset", "-q", "--soft", "HEAD~1")

    # Restored with the command the refusal printed: the ordinary lock is back in force.
    _git(root, home, "update-ref", f"refs/heads/{STATE}", tip)
    again = _git(root, home, "commit", "-m", "api", check=False)
    assert again.returncode != 0 and "is missing" not in again.stderr
    assert "gate api" in again.stderr and "schema" in again.stderr


def test_update_ref_d_with_a_remote_copy_says_sync(tmp_path: Path) -> None:
    root, home = _started(tmp_path)
    bare = tmp_path / "remote.git"
    run(["git", "init", "-q", "--bare", str(bare)], tmp_path, base_env(home))
    _git(root, home, "remote", "add", "origin", str(bare))
    assert _meridian(root, home, "sync").returncode == 0
    assert _git(root, home, "rev-parse", "--verify", f"refs/remotes/origin/{STATE}").stdout
    # Every local trace removed but the remote-tracking copy.
    _git(root, home, "update-ref", "-d", f"refs/heads/{STATE}")
    for cache in (root / ".git" / "meridian").glob("*"):
        if cache.is_file():
            cache.unlink()
    _stage_api(root, home)
    refused = _git(root, home, "commit", "-m", "api", check=False)
    assert refused.returncode != 0 and "meridian sync" in refused.stderr, refused
    assert _meridian(root, home, "sync").returncode == 0  # adopts the remote's branch
    assert _git(root, home, "rev-parse", "--verify", f"refs/heads/{STATE}").stdout


def test_a_fresh_clone_adopts_the_state_branch_before_committing_gate_files(
        tmp_path: Path) -> None:
    """A clone has the branch only as origin's copy: gate states are unknown until it is
    adopted, so a gate file's commit waits for `meridian sync`; other commits do not."""
    root, home = _started(tmp_path)
    bare = tmp_path / "remote.git"
    run(["git", "init", "-q", "--bare", str(bare)], tmp_path, base_env(home))
    _git(root, home, "remote", "add", "origin", str(bare))
    _git(root, home, "push", "-q", "origin", "main")
    assert _meridian(root, home, "sync").returncode == 0
    clone = tmp_path / "clone"
    run(["git", "clone", "-q", str(bare), str(clone)], tmp_path, base_env(home))
    assert _meridian(clone, home, "hooks", "install").returncode == 0
    _stage_api(clone, home)
    refused = _git(clone, home, "commit", "-m", "api", check=False)
    assert refused.returncode != 0 and "meridian sync" in refused.stderr, refused
    assert _meridian(clone, home, "sync").returncode == 0
    locked = _git(clone, home, "commit", "-m", "api", check=False)
    assert locked.returncode != 0 and "gate api" in locked.stderr and "missing" not in locked.stderr
