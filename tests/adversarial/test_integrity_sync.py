"""Attack: rewrite the shared state branch on the remote and let every clone adopt it.

Layer: state derivation at sync (``meridian.sync.check_remote``): the remote's history is
verified before anything of it is adopted; a rewind or an in-place edit is refused with
the commit named, and no clone's branch moves.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.adversarial.conftest import Proc
from tests.conftest import git

STATE = "meridian/state"


def _tip(repo: Path, ref: str = STATE) -> str:
    return git(repo, "rev-parse", ref).strip()


def _setup(project: Path, remote: Path, cli: Callable[..., Proc], tmp_path: Path) -> Path:
    assert cli("gate", "start", "spec").code == 0
    assert cli("sync").code == 0
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
    git(other, "fetch", "-q", "origin", f"{STATE}:{STATE}")
    return other


def _rewrite_remote_in_place(other: Path, remote: Path) -> str:
    """In another clone: edit a stored record in place, commit, force-push."""
    git(other, "checkout", "-q", STATE)
    shard = next((other / "events").rglob("*.jsonl"))
    shard.write_text(shard.read_text().replace('"gate":"spec"', '"gate":"impl"', 1))
    git(other, "commit", "-q", "-am", "tidy")
    forged = _tip(other, "HEAD")
    git(other, "push", "-q", "--force", "--no-verify", "origin", f"HEAD:{STATE}")
    return forged


def test_sync_refuses_a_remote_that_edited_a_record_and_changes_nothing(
        project: Path, remote: Path, cli: Callable[..., Proc], tmp_path: Path) -> None:
    other = _setup(project, remote, cli, tmp_path)
    assert cli("gate", "submit", "spec").code in (0, 2)  # a local record the remote lacks
    local_before = _tip(project)
    forged = _rewrite_remote_in_place(other, remote)
    result = cli("sync")
    assert result.code == 2, result
    assert forged[:12] in result.err and "nothing was adopted" in result.err
    assert _tip(project) == local_before
    assert _tip(remote) == forged  # nothing was pushed over it either
    assert cli("verify").code == 0


def test_sync_refuses_a_rewound_remote(project: Path, remote: Path, cli: Callable[..., Proc],
                                       tmp_path: Path) -> None:
    other = _setup(project, remote, cli, tmp_path)
    seen = _tip(project, f"origin/{STATE}")
    older = _tip(project, f"{STATE}~1")
    git(other, "push", "-q", "--force", "--no-verify", "origin", f"{older}:refs/heads/{STATE}")
    local_before = _tip(project)
    result = cli("sync")
    assert result.code == 2, result
    assert "rewound or rewritten" in result.err and seen[:12] in result.err
    assert _tip(project) == local_before
    assert _tip(project, f"origin/{STATE}") == seen  # still what was verified
