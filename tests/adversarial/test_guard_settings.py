"""Attack (by accident, as an install): widen a user's hooks, or leave enforcement to a
path that exists on one machine only.

Layer: ``meridian init --claude`` / ``meridian hooks uninstall --claude``. Meridian's
entries live in groups of their own; a user's group is never widened or reordered; the
file keeps its indent and non-ASCII text; uninstall removes exactly what install added;
the committed file holds only portable commands, the machine's interpreter goes into
``.claude/settings.local.json`` (git-ignored).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.adversarial.guard_support import base_env, run

USER_SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "permissions": {"allow": ["Bash(npm test)", "Read(./docs/**)"],
                    "deny": ["Read(./.env)"]},
    "env": {"GREETING": "café ☕"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Write", "hooks": [{"type": "command",
                                            "command": "./scripts/lint-on-write.sh"}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/guard.sh",
                                           "timeout": 5}]},
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send 'Claude a fini'"}]}],
        "Notification": [{"matcher": "", "hooks": [{"type": "command",
                                                     "command": "say done"}]}],
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
}


def _project(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = T\n\temail = t@t.invalid\n")
    root = tmp_path / "project"
    root.mkdir()
    env = base_env(home)
    run(["git", "init", "-q", "-b", "main"], root, env)
    return root, home, env


def _meridian(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-P", "-m", "meridian", *args], root, env)


def test_install_then_uninstall_leaves_a_realistic_file_byte_for_byte(tmp_path: Path) -> None:
    root, _, env = _project(tmp_path)
    settings = root / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(USER_SETTINGS, indent=4, ensure_ascii=False) + "\n"
    settings.write_text(original, encoding="utf-8")
    _meridian(root, env, "init", "--claude")
    text = settings.read_text(encoding="utf-8")
    assert "café ☕" in text and "\\u00e9" not in text  # non-ASCII kept as written
    assert '\n    "permissions"' in text  # the four-space indent kept
    merged = json.loads(text)
    # the user's groups: same matchers, same hooks, same order, first
    assert merged["hooks"]["PreToolUse"][:2] == USER_SETTINGS["hooks"]["PreToolUse"]
    assert merged["hooks"]["Stop"][0] == USER_SETTINGS["hooks"]["Stop"][0]
    assert merged["hooks"]["Notification"] == USER_SETTINGS["hooks"]["Notification"]
    # Meridian's: one group of its own per event, after the user's
    for event in ("SessionStart", "PreToolUse", "Stop", "SubagentStop"):
        ours = [g for g in merged["hooks"][event]
                if any("meridian hook claude" in h["command"] for h in g["hooks"])]
        assert len(ours) == 1 and len(ours[0]["hooks"]) == 1
        assert merged["hooks"][event][-1] == ours[0]
        assert sys.executable not in ours[0]["hooks"][0]["command"]
    assert merged["hooks"]["PreToolUse"][-1]["matcher"] == \
        "^(Write|Edit|NotebookEdit|Bash|PowerShell|mcp__.*)$"
    # the machine's interpreter is local, and git ignores that file
    local = json.loads((root / ".claude" / "settings.local.json").read_text())
    assert local == {"env": {"MERIDIAN_PYTHON": sys.executable}}
    ignored = subprocess.run(["git", "check-ignore", ".claude/settings.local.json"], cwd=root,
                             env=env, capture_output=True, check=False)
    assert ignored.returncode == 0
    # idempotent
    again = _meridian(root, env, "init", "--claude")
    assert settings.read_text(encoding="utf-8") == text
    assert "Meridian's Claude Code hooks already present" in again.stdout
    # uninstall: exactly what install added goes
    _meridian(root, env, "hooks", "uninstall", "--claude")
    assert settings.read_text(encoding="utf-8") == original
    assert not (root / ".claude" / "settings.local.json").exists()
    exclude = (root / ".git" / "info" / "exclude").read_text()
    assert "settings.local.json" not in exclude


def test_a_user_group_holding_meridians_old_command_is_given_back(tmp_path: Path) -> None:
    """An older merge put Meridian's command into the user's ``Write`` group and widened
    its matcher; the user's hook then ran on Bash and Edit too. The group gets its own
    matcher back (here the user's original one is unknowable, so it is kept as found,
    never widened again) and loses only Meridian's command."""
    root, _, env = _project(tmp_path)
    settings = root / ".claude" / "settings.json"
    settings.parent.mkdir()
    legacy = {"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [
        {"type": "command", "command": "./scripts/lint-on-write.sh"},
        {"type": "command", "command": "/old/python -m meridian hook claude PreToolUse",
         "timeout": 60}]}]}}
    settings.write_text(json.dumps(legacy, indent=2))
    _meridian(root, env, "init", "--claude")
    merged = json.loads(settings.read_text())
    user, ours = merged["hooks"]["PreToolUse"]
    assert user == {"matcher": "Write", "hooks": [
        {"type": "command", "command": "./scripts/lint-on-write.sh"}]}
    assert ours["hooks"][0]["command"].startswith(": meridian hook claude PreToolUse; ")


def test_on_failure_block_is_written_only_for_a_claude_code_that_reads_it(
        tmp_path: Path) -> None:
    root, _home, env = _project(tmp_path)
    fake = tmp_path / "bin"
    fake.mkdir()
    claude = fake / "claude"
    claude.write_text("#!/bin/sh\necho '2.1.317 (Claude Code)'\n")
    claude.chmod(0o755)
    _meridian(root, {**env, "PATH": f"{fake}:{env['PATH']}"}, "init", "--claude")
    merged = json.loads((root / ".claude" / "settings.json").read_text())
    [pre] = merged["hooks"]["PreToolUse"]
    assert pre["hooks"][0]["onFailure"] == "block"
    assert all("onFailure" not in g["hooks"][0] for event in ("Stop", "SubagentStop")
               for g in merged["hooks"][event])
    claude.write_text("#!/bin/sh\necho '2.1.200 (Claude Code)'\n")
    _meridian(root, {**env, "PATH": f"{fake}:{env['PATH']}"}, "init", "--claude")
    [pre] = json.loads((root / ".claude" / "settings.json").read_text())["hooks"]["PreToolUse"]
    assert "onFailure" not in pre["hooks"][0]


def test_every_entry_carries_a_timeout_that_covers_meridians_own_deadline(
        tmp_path: Path) -> None:
    """SessionEnd hooks get a 1.5 s budget unless a per-hook ``timeout`` raises it (up to
    60 s, the hooks reference's SessionEnd section); recording the session's end needs
    more than that on a loaded machine. Every other entry must outlast the 40 s deadline
    after which Meridian answers by itself (a deny for PreToolUse)."""
    from meridian.commands.hook import DEADLINE_S

    root, _, env = _project(tmp_path)
    _meridian(root, env, "init", "--claude")
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    for event in ("SessionStart", "PreToolUse", "Stop", "SubagentStop", "SessionEnd"):
        [hook] = [h for group in settings["hooks"][event] for h in group["hooks"]
                  if "meridian hook claude" in h["command"]]
        assert DEADLINE_S < hook["timeout"] <= 60, (event, hook)
