"""Shared by the guardrail attacks (test_guard_*.py): a real Meridian project set up by
``meridian init --claude``, and the hook run exactly as Claude Code runs it.

``hook(...)`` takes the command string ``init --claude`` wrote into
``.claude/settings.json``, runs it through ``/bin/sh`` with the environment Claude Code
gives a hook (its own, the ``env`` of the project's settings files, and
``CLAUDE_PROJECT_DIR``), and pipes a payload in the documented shape: ``session_id``,
``transcript_path``, ``cwd``, ``permission_mode``, ``hook_event_name`` and the event's
fields (``tool_name``, ``tool_input``, ``tool_use_id`` for PreToolUse; ``agent_id`` when
the call comes from a subagent).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

GATES = """\
version: 1
gates:
  - id: schema
    description: The data schema.
    artifacts: ["schema/**"]
  - id: api
    needs: [schema]
    description: The HTTP API.
    artifacts: ["api/**"]
"""

GITCONFIG = "[user]\n\tname = Guard Test\n\temail = guard@meridian.invalid\n" \
            "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"


class Outcome:
    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        self.code, self.out, self.err = proc.returncode, proc.stdout, proc.stderr

    @property
    def decision(self) -> dict[str, Any] | None:
        return json.loads(self.out) if self.out.strip() else None

    @property
    def denied(self) -> bool:
        decision = self.decision or {}
        return decision.get("hookSpecificOutput", {}).get("permissionDecision") == "deny"

    @property
    def reason(self) -> str:
        return str((self.decision or {}).get("hookSpecificOutput", {})
                   .get("permissionDecisionReason", ""))

    def __repr__(self) -> str:
        return f"Outcome(code={self.code}, out={self.out!r}, err={self.err!r})"


def base_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CLAUDE_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), GIT_CONFIG_NOSYSTEM="1")
    return env


def run(args: list[str], cwd: Path, env: dict[str, str], check: bool = True,
        input: str | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False,
                          input=input, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed: {proc.stdout}{proc.stderr}")
    return proc


def make_project(root: Path, home: Path, python: str = sys.executable) -> Path:
    """A committed Meridian project (schema open, api locked behind it) with the git hooks
    and Claude Code's settings as ``meridian init --claude`` writes them."""
    home.mkdir(parents=True, exist_ok=True)
    if not (home / ".gitconfig").exists():
        (home / ".gitconfig").write_text(GITCONFIG)
    env = base_env(home)
    root.mkdir(parents=True, exist_ok=True)
    run(["git", "init", "-q", "-b", "main"], root, env)
    (root / "README.md").write_text("# project\n")
    run(["git", "add", "README.md"], root, env)
    run(["git", "commit", "-q", "-m", "initial"], root, env)
    run([python, "-P", "-m", "meridian", "init", "--claude"], root, env)
    (root / ".meridian" / "gates.yaml").write_text(GATES)
    run(["git", "add", "-A"], root, env)
    run(["git", "commit", "-q", "-m", "meridian setup"], root, env)
    return root


def settings_command(root: Path, event: str) -> str:
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    [command] = [hook["command"] for group in settings["hooks"][event]
                 for hook in group["hooks"] if "meridian hook claude" in hook["command"]]
    return command


def claude_env(root: Path, home: Path, *, project_dir: Path | None = None,
               without_project_dir: bool = False, extra: dict[str, str] | None = None
               ) -> dict[str, str]:
    env = base_env(home)
    for name in ("settings.json", "settings.local.json"):
        path = root / ".claude" / name
        if path.exists():
            env.update(json.loads(path.read_text()).get("env", {}))
    if not without_project_dir:
        env["CLAUDE_PROJECT_DIR"] = str(project_dir or root)
    env.update(extra or {})
    return env


ISOLATED = '"$p" -I -m meridian'  # how the settings' command runs Meridian


def hook(root: Path, home: Path, event: str, fields: dict[str, Any] | str, *,
         cwd: Path | None = None, env: dict[str, str] | None = None,
         command: str | None = None) -> Outcome:
    """The settings' command through a shell, with a payload in the documented shape."""
    where = cwd or root
    if isinstance(fields, dict):
        payload = json.dumps({"session_id": "guard-session", "transcript_path": "/dev/null",
                              "cwd": str(where), "permission_mode": "default",
                              "hook_event_name": event, **fields})
    else:
        payload = fields
    if command is None and env is not None and env.get("PYTHONPROFILEIMPORTTIME"):
        # the settings' command runs Python isolated (-I), which ignores the variable:
        # ask for the same report with -X importtime in the exact command
        command = settings_command(root, event)
        assert command.count(ISOLATED) == 1, command
        command = command.replace(ISOLATED, ISOLATED.replace(" -I ", " -I -X importtime "))
    proc = subprocess.run(command or settings_command(root, event), shell=True, input=payload,
                          cwd=where, env=env or claude_env(root, home), capture_output=True,
                          text=True, check=False, timeout=60)
    return Outcome(proc)


def bash(command: str) -> dict[str, Any]:
    return {"tool_name": "Bash", "tool_use_id": "toolu_guard",
            "tool_input": {"command": command, "description": "run it"}}


def tool(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"tool_name": name, "tool_use_id": "toolu_guard", "tool_input": tool_input}
