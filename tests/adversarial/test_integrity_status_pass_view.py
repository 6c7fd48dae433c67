"""Attack: make `meridian status` show a pass the full derivation would not, now that a
status view may hold passes (``commands/status_passes.py``).

Layer: state derivation. A view showing a gate passed is used only once the pass is
checked again from the branch (its commit on the branch, the event and the verdict it
added, Meridian's rule on the verdict), the snapshot's fold, the definition files
recorded with the pass and the work tree (the artifacts hashed without pygit2); else
the status is derived in full. Every case compares the answer (text, ``--json``,
``--strict``, exit codes) with a derivation from scratch (views deleted), and checks
whether the fast path answered where it should.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.commands import status_view
from tests.adversarial.conftest import Proc, commit_all, pass_gate, write
from tests.adversarial.integrity_support import event_line, forge_pass, plumb_commit, shard_of

STATE = "meridian/state"


def _views(root: Path) -> list[Path]:
    return sorted((root / ".git" / "meridian").glob("status-view-*.json"))


ARGS = ((), ("--json",), ("--strict",), ("--json", "--strict"))


def _answer(cli: Callable[..., Proc], args: tuple[str, ...]) -> tuple[int, object, str]:
    """(exit code, the text or the parsed JSON document, stderr): the JSON parsed, as the
    harness changes' keys come in stored or sorted order depending on where the snapshot
    read them (tests/adversarial/test_integrity_status_view.py)."""
    proc = cli("status", *args)
    return proc.code, json.loads(proc.out) if "--json" in args else proc.out, proc.err


def _answers(cli: Callable[..., Proc]) -> list[tuple[int, object, str]]:
    return [_answer(cli, args) for args in ARGS]


def _fresh(cli: Callable[..., Proc], root: Path) -> list[tuple[int, object, str]]:
    answers = []
    for args in ARGS:
        for view in _views(root):
            view.unlink()
        answers.append(_answer(cli, args))
    return answers


def _agree(cli: Callable[..., Proc], root: Path) -> list[tuple[int, object, str]]:
    """The answers given twice (the first run writes the view, the second may read it)
    equal the answers derived with no view; returns them."""
    fresh = _fresh(cli, root)
    cli("status")
    assert _answers(cli) == fresh
    assert _answers(cli) == fresh
    return fresh


def _light(root: Path) -> bool:
    """Whether a fresh process answers from the view: without pygit2, which the full path
    always opens the repository with (a view with a pass loads the config and the gate
    graph with pydantic and yaml, as the full path does; a view without one neither)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "meridian", "status"],
                          cwd=root, capture_output=True, text=True, check=True)
    modules = {line.rsplit("|", 1)[-1].strip().split(".")[0]
               for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return "pygit2" not in modules


def _states(answers: list[tuple[int, object, str]]) -> list[str]:
    document = answers[1][1]
    assert isinstance(document, dict)
    return [g["state"] for g in document["gates"]]


@pytest.fixture
def passed(project: Path, cli: Callable[..., Proc]) -> Path:
    pass_gate(cli, project, "spec", "spec/spec.py")
    return project


def test_a_pass_is_answered_from_the_view_and_the_same(passed: Path,
                                                      cli: Callable[..., Proc]) -> None:
    answers = _agree(cli, passed)
    assert _states(answers) == ["passed", "open", "locked"]
    assert _light(passed)


def _edit_artifact(root: Path) -> None:
    write(root, "spec/spec.py", '"""Changed after the pass."""\n')


def _new_artifact(root: Path) -> None:
    write(root, "spec/extra.md", "an untracked file the glob takes\n")


def _ignored_file(root: Path) -> None:
    write(root, ".gitignore", "*.log\nbuild/\n")
    write(root, "spec/debug.log", "ignored: not an artifact\n")
    write(root, "spec/build/out.txt", "in an ignored directory\n")
    commit_all(root, "ignore logs")


def _negated_ignore(root: Path) -> None:
    write(root, ".gitignore", "*.log\n!keep.log\n")
    write(root, "spec/keep.log", "not ignored: an artifact\n")


def _symlink_artifact(root: Path) -> None:
    (root / "spec" / "link.py").symlink_to(root / "README.md")


def _reopen(root: Path) -> None:
    from meridian.cli import main

    assert main(["gate", "reopen", "spec", "--reason", "more work"]) == 0


def _definition_edit(root: Path) -> None:
    gates = root / ".meridian" / "gates.yaml"
    gates.write_text(gates.read_text().replace("Says what the code does.", "Says more."))


def _description_edit(root: Path) -> None:
    gates = root / ".meridian" / "gates.yaml"
    gates.write_text(gates.read_text().replace("The specification.", "The spec, renamed."))


def _threshold_edit(root: Path) -> None:
    config = root / ".meridian" / "config.yaml"
    text = config.read_text()
    assert "threshold: 7.0" in text
    config.write_text(text.replace("threshold: 7.0", "threshold: 9.9"))


def _forged_pass(root: Path) -> None:
    forge_pass(root, "impl")  # consistent, with no evidence: the full path decides


def _forged_bad_verdict(root: Path) -> None:
    ts = "2026-01-01T00:00:00.000000Z"
    path = "verdicts/impl/20260101T000000-bad.json"
    verdict = {"gate": "impl", "evaluator": "heuristic", "subject": "a" * 40,
               "scores": {d: 2.0 for d in ("completeness", "correctness", "robustness",
                                           "spec_adherence")},
               "overall": 9.5, "threshold": 7.0, "passed": True, "issues": []}
    _, line = event_line("gate.passed", {"gate": "impl", "verdict": path, "overall": 9.5,
                                         "threshold": 7.0, "evaluator": "heuristic",
                                         "subject": "a" * 40}, ts)
    plumb_commit(root, {shard_of(ts): (line + "\n").encode(),
                        path: json.dumps(verdict).encode()}, "gate.passed impl")


def _verdict_edited(root: Path) -> None:
    """The pass's verdict rewritten in place by a later commit (lower scores)."""
    listing = subprocess.run(["git", "ls-tree", "-r", "--name-only", STATE, "verdicts/spec/"],
                             cwd=root, capture_output=True, text=True, check=True).stdout.split()
    [path] = listing
    index = root / ".git" / "forger-index"
    env = {"GIT_INDEX_FILE": str(index)}
    import os

    def run(*args: str, data: bytes | None = None) -> str:
        return subprocess.run(["git", *args], cwd=root, input=data, capture_output=True,
                              check=True, env={**os.environ, **env}).stdout.decode().strip()

    document = json.loads(run("cat-file", "blob", f"{STATE}:{path}"))
    document["scores"] = {k: 1.0 for k in document["scores"]}
    parent = run("rev-parse", STATE)
    run("read-tree", parent)
    blob = run("hash-object", "-w", "--stdin", data=json.dumps(document).encode())
    run("update-index", "--cacheinfo", f"100644,{blob},{path}")
    commit = run("commit-tree", run("write-tree"), "-p", parent, "-m", "verdict edited")
    run("update-ref", f"refs/heads/{STATE}", commit, parent)
    index.unlink()


def _ghost_gate_event(root: Path) -> None:
    """An event of a gate the graph does not have (a removed gate): it shows nowhere."""
    _, line = event_line("gate.reopened", {"gate": "ghost", "reason": "gone"})
    plumb_commit(root, {shard_of(json.loads(line)["ts"]): (line + "\n").encode()},
                 "gate.reopened ghost")


def _new_events(root: Path) -> None:
    """Events that change no state (a session, a block): the view is caught up."""
    from meridian.ledger import Ledger

    ledger = Ledger.open(root)
    ledger.emit("session.started", {"session": "s1", "source": "claude"})
    ledger.emit("gate.blocked", {"gate": "impl", "source": "claude", "reason": "locked"})


def _new_events_then_reopen(root: Path) -> None:
    _new_events(root)
    _reopen(root)


CHANGES: dict[str, tuple[Callable[[Path], None], list[str], bool]] = {
    # change -> (what it does, the states status must show, answered from the view)
    "artifact edited": (_edit_artifact, ["stale", "locked", "locked"], False),
    "artifact added untracked": (_new_artifact, ["stale", "locked", "locked"], False),
    "ignored files beside the artifacts": (_ignored_file, ["passed", "open", "locked"], True),
    "an ignore rule with a negation": (_negated_ignore, ["stale", "locked", "locked"], False),
    "a symlink among the artifacts": (_symlink_artifact, ["stale", "locked", "locked"], False),
    "reopened": (_reopen, ["in_progress", "locked", "locked"], True),
    "definition edited": (_definition_edit, ["stale", "locked", "locked"], False),
    "description edited": (_description_edit, ["passed", "open", "locked"], False),
    # a pass judged against a threshold below the gate's current one does not count
    "threshold raised": (_threshold_edit, ["forged", "locked", "locked"], False),
    "forged pass with plumbing": (_forged_pass, ["passed", "passed", "open"], False),
    "forged verdict": (_forged_bad_verdict, ["passed", "forged", "locked"], True),
    "verdict edited in place": (_verdict_edited, ["passed", "open", "locked"], True),
    "new events that change no state": (_new_events, ["passed", "open", "locked"], True),
    "new events, then a reopen": (_new_events_then_reopen, ["in_progress", "locked",
                                                            "locked"], True),
    "an event of a gate not in the graph": (_ghost_gate_event, ["passed", "open", "locked"],
                                            True),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_status_after_each_change_is_the_full_derivations(
        passed: Path, cli: Callable[..., Proc], change: str) -> None:
    _agree(cli, passed)
    apply, states, light = CHANGES[change]
    apply(passed)
    answers = _agree(cli, passed)
    assert _states(answers) == states
    if "reopen" not in change and change != "threshold raised":  # those show no pass
        assert _light(passed) == light


def _forge_view(view: Path, change: Callable[[dict], None]) -> None:
    document = json.loads(view.read_text())
    body = document["body"]
    change(body)
    view.write_text(json.dumps({"body": body, "checksum": status_view._checksum(body)}))


def test_a_view_rolled_back_to_an_earlier_pass_is_refused(passed: Path,
                                                         cli: Callable[..., Proc]) -> None:
    """The view saved while spec was passed, put back after a reopen with the key of now
    and its checksum recomputed: the snapshot's fold says in progress, so it is refused."""
    _agree(cli, passed)
    [view] = _views(passed)
    saved = json.loads(view.read_text())["body"]
    _reopen(passed)
    fresh = _agree(cli, passed)
    assert _states(fresh) == ["in_progress", "locked", "locked"]
    [view] = _views(passed)
    key = json.loads(view.read_text())["body"]["key"]
    _forge_view(view, lambda body: body.update({**saved, "key": key}))
    assert _answers(cli) == fresh


def test_a_pass_view_put_back_after_an_artifact_edit_is_refused(
        passed: Path, cli: Callable[..., Proc]) -> None:
    """The artifacts are not in the view's key: a view saved while spec was passed, put
    back after its file changed, matches its key, and is refused all the same (the
    artifacts are hashed again)."""
    _agree(cli, passed)
    [view] = _views(passed)
    saved = view.read_bytes()
    _edit_artifact(passed)
    fresh = _agree(cli, passed)
    assert _states(fresh)[0] == "stale"
    view.write_bytes(saved)
    assert _answers(cli) == fresh


@pytest.mark.parametrize("lie", ["impl passed", "detail", "needs dropped", "order",
                                 "state of a locked gate"])
def test_a_view_edited_to_claim_a_pass_is_refused(passed: Path, cli: Callable[..., Proc],
                                                  lie: str) -> None:
    fresh = _agree(cli, passed)
    [view] = _views(passed)

    def change(body: dict) -> None:
        gates = body["document"]["gates"]
        if lie == "impl passed":
            gates[1].update(state="passed", verdict_passed=True, overall=9.5, threshold=7.0,
                            detail="overall 9.5 >= 7.0 (heuristic)")
            body["text"] = [line.replace("open    ready: meridian gate start impl",
                                         "passed  overall 9.5 >= 7.0 (heuristic)")
                            for line in body["text"]]
        elif lie == "detail":
            gates[0]["detail"] = "overall 10.0 >= 7.0 (anthropic)"
        elif lie == "needs dropped":
            gates[1]["needs"] = []
        elif lie == "order":
            gates[1], gates[2] = gates[2], gates[1]
        else:
            gates[2].update(state="open", unmet_needs=[], detail="ready: meridian gate start "
                            "release")
    _forge_view(view, change)
    assert _answers(cli) == fresh


def test_a_need_reopened_is_seen_whatever_the_view_says_its_needs_are(
        passed: Path, cli: Callable[..., Proc]) -> None:
    """spec and impl passed, spec reopened: impl is stale (needs spec reopened). A view
    made from the snapshot's folds that drops impl's need on spec is refused: the needs
    come from the graph recorded with the passes, not from the view."""
    pass_gate(cli, passed, "impl", "src/impl.py")
    _agree(cli, passed)
    [view] = _views(passed)
    saved = json.loads(view.read_text())["body"]
    _reopen(passed)
    fresh = _agree(cli, passed)
    assert _states(fresh) == ["in_progress", "stale", "locked"]
    assert not _views(passed)
    cli("status", "--json")
    from meridian.commands import status_passes

    snapshot = json.loads(status_passes.snapshot_path(passed / ".git", STATE).read_text())
    shown = json.loads(cli("status", "--json").out)
    impl = {**shown["gates"][1], "state": "passed", "needs": [], "unmet_needs": [],
            "stale_needs": None, "detail": saved["document"]["gates"][1]["detail"],
            "current_spec_hash": saved["document"]["gates"][1]["current_spec_hash"],
            "current_subject": saved["document"]["gates"][1]["current_subject"]}
    document = {**shown, "gates": [shown["gates"][0], impl, shown["gates"][2]], "stale": []}
    body = {**saved, "key": {**saved["key"], "tip": snapshot["tip"]}, "document": document,
            "text": status_view._table(document["gates"])
            + status_view._tail(document)}
    view.write_text(json.dumps({"body": body, "checksum": status_view._checksum(body)}))
    assert _answers(cli) == fresh


def test_a_snapshot_edited_to_claim_a_pass_is_refused(passed: Path,
                                                     cli: Callable[..., Proc]) -> None:
    """The gate snapshot rewritten (checksums recomputed) so impl's fold is spec's pass:
    its claim names an event of another gate, so neither path believes it."""
    from meridian.commands import status_passes

    fresh = _agree(cli, passed)
    path = status_passes.snapshot_path(passed / ".git", STATE)
    cached = json.loads(path.read_text())
    cached["folds"]["impl"] = {**cached["folds"]["spec"]}
    cached["aux"]["claims"]["impl"] = cached["aux"]["claims"]["spec"]
    cached["aux"]["floors"]["impl"] = cached["aux"]["floors"]["spec"]
    cached["checksum"], cached["aux_checksum"] = status_passes._snapshot_checksums(cached)
    path.write_text(json.dumps(cached))
    [view] = _views(passed)

    def change(body: dict) -> None:
        spec, impl = body["document"]["gates"][:2]
        impl.update({k: v for k, v in spec.items() if k not in ("gate", "needs")})
    _forge_view(view, change)
    assert _answers(cli) == fresh


def test_a_pass_view_is_caught_up_over_events_that_change_no_state(
        passed: Path, cli: Callable[..., Proc]) -> None:
    """A session and a block after the view was written: answered from the view (caught up
    over the new commits, its passes checked against the snapshot of its own tip), the
    same as a fresh derivation; a reopen after that is derived in full."""
    _agree(cli, passed)
    [view] = _views(passed)
    written = view.read_bytes()
    _new_events(passed)
    assert _light(passed)
    shown = _answers(cli)
    assert view.read_bytes() == written  # checked against its own tip, not rewritten
    fresh = _fresh(cli, passed)
    assert shown == fresh
    document = shown[1][1]
    assert isinstance(document, dict) and document["gates"][1]["blocks"] == 1
    # The snapshot caught up to the new tip by another reader (a hook): checked against it
    view.write_bytes(written)
    from meridian import gitio
    from meridian.gates.snapshot import load_snapshot

    assert load_snapshot(gitio.open_repo(passed), STATE).tip is not None
    assert _light(passed)
    assert _answers(cli) == fresh
    view.write_bytes(written)
    _reopen(passed)
    assert _answers(cli) == _fresh(cli, passed)
