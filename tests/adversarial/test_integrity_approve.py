"""Attack: approve a gate from the agent's Bash tool by a route the PreToolUse hook's
check of ``meridian gate approve`` did not look into: the command wrapped in a shell
(``sh -c``, ``bash -lc``), in ``script -qec`` (a pseudo-terminal, the route the issue
names), ``eval``, ``xargs``, ``find -exec``, a runner (``uv run``, ``uvx``), Python with
interpreter options (``python -P -m meridian``) or ``python -c`` calling Meridian.

Layer: local guardrails (the Claude Code PreToolUse hook, ``hooks/bash_writes``
``hook_bypasses``, through the exact command ``init --claude`` writes). The denial is
defence in depth: the token (``token_sha256``) is the barrier, and a same-user program
the hook never sees (a script file, a variable holding the command name) is not
inspected; docs/security.md says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.guard_support import hook, make_project, tool

WRAPPED = [
    "sh -c 'meridian gate approve api --token abc'",
    "bash -lc \"meridian gate approve api --token abc\"",
    "script -qec 'meridian gate approve api --token abc' /dev/null",
    "eval 'meridian gate approve api --token abc'",
    "echo api | xargs -I{} meridian gate approve {} --token abc",
    "find . -maxdepth 0 -exec meridian gate approve api --token abc \\;",
    "uv run meridian gate approve api --token abc",
    "uvx meridian gate approve api --token abc",
    "python -P -m meridian gate approve api --token abc",
    "python3 -Im meridian gate approve api --token abc",
    "python -c 'from meridian.cli import main; main([\"gate\", \"approve\", \"api\"])'",
    "bash -c \"sh -c 'meridian gate approve api'\"",
]


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("approve")
    home = base / "home"
    return make_project(base / "project", home), home


@pytest.mark.parametrize("command", WRAPPED)
def test_a_wrapped_gate_approve_is_denied(guarded: tuple[Path, Path], command: str) -> None:
    root, home = guarded
    outcome = hook(root, home, "PreToolUse", tool("Bash", command=command))
    assert outcome.denied, (command, outcome)
    assert "approve" in outcome.reason, outcome


@pytest.mark.parametrize("command", [
    "sh -c 'ls -la'",
    "python -m meridian status",
    "uv run pytest -q",
    "find . -name '*.py' -exec grep -n approve {} \\;",
    "python -c 'print(1)'",
])
def test_wrappers_of_harmless_commands_still_run(guarded: tuple[Path, Path],
                                                 command: str) -> None:
    root, home = guarded
    outcome = hook(root, home, "PreToolUse", tool("Bash", command=command))
    assert not outcome.denied, (command, outcome)
