"""Attack: reopen an early gate, keep the later passes, push on.

Layer: state derivation (``gates/state.py``: a passed gate whose need was reopened or
failed since is stale, ``needs X reopened``, transitively) and the local hooks that read
it (``hooks/gate_view.py``: such a gate's files are locked like a locked gate's).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.adversarial.conftest import Proc, pass_gate, run_git, write
from tests.conftest import git

SPEC_TEXT = '"""The specification: area of a rectangle."""\nSIDES = 2\n'


def _status(cli: Callable[..., Proc]) -> dict[str, dict]:
    result = cli("status", "--json")
    assert result.code == 0, result
    return {g["gate"]: g for g in json.loads(result.out)["gates"]}


def _all_passed(cli: Callable[..., Proc], root: Path) -> None:
    pass_gate(cli, root, "spec", "spec/spec.py", SPEC_TEXT)
    pass_gate(cli, root, "impl", "src/area.py")
    pass_gate(cli, root, "release", "release/notes.py", '"""Release 1."""\nVERSION = "1"\n')
    assert {g: s["state"] for g, s in _status(cli).items()} == {
        "spec": "passed", "impl": "passed", "release": "passed"}


def test_reopen_makes_every_dependant_stale_transitively(project: Path,
                                                         cli: Callable[..., Proc]) -> None:
    _all_passed(cli, project)
    assert cli("gate", "reopen", "spec", "--reason", "the spec was wrong").code == 0
    statuses = _status(cli)
    assert statuses["spec"]["state"] == "in_progress"
    for gate in ("impl", "release"):
        assert statuses[gate]["state"] == "stale"
        assert statuses[gate]["stale_needs"] == "needs spec reopened"
    text = cli("status").out
    assert "needs spec reopened" in text
    strict = cli("status", "--strict")
    assert strict.code == 1 and "needs spec reopened" in strict.err
    # release cannot be passed again behind spec's back.
    assert cli("gate", "reopen", "release", "--reason", "again").code == 0
    submit = cli("gate", "submit", "release")
    assert submit.code == 2 and "impl (stale)" in submit.err


def test_dependants_stay_stale_after_the_need_passes_again(project: Path,
                                                           cli: Callable[..., Proc]) -> None:
    _all_passed(cli, project)
    assert cli("gate", "reopen", "impl", "--reason", "a bug").code == 0
    assert cli("gate", "submit", "impl").code == 0
    statuses = _status(cli)
    assert statuses["impl"]["state"] == "passed"
    assert statuses["release"]["state"] == "stale"  # judged before impl was redone
    assert cli("gate", "submit", "release").code == 0
    assert _status(cli)["release"]["state"] == "passed"


def test_a_failed_need_makes_the_dependant_stale(project: Path,
                                                 cli: Callable[..., Proc]) -> None:
    _all_passed(cli, project)
    assert cli("gate", "reopen", "impl", "--reason", "regression").code == 0
    write(project, "src/area.py", "def area(w, h):\n    raise NotImplementedError\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "stub")
    assert cli("gate", "submit", "impl").code == 2
    release = _status(cli)["release"]
    assert (release["state"], release["stale_needs"]) == ("stale", "needs impl failed")


def test_reopen_locks_the_dependants_files_at_commit(project: Path,
                                                     cli: Callable[..., Proc]) -> None:
    _all_passed(cli, project)
    assert cli("hooks", "install").code == 0
    assert cli("gate", "reopen", "impl", "--reason", "rework").code == 0
    write(project, "release/notes.py", '"""Release 2."""\nVERSION = "2"\n')
    git(project, "add", "release/notes.py")
    result = run_git(project, "commit", "-m", "bump the release while impl is reopened")
    assert result.code != 0, result
    assert "release" in result.err and "impl" in result.err
