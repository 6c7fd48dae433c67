"""Attack: get events folded in an order that leaves a pass standing after a reopen.

Layer: state derivation (``meridian.gates.evidence.gate_history`` and the fold in
``gates/state.py``). Gate events fold in ledger order: the order of the commits that
added them, never their timestamps, and never an order read from a cache under
``.git/meridian`` that was not shown true. A passed gate whose need was taken back
later *in ledger order* is stale, however the records were stamped.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.gates import evidence
from meridian.ledger import Ledger
from tests.adversarial.conftest import Proc, commit_all, pass_gate, run_git, write
from tests.adversarial.integrity_support import event_line, forge_pass, plumb_commit, shard_of
from tests.adversarial.test_integrity_fake_verdict import states
from tests.conftest import git

SPEC = '"""Spec."""\nSIDES = 2\n'
FUTURE = {"GIT_COMMITTER_DATE": "4070908800 +0000", "GIT_AUTHOR_DATE": "4070908800 +0000"}


def _order_cache(root: Path) -> Path:
    return root / ".git" / "meridian" / "gate-history-meridian__state.json"


def _gate_ids(root: Path, gate: str, kind: str) -> list[str]:
    return [r.id for r in Ledger.open(root).records() if r.gate == gate and r.kind == kind]


@pytest.mark.parametrize("route", ["sizes", "cached walk"])
def test_a_poisoned_order_cache_does_not_fold_a_pass_after_its_reopen(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch,
        route: str) -> None:
    """The order comes from the shards' sizes (no cache at all) or, where shards did not
    only grow, from a walk whose cache is used only once shown true. Either way a cache
    listing the reopen before the pass (or attributing it to the pass's commit) is no
    order the fold uses."""
    if route == "cached walk":
        monkeypatch.setattr(evidence, "_order_by_sizes", lambda ledger, tip: None)
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    assert cli("gate", "reopen", "spec", "--reason", "wrong").code == 0
    assert states(cli)["spec"] == "in_progress"
    ledger = Ledger.open(project)
    tip = str(ledger.tip())
    order = [list(entry) for entry in evidence._walk_order(ledger, ledger.tip(), [], set())]
    [passed] = _gate_ids(project, "spec", "gate.passed")
    [reopened] = _gate_ids(project, "spec", "gate.reopened")
    ids = [entry[0] for entry in order]
    assert ids.index(passed) < ids.index(reopened)
    pass_entry, reopen_entry = order[ids.index(passed)], order[ids.index(reopened)]
    without = [entry for entry in order if entry[0] != reopened]
    at = without.index(pass_entry)
    swapped = without[:at] + [reopen_entry] + without[at:]  # the reopen listed first
    # ... and also attributed to the pass's own commit, so commits stay in walk order.
    reattributed = without[:at] + [[reopened, pass_entry[1]]] + without[at:]
    path = _order_cache(project)
    for poisoned in (swapped, reattributed):
        path.write_text(json.dumps({"version": evidence.HISTORY_VERSION, "tip": tip,
                                    "order": poisoned}))
        assert states(cli)["spec"] == "in_progress"  # (status reads the gate snapshot)
        # gate start folds from the root: the order it uses is the branch's own
        assert cli("gate", "start", "impl").code == 2  # the dependant stays locked
        if route == "cached walk":
            fixed = [entry[0] for entry in json.loads(path.read_text())["order"]]
            assert fixed.index(passed) < fixed.index(reopened)  # rewritten true


def test_the_order_from_sizes_is_the_walks_order(project: Path,
                                                 cli: Callable[..., Proc]) -> None:
    """The cheap route (object sizes and prefix hashes) gives the diff walk's answer."""
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    pass_gate(cli, project, "impl", "src/area.py")
    assert cli("gate", "reopen", "spec", "--reason", "again").code == 0
    forge_pass(project, "release")
    ledger = Ledger.open(project)
    fast = evidence._order_by_sizes(ledger, ledger.tip())
    assert fast is not None
    position, commit_of = fast
    walked = [entry for entry in evidence._walk_order(ledger, ledger.tip(), [], set())
              if entry[0] in position]
    assert sorted(position, key=position.__getitem__) == [rid for rid, _ in walked]
    assert commit_of == dict(walked)


def test_a_shard_edited_in_place_is_walked_not_sized(project: Path,
                                                     cli: Callable[..., Proc]) -> None:
    """Swapping the pass and the reopen lines in place (same sizes): the prefix hashes
    no longer match, so the order comes from the walk, which keeps each line at the
    commit that first added it; verify reports the edit."""
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    assert cli("gate", "reopen", "spec", "--reason", "wrong").code == 0
    ledger = Ledger.open(project)
    [(shard, data)] = [(p, ledger.read(p)) for p in ledger.shards("events")
                       if b"gate.reopened" in (ledger.read(p) or b"")]
    lines = data.split(b"\n")
    one = next(i for i, line in enumerate(lines) if b'"gate.passed"' in line)
    two = next(i for i, line in enumerate(lines) if b'"gate.reopened"' in line)
    lines[one], lines[two] = lines[two], lines[one]
    full = {**os.environ, "GIT_INDEX_FILE": str(project / ".git" / "swap-index")}
    assert run_git(project, "read-tree", "meridian/state", env=full).code == 0
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=project, env=full,
                          input=b"\n".join(lines), capture_output=True, check=True
                          ).stdout.decode().strip()
    assert run_git(project, "update-index", "--cacheinfo", f"100644,{blob},{shard}",
              env=full).code == 0
    tree = run_git(project, "write-tree", env=full).out.strip()
    commit = run_git(project, "commit-tree", tree, "-p", "meridian/state", "-m", "tidy",
                env=full).out.strip()
    git(project, "update-ref", "refs/heads/meridian/state", commit)
    assert evidence._order_by_sizes(ledger, ledger.tip()) is None
    assert states(cli)["spec"] == "in_progress"
    assert cli("verify").code == 1


def test_a_pass_stamped_in_2099_is_stale_once_its_need_is_redone(
        project: Path, cli: Callable[..., Proc]) -> None:
    """impl's pass is stamped (and its commit dated) 2099: by timestamps it would stay
    'after' any reopen of spec. By ledger order it came before, so it is stale."""
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    write(project, "src/area.py", '"""Area."""\n\ndef area(w, h):\n    return w * h\n')
    commit_all(project, "impl")
    assert cli("gate", "start", "impl").code == 0
    forge_pass(project, "impl", ts="2099-01-01T00:00:00.000000Z", env=FUTURE)
    assert states(cli)["impl"] == "passed"
    assert cli("gate", "reopen", "spec", "--reason", "redo").code == 0
    assert cli("gate", "submit", "spec").code == 0
    impl = next(g for g in json.loads(cli("status", "--json").out)["gates"]
                if g["gate"] == "impl")
    assert (impl["state"], impl["stale_needs"]) == ("stale", "needs spec reopened")
    assert cli("gate", "start", "release").code == 2


def test_a_replayed_pass_after_a_reopen_does_not_count(project: Path,
                                                       cli: Callable[..., Proc]) -> None:
    """Copy the old gate.passed line back onto the branch after the reopen (its verdict is
    already there: documents never change). A record's place is the commit that first
    added it, so the replay folds where the original did: before the reopen."""
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    ledger = Ledger.open(project)
    [original] = [r for r in ledger.records() if r.kind == "gate.passed"]
    assert cli("gate", "reopen", "spec", "--reason", "redo").code == 0
    plumb_commit(project, {shard_of(original.ts): (original.line() + "\n").encode()},
                 "gate.passed spec")
    assert states(cli)["spec"] == "in_progress"
    verify = cli("verify", "--full")
    assert verify.code == 1 and "duplicates a record" in verify.out


def test_a_new_pass_naming_an_already_used_verdict_is_forged(
        project: Path, cli: Callable[..., Proc]) -> None:
    """The replay with a fresh id and time: it names the old verdict, which an earlier
    commit wrote, so it is not backed by a verdict written with it."""
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    ledger = Ledger.open(project)
    [original] = [r for r in ledger.records() if r.kind == "gate.passed"]
    assert cli("gate", "reopen", "spec", "--reason", "redo").code == 0
    _, line = event_line("gate.passed", dict(original.data))
    plumb_commit(project, {shard_of(original.ts): (line + "\n").encode()}, "gate.passed spec")
    assert states(cli)["spec"] == "forged"
    why = cli("why", "spec").out
    assert "written by an earlier commit" in why


def test_past_dated_state_commits_fold_in_ledger_order(project: Path,
                                                       cli: Callable[..., Proc]) -> None:
    """A reopen whose record and commit are dated 2001, appended after the pass, still
    takes the pass back: its place in the ledger is what counts."""
    pass_gate(cli, project, "spec", "spec/spec.py", SPEC)
    pass_gate(cli, project, "impl", "src/area.py")
    ts = "2001-01-01T00:00:00.000000Z"
    _, line = event_line("gate.reopened", {"gate": "spec", "reason": "again",
                                           "base_commit": git(project, "rev-parse",
                                                              "HEAD").strip()}, ts)
    plumb_commit(project, {shard_of(ts): (line + "\n").encode()}, "gate.reopened spec",
                 env={"GIT_COMMITTER_DATE": "978307200 +0000",
                      "GIT_AUTHOR_DATE": "978307200 +0000"})
    got = states(cli)
    assert got["spec"] == "in_progress" and got["impl"] == "stale"
