"""Attack: hide tampering from the local checks by editing what they cache.

Layer: state derivation (``meridian.verify``): the verified-tip marker is a cache (the
reflog is read too), and tampering found once is kept in ``.git/meridian`` until a
human acknowledges it, recorded. The hooks' gate snapshot is recomputed when its
checksum does not match (``gates/snapshot.py``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.ledger import Ledger
from meridian.verify import cache_path
from tests.adversarial.conftest import Proc
from tests.conftest import git

STATE = "refs/heads/meridian/state"


def _rewrite(project: Path) -> None:
    ledger = Ledger.open(project)
    ledger.emit("gate.started", {"gate": "spec"})
    ledger.emit("gate.reopened", {"gate": "spec", "reason": "x"})
    git(project, "update-ref", STATE, "meridian/state~2")
    ledger.emit("gate.started", {"gate": "spec", "estimate_hours": 1.0})


class _Terminal:
    def isatty(self) -> bool:
        return True


def test_a_rewrite_is_caught_with_the_marker_deleted_and_survives_verify_full(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("verify").code == 0
    _rewrite(project)
    cache_path(Ledger.open(project)).unlink()  # the agent deletes the verified-tip marker
    first = cli("verify")
    assert first.code == 1 and "history rewritten" in first.out
    full = cli("verify", "--full")
    assert full.code == 1 and "history rewritten" in full.out
    warned = cli("status").err  # the rewind itself, said as such since verify.rewound
    assert "was rewritten locally" in warned or "tampering found earlier" in warned, warned
    # An agent cannot acknowledge it: no terminal.
    refused = cli("verify", "--acknowledge", "it was me")
    assert refused.code == 2 and "needs a terminal" in refused.err
    monkeypatch.setattr(sys, "stdin", _Terminal())
    acknowledged = cli("verify", "--acknowledge", "restored from a trusted clone")
    assert acknowledged.code == 0 and "acknowledged: " in acknowledged.out
    events = [r for r in Ledger.open(project).records() if r.kind == "tamper.acknowledged"]
    assert events and events[0].data["reason"] == "restored from a trusted clone"
    after = cli("status").err
    assert "tampering found earlier" not in after and "rewritten locally" not in after, after


def test_a_marker_pointed_at_a_foreign_commit_is_tampering(project: Path,
                                                           cli: Callable[..., Proc]) -> None:
    ledger = Ledger.open(project)
    ledger.emit("gate.started", {"gate": "spec"})
    assert cli("verify").code == 0
    git(project, "commit", "-q", "--allow-empty", "-m", "code")
    cache_path(ledger).write_text(git(project, "rev-parse", "HEAD"))
    result = cli("verify")
    assert result.code == 1 and "history rewritten" in result.out


def test_a_poisoned_gate_snapshot_does_not_unlock_a_gate(project: Path,
                                                         cli: Callable[..., Proc]) -> None:
    from meridian import gitio
    from meridian.gates import snapshot

    assert cli("hooks", "install").code == 0
    snapshot.load_snapshot(gitio.open_repo(project), "meridian/state")
    path = snapshot.cache_path(gitio.open_repo(project), "meridian/state")
    document = json.loads(path.read_text())
    document["folds"]["spec"] = {**document["folds"].get("spec", {}), "phase": "passed"}
    path.write_text(json.dumps(document))  # a hand edit, checksum left as it was
    (project / "src").mkdir()
    (project / "src" / "area.py").write_text("X = 1\n")
    git(project, "add", "src/area.py")
    committed = subprocess_commit(project)
    assert committed != 0  # impl is still locked: the poisoned fold was recomputed


def subprocess_commit(root: Path) -> int:
    import subprocess

    return subprocess.run(["git", "commit", "-q", "-m", "impl"], cwd=root,
                          capture_output=True, check=False).returncode


@pytest.mark.parametrize("how", [
    ["update-ref", STATE, "meridian/state~2"],
    ["-c", "core.logAllRefUpdates=false", "update-ref", STATE, "meridian/state~2"],
    ["-c", "core.logAllRefUpdates=false", "update-ref", "--no-create-reflog", STATE,
     "meridian/state~2"],
])
def test_a_rewind_cannot_pass_for_a_write_that_never_landed(
        project: Path, cli: Callable[..., Proc], how: list[str]) -> None:
    """A line logged by a writer killed before its ref moved is skipped by the reflog
    check; a rewind made with git commands is always logged from the tip it replaced
    (git and libgit2 append to an existing reflog whatever core.logAllRefUpdates says),
    so it cannot take that shape."""
    ledger = Ledger.open(project)
    ledger.emit("gate.started", {"gate": "spec"})
    ledger.emit("gate.reopened", {"gate": "spec", "reason": "x"})
    assert cli("verify").code == 0
    git(project, *how)
    Ledger.open(project).emit("gate.started", {"gate": "spec", "estimate_hours": 1.0})
    cache_path(Ledger.open(project)).unlink()
    result = cli("verify")
    assert result.code == 1 and "history rewritten" in result.out
