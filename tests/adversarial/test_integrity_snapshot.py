"""Attack: make `meridian status` show a gate passed that never passed on the state
branch, by writing the gate snapshot cache (``.git/meridian/gate-snapshot-<branch>.json``)
by hand, its key (the branch tip) and checksums matching, and its pass claimed on a
commit the forger made with plumbing but never put on the branch (a dangling commit
that adds a consistent pass and its made-up verdict).

Layer: state derivation (``gates/snapshot.vouch``). A cached pass counts only when the
commit its claim names is on the branch (an ancestor of the tip the snapshot is keyed
by) and added that record, consistent with its verdict; otherwise the fold is done
again from the root. ``verify`` and pre-push never see the dangling commit; ``status``
must not either.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from meridian import gitio
from meridian.gates import snapshot as snapshot_module
from tests.adversarial.conftest import Proc, commit_all, write
from tests.adversarial.integrity_support import STATE, forge_pass
from tests.adversarial.test_integrity_fake_verdict import FAILING_CHECK, states, with_check
from tests.conftest import git


def test_a_snapshot_claiming_a_pass_on_a_commit_off_the_branch_shows_nothing_passed(
        project: Path, cli: Callable[..., Proc]) -> None:
    with_check(project, '"spec/**"', FAILING_CHECK)  # spec can never really pass
    write(project, "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    commit_all(project, "spec")
    assert cli("gate", "start", "spec").code == 0
    assert states(cli)["spec"] == "in_progress"  # the snapshot is written
    tip = git(project, "rev-parse", STATE).strip()
    # The forgery lives on a side ref the forger then deletes: the dangling commit stays
    # in the object database, the state branch never moves.
    git(project, "update-ref", "refs/heads/forger", tip)
    dangling = forge_pass(project, "spec", branch="forger")
    repo = gitio.open_repo(str(project))
    side = snapshot_module.load_snapshot(repo, "forger", use_cache=False)
    assert side.folds["spec"]["phase"] == "passed"
    git(project, "update-ref", "-d", "refs/heads/forger")
    git(project, "reflog", "expire", "--expire=now", "--all")
    assert git(project, "rev-parse", STATE).strip() == tip
    # Rewrite the state branch's snapshot: the side fold and claims, keyed by the real tip.
    path = snapshot_module.cache_path(repo, STATE)
    document = json.loads(path.read_text())
    document["folds"]["spec"] = side.folds["spec"]
    document["aux"]["claims"] = side.claims
    assert side.claims["spec"]["pass"][1] == dangling
    document["checksum"] = snapshot_module._checksum(
        document["tip"], document["last_ts"], document["fields"], document["folds"])
    document["aux_checksum"] = snapshot_module._aux_checksum(document["tip"], document["aux"])
    path.write_text(json.dumps(document, sort_keys=True))
    assert snapshot_module._read_cache(path) is not None  # a cache Meridian would read

    shown = states(cli)
    assert shown["spec"] != "passed", shown
    assert shown["impl"] != "passed" and cli("gate", "start", "impl").code != 0
    assert cli("verify", "--full").code == 0  # the branch itself is intact
