"""State read through the gate snapshot is exactly state folded from the root.

``status``, ``gate show``, ``why`` and ``health`` read ``meridian.gates.snapshot`` (the
cached fold, caught up with what was appended since). The rules of
``meridian.gates.evidence`` must hold identically with it: here a realistic history is
built step by step (genuine passes, a forged pass, a replayed old pass line, reopens
that make dependants stale, a record stamped in another month, a threshold raised above
a counted pass, harness changes, non-gate appends) and after every step the statuses
derived with and without the snapshot are compared, and so are the harness changes
status shows.

The second part attacks the snapshot file itself (layer: state derivation for local
reads; pre-push and ``meridian ci`` fold from the root, see docs/security.md).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian import gitio, harness
from meridian.gates import snapshot as snap
from meridian.gates.graph import load_graph
from meridian.gates.state import derive_states
from meridian.ledger import EVENTS, Ledger, Write
from tests.adversarial.conftest import CHAIN, CLEAN_MODULE, Proc, commit_all, pass_gate, write


@pytest.fixture
def project(repo_with_commit: Path, cli: Callable[..., Proc]) -> Path:
    """An initialised project (no hooks) with the spec -> impl -> release chain."""
    assert cli("init", "--no-hooks").code == 0
    write(repo_with_commit, ".meridian/gates.yaml", CHAIN)
    commit_all(repo_with_commit, "meridian setup")
    return repo_with_commit


def _statuses(root: Path, folds: object = None) -> dict[str, dict]:
    ledger = Ledger.open(root)
    graph = load_graph(root)
    return {g: s.to_json() for g, s in derive_states(ledger, graph, folds=folds).items()}  # type: ignore[arg-type]


class Checker:
    """Compares the snapshot's answer with the fold from the root after each step."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sources: list[str] = []

    def __call__(self, step: str) -> dict[str, dict]:
        ledger = Ledger.open(self.root)
        graph = load_graph(self.root)
        cached = snap.trusted_snapshot(ledger)
        self.sources.append(cached.source)
        via_snapshot = _statuses(self.root, cached.gate_folds(graph))
        from_root = _statuses(self.root)
        assert via_snapshot == from_root, step
        # A second read (from the cache, tip unchanged) says the same.
        again = snap.trusted_snapshot(ledger)
        assert again.source == "cache", step
        assert _statuses(self.root, again.gate_folds(graph)) == from_root, step
        recomputed = snap.load_snapshot(ledger.repo, ledger.branch, use_cache=False)
        assert recomputed.folds == cached.folds and recomputed.floors == cached.floors, step
        shown = [dataclasses.astuple(_key(r)) for r in snap.recent_harness(ledger)]
        assert shown == [dataclasses.astuple(_key(r)) for r in harness.recent(ledger)], step
        return from_root


@dataclasses.dataclass
class _Key:
    id: str
    ts: str
    data: str


def _key(record: object) -> _Key:
    return _Key(record.id, record.ts, json.dumps(record.data, sort_keys=True))  # type: ignore[attr-defined]


def _append_raw(root: Path, lines: list[bytes], shard: str | None = None) -> None:
    """Append raw lines to the newest events shard (or ``shard``) with plumbing: what an
    agent replaying an old line does."""
    ledger = Ledger.open(root)
    repo = ledger.repo
    target = shard or ledger.shards(EVENTS)[-1]
    tip = ledger.tip()
    assert tip is not None
    base = gitio.commit_tree(repo, tip)
    old = ledger.read(target) or b""
    blob = gitio.write_blob(repo, old + b"".join(line + b"\n" for line in lines))
    tree = gitio.update_tree(repo, base, {target: blob})
    commit = gitio.write_commit(repo, tree, [tip], "replayed\n")
    gitio.set_ref(repo, ledger.refname, commit, expected=tip)


def _line_of(root: Path, kind: str, gate: str) -> bytes:
    ledger = Ledger.open(root)
    for _, _, line in ledger.lines(EVENTS):
        record = json.loads(line)
        if record["kind"] == kind and record["data"].get("gate") == gate:
            return line
    raise AssertionError(f"no {kind} of {gate}")


def test_state_through_the_snapshot_equals_state_from_the_root(
        project: Path, cli: Callable[..., Proc]) -> None:
    check = Checker(project)
    check("empty")
    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    assert check("spec passed")["spec"]["state"] == "passed"
    pass_gate(cli, project, "impl", "src/area.py")
    assert check("impl passed")["impl"]["state"] == "passed"

    # A forged pass of release: no verdict document.
    ledger = Ledger.open(project)
    ledger.emit("gate.started", {"gate": "release"})
    write(project, "release/notes.py", CLEAN_MODULE)
    commit_all(project, "release notes")
    ledger.emit("gate.passed", {"gate": "release", "verdict": "verdicts/release/made-up.json",
                                "overall": 10.0, "threshold": 7.0, "evaluator": "heuristic",
                                "subject": "0" * 40})
    assert check("forged release")["release"]["state"] == "forged"

    # Reopen spec: impl (passed after it) is stale, "needs spec reopened".
    assert cli("gate", "reopen", "spec", "--reason", "redo the spec").code == 0
    states = check("spec reopened")
    assert states["impl"]["state"] == "stale" and states["impl"]["stale_needs"]

    # The old pass line of spec replayed after the reopen (a line seen before).
    _append_raw(project, [_line_of(project, "gate.passed", "spec")])
    assert check("replayed pass")["spec"]["state"] != "passed"

    # spec passes again; impl stays stale (its need was taken back after it passed).
    write(project, "spec/spec.py", '"""Spec, again."""\nSIDES = 4\n')
    commit_all(project, "spec again")
    assert cli("gate", "submit", "spec").code == 0
    assert check("spec passed again")["impl"]["state"] == "stale"

    # A record stamped in another month (stored in an older shard), and appends that
    # touch no gate (memory, a plain event).
    early = ledger.record("gate.blocked", {"gate": "impl", "source": "gate",
                                           "reason": "from a clock set back"},
                          ts="2001-01-01T00:00:00.000000Z")
    ledger.commit(Write(summary="early").add(EVENTS, early))
    check("backdated block")
    assert cli("memory", "add", "semantic", "--json",
               '{"text": "Write the failing test first.", "confidence": 0.6}').code == 0
    ledger.emit("baseline.note", {"detail": "not about a gate"})
    check("non-gate appends")

    # Raise impl's threshold above the one its counted pass was judged against, then a
    # gate command records the harness change (harness.changed).
    gates = (project / ".meridian" / "gates.yaml").read_text().replace(
        'artifacts: ["src/**"]', 'artifacts: ["src/**"]\n    evaluate: {threshold: 9.5}')
    write(project, ".meridian/gates.yaml", gates)
    commit_all(project, "raise impl's bar")
    cli("gate", "start", "impl")
    states = check("threshold raised")

    # More harness changes than status shows, with events in between.
    for n in range(4):
        write(project, ".meridian/gates.yaml", gates + f"# revision {n}\n")
        commit_all(project, f"harness revision {n}")
        cli("gate", "reopen", "release", "--reason", f"round {n}")
        states = check(f"harness revision {n}")

    # Most steps were answered by catching the cached fold up, not by folding from the
    # root (which would make this test prove nothing about the incremental path).
    assert check.sources.count("incremental") >= len(check.sources) - 2, check.sources
    assert states["impl"]["state"] == "forged"  # below the raised threshold, both ways


# --- the snapshot file attacked -------------------------------------------------------


def _document(root: Path) -> tuple[Path, dict]:
    path = snap.cache_path(gitio.open_repo(root), "meridian/state")
    return path, json.loads(path.read_text())


def _rechecksum(document: dict) -> dict:
    document["checksum"] = snap._checksum(document["tip"], document["last_ts"],
                                          document["fields"], document["folds"])
    document["aux_checksum"] = snap._aux_checksum(document["tip"], document["aux"])
    return document


@pytest.mark.parametrize("damage", ["unparsable", "wrong key", "checksum", "ids"])
def test_a_damaged_snapshot_is_recomputed(project: Path, cli: Callable[..., Proc],
                                          damage: str) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    truth = Checker(project)("before")
    path, document = _document(project)
    if damage == "unparsable":
        path.write_text(path.read_text()[:-10])
    elif damage == "wrong key":
        document["tip"] = "0" * 40
        document["folds"]["impl"] = {**document["folds"]["spec"]}
        path.write_text(json.dumps(_rechecksum(document)))
    elif damage == "checksum":
        document["folds"]["impl"] = {**document["folds"]["spec"]}
        path.write_text(json.dumps(document))
    else:
        path.with_suffix(".ids").write_bytes(b"\0" * 8)
    assert cli("gate", "start", "impl").code == 0  # ids are read when gate events follow
    ledger = Ledger.open(project)
    loaded = snap.trusted_snapshot(ledger)
    assert loaded.source == "full", damage
    assert _statuses(project, loaded.gate_folds(load_graph(project))) == _statuses(project)
    assert truth["impl"]["state"] == "open"


def test_a_rechecksummed_snapshot_claiming_a_pass_is_not_believed(
        project: Path, cli: Callable[..., Proc]) -> None:
    """Every fold rewritten ``passed`` (copied from the real pass of spec, claims and all)
    with the key and checksums recomputed: status, why and gate show re-check each
    claimed pass on the commit that added it, and fold from the root instead."""
    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    assert cli("gate", "start", "impl").code == 0
    assert cli("status").code == 0  # the snapshot is current
    path, document = _document(project)
    for gate in ("impl", "release"):
        document["folds"][gate] = {**document["folds"]["spec"]}
        document["aux"]["claims"][gate] = document["aux"]["claims"]["spec"]
    path.write_text(json.dumps(_rechecksum(document)))
    assert snap.load_snapshot(gitio.open_repo(project), "meridian/state").phase("impl") == "passed"
    shown = {g["gate"]: g["state"] for g in json.loads(cli("status", "--json").out)["gates"]}
    assert shown == {"spec": "passed", "impl": "in_progress", "release": "locked"}, shown
    assert cli("why", "release").out.startswith("release: locked")
    assert cli("gate", "show", "impl").out.startswith("impl: in_progress")
    # ...and the snapshot was rewritten true.
    assert snap.load_snapshot(gitio.open_repo(project), "meridian/state").phase("impl") == \
        "in_progress"


def test_the_limit_a_snapshot_hiding_a_later_reopen(project: Path,
                                                    cli: Callable[..., Proc]) -> None:
    """What vouching cannot see: a fold rolled back to a real pass, hiding the reopen
    that came after. Local reads believe it (documented in docs/security.md); pre-push
    and ``meridian ci`` fold from the root, and so does ``verify``-style ``use_cache``."""
    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    snap.load_snapshot(gitio.open_repo(project), "meridian/state")
    path = snap.cache_path(gitio.open_repo(project), "meridian/state")
    before = json.loads(path.read_text())
    assert cli("gate", "reopen", "spec", "--reason", "redo").code == 0
    ledger = Ledger.open(project)
    snap.load_snapshot(ledger.repo, ledger.branch)
    _, document = _document(project)
    document["folds"] = before["folds"]
    document["aux"]["claims"] = before["aux"]["claims"]
    path.write_text(json.dumps(_rechecksum(document)))
    assert snap.trusted_snapshot(ledger).phase("spec") == "passed"  # believed locally
    assert snap.trusted_snapshot(ledger, use_cache=False).phase("spec") == "in_progress"
