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


def test_a_passed_gate_is_never_answered_from_a_view(project: Path,
                                                     cli: Callable[..., Proc]) -> None:
    assert cli("status").code == 0
    pass_gate(cli, project, "spec", "spec/spec.py")
    shown = cli("status", "--json")
    assert json.loads(shown.out)["gates"][0]["state"] == "passed"
    assert not _views(project)  # the stale one was for the old tip; none with a pass
    # Its files change in the work tree (no commit, no event): stale at once.
    write(project, "spec/spec.py", '"""Changed."""\nSIDES = 3\n')
    shown = cli("status", "--json")
    assert json.loads(shown.out)["gates"][0]["state"] == "stale"
    assert cli("status", "--strict").code == 1
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
