"""``meridian hook claude EVENT``: Meridian in Claude Code's loop.

The contract (Claude Code hooks reference): the payload is JSON on stdin
(``session_id``, ``cwd``, ``hook_event_name`` and event fields). A hook answers on ONE
channel: JSON on stdout with exit 0, or its reason on stderr with exit 2; any other
exit code is a non-blocking error whose stderr the user may see. Meridian always
decides through JSON with exit 0:

- SessionStart: ``hookSpecificOutput.additionalContext`` carries the current gate,
  its acceptance criteria, the open issues of its last verdict, the relevant semantic
  patterns and recent corrections; an episodic memory records the session.
- PreToolUse (Write, Edit, MultiEdit, NotebookEdit, and Bash commands whose written
  files can be told): ``permissionDecision: "deny"`` for a file of a locked gate.
- Stop / SubagentStop: ``{"decision": "block", "reason": ...}`` while the gate in
  progress has a failed verdict whose issues still stand, or changed artifacts that
  were never submitted. ``stop_hook_active`` chains are capped per session
  (``hooks.claude_stop_retry_cap``); the cap releasing a stop is recorded.

A payload that is not a JSON object, or a Meridian error while deciding, must not
brick the agent: the hook then exits 1 with one line on stderr (Claude Code's
non-blocking error) and the action goes ahead. Every block is a ``gate.blocked``
event with ``source: "claude"``.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from meridian import gitio
from meridian.errors import MeridianError
from meridian.hooks.project import ProjectFacts, load_facts, record_block

SOURCE = "claude"
LOCKED_RULE = "hook:locked_gate_artifacts"
STOP_RULE = "claude:stop_on_failed_verdict"
FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}
MAX_ISSUES = 10


@dataclass(frozen=True)
class Reply:
    """What the hook prints and returns: stdout JSON or stderr text, never both."""

    exit_code: int = 0
    stdout: dict[str, Any] | None = None
    stderr: str | None = None

    def __post_init__(self) -> None:
        assert not (self.stdout is not None and self.stderr is not None), "one channel only"

    def emit(self, out: TextIO, err: TextIO) -> int:
        if self.stdout is not None:
            out.write(json.dumps(self.stdout) + "\n")
        if self.stderr is not None:
            err.write(self.stderr.rstrip("\n") + "\n")
        return self.exit_code


ALLOW = Reply()


def _warn(message: str) -> Reply:
    return Reply(exit_code=1, stderr=f"meridian: {message} (not blocking)")


@dataclass
class Context:
    payload: dict[str, Any]
    repo: gitio.Repository
    root: Path
    cwd: Path
    facts: ProjectFacts

    @property
    def session(self) -> str:
        value = self.payload.get("session_id")
        return value if isinstance(value, str) and value else "unknown"


def handle(event: str, payload_text: str) -> Reply:
    """Decide one Claude Code hook call."""
    try:
        payload = json.loads(payload_text)
    except ValueError as exc:
        return _warn(f"ignoring a Claude Code {event} payload that is not JSON ({exc})")
    if not isinstance(payload, dict):
        return _warn(f"ignoring a Claude Code {event} payload that is not a JSON object")
    try:
        context = _open(payload)
        if context is None:
            return ALLOW  # not a git repository with a work tree: nothing to enforce
        if event == "SessionStart":
            return session_start(context)
        if event == "PreToolUse":
            return pre_tool_use(context)
        if event in ("Stop", "SubagentStop"):
            return stop(context, event)
        return _warn(f"unknown Claude Code hook event {event!r}")
    except MeridianError as exc:
        return _warn(f"{event} hook could not decide: {exc}")
    except Exception as exc:  # noqa: BLE001 - a crash must not block the agent's action
        where = _log_traceback(exc)
        return _warn(f"{event} hook failed: {type(exc).__name__}: {exc} (traceback in {where})")


def _log_traceback(exc: BaseException) -> str:
    import tempfile
    import traceback

    try:
        directory = gitio.meridian_dir(gitio.open_repo("."))
    except Exception:  # noqa: BLE001 - no repository: log beside other temp files
        directory = Path(tempfile.gettempdir())
    path = directory / "error.log"
    with path.open("a", encoding="utf-8") as handle:
        handle.write("meridian hook claude\n" + "".join(traceback.format_exception(exc)) + "\n")
    return str(path)


def _open(payload: dict[str, Any]) -> Context | None:
    raw_cwd = payload.get("cwd")
    cwd = Path(raw_cwd) if isinstance(raw_cwd, str) and Path(raw_cwd).is_dir() else Path.cwd()
    try:
        repo = gitio.open_repo(cwd)
    except MeridianError:
        return None
    root = gitio.workdir(repo)
    if root is None:
        return None
    return Context(payload=payload, repo=repo, root=root, cwd=cwd,
                   facts=load_facts(repo, root))


def _has_state(context: Context) -> bool:
    return gitio.ref_target(context.repo, f"refs/heads/{context.facts.branch}") is not None


def _block(context: Context, reason: str, *, gate: str | None, files: list[str] | None,
           event: str, extra: dict[str, Any] | None = None) -> None:
    """Record a block; a record that cannot be written never turns the decision around
    (an error here would otherwise end as a non-blocking error: the write allowed)."""
    try:
        record_block(context.repo, context.facts.branch, source=SOURCE, reason=reason,
                     gate=gate, files=files,
                     extra={"event": event, "session": context.session, **(extra or {})})
    except MeridianError as exc:
        # stdout carries the decision and stderr must stay empty with it: log the problem
        with contextlib.suppress(OSError):
            log = gitio.meridian_dir(context.repo) / "error.log"
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"meridian hook claude {event}: block not recorded: {exc}\n")


# --- SessionStart -------------------------------------------------------------------------


def session_start(context: Context) -> Reply:
    if not _has_state(context):
        return ALLOW
    from meridian.hooks import claude_context

    text, gate = claude_context.session_context(context.repo, context.facts)
    source = context.payload.get("source")
    from meridian.ledger import Ledger
    from meridian.memory.store import record_episode

    if context.session != "unknown":
        notes = f"Claude Code session ({source})" if isinstance(source, str) else \
            "Claude Code session"
        try:
            record_episode(Ledger(context.repo, context.facts.branch), context.session,
                           "session_started", gate=gate, notes=notes)
        except MeridianError as exc:
            # The context matters more than the record; say so where it will be read.
            text += f"(Meridian could not record this session in memory: {exc})\n"
    if not text:
        return ALLOW
    return Reply(stdout={"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                "additionalContext": text}})


# --- PreToolUse ---------------------------------------------------------------------------


def _targets(context: Context) -> list[str]:
    tool = context.payload.get("tool_name")
    tool_input = context.payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return []
    if tool in FILE_TOOLS:
        value = tool_input.get(FILE_TOOLS[tool])
        return [value] if isinstance(value, str) and value else []
    if tool == "Bash":
        command = tool_input.get("command")
        if isinstance(command, str):
            from meridian.hooks.bash_writes import written_files

            return written_files(command, context.cwd)
    return []


def _repo_relative(context: Context, target: str) -> str | None:
    path = Path(target)
    if not path.is_absolute():
        path = context.cwd / path
    try:
        relative = path.resolve().relative_to(context.root.resolve())
    except ValueError:
        return None  # outside the repository: no gate owns it
    text = relative.as_posix()
    return None if text.startswith(".git/") or text == "." else text


def pre_tool_use(context: Context) -> Reply:
    if not context.facts.gates or not context.facts.is_active(LOCKED_RULE) \
            or not _has_state(context):
        return ALLOW
    owners: dict[str, list[str]] = {}
    for target in _targets(context):
        relative = _repo_relative(context, target)
        if relative is None:
            continue
        for gate in context.facts.gates_for_path(relative):
            owners.setdefault(gate, []).append(relative)
    if not owners:
        return ALLOW
    from meridian.hooks.gate_view import locked_gates
    from meridian.hooks.precommit import need_step

    locked = locked_gates(context.repo, context.facts, list(owners))
    if not locked:
        return ALLOW
    gate, unmet = next(iter(locked.items()))
    files = owners[gate]
    unmet_text = ", ".join(f"{need} ({state})" for need, state in unmet)
    reason = (f"Meridian: {', '.join(files)} belongs to gate {gate}, which is locked: its needs "
              f"have not passed: {unmet_text}. Do not write it now, nor by another route; "
              f"{need_step(*unmet[0])}.")
    tool = str(context.payload.get("tool_name"))
    _block(context, reason, gate=gate, files=files, event="PreToolUse", extra={"tool": tool})
    return Reply(stdout={"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": reason}})


# --- Stop / SubagentStop ------------------------------------------------------------------


def _counter_path(context: Context, event: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", context.session)[:100] or "unknown"
    directory = gitio.meridian_dir(context.repo) / "claude-stops"
    directory.mkdir(exist_ok=True)
    return directory / (safe if event == "Stop" else f"{safe}.{event}")


def _read_count(path: Path) -> int:
    try:
        return int(path.read_text().strip() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def stop(context: Context, event: str) -> Reply:
    counter = _counter_path(context, event)
    if not context.facts.gates or not context.facts.is_active(STOP_RULE) \
            or not _has_state(context):
        counter.unlink(missing_ok=True)
        return ALLOW
    from meridian.hooks.gate_view import unfinished_work

    work = unfinished_work(context.repo, context.facts)
    if work is None:
        counter.unlink(missing_ok=True)
        return ALLOW
    # A stop Claude makes on its own starts a new chain; one our block caused continues it.
    blocks = _read_count(counter) if context.payload.get("stop_hook_active") is True else 0
    cap = context.facts.claude_stop_retry_cap
    if blocks >= cap:
        counter.unlink(missing_ok=True)
        released = (f"stop allowed after {blocks} block(s) (hooks.claude_stop_retry_cap = {cap}) "
                    f"although gate {work.gate} is unfinished: {work.summary}")
        _block(context, released, gate=work.gate, files=work.files or None, event=event,
               extra={"released_by_retry_cap": True, "blocks": blocks})
        return Reply(stdout={"systemMessage": f"Meridian: {released}"})
    counter.write_text(f"{blocks + 1}\n")
    _block(context, work.summary, gate=work.gate, files=work.files or None, event=event,
           extra={"attempt": blocks + 1})
    return Reply(stdout={"decision": "block", "reason": work.instructions})
