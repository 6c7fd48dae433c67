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
  files can be told): ``permissionDecision: "deny"`` for a file of a locked gate, and
  for any change to the harness itself (rule mechanism ``claude:protect_harness``):
  everything under ``.meridian/`` (config, gates, rules, features, schemas), the
  config's gate graph and rules file wherever it puts them, Claude Code's
  ``.claude/settings.json`` / ``settings.local.json`` (which run these hooks), and
  ``.git/hooks`` and ``.git/meridian`` (the git hooks and their caches). Those files
  are human-owned; Bash deletions and moves count too. This check reads no gate graph,
  so it denies even when the configuration is broken.
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
import glob
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
HARNESS_RULE = "claude:protect_harness"
# Meridian's configuration, and what git runs on a commit and Meridian's hooks cache
HARNESS_DIRS = (".meridian", ".git/hooks", ".git/meridian")
# Claude Code's project settings: they run these hooks (and could switch them all off).
HARNESS_FILES = (".claude/settings.json", ".claude/settings.local.json",
                 # core.hooksPath set here makes git run other hooks than Meridian's
                 ".git/config")
# Where a Bash target or inline script cannot be resolved before it runs
# ("$PWD/.meridian/x", ".meridian/*.yaml", "python - <<EOF ... .meridian/gates.yaml"),
# naming a harness location in it counts as changing that location.
HARNESS_MENTION = re.compile(
    r"\.meridian\b|\.git/(?:hooks|meridian|config)\b|\.claude/settings|core\.hookspath",
    re.IGNORECASE)
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
class Located:
    """Where the hook runs: enough to read the payload's paths, nothing of the config."""

    payload: dict[str, Any]
    repo: gitio.Repository
    root: Path
    cwd: Path

    @property
    def session(self) -> str:
        value = self.payload.get("session_id")
        return value if isinstance(value, str) and value else "unknown"


@dataclass
class Context(Located):
    facts: ProjectFacts


def handle(event: str, payload_text: str) -> Reply:
    """Decide one Claude Code hook call."""
    try:
        payload = json.loads(payload_text)
    except ValueError as exc:
        return _warn(f"ignoring a Claude Code {event} payload that is not JSON ({exc})")
    if not isinstance(payload, dict):
        return _warn(f"ignoring a Claude Code {event} payload that is not a JSON object")
    try:
        located = _locate(payload)
        if located is None:
            return ALLOW  # not a git repository with a work tree: nothing to enforce
        if event == "PreToolUse":
            # Before the config is read: a broken config must not open the harness up.
            refused = protect_harness(located)
            if refused is not None:
                return refused
        context = Context(payload=located.payload, repo=located.repo, root=located.root,
                          cwd=located.cwd, facts=load_facts(located.repo, located.root))
        if event == "SessionStart":
            return session_start(context)
        if event == "PreToolUse":
            return pre_tool_use(context)
        if event in ("Stop", "SubagentStop"):
            if event == "Stop":
                record_activity(context, "Stop (a turn ended)")
            return stop(context, event)
        if event == "SessionEnd":
            reason = context.payload.get("reason")
            record_activity(context, f"SessionEnd ({reason})" if isinstance(reason, str)
                            else "SessionEnd")
            return ALLOW
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


def _locate(payload: dict[str, Any]) -> Located | None:
    raw_cwd = payload.get("cwd")
    cwd = Path(raw_cwd) if isinstance(raw_cwd, str) and Path(raw_cwd).is_dir() else Path.cwd()
    try:
        repo = gitio.open_repo(cwd)
    except MeridianError:
        return None
    root = gitio.workdir(repo)
    if root is None:
        return None
    return Located(payload=payload, repo=repo, root=root, cwd=cwd)


def _has_state(context: Context) -> bool:
    return gitio.ref_target(context.repo, f"refs/heads/{context.facts.branch}") is not None


def _block(context: Located, branch: str | None, reason: str, *, gate: str | None,
           files: list[str] | None, event: str, extra: dict[str, Any] | None = None) -> None:
    """Record a block; a record that cannot be written never turns the decision around
    (an error here would otherwise end as a non-blocking error: the write allowed)."""
    try:
        if branch is None:
            raise MeridianError("the configuration cannot be read, so it names no state branch")
        record_block(context.repo, branch, source=SOURCE, reason=reason, gate=gate,
                     files=files,
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


def record_activity(context: Context, notes: str) -> None:
    """A ``session_ended`` episode at this moment: calibration's active time joins a
    session's start, stops and end into intervals (``memory.calibration``). Never in
    the way of the decision: a failed write is logged, not raised."""
    if context.session == "unknown" or not _has_state(context):
        return
    from meridian.ledger import Ledger
    from meridian.memory.store import record_episode
    from meridian.records import now_ts

    try:
        record_episode(Ledger(context.repo, context.facts.branch), context.session,
                       "session_ended", notes=notes, at=now_ts())
    except MeridianError as exc:
        with contextlib.suppress(OSError):
            log = gitio.meridian_dir(context.repo) / "error.log"
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"meridian hook claude: session activity not recorded: {exc}\n")


# --- PreToolUse ---------------------------------------------------------------------------


def _targets(context: Located, *, removals: bool = False,
             unresolved: list[str] | None = None) -> list[str]:
    """The files the tool call writes (and, with ``removals``, deletes or moves away);
    ``unresolved`` collects Bash targets and inline scripts that cannot be told."""
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

            return written_files(command, context.cwd, removals=removals,
                                 unresolved=unresolved)
    return []


def _in_repo(context: Located, target: str) -> str | None:
    """``target`` relative to the work tree ('/'-separated, "." for the root itself),
    None when it lies outside."""
    path = Path(target)
    if not path.is_absolute():
        path = context.cwd / path
    try:
        return path.resolve().relative_to(context.root.resolve()).as_posix()
    except ValueError:
        return None


def _repo_relative(context: Located, target: str) -> str | None:
    text = _in_repo(context, target)
    # outside the repository, the root itself or git's own files: no gate owns it
    return None if text is None or text.startswith(".git/") or text == "." else text


def is_harness_path(relative: str, harness_files: tuple[str, ...] = HARNESS_FILES) -> bool:
    """Whether changing ``relative`` (repository-relative, "." the root) changes the
    harness: a path in one of ``HARNESS_DIRS``, one of ``harness_files``, or a directory
    holding either (``rm -r .claude``)."""
    if relative == "." or any(relative.startswith(f"{d}/") for d in HARNESS_DIRS):
        return True
    return any(relative == path or path.startswith(f"{relative}/")
               for path in (*HARNESS_DIRS, *harness_files))


def _harness_settings(context: Located) -> tuple[bool, str | None, tuple[str, ...]]:
    """(protection on, state branch, the config's own harness files) as far as the
    configuration can be read. Nothing that fails to load switches the protection off:
    only a readable rules file that retires the rule does."""
    try:
        facts = load_facts(context.repo, context.root)
    except MeridianError:
        pass
    else:
        return facts.is_active(HARNESS_RULE), facts.branch, facts.files
    # The gate graph or the config is broken: the rules file may still be readable.
    from meridian.hooks.precommit import project_branch
    from meridian.rules import disabled_mechanisms

    try:
        active = HARNESS_RULE not in disabled_mechanisms(context.root)
    except MeridianError:
        active = True
    return active, project_branch(context.root), ()


def _hook_bypasses(context: Located) -> list[str]:
    tool_input = context.payload.get("tool_input")
    if context.payload.get("tool_name") != "Bash" or not isinstance(tool_input, dict):
        return []
    command = tool_input.get("command")
    if not isinstance(command, str):
        return []
    from meridian.hooks.bash_writes import hook_bypasses

    return hook_bypasses(command)


def protect_harness(context: Located) -> Reply | None:
    """Deny a change to Meridian's own configuration or Claude Code's settings, or a git
    command that skips the hooks; None when the tool call does neither (or the rule is
    retired)."""
    bypasses = _hook_bypasses(context)
    if bypasses:
        active, branch, _ = _harness_settings(context)
        if active:
            reason = (f"Meridian: `{bypasses[0]}` would skip the git hooks that check your work. "
                      "Run it without --no-verify / -n / core.hooksPath, and fix what the hook "
                      "reports; if a hook is wrong, ask the user.")
            _block(context, branch, reason, gate=None, files=[], event="PreToolUse",
                   extra={"tool": "Bash", "rule": HARNESS_RULE, "command": bypasses[0]})
            return Reply(stdout={"hookSpecificOutput": {
                "hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": reason}})
    unresolved: list[str] = []
    changed = [rel for target in _targets(context, removals=True, unresolved=unresolved)
               if (rel := _in_repo(context, target)) is not None]
    mentioned = [found.group(0) for text in unresolved
                 if (found := HARNESS_MENTION.search(text))]
    # A glob target ("echo x > .merid*/gates.yaml") is changed wherever it matches now.
    changed += [rel for text in unresolved if not HARNESS_MENTION.search(text)
                and "$" not in text and "`" not in text and "\n" not in text
                for match in glob.glob(text, root_dir=context.cwd)
                if (rel := _in_repo(context, match)) is not None]
    if not changed and not mentioned:
        return None
    active, branch, config_files = _harness_settings(context)
    # The config may keep its gate graph or rules file outside .meridian/: harness too.
    harness = HARNESS_FILES + config_files
    files = [rel for rel in dict.fromkeys(changed) if is_harness_path(rel, harness)]
    files += [name for name in dict.fromkeys(mentioned) if name not in files]
    if not files or not active:
        return None
    tool = str(context.payload.get("tool_name"))
    reason = (f"Meridian: {', '.join(files)} {'is' if len(files) == 1 else 'are'} part of "
              "the harness that checks your work (Meridian's configuration, gates and rules, "
              "its git hooks, and the Claude Code settings that run these hooks). These files "
              "are human-owned: do not change them, by this tool or any other route. If a "
              "change is needed, ask the user to make it.")
    _block(context, branch, reason, gate=None, files=files, event="PreToolUse",
           extra={"tool": tool, "rule": HARNESS_RULE})
    return Reply(stdout={"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": reason}})


def pre_tool_use(context: Context) -> Reply:
    if not context.facts.gates or not context.facts.is_active(LOCKED_RULE) \
            or not _has_state(context):
        return ALLOW
    paths: list[str] = []
    for target in _targets(context):
        relative = _repo_relative(context, target)
        if relative is not None and context.facts.gates_for_path(relative):
            paths.append(relative)
    if not paths:
        return ALLOW
    from meridian.hooks.gate_view import path_decisions
    from meridian.hooks.precommit import need_step

    # The shared-file rule (gate_view.decide_path): refused only when every owner is locked.
    refused = [d for d in path_decisions(context.repo, context.facts, paths) if not d.allowed]
    if not refused:
        return ALLOW
    gate, unmet = next(iter(refused[0].unmet.items()))
    files = [d.path for d in refused if next(iter(d.unmet)) == gate]
    unmet_text = ", ".join(f"{need} ({state})" for need, state in unmet)
    reason = (f"Meridian: {', '.join(files)} belongs to gate {gate}, which is locked: its needs "
              f"have not passed: {unmet_text}. Do not write it now, nor by another route; "
              f"{need_step(*unmet[0])}.")
    tool = str(context.payload.get("tool_name"))
    _block(context, context.facts.branch, reason, gate=gate, files=files, event="PreToolUse",
           extra={"tool": tool})
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
        _block(context, context.facts.branch, released, gate=work.gate,
               files=work.files or None, event=event,
               extra={"released_by_retry_cap": True, "blocks": blocks})
        return Reply(stdout={"systemMessage": f"Meridian: {released}"})
    counter.write_text(f"{blocks + 1}\n")
    _block(context, context.facts.branch, work.summary, gate=work.gate,
           files=work.files or None, event=event, extra={"attempt": blocks + 1})
    return Reply(stdout={"decision": "block", "reason": work.instructions})
