"""The gate snapshot caught up over ``gate.blocked`` events without the gates package.

Layer: state derivation for the hooks (``meridian.gates.snapshot._catch_up_blocks``).
Every hook refusal appends a block, and the next commit catches the snapshot up: that
must cost no pydantic, yaml or gate graph, and give exactly the folds a fold from the
root gives, whatever the blocks name (a known gate, one the fold has not seen, none)
and whatever is done to them (a replayed line, a line whose id is not its own).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian import gitio
from meridian.gates import events
from meridian.gates import snapshot as snap
from meridian.gates.state import GateFold
from meridian.ledger import EVENTS, Ledger
from tests.adversarial.conftest import CHAIN, Proc, commit_all, write


@pytest.fixture
def project(repo_with_commit: Path, cli: Callable[..., Proc]) -> Path:
    assert cli("init", "--no-hooks").code == 0
    write(repo_with_commit, ".meridian/gates.yaml", CHAIN)
    commit_all(repo_with_commit, "meridian setup")
    assert cli("gate", "start", "spec").code == 0
    return repo_with_commit


def _ledger(root: Path) -> Ledger:
    return Ledger(gitio.open_repo(root))


def _stored_ids(ledger: Ledger) -> list[int]:
    """Every hashed id the stored snapshot has seen: its .ids file and its tail."""
    path = snap.cache_path(ledger.repo, ledger.branch)
    aux = json.loads(path.read_text())["aux"]
    ids = snap._read_ids(path, aux["ids"])
    assert ids is not None
    return sorted([*ids, *aux.get("ids_tail", [])])


def _same_as_the_root(root: Path) -> snap.Snapshot:
    ledger = _ledger(root)
    caught_up = snap.load_snapshot(ledger.repo, ledger.branch)
    seen = _stored_ids(ledger)
    recomputed = snap.load_snapshot(ledger.repo, ledger.branch, use_cache=False)
    assert caught_up.folds == recomputed.folds
    assert caught_up.last_ts == recomputed.last_ts and caught_up.floors == recomputed.floors
    assert recomputed.ids is not None and recomputed.ids_tail == []
    assert seen == list(recomputed.ids) == _stored_ids(ledger)
    return caught_up


def _block(root: Path, **data: object) -> None:
    _ledger(root).emit(events.BLOCKED, {"source": "pre-commit", "reason": "r", **data})


def test_the_fold_fields_are_the_gates_packages() -> None:
    assert snap.FOLD_FIELDS == [f.name for f in dataclasses.fields(GateFold)]
    assert snap.BLOCKED == events.BLOCKED


def test_blocks_fold_as_from_the_root(project: Path) -> None:
    _same_as_the_root(project)  # the snapshot at the current tip
    _block(project, gate="spec")
    assert _same_as_the_root(project).source == "incremental"
    for data in ({"gate": "spec", "files": ["spec/a.md"]}, {}, {"gate": ""},
                 {"gate": "impl"},  # a gate the fold has not seen: the general path
                 {"gate": "impl"}, {"gate": "nobody"}):
        _block(project, **data)
        assert _same_as_the_root(project).source == "incremental"
    _ledger(project).emit("test.note", {"n": 1})  # a kind no fold reads
    _block(project, gate="spec")
    assert _same_as_the_root(project).source == "incremental"
    folds = snap.load_snapshot(gitio.open_repo(project), "meridian/state").folds
    assert folds["spec"]["blocks"] == 3 and folds["impl"]["blocks"] == 2


def _append_raw(root: Path, line: bytes) -> None:
    ledger = _ledger(root)
    repo = ledger.repo
    target = ledger.shards(EVENTS)[-1]
    tip = ledger.tip()
    assert tip is not None
    blob = gitio.write_blob(repo, (ledger.read(target) or b"") + line + b"\n")
    tree = gitio.update_tree(repo, gitio.commit_tree(repo, tip), {target: blob})
    gitio.set_ref(repo, ledger.refname, gitio.write_commit(repo, tree, [tip], "raw\n"),
                  expected=tip)


def _last_block_line(root: Path) -> bytes:
    return [line for _, _, line in _ledger(root).lines(EVENTS)
            if json.loads(line)["kind"] == events.BLOCKED][-1]


@pytest.mark.parametrize("attack", ["replayed", "id not its own", "not json"])
def test_a_tampered_block_is_folded_from_the_root(project: Path, attack: str) -> None:
    _block(project, gate="spec")
    _same_as_the_root(project)
    line = _last_block_line(project)
    if attack == "id not its own":
        raw = json.loads(line)
        raw["data"]["reason"] = "edited"
        line = json.dumps(raw, separators=(",", ":")).encode()
    elif attack == "not json":
        line = b'{"id": "' + b"0" * 32 + b'", "kind": "gate.blocked"'
    _append_raw(project, line)
    ledger = _ledger(project)
    if attack == "not json":
        with pytest.raises(Exception, match="corrupt record"):
            snap.load_snapshot(ledger.repo, ledger.branch)
        return
    assert snap.load_snapshot(ledger.repo, ledger.branch).source == "full"
    _same_as_the_root(project)


def test_a_catch_up_over_blocks_imports_no_gates_package(project: Path) -> None:
    _same_as_the_root(project)
    _block(project, gate="spec")
    code = ("import sys; from meridian import gitio; from meridian.gates import snapshot; "
            "s = snapshot.load_snapshot(gitio.open_repo('.'), 'meridian/state'); "
            "print(s.source, s.folds['spec']['blocks'], sorted(m for m in "
            "('pydantic', 'yaml', 'meridian.gates.state', 'meridian.config') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["incremental", "1", "[]"], out


def test_the_ids_tail_is_merged_into_the_file_once_long(project: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snap, "IDS_TAIL", 2)
    ledger = _ledger(project)
    snap.load_snapshot(ledger.repo, ledger.branch, use_cache=False)
    path = snap.cache_path(ledger.repo, ledger.branch)
    ids_file = path.with_suffix(".ids")
    first = ids_file.read_bytes()
    tails = []
    for n in range(3):
        _block(project, gate="spec", reason=f"r{n}")
        assert snap.load_snapshot(ledger.repo, ledger.branch).source == "incremental"
        tails.append(len(json.loads(path.read_text())["aux"]["ids_tail"]))
        assert (ids_file.read_bytes() == first) == (n < 2), n
    assert tails == [1, 2, 0]  # the third id merges the tail into the file
    seen = _stored_ids(ledger)
    recomputed = snap.load_snapshot(ledger.repo, ledger.branch, use_cache=False)
    assert recomputed.ids is not None and seen == list(recomputed.ids)


def test_a_tail_naming_an_id_is_a_replay(project: Path) -> None:
    """An id already in the tail (not yet in the file) is seen as well as one in it."""
    _block(project, gate="spec")
    ledger = _ledger(project)
    snap.load_snapshot(ledger.repo, ledger.branch, use_cache=False)
    _block(project, gate="spec", reason="second")
    assert snap.load_snapshot(ledger.repo, ledger.branch).source == "incremental"
    assert len(json.loads(snap.cache_path(ledger.repo, ledger.branch).read_text())
               ["aux"]["ids_tail"]) == 1
    _append_raw(project, _last_block_line(project))  # the second block again
    assert snap.load_snapshot(ledger.repo, ledger.branch).source == "full"
    _same_as_the_root(project)
