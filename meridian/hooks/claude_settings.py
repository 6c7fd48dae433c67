"""``meridian init --claude``: Meridian's hooks in Claude Code's project settings.

Two files, because one is committed and one is not:

- ``.claude/settings.json`` (committed, the team's) gets the hook entries, each in a
  group of its own, with a **portable** command: it runs the Meridian named by
  ``$MERIDIAN_PYTHON`` (``python -I``, isolated: the work tree is never on ``sys.path``,
  so a ``meridian/`` folder there cannot stand in for Meridian, and no ``PYTHON*``
  variable nor a ``.pth`` file in the user site runs code before it), else the
  ``meridian`` on ``PATH`` (a console script: its own folder, not the work tree, is first
  on ``sys.path``), else ``python3 -I -m meridian``. When none is there it says so in one
  line on stderr; for PreToolUse it then exits 2, so the tool call is blocked rather than
  let through unchecked, and it blocks as well when Meridian itself fails to start.
- ``.claude/settings.local.json`` (this machine's; git-ignored through
  ``.git/info/exclude`` when nothing ignores it yet) sets ``env.MERIDIAN_PYTHON`` to the
  interpreter running Meridian now. Claude Code applies a settings file's ``env`` to the
  session, and hooks inherit it.

The merge is polite: a user's own groups are never widened, reordered or rewritten (a
Meridian command found inside a user's group is taken out of it, and only that); the
file keeps its indentation and its non-ASCII text; a second run changes nothing.
``uninstall`` (``meridian hooks uninstall --claude``) removes exactly the entries
install adds, and the containers it created when they are left empty.

When the ``claude`` on PATH is v2.1.295 or later, the PreToolUse hook also carries
``"onFailure": "block"`` (Claude Code then blocks a tool call whose hook cannot start,
times out or exits oddly, instead of letting it through); docs/claude-code.md says why
only then.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from meridian.errors import ConfigError

SETTINGS_FILE = Path(".claude") / "settings.json"
LOCAL_SETTINGS_FILE = Path(".claude") / "settings.local.json"
HOOK_COMMAND_MARK = "meridian hook claude"
PYTHON_VARIABLE = "MERIDIAN_PYTHON"
TIMEOUT_S = 60
ON_FAILURE_SINCE = (2, 1, 295)
EXCLUDE_LINE = "/.claude/settings.local.json"
EXCLUDE_COMMENT = "# added by meridian init --claude (machine-specific Claude Code settings)"
# event -> matcher (None: the event takes no tool matcher). Anchored: Claude Code reads a
# matcher with other characters than letters and | as a regex matching anywhere.
# MultiEdit is gone from the documented tool list (see docs/claude-code.md).
EVENTS: dict[str, str | None] = {
    "SessionStart": None,
    "PreToolUse": "^(Write|Edit|NotebookEdit|Bash|PowerShell|mcp__.*)$",
    "Stop": None,
    "SubagentStop": None,
    "SessionEnd": None,  # ends the session's interval of active time (calibration)
}


def hook_command(event: str) -> str:
    """The exact, machine-independent shell command Claude Code runs for ``event``."""
    closed = event == "PreToolUse"
    missing = (f"meridian: cannot run the Claude Code {event} hook: ${PYTHON_VARIABLE} does not "
               "name a Python, `meridian` is not on PATH and python3 has no meridian; install "
               "Meridian and run `meridian init --claude`"
               + ("; the tool call is denied until then" if closed else ""))
    pick = (f": {HOOK_COMMAND_MARK} {event}; "  # names the hook in /hooks and marks it ours
            f'p="${{{PYTHON_VARIABLE}:-}}"; '
            f'if [ -n "$p" ] && [ -x "$p" ]; then set -- "$p" -I -m meridian; '
            'elif command -v meridian >/dev/null 2>&1; then set -- meridian; '
            'elif python3 -I -c "import meridian" >/dev/null 2>&1; then '
            'set -- python3 -I -m meridian; '
            f"else echo '{missing}' >&2; exit {2 if closed else 1}; fi; ")
    if not closed:
        # Exit 2 would block a stop (or erase a prompt); Meridian never means it for these
        # events, so a 2 (an older Meridian's usage error, say) is turned into a warning.
        return (pick + f'"$@" hook claude {event}; s=$?; if [ "$s" -eq 2 ]; then echo '
                f'"meridian: the {event} hook exited 2 (not blocking)" >&2; exit 1; fi; '
                'exit "$s"')
    # Meridian answers PreToolUse with exit 0 (its decision is JSON); any other exit means
    # it did not run (no module, a broken install): block, saying so.
    return (pick + f'"$@" hook claude {event}; s=$?; '
            'if [ "$s" -ne 0 ] && [ "$s" -ne 2 ]; then echo "meridian: the PreToolUse hook '
            'failed to run ($* exited $s); the tool call is denied: reinstall Meridian or run '
            '\\`meridian init --claude\\`" >&2; exit 2; fi; exit "$s"')


def is_meridians(hook: Any) -> bool:
    return isinstance(hook, dict) and HOOK_COMMAND_MARK in str(hook.get("command", ""))


def _is_meridian_group(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return bool(hooks) and isinstance(hooks, list) and all(is_meridians(h) for h in hooks)


def claude_version() -> tuple[int, ...] | None:
    """The version of the ``claude`` on PATH, or None (not installed, or unreadable)."""
    found = shutil.which("claude")
    if found is None:
        return None
    try:
        proc = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=10,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", proc.stdout)
    return tuple(int(part) for part in match.groups()) if match else None


def _entry(event: str, on_failure: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    matcher = EVENTS[event]
    if matcher is not None:
        entry["matcher"] = matcher
    hook: dict[str, Any] = {"type": "command", "command": hook_command(event),
                            "timeout": TIMEOUT_S}
    if on_failure and event == "PreToolUse":
        hook["onFailure"] = "block"
    entry["hooks"] = [hook]
    return entry


class SettingsText:
    """A settings file's JSON and how it was written (indent, trailing newline)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.existed = path.exists()
        text = path.read_text(encoding="utf-8") if self.existed else ""
        self.indent: int | str = 2
        found = re.search(r"\n([ \t]+)\S", text)
        if found:
            self.indent = len(found.group(1)) if " " in found.group(1) else found.group(1)
        self.newline = text.endswith("\n") or not self.existed
        self.data: dict[str, Any] = {}
        if text.strip():
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg}); fix it and "
                                  "run `meridian init --claude` again") from None
            if not isinstance(data, dict):
                raise ConfigError(f"{path}: expected a JSON object of settings")
            self.data = data
        self.original = json.loads(json.dumps(self.data))

    def changed(self) -> bool:
        return self.data != self.original

    def write(self) -> None:
        if not self.data and not self.existed:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.data, indent=self.indent, ensure_ascii=False)
        temporary = self.path.with_name(f".{self.path.name}.meridian-tmp")
        temporary.write_text(text + ("\n" if self.newline else ""), encoding="utf-8")
        os.replace(temporary, self.path)


def _hooks_of(settings: dict[str, Any], where: Path) -> dict[str, Any]:
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f"{where}: hooks: expected an object of events")
    return hooks


def merge(settings: dict[str, Any], *, on_failure: bool = False,
          where: Path = SETTINGS_FILE) -> tuple[dict[str, Any], list[str]]:
    """``settings`` with Meridian's hook groups merged in, and what changed per event."""
    hooks = _hooks_of(settings, where)
    changes = []
    for event in EVENTS:
        wanted = _entry(event, on_failure)
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ConfigError(f"{where}: hooks.{event}: expected a list of matcher groups")
        # A Meridian command inside a user's group (an older merge put it there): take it
        # out, leaving the user's matcher and hooks as they were.
        taken = False
        for group in entries:
            if isinstance(group, dict) and not _is_meridian_group(group) \
                    and isinstance(group.get("hooks"), list) \
                    and any(is_meridians(h) for h in group["hooks"]):
                group["hooks"] = [h for h in group["hooks"] if not is_meridians(h)]
                taken = True
        ours = [index for index, group in enumerate(entries) if _is_meridian_group(group)]
        if not ours:
            entries.append(wanted)
            changes.append(f"{event}: {'moved into a group of its own' if taken else 'added'}")
            continue
        first, *extra = ours
        for index in reversed(extra):
            del entries[index]
        if entries[first] != wanted or extra or taken:
            entries[first] = wanted
            changes.append(f"{event}: updated")
    return settings, changes


def unmerge(settings: dict[str, Any], where: Path = SETTINGS_FILE) -> list[str]:
    """Remove Meridian's hooks; events and ``hooks`` left empty go too."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    changes = []
    for event in list(hooks):
        entries = hooks[event]
        if not isinstance(entries, list):
            continue
        kept = []
        for group in entries:
            if _is_meridian_group(group):
                continue
            if isinstance(group, dict) and isinstance(group.get("hooks"), list) \
                    and any(is_meridians(h) for h in group["hooks"]):
                group = {**group, "hooks": [h for h in group["hooks"] if not is_meridians(h)]}
            kept.append(group)
        if kept != entries:
            changes.append(f"{event}: removed")
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks:
        del settings["hooks"]
    return changes


def _ignored(root: Path) -> bool:
    proc = subprocess.run(["git", "check-ignore", "-q", str(LOCAL_SETTINGS_FILE)], cwd=root,
                          capture_output=True, check=False)
    return proc.returncode == 0


def _exclude_path(root: Path) -> Path:
    from meridian import gitio

    return gitio.common_dir(gitio.open_repo(root)) / "info" / "exclude"


def _exclude_local(root: Path) -> bool:
    """Make git ignore settings.local.json (``.git/info/exclude``); True when added."""
    if _ignored(root):
        return False
    exclude = _exclude_path(root)
    exclude.parent.mkdir(parents=True, exist_ok=True)
    text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if text and not text.endswith("\n"):
        text += "\n"
    exclude.write_text(text + f"{EXCLUDE_COMMENT}\n{EXCLUDE_LINE}\n", encoding="utf-8")
    return True


def _unexclude_local(root: Path) -> bool:
    exclude = _exclude_path(root)
    if not exclude.exists():
        return False
    text = exclude.read_text(encoding="utf-8")
    ours = f"{EXCLUDE_COMMENT}\n{EXCLUDE_LINE}\n"
    if ours not in text:
        return False
    exclude.write_text(text.replace(ours, "", 1), encoding="utf-8")
    return True


def merge_into(root: Path, outcome: Any, python: str | None = None) -> None:
    """``meridian init --claude``: write both settings files; report on ``outcome``."""
    settings = SettingsText(root / SETTINGS_FILE)
    version = claude_version()
    on_failure = version is not None and version >= ON_FAILURE_SINCE
    _, changes = merge(settings.data, on_failure=on_failure, where=settings.path)
    if changes:
        settings.write()
        verb = "merged into" if settings.existed else "created"
        outcome.created.append(f"{SETTINGS_FILE} ({verb}: {', '.join(changes)})")
    else:
        outcome.kept.append(f"{SETTINGS_FILE} (Meridian's Claude Code hooks already present)")
    local = SettingsText(root / LOCAL_SETTINGS_FILE)
    env = local.data.setdefault("env", {})
    if not isinstance(env, dict):
        raise ConfigError(f"{local.path}: env: expected an object of variables")
    env[PYTHON_VARIABLE] = python or sys.executable
    if local.changed():
        local.write()
        outcome.created.append(f"{LOCAL_SETTINGS_FILE} ({PYTHON_VARIABLE}={env[PYTHON_VARIABLE]})")
    else:
        outcome.kept.append(f"{LOCAL_SETTINGS_FILE} ({PYTHON_VARIABLE} already set)")
    if _exclude_local(root):
        outcome.created.append(f".git/info/exclude (ignores {LOCAL_SETTINGS_FILE})")


def remove_from(root: Path) -> list[str]:
    """``meridian hooks uninstall --claude``: undo ``merge_into``; what changed."""
    done = []
    settings = SettingsText(root / SETTINGS_FILE)
    changes = unmerge(settings.data, settings.path)
    if changes:
        if settings.data:
            settings.write()
        else:
            settings.path.unlink()
        done.append(f"{SETTINGS_FILE}: {', '.join(changes)}")
    local = SettingsText(root / LOCAL_SETTINGS_FILE)
    env = local.data.get("env")
    if isinstance(env, dict) and PYTHON_VARIABLE in env:
        del env[PYTHON_VARIABLE]
        if not env:
            del local.data["env"]
        if local.data:
            local.write()
        else:
            local.path.unlink()
        done.append(f"{LOCAL_SETTINGS_FILE}: {PYTHON_VARIABLE} removed")
    if _unexclude_local(root):
        done.append(f".git/info/exclude: {EXCLUDE_LINE} removed")
    for directory in (root / ".claude",):
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
    return done
