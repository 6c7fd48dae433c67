"""``meridian init --claude``: Meridian's entries in ``.claude/settings.json``.

Merged, never clobbered: the user's own hooks and every other setting stay as they
were, in their order. An entry is Meridian's when its command runs ``meridian hook
claude``; such an entry is left alone when identical, rewritten in place when its
command changed (another interpreter path), and added when missing. Running it twice
changes nothing.

The command is ``<python> -m meridian hook claude <Event>`` with the absolute path of
the interpreter running Meridian now (quoted for the shell Claude Code runs hooks
with). A bare ``meridian`` would depend on Claude Code's PATH, and a hook that cannot
start is a non-blocking error: enforcement would be silently off. The path is
machine-specific; on another machine ``meridian init --claude`` rewrites it.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from meridian.errors import ConfigError

SETTINGS_FILE = Path(".claude") / "settings.json"
HOOK_COMMAND_MARK = "meridian hook claude"
TIMEOUT_S = 60
# event -> matcher (None: the event takes no tool matcher)
EVENTS: dict[str, str | None] = {
    "SessionStart": None,
    "PreToolUse": "Write|Edit|MultiEdit|NotebookEdit|Bash",
    "Stop": None,
    "SubagentStop": None,
    "SessionEnd": None,  # ends the session's interval of active time (calibration)
}


def hook_command(event: str, python: str | None = None) -> str:
    """The exact shell command Claude Code runs for ``event``."""
    return f"{shlex.quote(python or sys.executable)} -m meridian hook claude {event}"


def _is_meridians(hook: Any) -> bool:
    return isinstance(hook, dict) and HOOK_COMMAND_MARK in str(hook.get("command", ""))


def _entry(event: str, python: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    matcher = EVENTS[event]
    if matcher is not None:
        entry["matcher"] = matcher
    entry["hooks"] = [{"type": "command", "command": hook_command(event, python),
                       "timeout": TIMEOUT_S}]
    return entry


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg}); fix it and run "
                          "`meridian init --claude` again") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object of settings")
    return data


def merge(settings: dict[str, Any], python: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """``settings`` with Meridian's hook entries merged in, and what changed per event."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f"{SETTINGS_FILE}: hooks: expected an object of events")
    changes = []
    for event in EVENTS:
        wanted = _entry(event, python)
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ConfigError(f"{SETTINGS_FILE}: hooks.{event}: expected a list of matchers")
        ours = [e for e in entries if isinstance(e, dict)
                and any(_is_meridians(h) for h in e.get("hooks") or [])]
        if not ours:
            entries.append(wanted)
            changes.append(f"{event}: added")
            continue
        entry = ours[0]
        command = wanted["hooks"][0]
        current = next(h for h in entry["hooks"] if _is_meridians(h))
        same = current == command and entry.get("matcher") == wanted.get("matcher")
        if same:
            continue
        current.clear()
        current.update(command)
        if "matcher" in wanted:
            entry["matcher"] = wanted["matcher"]
        changes.append(f"{event}: updated")
    return settings, changes


def merge_into(root: Path, outcome: Any, python: str | None = None) -> None:
    """``meridian init --claude``: write the merged settings; report on ``outcome``."""
    path = root / SETTINGS_FILE
    existed = path.exists()
    settings, changes = merge(_load(path), python)
    if not changes:
        outcome.kept.append(f"{SETTINGS_FILE} (Meridian's Claude Code hooks already present)")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    verb = "merged into" if existed else "created"
    outcome.created.append(f"{SETTINGS_FILE} ({verb}: {', '.join(changes)})")
