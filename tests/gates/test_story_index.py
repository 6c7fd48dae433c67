"""``meridian why`` through the per-gate index is exactly the story read from the branch.

``gates/story_index.py`` keeps each gate's events (and the blocks that name only files)
in ``.git/meridian/gate-story-<branch>/``, caught up over appends. Here a history is
built step by step (genuine passes, a forged pass, a replayed old line, reopens, blocks
of gates and of files, a record stamped in another month, non-gate appends) and after
every step each gate's story through the index is compared with the one read from the
branch (``story.placed_from_branch``), and most steps must have been caught up, not
built again. The second part attacks the index files (layer: state derivation for
local reads; a pass in a story is checked on the commit the index names).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.gates import story_index
from meridian.gates.graph import load_graph
from meridian.gates.story import gate_story, placed_from_branch
from meridian.ledger import EVENTS, Ledger, Write
from tests.adversarial.conftest import CHAIN, Proc, commit_all, pass_gate, write
from tests.gates.test_snapshot_equivalence import _append_raw, _line_of

GATES = ("spec", "impl", "release")


@pytest.fixture
def project(repo_with_commit: Path, cli: Callable[..., Proc]) -> Path:
    assert cli("init", "--no-hooks").code == 0
    write(repo_with_commit, ".meridian/gates.yaml", CHAIN)
    commit_all(repo_with_commit, "meridian setup")
    return repo_with_commit


def _plain(placed: list) -> list[tuple]:
    return [(r.id, r.ts, r.kind, r.writer, json.dumps(r.data, sort_keys=True), commit)
            for r, commit in placed]


class Checker:
    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root, self.builds = root, 0
        build = story_index._build

        def counted(ledger: Ledger):  # type: ignore[no-untyped-def]
            self.builds += 1
            return build(ledger)

        monkeypatch.setattr(story_index, "_build", counted)

    def __call__(self, step: str) -> None:
        ledger, graph = Ledger.open(self.root), load_graph(self.root)
        for gate in GATES:
            indexed = story_index.story(ledger, graph, gate)
            assert indexed is not None, step
            assert _plain(indexed) == _plain(placed_from_branch(ledger, graph, gate)), (step, gate)
            again = story_index.story(ledger, graph, gate)  # from the index at this tip
            assert _plain(again or []) == _plain(indexed), (step, gate)


def test_the_story_through_the_index_equals_the_story_from_the_branch(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch) -> None:
    check = Checker(project, monkeypatch)
    check("empty")
    assert check.builds == 1  # the first read builds it
    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    check("spec passed")
    ledger = Ledger.open(project)
    ledger.emit("gate.blocked", {"gate": "impl", "source": "claude", "reason": "locked"})
    ledger.emit("gate.blocked", {"source": "pre-commit", "reason": "x",
                                 "files": ["src/area.py", "README.md"]})
    ledger.emit("gate.blocked", {"source": "pre-commit", "reason": "y", "files": ["README.md"]})
    check("blocks of a gate and of files")
    pass_gate(cli, project, "impl", "src/area.py")
    ledger.emit("gate.started", {"gate": "release"})
    ledger.emit("gate.passed", {"gate": "release", "verdict": "verdicts/release/made-up.json",
                                "overall": 10.0, "threshold": 7.0, "evaluator": "heuristic",
                                "subject": "0" * 40})
    check("forged release")
    assert cli("gate", "reopen", "spec", "--reason", "redo").code == 0
    ledger.emit("session.started", {"session": "s", "source": "claude"})
    check("reopen and a non-gate event")
    builds = check.builds
    _append_raw(project, [_line_of(project, "gate.passed", "spec")])
    check("replayed pass")
    assert check.builds == builds + 1  # an old line again: built again, same order
    early = ledger.record("gate.blocked", {"gate": "impl", "source": "gate",
                                           "reason": "from a clock set back"},
                          ts="2001-01-01T00:00:00.000000Z")
    ledger.commit(Write(summary="early").add(EVENTS, early))
    check("backdated block")
    assert cli("memory", "add", "semantic", "--json",
               '{"text": "Write the failing test first.", "confidence": 0.6}').code == 0
    write(project, "spec/spec.py", '"""Spec, again."""\nSIDES = 4\n')
    commit_all(project, "spec again")
    assert cli("gate", "submit", "spec").code == 0
    check("spec passed again")
    assert check.builds == builds + 1, check.builds  # every other step was caught up
    # What `why` prints is the same either way.
    shown = cli("why", "impl").out
    for path in story_index.index_dir(ledger).iterdir():
        path.unlink()
    assert cli("why", "impl").out == shown
    assert "src/area.py" not in shown or "pre-commit" in shown


def _forge_entry(ledger: Ledger, gate: str, change: Callable[[list], None]) -> None:
    """Rewrite ``gate``'s index file with ``change`` and recompute every digest."""
    directory = story_index.index_dir(ledger)
    document = json.loads((directory / "index.json").read_text())
    body = document["body"]
    path = directory / story_index._gate_file(gate)
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    change(entries)
    data = b"".join(json.dumps(e).encode() + b"\n" for e in entries)
    path.write_bytes(data)
    body["gates"][gate] = hashlib.sha256(data).hexdigest()
    (directory / "index.json").write_text(json.dumps(
        {"body": body, "checksum": story_index._checksum(body)}))


@pytest.mark.parametrize("forgery", ["pass moved to another commit", "pass invented",
                                     "unrelated real pass"])
def test_a_forged_index_never_shows_a_pass_its_commit_does_not_back(
        project: Path, cli: Callable[..., Proc], forgery: str) -> None:
    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    assert cli("gate", "start", "impl").code == 0
    ledger = Ledger.open(project)
    graph = load_graph(project)
    assert cli("why", "impl").code == 0
    spec_entries = [json.loads(line) for line in (story_index.index_dir(ledger) / story_index
                    ._gate_file("spec")).read_text().splitlines()]
    [spec_pass] = [e for e in spec_entries if e[2]["kind"] == "gate.passed"]
    impl_start = json.loads((story_index.index_dir(ledger) / story_index._gate_file("impl"))
                            .read_text().splitlines()[0])

    def change(entries: list) -> None:
        if forgery == "pass moved to another commit":
            entries.append([spec_pass[0] + 100, impl_start[1],
                            {**spec_pass[2], "data": {**spec_pass[2]["data"], "gate": "impl"}}])
        elif forgery == "pass invented":
            entries.append([999, impl_start[1], {**impl_start[2], "kind": "gate.passed",
                                                 "id": "made-up", "data": {
                                                     "gate": "impl", "verdict": "verdicts/x.json",
                                                     "overall": 9.9, "threshold": 7.0}}])
        else:  # spec's real pass, with its real commit, shown as impl's
            entries.append([spec_pass[0] + 100, spec_pass[1],
                            {**spec_pass[2], "data": {**spec_pass[2]["data"], "gate": "impl"}}])

    _forge_entry(ledger, "impl", change)
    story = gate_story(ledger, graph, "impl")
    assert "gate.passed" not in [r.kind for r, _ in story]
    assert story[-1][0].kind == "gate.inconsistent"
    assert "passed" not in cli("why", "impl").out.splitlines()[0]


@pytest.mark.parametrize("damage", ["garbage index", "digest", "file removed", "rewound",
                                    "rewritten", "corrupt line", "edited shard"])
def test_a_damaged_index_or_a_history_not_only_grown_is_read_again(
        project: Path, cli: Callable[..., Proc], damage: str) -> None:
    from tests.adversarial.conftest import git

    pass_gate(cli, project, "spec", "spec/spec.py", '"""Spec."""\nSIDES = 2\n')
    ledger = Ledger.open(project)
    ledger.emit("gate.blocked", {"gate": "spec", "source": "claude", "reason": "one"})
    assert cli("why", "spec").code == 0
    directory = story_index.index_dir(ledger)
    tip = str(ledger.tip())
    if damage == "garbage index":
        (directory / "index.json").write_text("{")
    elif damage == "digest":
        path = directory / story_index._gate_file("spec")
        path.write_text(path.read_text().splitlines()[0] + "\n")
    elif damage == "file removed":
        (directory / story_index._gate_file("spec")).unlink()
    elif damage == "rewound":
        git(project, "update-ref", "refs/heads/meridian/state", f"{tip}~1")
    elif damage == "rewritten":
        git(project, "update-ref", "refs/heads/meridian/state", f"{tip}~1")
        ledger.emit("gate.blocked", {"gate": "spec", "source": "claude", "reason": "two"})
    elif damage == "corrupt line":
        _append_raw(project, [b'{"kind": "gate.blocked"}'])
    else:
        shard = ledger.shards(EVENTS)[-1]
        data = (ledger.read(shard) or b"").replace(b'"reason":"one"', b'"reason":"uno"')
        from meridian import gitio

        repo = ledger.repo
        blob = gitio.write_blob(repo, data)
        tree = gitio.update_tree(repo, gitio.commit_tree(repo, ledger.tip()), {shard: blob})
        commit = gitio.write_commit(repo, tree, [ledger.tip()], "edit\n")
        gitio.set_ref(repo, ledger.refname, commit, expected=ledger.tip())
    graph = load_graph(project)
    if damage == "corrupt line":
        assert cli("why", "spec").code == 2  # the ledger's error, as without an index
        return
    assert _plain(story_index.story(ledger, graph, "spec") or []) == _plain(
        placed_from_branch(ledger, graph, "spec"))
    assert cli("why", "spec").code == 0


@pytest.mark.parametrize("entry", [[5, None, {"kind": "gate.blocked", "data": {"gate": "spec"}}],
                                   [5, None, {"id": "x", "ts": "t", "kind": "gate.blocked",
                                              "writer": "w", "data": {"files": 7}}],
                                   ["5", 3, []]])
def test_a_forged_entry_of_the_wrong_shape_never_fails_why(
        project: Path, cli: Callable[..., Proc], entry: list) -> None:
    """An entry without the record fields, a block whose ``files`` is not a list, an
    entry that is not one: the story is read from the branch, `why` answers as before."""
    assert cli("gate", "start", "spec").code == 0
    shown = cli("why", "spec")
    ledger = Ledger.open(project)
    _forge_entry(ledger, "spec", lambda entries: entries.append(entry))
    again = cli("why", "spec")
    assert (again.code, again.out, again.err) == (shown.code, shown.out, shown.err)


def test_a_block_with_files_that_are_not_names_is_shown_not_a_crash(
        project: Path, cli: Callable[..., Proc]) -> None:
    """On the branch itself (written by hand): ``why`` shows it either way."""
    from tests.adversarial.integrity_support import event_line

    ledger = Ledger.open(project)
    _append_raw(project, [event_line("gate.blocked", {"gate": "spec", "source": "x",
                                                      "reason": "r", "files": files})[1].encode()
                          for files in (7, [1, None])])
    shown = cli("why", "spec")
    assert shown.code == 0 and "(1, None)" in shown.out, shown
    for path in story_index.index_dir(ledger).iterdir():
        path.unlink()
    again = cli("why", "spec")
    assert (again.code, again.out) == (shown.code, shown.out)


@pytest.mark.parametrize("name", ["index.json", "gate file", "ids", "unassigned.jsonl",
                                  "index.json to /dev/zero"])
def test_an_index_file_that_is_no_regular_file_never_hangs_why(
        project: Path, cli: Callable[..., Proc], name: str) -> None:
    """Attack: a FIFO (or a symlink to ``/dev/zero``) in place of an index file, so that
    ``why`` blocks forever on opening it (or fills memory). Every index file is read
    only when it is a regular file, and boundedly: the story is read from the branch, the
    answer is the one without an index, at once."""
    import os
    import subprocess
    import sys

    assert cli("gate", "start", "spec").code == 0
    ledger = Ledger.open(project)
    ledger.emit("gate.blocked", {"gate": "spec", "source": "claude", "reason": "one"})
    ledger.emit("gate.blocked", {"source": "pre-commit", "reason": "x",
                                 "files": ["spec/spec.py"]})
    shown = cli("why", "spec")
    assert shown.code == 0, shown
    directory = story_index.index_dir(ledger)
    target = directory / {"gate file": story_index._gate_file("spec")}.get(
        name, name.split(" ")[0])
    target.unlink()
    if name.endswith("/dev/zero"):
        target.symlink_to("/dev/zero")
    else:
        os.mkfifo(target)
    # New events, so the index is caught up (the ids file read) rather than answered.
    ledger.emit("gate.blocked", {"gate": "spec", "source": "claude", "reason": "two"})
    ledger.emit("gate.blocked", {"source": "pre-commit", "reason": "y",
                                 "files": ["spec/spec.py"]})
    expected = placed_from_branch(ledger, load_graph(project), "spec")
    proc = subprocess.run([sys.executable, "-m", "meridian", "why", "spec", "--json"],
                          cwd=project, capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    story = json.loads(proc.stdout)["story"]
    assert [e["id"] for e in story] == [r.id for r, _ in expected]
