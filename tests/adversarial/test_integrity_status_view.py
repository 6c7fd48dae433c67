"""Attack: make `meridian status` show what the project does not say, by editing the view
it answers from (``.git/meridian/status-view-<work tree>.json``), or by changing what the
answer depends on after the view was written (a state event, the gate graph, a passed
gate's files, tamper evidence).

Layer: state derivation (``commands/status_view.py``). The view is a cache, never trust:
a view that is damaged, whose checksum does not match, whose key does not match the
files and refs now, or that shows any pass is refused and the status derived again;
the full path never stores a view showing a pass (its truth depends on the work tree
and on the pass's verdict). Each case checks the output equals a fresh derivation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.commands import status_view
from tests.adversarial.conftest import CHAIN, Proc, commit_all, pass_gate, write

HEAVY = ("pygit2", "pydantic", "yaml", "rich")


def _views(root: Path) -> list[Path]:
    return sorted((root / ".git" / "meridian").glob("status-view-*.json"))


def _fresh(cli: Callable[..., Proc], *args: str) -> Proc:
    """The status derived from the files and the branch, with no view to answer from."""
    for view in _views(Path.cwd()):
        view.unlink()
    return cli("status", *args)


def _both(cli: Callable[..., Proc]) -> tuple[Proc, Proc]:
    return cli("status"), cli("status", "--json")


def _same(shown: tuple[Proc, Proc], fresh: tuple[Proc, Proc]) -> None:
    """The same text, and the same JSON document (key order aside: the harness changes'
    keys come in stored or sorted order depending on where the snapshot read them)."""
    (text, document), (fresh_text, fresh_document) = shown, fresh
    assert (text.code, text.out, text.err) == (fresh_text.code, fresh_text.out, fresh_text.err)
    assert (document.code, json.loads(document.out), document.err) == (
        fresh_document.code, json.loads(fresh_document.out), fresh_document.err)


def _heavy_imports(root: Path) -> list[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "meridian", "status"],
                          cwd=root, capture_output=True, text=True, check=True)
    modules = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()
               if line.startswith("import time:")]
    assert "meridian.commands.status_view" in modules
    return sorted({m.split(".")[0] for m in modules if m.split(".")[0] in HEAVY})


def test_the_view_answers_what_a_fresh_derivation_does_without_heavy_imports(
        project: Path, cli: Callable[..., Proc]) -> None:
    assert cli("gate", "start", "spec").code == 0
    fresh = (_fresh(cli), cli("status", "--json"))
    [view] = _views(project)
    _same(_both(cli), fresh)
    document = json.loads(fresh[1].out)
    assert [g["state"] for g in document["gates"]] == ["in_progress", "locked", "locked"]
    assert _heavy_imports(project) == []
    # Strict mode from the view: nothing stale or forged, exit 0.
    assert cli("status", "--strict").code == 0
    assert view.exists()


@pytest.mark.parametrize("damage", ["garbage", "state without checksum", "tip",
                                    "forged pass with checksum", "approval with checksum"])
def test_a_poisoned_view_is_refused_and_status_derived_again(
        project: Path, cli: Callable[..., Proc], damage: str) -> None:
    assert cli("gate", "start", "spec").code == 0
    fresh = (_fresh(cli), cli("status", "--json"))
    [view] = _views(project)
    document = json.loads(view.read_text())
    body = document["body"]
    spec = body["document"]["gates"][0]
    if damage == "garbage":
        view.write_text("{not json")
    elif damage == "state without checksum":
        spec["state"] = "failed"
        body["text"] = [line.replace("in_progress", "failed") for line in body["text"]]
        view.write_text(json.dumps(document))
    elif damage == "tip":
        body["key"]["tip"] = "0" * 40
        view.write_text(json.dumps({"body": body, "checksum": status_view._checksum(body)}))
    else:
        # A forger who recomputes the checksum: the view says spec passed (or approved).
        if damage == "forged pass with checksum":
            spec.update(state="passed", verdict_passed=True, overall=9.5, threshold=7.0)
        else:
            spec.update(state="submitted", awaiting_approval=False, approver="alice")
        body["text"] = [line.replace("in_progress", spec["state"]) for line in body["text"]]
        view.write_text(json.dumps({"body": body, "checksum": status_view._checksum(body)}))
    _same(_both(cli), fresh)
    assert "passed" not in cli("status").out
    # Derived again and rewritten true: the next answer is the fresh one too.
    assert json.loads(view.read_text())["body"]["document"] == json.loads(fresh[1].out)


def test_what_the_view_depends_on_changing_after_it_was_written(
        project: Path, cli: Callable[..., Proc]) -> None:
    first = cli("status", "--json")
    assert [g["state"] for g in json.loads(first.out)["gates"]] == ["open", "locked", "locked"]
    assert _views(project)
    # A new state event moves the tip.
    assert cli("gate", "start", "spec").code == 0
    shown = cli("status", "--json")
    assert json.loads(shown.out)["gates"][0]["state"] == "in_progress"
    _same((cli("status"), shown), (_fresh(cli), cli("status", "--json")))
    # The gate graph changes (a fourth gate, a need dropped) without a new event.
    write(project, ".meridian/gates.yaml", CHAIN.replace("    needs: [spec]\n", "") + (
        "  - id: docs\n    artifacts: [\"docs/**\"]\n"))
    shown = cli("status", "--json")
    assert [(g["gate"], g["state"]) for g in json.loads(shown.out)["gates"]] == [
        ("spec", "in_progress"), ("impl", "open"), ("release", "locked"), ("docs", "open")]
    _same((cli("status"), shown), (_fresh(cli), cli("status", "--json")))


def test_a_passed_gate_is_answered_from_a_view_only_while_it_holds(
        project: Path, cli: Callable[..., Proc]) -> None:
    """A view may now show a plain pass (``status_passes`` checks it again on every run);
    a stale gate is never answered from one."""
    assert cli("status").code == 0
    pass_gate(cli, project, "spec", "spec/spec.py")
    fresh = (_fresh(cli), cli("status", "--json"))
    assert json.loads(fresh[1].out)["gates"][0]["state"] == "passed"
    assert _views(project)
    _same(_both(cli), fresh)
    # A view with a pass reads the config and the gate graph from the files (the branch
    # and the definition are never taken from a cache), with the full path's YAML code
    # but not its models (``gates/plain_definition.py``), nor pygit2 or rich.
    assert _heavy_imports(project) == ["yaml"]
    # Its files change in the work tree (no commit, no event): stale at once.
    write(project, "spec/spec.py", '"""Changed."""\nSIDES = 3\n')
    shown = cli("status", "--json")
    assert json.loads(shown.out)["gates"][0]["state"] == "stale"
    assert cli("status", "--strict").code == 1
    assert not _views(project)  # a stale gate: no view
    commit_all(project, "spec changed")
    assert not _views(project)


def test_pending_tamper_evidence_is_always_reported(project: Path,
                                                    cli: Callable[..., Proc]) -> None:
    assert cli("gate", "start", "spec").code == 0
    assert cli("status").err == ""
    assert _views(project)
    evidence = project / ".git" / "meridian" / "tamper-meridian__state.jsonl"
    evidence.write_text(json.dumps({"commit": "0" * 40, "path": "events/x.jsonl", "line": 1,
                                    "record": None, "reason": "edited in place"}) + "\n")
    shown = cli("status")
    assert "tampering found earlier and not acknowledged" in shown.err, shown
    assert "tampering found earlier" in cli("status", "--json").err


def _forge(view: Path, change: Callable[[dict], None]) -> None:
    """Rewrite the view's body with ``change`` and recompute its checksum (as any agent can)."""
    document = json.loads(view.read_text())
    body = document["body"]
    change(body)
    view.write_text(json.dumps({"body": body, "checksum": status_view._checksum(body)}))


@pytest.mark.parametrize("lie", ["table row", "summary", "escape", "extra line", "new state"])
def test_a_forged_view_text_never_shows_what_its_document_does_not(
        project: Path, cli: Callable[..., Proc], lie: str) -> None:
    """The text lines printed from a view are the document's, never free text: a view
    whose document shows no pass but whose lines say "passed" is refused."""
    assert cli("gate", "start", "spec").code == 0
    fresh = (_fresh(cli), cli("status", "--json"))
    [view] = _views(project)

    def change(body: dict) -> None:
        text = body["text"]
        if lie == "table row":
            body["text"] = [line.replace("in_progress", "passed     ") for line in text]
        elif lie == "summary":
            body["text"] = text[:-1] + ["3 passed"]
        elif lie == "escape":
            body["text"] = text + ["\x1b[4A\x1b[2K1  spec     passed"]
        elif lie == "extra line":
            body["text"] = text + ["all gates passed, approved by lead"]
        else:  # a state the derivation never gives, that reads as passed
            body["document"]["gates"][0]["state"] = "approved"
            body["text"] = [line.replace("in_progress", "approved") for line in text]

    _forge(view, change)
    _same(_both(cli), fresh)
    assert "passed" not in cli("status").out


def test_a_change_to_the_features_file_is_seen(project: Path, cli: Callable[..., Proc]) -> None:
    """The gate graph is validated against the features file (``paths.features``): a
    view written before it changed is not the answer after."""
    write(project, ".meridian/gates.yaml", CHAIN.replace(
        "    artifacts: [\"spec/**\"]\n",
        "    artifacts: [\"spec/**\"]\n    features:\n      hardened: [login]\n"))
    write(project, ".meridian/features.yaml",
          "version: 1\nfeatures:\n  - id: login\n    description: Users log in.\n")
    fresh = _fresh(cli)
    assert fresh.code == 0, fresh
    assert _views(project)
    write(project, ".meridian/features.yaml", "version: 1\nfeatures: []\n")
    shown = cli("status")
    again = _fresh(cli)
    assert (shown.code, shown.out, shown.err) == (again.code, again.out, again.err)
    assert shown.code == 2


def test_a_view_with_a_remote_note_still_answers_light(
        project: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    """The text check renders the remote note as the full path does: such a view is used."""
    from tests.adversarial.conftest import git

    git(project, "push", "-q", "origin", "meridian/state")
    git(project, "fetch", "-q", "origin")
    assert cli("gate", "start", "spec").code == 0  # one state commit the remote lacks
    fresh = (_fresh(cli), cli("status", "--json"))
    assert "note: this clone has" in fresh[0].out
    _same(_both(cli), fresh)
    assert _heavy_imports(project) == []


def test_a_view_path_that_cannot_be_removed_never_fails_status(
        project: Path, cli: Callable[..., Proc]) -> None:
    """With a pass shown the full path removes the kept view; a directory in its place
    (or a .git/meridian it cannot write) leaves status as it is: exit 0, the fresh answer,
    no internal error."""
    pass_gate(cli, project, "spec", "spec/spec.py")
    located = status_view._locate()
    assert located is not None
    path = status_view.view_path(located[2], located[0])
    path.mkdir(parents=True)
    (path / "keep").write_text("x")
    shown = cli("status")
    assert shown.code == 0 and shown.err == "", shown
    assert "passed" in shown.out


def test_the_view_keys_the_same_tamper_evidence_file_verify_writes(project: Path) -> None:
    # If verify's file name drifted from the view's, pending evidence would stop
    # invalidating the view: status would answer from a cache over a tampered branch.
    from meridian import gitio
    from meridian.ledger import Ledger
    from meridian.verify import evidence_path

    ledger = Ledger.open(project)
    common = gitio.common_dir(ledger.repo)
    assert status_view.evidence_path(common, ledger.branch) == evidence_path(ledger)


# --- a view caught up over new state commits (``state_catchup.py``) -------------


def _light_status(root: Path) -> tuple[Proc, list[str]]:
    """``meridian status --json`` in a process of its own, with the heavy modules it loaded."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "meridian", "status",
                           "--json"], cwd=root, capture_output=True, text=True, check=False)
    modules = {line.rsplit("|", 1)[-1].strip().split(".")[0]
               for line in proc.stderr.splitlines() if line.startswith("import time:")}
    err = "".join(line + "\n" for line in proc.stderr.splitlines()
                  if not line.startswith("import time:"))
    return Proc(proc.returncode, proc.stdout, err), sorted(modules.intersection(HEAVY))


def test_a_view_is_caught_up_over_events_that_change_nothing_it_shows(
        project: Path, cli: Callable[..., Proc]) -> None:
    """Episodes, runs' and memory's events, blocks of a gate or of files: the next status
    answers from the view brought to the new tip (no heavy import), exactly as a fresh
    derivation does, blocks counted; and rewrites it for the run after."""
    from meridian.ledger import Ledger

    assert cli("gate", "start", "spec").code == 0
    assert cli("status").code == 0
    [view] = _views(project)
    ledger = Ledger.open(project)
    ledger.emit("session.started", {"session": "s1", "source": "claude"})
    ledger.emit("gate.blocked", {"gate": "spec", "source": "claude", "reason": "locked"})
    ledger.emit("gate.blocked", {"gate": "impl", "source": "claude", "reason": "locked"})
    ledger.emit("gate.blocked", {"source": "pre-commit", "reason": "x", "files": ["src/a.py"]})
    ledger.emit("gate.blocked", {"gate": "nosuchgate", "source": "claude", "reason": "x"})
    shown, heavy = _light_status(project)
    assert heavy == [], heavy
    document = json.loads(shown.out)
    assert [g["blocks"] for g in document["gates"]] == [1, 1, 0]
    tip = json.loads(view.read_text())["body"]["key"]["tip"]
    assert tip == str(ledger.tip())  # rewritten at the new tip
    _same(_both(cli), (_fresh(cli), cli("status", "--json")))
    assert json.loads(shown.out) == json.loads(cli("status", "--json").out)


@pytest.mark.parametrize("change", [
    "consistent forged pass", "pass without verdict", "gate started", "harness change", "corrupt line", "edited shard",
    "non-shard file", "deleted shard", "rewound", "rewritten", "replayed block",
    "replayed start", "grafts"])
def test_what_a_catch_up_cannot_show_is_derived_in_full(
        project: Path, cli: Callable[..., Proc], change: str) -> None:
    """Commits since the view that change what it shows, or that are not plain appends of
    well-formed lines on a chain from its tip: the answer is a fresh derivation's (a
    forged pass shown forged, a corrupt line the full path's error), never the view's."""
    from meridian.ledger import Ledger
    from meridian.records import now_ts
    from tests.adversarial.conftest import git, run_git
    from tests.adversarial.integrity_support import event_line, forge_pass, plumb_commit, shard_of

    assert cli("gate", "start", "spec").code == 0
    assert cli("status").code == 0
    ledger = Ledger.open(project)
    view_tip = str(ledger.tip())
    shard = shard_of(now_ts())
    before = git(project, "cat-file", "blob", f"{view_tip}:{shard}")
    if change == "consistent forged pass":
        forge_pass(project, "spec")  # only `meridian ci` tells it from a real one
    elif change == "pass without verdict":
        plumb_commit(project, {shard: (event_line("gate.passed", {
            "gate": "spec", "verdict": "verdicts/spec/x.json", "overall": 9.5,
            "threshold": 7.0, "evaluator": "heuristic", "subject": "0" * 40})[1] + "\n")
            .encode()}, "pass")
    elif change == "gate started":
        plumb_commit(project, {shard: (event_line("gate.started", {"gate": "impl"})[1] + "\n")
                               .encode()}, "start")
    elif change == "harness change":
        plumb_commit(project, {shard: (event_line("harness.changed", {
            "changes": [".meridian/gates.yaml modified"], "commit": "0" * 40,
            "weakening": True})[1] + "\n").encode()}, "harness")
    elif change == "corrupt line":
        plumb_commit(project, {shard: b'{"id":"x","ts":"t","kind":"memory.note","writer":"w"}\n'},
                     "corrupt")
    elif change in ("edited shard", "deleted shard", "non-shard file"):
        ledger.emit("session.started", {"session": "s1", "source": "claude"})
        index = project / ".git" / "forger-index"
        env = {"GIT_INDEX_FILE": str(index)}
        tip = str(ledger.tip())
        run_git(project, "read-tree", tip, env=env)
        if change == "edited shard":
            edited = before.replace('"in_progress"', '"x"').replace("spec", "spek", 1)
            blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=project,
                                  input=edited.encode(), capture_output=True,
                                  check=True).stdout.decode().strip()
            run_git(project, "update-index", "--cacheinfo", f"100644,{blob},{shard}", env=env)
        elif change == "deleted shard":
            run_git(project, "update-index", "--force-remove", shard, env=env)
        else:
            blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=project,
                                  input=event_line("gate.started", {"gate": "impl"})[1].encode(),
                                  capture_output=True, check=True).stdout.decode().strip()
            run_git(project, "update-index", "--add", "--cacheinfo",
                    f"100644,{blob},{shard.replace('0000.jsonl', 'extra.jsonl')}", env=env)
        tree = run_git(project, "write-tree", env=env).out.strip()
        commit = run_git(project, "commit-tree", tree, "-p", tip, "-m", "edit").out.strip()
        git(project, "update-ref", "refs/heads/meridian/state", commit)
    elif change == "rewound":
        # The branch put back before the view's tip: what it shows is gone.
        git(project, "update-ref", "refs/heads/meridian/state", f"{view_tip}~1")
    elif change == "rewritten":
        # A sibling history: the view's tip is not an ancestor of the new tip, though the
        # new commit only appends a block to its own parent.
        git(project, "update-ref", "refs/heads/meridian/state", f"{view_tip}~1")
        plumb_commit(project, {shard: (event_line("gate.blocked", {
            "gate": "spec", "source": "claude", "reason": "x"})[1] + "\n").encode()}, "block")
    elif change == "replayed block":
        ledger.emit("gate.blocked", {"gate": "spec", "source": "claude", "reason": "locked"})
        line = git(project, "cat-file", "blob", f"meridian/state:{shard}").splitlines()[-1]
        plumb_commit(project, {shard: (line + "\n").encode()}, "replay")
    elif change == "replayed start":
        line = [x for x in before.splitlines() if '"gate.started"' in x][-1]
        plumb_commit(project, {shard: (line + "\n").encode()}, "replay")
    else:
        ledger.emit("session.started", {"session": "s1", "source": "claude"})
        tip = str(ledger.tip())
        (project / ".git" / "info").mkdir(exist_ok=True)
        (project / ".git" / "info" / "grafts").write_text(f"{tip}\n")
    shown = (cli("status"), cli("status", "--json"))
    fresh = (_fresh(cli), cli("status", "--json"))
    if change == "corrupt line":  # an error, no document
        assert [(p.code, p.out, p.err) for p in shown] == [(p.code, p.out, p.err) for p in fresh]
    else:
        _same(shown, fresh)
    if change == "consistent forged pass":
        assert "passed" in shown[0].out
    if change == "pass without verdict":
        assert "forged or inconsistent" in shown[0].out
    if change == "corrupt line":
        assert shown[0].code == 2 and "corrupt record" in shown[0].err, shown
    # the same again, from whatever the first of those runs kept
    assert (cli("status").out, cli("status").code) == (shown[0].out, shown[0].code)


def test_a_caught_up_view_counts_the_remote_again(
        project: Path, remote: Path, cli: Callable[..., Proc]) -> None:
    from meridian.ledger import Ledger
    from tests.adversarial.conftest import git

    git(project, "push", "-q", "origin", "meridian/state")
    git(project, "fetch", "-q", "origin")
    assert cli("gate", "start", "spec").code == 0
    assert "note: this clone has" in cli("status").out
    ahead = json.loads(cli("status", "--json").out)["remote"]["ahead"]
    Ledger.open(project).emit("session.started", {"session": "s1", "source": "claude"})
    shown, heavy = _light_status(project)
    assert heavy == []
    assert json.loads(shown.out)["remote"]["ahead"] == ahead + 1
    git(project, "push", "-q", "origin", "meridian/state")
    git(project, "fetch", "-q", "origin")
    shown, heavy = _light_status(project)
    assert heavy == [] and json.loads(shown.out)["remote"]["hint"] is None
    _same(_both(cli), (_fresh(cli), cli("status", "--json")))


@pytest.mark.parametrize("change", ["harness change", "pass without verdict"])
def test_git_config_cannot_hide_what_a_catch_up_reads(
        project: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch,
        change: str) -> None:
    """Attack: the repository's git config makes ``git log --raw`` print less than the
    commits change (``diff.relative`` with a work tree in the config and status run from
    a subdirectory lists only the paths under it: no ``events/`` change at all), so the
    catch-up sees commits that change nothing and keeps the view, hiding a harness
    weakening or a pass not backed by a verdict. The catch-up reads what the commits
    change whatever the config says: the answer is a fresh derivation's."""
    from meridian.records import now_ts
    from tests.adversarial.conftest import git
    from tests.adversarial.integrity_support import event_line, plumb_commit, shard_of

    assert cli("gate", "start", "spec").code == 0
    (project / "src").mkdir(exist_ok=True)
    git(project, "config", "core.worktree", str(project))
    git(project, "config", "diff.relative", "true")
    monkeypatch.chdir(project / "src")
    assert cli("status").code == 0
    assert _views(project)
    shard = shard_of(now_ts())
    if change == "harness change":
        line = event_line("harness.changed", {
            "changes": [".meridian/gates.yaml modified"], "commit": "0" * 40,
            "weakening": True})[1]
    else:
        line = event_line("gate.passed", {
            "gate": "spec", "verdict": "verdicts/spec/x.json", "overall": 9.5,
            "threshold": 7.0, "evaluator": "heuristic", "subject": "0" * 40})[1]
    plumb_commit(project, {shard: (line + "\n").encode()}, "hidden")
    shown = (cli("status"), cli("status", "--json"))
    for view in _views(project):
        view.unlink()
    fresh = (cli("status"), cli("status", "--json"))
    _same(shown, fresh)
    if change == "harness change":
        assert "WEAKENS enforcement" in shown[0].out
    else:
        assert "forged or inconsistent" in shown[0].out


@pytest.mark.parametrize("planted", ["fifo", "symlink"])
def test_a_file_planted_at_the_views_temporary_name_never_hangs_or_redirects_status(
        project: Path, cli: Callable[..., Proc], tmp_path: Path, planted: str) -> None:
    """Attack: a FIFO at the name the view is written to before its rename
    (``<view>.<pid>.tmp``: pids are few), so that the status (and the Claude hook, which
    writes its view the same way: past its timeout the tool call goes through) blocks
    forever on opening it; or a symlink there, so the write lands in another file. The
    temporary file is always created anew: status answers at once, nothing else written."""
    import os
    import threading

    assert cli("gate", "start", "spec").code == 0
    fresh = _fresh(cli)
    for view in _views(project):
        view.unlink()
    view = status_view.view_path(project / ".git", project)
    view.parent.mkdir(parents=True, exist_ok=True)
    temporary = view.with_name(f"{view.name}.{os.getpid()}.tmp")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("untouched\n")
    if planted == "fifo":
        os.mkfifo(temporary)
    else:
        temporary.symlink_to(elsewhere)
    result: list[Proc] = []
    worker = threading.Thread(target=lambda: result.append(cli("status")), daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():  # let the blocked writer go before failing
        os.close(os.open(temporary, os.O_RDONLY | os.O_NONBLOCK))
        worker.join(10)
    assert result and (result[0].code, result[0].out) == (fresh.code, fresh.out)
    assert elsewhere.read_text() == "untouched\n"
    assert not temporary.exists() and not temporary.is_symlink()
    assert json.loads(view.read_text())["body"]["key"]["tip"] is not None


@pytest.mark.parametrize("depth", [100, 950, 5000])
def test_a_line_nesting_deeper_than_records_do_is_derived_in_full(
        project: Path, cli: Callable[..., Proc], depth: int) -> None:
    """A block whose data nests ``depth`` deep, appended with plumbing. How deep a line
    nests decides whether a reader fails (near the recursion limit a line parses in a
    shallow stack and not in a deeper one), so the catch-up (the reader status shares
    with the PreToolUse view, ``state_catchup``) carries no view over a line nesting
    deeper than records do: the full path answers, and the answer is a fresh
    derivation's."""
    from meridian import state_catchup
    from meridian.ledger import Ledger
    from meridian.records import now_ts
    from tests.adversarial.integrity_support import event_line, plumb_commit, shard_of

    assert cli("gate", "start", "spec").code == 0
    assert cli("status").code == 0
    [view] = _views(project)
    body = json.loads(view.read_text())["body"]
    line = event_line("gate.blocked", {"gate": "spec", "source": "claude", "reason": "x"})[1]
    deep = line[:-1] + ',"nest":' + "[" * depth + "]" * depth + "}"
    plumb_commit(project, {shard_of(now_ts()): (deep + "\n").encode()}, "deep")
    key = {**body["key"], "tip": str(Ledger.open(project).tip())}
    assert state_catchup.caught_up(project / ".git", body, key) is None
    shown = _light_status(project)[0]
    fresh = (_fresh(cli), cli("status", "--json"))[1]
    assert shown.code == fresh.code
    if shown.code == 0:
        assert json.loads(shown.out) == json.loads(fresh.out)


def test_a_short_read_from_git_is_not_caught_up(project: Path, cli: Callable[..., Proc],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``git cat-file --batch`` output that ends early (a git killed mid-write, a pipe cut
    short) at a line boundary of the shard: what is left reads as a block alone, the
    ``gate.started`` after it is cut off. The status view is derived in full, never
    caught up over what is left of the blob."""
    from meridian import state_catchup
    from meridian.ledger import Ledger
    from tests.adversarial.integrity_support import event_line, plumb_commit, shard_of

    assert cli("gate", "start", "spec").code == 0
    assert cli("status").code == 0
    [view] = _views(project)
    body = json.loads(view.read_text())["body"]
    block = event_line("gate.blocked", {"gate": "spec", "source": "claude", "reason": "x"})[1]
    start = event_line("gate.started", {"gate": "impl"})[1]
    # a shard of its own (a month with none yet): the one blob the catch-up reads
    plumb_commit(project, {shard_of("2099-01-01T00:00:00.000000Z"): f"{block}\n{start}\n"
                           .encode()}, "two")
    key = {**body["key"], "tip": str(Ledger.open(project).tip())}
    common = project / ".git"
    assert state_catchup.caught_up(common, body, key) is None  # whole: a state event
    real = state_catchup._git

    def cut(common: Path, args: list[str], data: bytes | None = None, **kw: object) -> bytes:
        out = real(common, args, data, **kw)  # type: ignore[arg-type]
        return out[:out.index(start.encode())] if args[:1] == ["cat-file"] else out

    monkeypatch.setattr(state_catchup, "_git", cut)
    assert state_catchup.caught_up(common, body, key) is None
