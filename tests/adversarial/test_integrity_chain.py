"""Attack: with spec -> impl -> release all passed, reopen spec and keep working on the
later gates as if nothing happened.

Layer: state derivation (impl and release are stale, ``needs spec reopened``, the second
one transitively) and every local guardrail that reads it: the pre-commit hook, the
pre-push hook (for a ``--no-verify`` commit) and the Claude Code PreToolUse hook, run as
``meridian init --claude`` wrote it, all refuse the stale gates' files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.adversarial.conftest import CHAIN, CLEAN_MODULE
from tests.adversarial.guard_support import base_env, bash, hook, make_project, run, tool

FILES = {"spec": "spec/spec.py", "impl": "src/area.py", "release": "release/notes.py"}
TEXTS = {"spec": '"""Spec."""\nSIDES = 2\n', "impl": CLEAN_MODULE,
         "release": '"""Release 1."""\nVERSION = "1"\n'}


def _meridian(root: Path, home: Path, *args: str) -> str:
    return run([sys.executable, "-P", "-m", "meridian", *args], root, base_env(home)).stdout


def _git(root: Path, home: Path, *args: str, check: bool = True):  # type: ignore[no-untyped-def]
    return run(["git", *args], root, base_env(home), check=check)


def test_reopen_locks_the_whole_chain_at_commit_push_and_in_claude(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = make_project(tmp_path / "project", home)
    (root / ".meridian" / "gates.yaml").write_text(CHAIN)
    _git(root, home, "commit", "-qam", "three gates")
    bare = tmp_path / "remote.git"
    run(["git", "init", "-q", "--bare", str(bare)], tmp_path, base_env(home))
    _git(root, home, "remote", "add", "origin", str(bare))
    for gate in ("spec", "impl", "release"):
        _meridian(root, home, "gate", "start", gate)
        path = root / FILES[gate]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TEXTS[gate])
        _git(root, home, "add", "-A")
        _git(root, home, "commit", "-qm", f"{gate} work")  # through the pre-commit hook
        _meridian(root, home, "gate", "submit", gate)
    _git(root, home, "push", "-q", "origin", "main")
    _meridian(root, home, "gate", "reopen", "spec", "--reason", "the spec was wrong")

    statuses = {g["gate"]: g for g in json.loads(_meridian(root, home, "status",
                                                           "--json"))["gates"]}
    assert statuses["spec"]["state"] == "in_progress"
    for gate in ("impl", "release"):
        assert (statuses[gate]["state"], statuses[gate]["stale_needs"]) == (
            "stale", "needs spec reopened")

    for gate, unmet in (("impl", "spec (in_progress)"), ("release", "impl (stale)")):
        target = root / FILES[gate]
        # Claude Code: a Write, an Edit and a Bash redirect into the file are all denied.
        write = hook(root, home, "PreToolUse", tool("Write", file_path=str(target),
                                                    content="x = 2\n"))
        assert write.denied and f"gate {gate}" in write.reason and unmet in write.reason, write
        edit = hook(root, home, "PreToolUse", tool("Edit", file_path=str(target),
                                                   old_string="1", new_string="2"))
        assert edit.denied, edit
        redirect = hook(root, home, "PreToolUse", bash(f"echo 'x = 3' >> {FILES[gate]}"))
        assert redirect.denied, redirect
        # git commit: the pre-commit hook refuses (exit 2 from the hook).
        target.write_text(target.read_text() + "# more\n")
        _git(root, home, "add", FILES[gate])
        refused = _git(root, home, "commit", "-m", f"touch {gate}", check=False)
        assert refused.returncode != 0 and gate in refused.stderr, refused
        # --no-verify gets the commit in; pre-push refuses to send it.
        _git(root, home, "commit", "-q", "--no-verify", "-m", f"sneak {gate}")
        pushed = _git(root, home, "push", "origin", "main", check=False)
        assert pushed.returncode != 0 and f"gate {gate}" in pushed.stderr, pushed
        _git(root, home, "reset", "-q", "--hard", "HEAD~1")
    # The open gate's own files stay writable: the lock is the stale gates', not a freeze.
    spec = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / FILES["spec"]),
                                               content=TEXTS["spec"]))
    assert not spec.denied, spec
