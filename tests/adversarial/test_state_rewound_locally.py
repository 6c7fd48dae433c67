"""Attack (rt4 F4): the human reopens a gate; the agent rewinds the state branch one
commit with plumbing (`git update-ref refs/heads/meridian/state meridian/state~1`).
`status` showed the gate passed, `gate start/submit` believed it, and `meridian sync`
pushed the older history as a fast-forward: the reopen was lost for every clone and
for CI, while the verified-tip marker and git's reflog both remembered the lost tip.

Layer: state derivation (`verify.rewound`, asked by status, the gate commands and
sync). Real git, a local bare remote.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from meridian import verify
from meridian.ledger import Ledger
from tests.adversarial.conftest import Proc, pass_gate
from tests.conftest import git

STATE = "refs/heads/meridian/state"


@pytest.fixture
def rewound(project: Path, remote: Path, cli: Callable[..., Proc]) -> tuple[Path, str]:
    """spec passed and synced; the human reopened it (and verified); the agent rewound."""
    pass_gate(cli, project, "spec", "spec/spec.py")
    git(project, "push", "-q", "origin", "main")
    assert cli("sync").code == 0
    assert cli("gate", "reopen", "spec", "--reason", "design review").code == 0
    assert cli("verify").code == 0  # the verified-tip marker names the reopen
    lost = git(project, "rev-parse", STATE).strip()
    git(project, "update-ref", STATE, f"{lost}~1")
    return project, lost


@pytest.mark.parametrize("evidence", ["marker and reflog", "reflog only", "marker only"])
def test_a_rewound_state_branch_is_not_believed_or_pushed(
        rewound: tuple[Path, str], remote: Path, cli: Callable[..., Proc], evidence: str) -> None:
    project, lost = rewound
    ledger = Ledger.open(project)
    if evidence == "reflog only":
        verify.cache_path(ledger).unlink()
    elif evidence == "marker only":
        (project / ".git" / "logs" / "refs" / "heads" / "meridian" / "state").unlink()
    remote_before = git(remote, "rev-parse", STATE).strip()

    status = cli("status", "--strict")
    assert status.code == 1, status
    assert f"rewound locally: commit {lost[:12]}" in status.err, status.err
    assert f"git update-ref {STATE} {lost}" in status.err

    for argv in (["gate", "start", "impl"], ["gate", "submit", "impl"]):
        refused = cli(*argv)
        assert refused.code == 2, (argv, refused)
        assert f"refusing to {argv[1]} impl: the state branch meridian/state was rewound" \
            in refused.err
        assert len(refused.err.strip().splitlines()) == 1

    synced = cli("sync")
    assert synced.code == 2, synced
    assert "nothing was pushed" in synced.err and lost[:12] in synced.err
    assert git(remote, "rev-parse", STATE).strip() == remote_before

    # the way back the message names: the reopen is there again, and reaches the remote
    git(project, "update-ref", STATE, lost)
    assert cli("status", "--strict").code == 0
    assert cli("sync").code == 0
    assert git(remote, "rev-parse", STATE).strip() == lost
    assert "reopen" in git(remote, "log", "-1", "--format=%B", STATE)


def test_a_tip_the_remote_still_has_comes_back_with_sync(
        project: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    """Rewound after the reopen was synced: sync fast-forwards to the remote's tip, so the
    lost tip is on the branch again and nothing is refused."""
    pass_gate(cli, project, "spec", "spec/spec.py")
    assert cli("gate", "reopen", "spec", "--reason", "design review").code == 0
    assert cli("sync").code == 0
    lost = git(project, "rev-parse", STATE).strip()
    git(project, "update-ref", STATE, f"{lost}~1")
    assert cli("sync").code == 0
    assert git(project, "rev-parse", STATE).strip() == lost
    shown = cli("status")
    assert shown.code == 0 and "rewound" not in shown.err
    assert any(line.split()[1:3] == ["spec", "in_progress"] for line in shown.out.splitlines()
               if len(line.split()) > 2), shown.out  # the reopen counts again
