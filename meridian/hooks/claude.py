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
import fnmatch
import json
import os
import re
from pathlib import Path

from meridian.errors import MeridianError
from meridian.hooks.project import ProjectFacts, load_facts, record_block
from meridian.lean import NamedTuple, lazy_pattern

TYPE_CHECKING = False  # no `typing` on the allow path (meridian.lean)
if TYPE_CHECKING:  # imported where used: the cached view (claude_view) decides without pygit2
    from collections.abc import Callable
    from typing import Any, TextIO

    from meridian import gitio

SOURCE = "claude"
LOCKED_RULE = "hook:locked_gate_artifacts"
STOP_RULE = "claude:stop_on_failed_verdict"
HARNESS_RULE = "claude:protect_harness"
# Meridian's configuration, and what git runs on a commit and Meridian's hooks cache
HARNESS_DIRS = (".meridian", ".git/hooks", ".git/meridian")
# Claude Code's project settings: they run these hooks (and could switch them all off).
HARNESS_FILES = (".claude/settings.json", ".claude/settings.local.json",
                 # core.hooksPath set here makes git run other hooks than Meridian's
                 ".git/config",
                 # the pre-commit framework's list of hooks: Meridian's entries in it are
                 # what a framework user's commits and pushes run
                 ".pre-commit-config.yaml")
# Where a Bash target or inline script cannot be read before it runs
# ("$PWD/.meridian/x", "python - <<EOF ... .meridian/gates.yaml"), naming a harness
# location in it denies the command.
HARNESS_MENTION = lazy_pattern(
    r"\.meridian\b|\.git/(?:hooks|meridian|config|refs|packed-refs|worktrees)\b|commondir"
    r"|\.git\b(?=['\"\s)]|$)"
    r"|\.claude/settings|\.claude\b(?=['\"\s)]|$)|hookspath|\.gitconfig|git/config\b"
    r"|disableAllHooks|meridian/state|pre-commit-config",
    re.IGNORECASE)
FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}
MAX_ISSUES = 10


# Plain classes, not dataclasses, here and in hooks.project: ``dataclasses`` imports
# ``inspect`` (some 10 ms), and the allow path (``claude_view``) runs before every tool call.


class Reply(NamedTuple):
    """What the hook prints and returns: stdout JSON or stderr text, never both."""

    exit_code: int = 0
    stdout: dict[str, Any] | None = None
    stderr: str | None = None

    def check(self) -> Reply:
        assert not (self.stdout is not None and self.stderr is not None), "one channel only"
        return self

    def emit(self, out: TextIO, err: TextIO) -> int:
        self.check()
        if self.stdout is not None:
            out.write(json.dumps(self.stdout) + "\n")
        if self.stderr is not None:
            err.write(self.stderr.rstrip("\n") + "\n")
        return self.exit_code


ALLOW = Reply()


def _warn(message: str) -> Reply:
    return Reply(exit_code=1, stderr=f"meridian: {message} (not blocking)")


class Located:
    """Where the hook runs: enough to read the payload's paths, nothing of the config.

    The cached view (``claude_view``) builds one with ``repo=None`` and ``common`` (the
    shared git directory) set: the functions it calls never open the repository.
    """

    def __init__(self, payload: dict[str, Any], repo: gitio.Repository, root: Path, cwd: Path,
                 *, common: Path | None = None) -> None:
        self.payload, self.repo, self.root, self.cwd = payload, repo, root, cwd
        self.common = common
        self._folds: bool | None = None

    @property
    def folds_case(self) -> bool:
        """Whether the work tree's file system ignores case (``case_insensitive``)."""
        if self._folds is None:
            self._folds = case_insensitive(self.root)
        return self._folds

    def __repr__(self) -> str:
        return f"{type(self).__name__}(root={self.root!r}, cwd={self.cwd!r})"

    @property
    def session(self) -> str:
        value = self.payload.get("session_id")
        return value if isinstance(value, str) and value else "unknown"


class Context(Located):
    def __init__(self, payload: dict[str, Any], repo: gitio.Repository, root: Path, cwd: Path,
                 facts: ProjectFacts, *, common: Path | None = None) -> None:
        super().__init__(payload, repo, root, cwd, common=common)
        self.facts = facts


KNOWN_EVENTS = ("SessionStart", "PreToolUse", "Stop", "SubagentStop", "SessionEnd")


def deny(reason: str) -> Reply:
    """A PreToolUse refusal (JSON on stdout, exit 0): Claude sees ``reason``."""
    return Reply(stdout={"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": reason}})


def undecided(event: str, problem: str) -> Reply:
    """What a hook that cannot decide answers: PreToolUse fails closed (a deny naming the
    problem, in one line); every other event reports it on stderr with exit 1, which
    Claude Code treats as a non-blocking error (exit 2 would block a stop or erase a
    prompt)."""
    problem = " ".join(problem.split())
    if event == "PreToolUse":
        return deny(f"Meridian could not check this tool call, so it is denied: {problem}. "
                    "Fix that (or ask the user to) and try again; Meridian's hooks must be "
                    "able to decide before anything is written.")
    return _warn(problem)


def handle(event: str, payload_text: str) -> Reply:
    """Decide one Claude Code hook call."""
    if event not in KNOWN_EVENTS:
        return _warn(f"unknown Claude Code hook event {event!r} (Meridian handles "
                     f"{', '.join(KNOWN_EVENTS)}); remove this hook from .claude/settings.json")
    try:
        payload = json.loads(payload_text)
    except ValueError as exc:
        return undecided(event, f"the Claude Code {event} payload is not JSON ({exc})")
    if not isinstance(payload, dict):
        return undecided(event, f"the Claude Code {event} payload is not a JSON object")
    try:
        located = _locate(payload)
        if located is None:
            return ALLOW  # not a git repository with a work tree: nothing to enforce
        _drain_spool(located)
        if event == "PreToolUse":
            malformed = _malformed_tool_input(located.payload)
            if malformed is not None:
                return undecided(event, malformed)
            # Before the config is read: a broken config must not open the harness up.
            refused = protect_harness(located)
            if refused is not None:
                _refresh_view(located)  # the block moved the state tip
                return refused
        context = Context(payload=located.payload, repo=located.repo, root=located.root,
                          cwd=located.cwd, facts=load_facts(located.repo, located.root))
        if event == "SessionStart":
            return _rekeyed(context, session_start(context))
        if event == "PreToolUse":
            reply = pre_tool_use(context)
            if reply is ALLOW:
                note_agent_writes(context)
            _refresh_view(context)
            return reply
        if event == "SessionEnd":
            reason = context.payload.get("reason")
            record_activity(context, f"SessionEnd ({reason})" if isinstance(reason, str)
                            else "SessionEnd")
            return _rekeyed(context, ALLOW)
        if event == "Stop":
            record_activity(context, "Stop (a turn ended)")
        return _rekeyed(context, stop(context, event))
    except MeridianError as exc:
        return undecided(event, f"{event} hook could not decide: {exc}")
    except RecursionError:
        return undecided(event, f"{event} hook could not decide: the input nests too deeply")
    except Exception as exc:  # noqa: BLE001 - reported in the hook's own channel
        where = _log_traceback(exc)
        return undecided(event, f"{event} hook failed: {type(exc).__name__}: {exc} "
                         f"(traceback in {where})")


def _rekeyed(context: Context, reply: Reply) -> Reply:
    """``reply``, once the PreToolUse view is valid for the tip this hook's episodes and
    blocks moved the state branch to (``claude_view.update``: re-keyed, as they change no
    gate's phase), so the next tool call is decided from it. Never changes the reply."""
    from meridian.hooks import claude_view

    claude_view.update(context.repo, context.root)
    return reply


def _drain_spool(located: Located) -> None:
    """Record the blocks a deny decided from the view left spooled (``block_spool``)
    before deciding: nothing a killed drainer left behind is lost, and the state this
    call reads includes them. A problem there never changes this call's decision."""
    from meridian.hooks import block_spool

    try:
        block_spool.drain(located.repo)
    except Exception as exc:  # noqa: BLE001 - logged; the spool keeps the blocks
        with contextlib.suppress(OSError):
            log = _meridian_dir(located) / "error.log"
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"meridian hook claude: spooled blocks not recorded: "
                             f"{type(exc).__name__}: {exc}\n")


def _refresh_view(located: Located) -> None:
    """Bring the cached view the next PreToolUse call may decide from up to date
    (``claude_view``); a cache problem never changes this call's decision."""
    from meridian.hooks import claude_view

    context = located
    if not isinstance(context, Context):
        try:
            facts = load_facts(located.repo, located.root)
        except MeridianError:
            return  # a broken configuration has no view: every call is decided in full
        context = Context(payload=located.payload, repo=located.repo, root=located.root,
                          cwd=located.cwd, facts=facts)
    try:
        claude_view.refresh(context)
    except Exception as exc:  # noqa: BLE001 - logged; the view is only a speed cache
        with contextlib.suppress(OSError):
            log = _meridian_dir(context) / "error.log"
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"meridian hook claude PreToolUse: view not written: "
                             f"{type(exc).__name__}: {exc}\n")


def _malformed_tool_input(payload: dict[str, Any]) -> str | None:
    """A problem with a writing tool's input that would hide what it writes (a path or a
    command that is not a string), or None."""
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool, str):
        return None if tool is None and tool_input is None else "tool_name is not a string"
    if tool not in FILE_TOOLS and tool not in ("Bash", "PowerShell"):
        return None
    if not isinstance(tool_input, dict):
        return f"{tool}'s tool_input is not a JSON object"
    key = FILE_TOOLS.get(tool, "command")
    value = tool_input.get(key)
    if value is not None and not isinstance(value, str):
        return f"{tool}'s tool_input.{key} is {type(value).__name__}, not a string"
    return None


def _log_traceback(exc: BaseException) -> str:
    import tempfile
    import traceback

    from meridian import gitio

    try:
        directory = gitio.meridian_dir(gitio.open_repo("."))
    except Exception:  # noqa: BLE001 - no repository: log beside other temp files
        directory = Path(tempfile.gettempdir())
    path = directory / "error.log"
    with contextlib.suppress(OSError), path.open("a", encoding="utf-8") as handle:
        handle.write("meridian hook claude\n" + "".join(traceback.format_exception(exc)) + "\n")
    return str(path)


def _real(path: str | os.PathLike[str]) -> Path:
    """The absolute, symlink-free form of ``path`` as far as it can be told: a symlink
    loop or an unreadable component never raises (``Path.resolve`` does)."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError, RuntimeError):
        return Path(os.path.abspath(path))


def _nearest_directory(path: Path) -> Path | None:
    for candidate in (path, *path.parents):
        with contextlib.suppress(OSError):
            if candidate.is_dir():
                return candidate
    return None


def _project_root(start: Path) -> Path | None:
    """The repository a path belongs to for Meridian: of the git work trees enclosing it,
    the outermost Meridian project (with a ``.meridian/`` folder), else the innermost
    work tree. A ``git init sub`` inside a project is still judged by the project."""
    found: list[Path] = []
    for candidate in (start, *start.parents):
        with contextlib.suppress(OSError):
            if os.path.lexists(candidate / ".git"):
                found.append(candidate)
    if not found:
        return None
    projects = [d for d in found if os.path.isdir(d / ".meridian")]
    return projects[-1] if projects else found[0]


def _raw_targets(payload: dict[str, Any], cwd: Path) -> list[Path]:
    """Paths the tool call names (for finding the project when no project dir is set)."""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return []
    values = [tool_input.get(key) for key in ("file_path", "notebook_path", "path")]
    command = tool_input.get("command")
    if isinstance(command, str) and payload.get("tool_name") in ("Bash", "PowerShell"):
        from meridian.hooks.bash_writes import written_files

        values += [w for w in written_files(command, cwd, removals=True)
                   if not w.startswith("\0")]
    return [cwd / os.path.expanduser(value) for value in values
            if isinstance(value, str) and value]


def project_candidates(payload: dict[str, Any]) -> tuple[Path, list[Path]]:
    """(the real cwd, the project roots to try in order): from ``$CLAUDE_PROJECT_DIR``,
    then from each path the tool call targets, then from the payload's ``cwd``."""
    raw_cwd = payload.get("cwd")
    cwd = Path(raw_cwd) if isinstance(raw_cwd, str) and os.path.isdir(raw_cwd) else Path.cwd()
    cwd = _real(cwd)
    starts: list[Path] = []
    project_dir = os.environ.get("CLAUDE_PROJECT_DIR")
    if project_dir and os.path.isdir(project_dir):
        starts.append(_real(project_dir))
    starts += [d for t in _raw_targets(payload, cwd) if (d := _nearest_directory(_real(t)))]
    starts.append(cwd)
    return cwd, [root for start in starts if (root := _project_root(start)) is not None]


def _locate(payload: dict[str, Any]) -> Located | None:
    """The project: ``$CLAUDE_PROJECT_DIR`` (Claude Code sets it to the project root for
    every hook), then the path the tool call targets, then the payload's ``cwd``."""
    from meridian import gitio

    cwd, roots = project_candidates(payload)
    for root in roots:
        try:
            repo = gitio.open_repo(root)
        except MeridianError:
            continue
        workdir = gitio.workdir(repo)
        if workdir is None:
            continue
        return Located(payload=payload, repo=repo, root=_real(workdir), cwd=cwd)
    return None


def _has_state(context: Context) -> bool:
    from meridian import gitio

    return gitio.ref_target(context.repo, f"refs/heads/{context.facts.branch}") is not None


def _block(context: Located, branch: str | None, reason: str, *, gate: str | None,
           files: list[str] | None, event: str, extra: dict[str, Any] | None = None) -> None:
    """Record a block; a record that cannot be written never turns the decision around
    (an error here would otherwise end as a non-blocking error: the write allowed)."""
    from meridian import gitio

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
    from meridian import gitio

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

# MCP tools whose name says they only read: their path arguments change nothing.
READ_ONLY_MCP = lazy_pattern(r"(?:^|_)(?:read|get|list|search|find|view|stat|info|tree|glob|grep"
                             r"|show|describe|query|fetch)(?:_|$)", re.IGNORECASE)
# Argument names that carry a path in MCP tools (filesystem servers, editors, git servers).
PATH_KEY = lazy_pattern(r"path|file|dir|dest|target|source|output|uri|location", re.IGNORECASE)
# PowerShell verbs and operators that write, move or remove (its syntax is not read here:
# a PowerShell command that may write and names a protected path is denied).
POWERSHELL_WRITES = lazy_pattern(
    r"\b(?:Set-Content|Add-Content|Out-File|New-Item|Remove-Item|Move-Item|Copy-Item|"
    r"Rename-Item|Clear-Content|Tee-Object|Expand-Archive|Invoke-WebRequest|Start-BitsTransfer|"
    r"Set-ItemProperty|sc|ac|ni|ri|rm|del|erase|rd|rmdir|mv|move|cp|copy|cpi|mi|ren|iwr|curl|"
    r"wget)\b|>", re.IGNORECASE)


class Targets:
    """What a tool call changes: paths as written (relative ones to ``cwd``), directories
    written into with unknown members (``into``), and texts that cannot be read (a target
    the shell expands, a glob, an inline script, a PowerShell command)."""

    def __init__(self, paths: list[str], into: list[str], unresolved: list[str]) -> None:
        self.paths, self.into, self.unresolved = paths, into, unresolved
        # commands that write files anywhere in the work tree that cannot be told before
        # they run (`git pull`): refused while any gate is locked
        self.anywhere: list[str] = []
        # patches from a pipe that cannot be read (`curl URL | git apply`): any file, new
        # ones too, the harness's included
        self.patches: list[str] = []
        # extractions whose members cannot be listed: (folder, why, command line)
        self.archives: list[tuple[str, str, str]] = []


def _mcp_paths(value: Any, key: str = "", depth: int = 0) -> list[str]:
    if depth > 6:
        return []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _mcp_paths(v, str(k), depth + 1)]
    if isinstance(value, list):
        return [p for v in value[:200] for p in _mcp_paths(v, key, depth + 1)]
    if isinstance(value, str) and value and PATH_KEY.search(key) and len(value) < 4096:
        return [value.removeprefix("file://")]
    return []


def _targets(context: Located, *, removals: bool = False) -> Targets:
    """The files the tool call writes (and, with ``removals``, deletes, moves away or
    links to)."""
    tool = context.payload.get("tool_name")
    tool_input = context.payload.get("tool_input")
    found = Targets([], [], [])
    if not isinstance(tool_input, dict) or not isinstance(tool, str):
        return found
    if tool in FILE_TOOLS:
        value = tool_input.get(FILE_TOOLS[tool])
        found.paths = [value] if isinstance(value, str) and value else []
    elif tool in ("Bash", "PowerShell"):
        command = tool_input.get("command")
        if isinstance(command, str):
            from meridian.hooks.bash_writes import STASH_MARK, written_files

            written = _take_unlisted(written_files(command, context.cwd, removals=removals,
                                                   unresolved=found.unresolved), found)
            for stash in [w for w in written if w.startswith(STASH_MARK)]:
                written.remove(stash)
                written += _stash_files(context, stash[len(STASH_MARK):])
            written = _resolve_git_marks(context, written, found)
            found.into = [w[:-1] for w in written if w.endswith("/") and len(w) > 1]
            found.paths = [w for w in written if not (w.endswith("/") and len(w) > 1)]
            if tool == "PowerShell" and POWERSHELL_WRITES.search(command):
                found.unresolved.append(command.replace("\\", "/"))
    elif tool.startswith("mcp__") and not READ_ONLY_MCP.search(tool.rsplit("__", 1)[-1]):
        found.paths = _mcp_paths(tool_input)
        # a shell-running MCP tool (`mcp__shell__run {"command": ...}`): read as Bash
        for key in ("command", "cmd", "script"):
            command = tool_input.get(key)
            if isinstance(command, str) and command:
                from meridian.hooks.bash_writes import STASH_MARK, written_files

                written = [w for w in _take_unlisted(written_files(
                    command, context.cwd, removals=removals, unresolved=found.unresolved), found)
                           if not w.startswith(STASH_MARK)]
                written = _resolve_git_marks(context, written, found)
                found.into += [w[:-1] for w in written if w.endswith("/") and len(w) > 1]
                found.paths += [w for w in written if not (w.endswith("/") and len(w) > 1)]
    if found.paths:
        _add_hard_link_aliases(context, found)
    return found


def _add_hard_link_aliases(context: Located, found: Targets) -> None:
    """Add to ``found.paths`` the other names of each target outside the project that is
    a regular file with more than one hard link (``link api/app.py /tmp/x`` made earlier:
    a write to /tmp/x is a write to api/app.py): the project's files and Meridian's
    installation on the same device are searched for the same inode. One ``stat`` per
    outside target; the search only runs for such a file."""
    import stat as stat_module

    extra: list[str] = []
    for target in found.paths:
        if target.startswith("\0"):
            continue
        path = _absolute(context, target)
        if path == context.root or context.root in path.parents:
            continue
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            continue
        if info.st_nlink > 1 and stat_module.S_ISREG(info.st_mode):
            extra += [str(alias) for alias in hard_link_aliases(context.root, info)
                      if alias != path]
    found.paths += [e for e in dict.fromkeys(extra) if e not in found.paths]


HARD_LINK_WALK_LIMIT = 300_000


def hard_link_aliases(root: Path, info: os.stat_result) -> list[Path]:
    """The files with ``info``'s inode in the work tree at ``root`` (git's object store
    left out) and Meridian's package, and among the single harness files outside it (the
    user's settings, the interpreter files), searched only on ``info``'s device; at most
    ``HARD_LINK_WALK_LIMIT`` entries are looked at. (The interpreter's whole standard
    library and site folders are not walked: a link into them needs a link made from
    them, which the Bash reader denies.)"""
    import meridian

    singles = [*(p for p, _ in _home_harness()), *(p for p, _ in _interpreters(root)),
               *(p for p, name in _installed_harness(root) if "console script" in name)]
    found: list[Path] = []
    for single in dict.fromkeys(singles):
        try:
            other = os.stat(single)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
            found.append(single)
    seen = 0
    pending: list[Path] = []
    for tree in dict.fromkeys((root, _real(Path(meridian.__file__).parent))):
        try:
            top = os.stat(tree)
        except OSError:
            continue
        if top.st_dev == info.st_dev:
            pending.append(tree)
    visited: set[tuple[int, int]] = set()
    while pending and seen < HARD_LINK_WALK_LIMIT:
        folder = pending.pop()
        try:
            key = os.stat(folder)
            if (key.st_dev, key.st_ino) in visited:
                continue
            visited.add((key.st_dev, key.st_ino))
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not (entry.name == "objects" and folder.name == ".git"):
                        pending.append(Path(entry.path))
                elif entry.inode() == info.st_ino \
                        and entry.stat(follow_symlinks=False).st_dev == info.st_dev:
                    found.append(Path(entry.path))
            except OSError:
                continue
    return found


def _take_unlisted(written: list[str], found: Targets) -> list[str]:
    """``written`` without its ``bash_writes.UNLISTED_MARK`` entries, which go to
    ``found.archives``."""
    from meridian.hooks.bash_writes import UNLISTED_MARK, read_unlisted_mark

    found.archives += [read_unlisted_mark(w) for w in written if w.startswith(UNLISTED_MARK)]
    return [w for w in written if not w.startswith(UNLISTED_MARK)]


def archive_refusal(context: Located, targets: Targets, holds: Callable[[Path], list[str]],
                    kind: str) -> str | None:
    """The reason to deny an extraction whose members cannot be listed into a folder that
    ``holds`` protected paths (``kind`` says what they are), or None."""
    for folder, why, text in targets.archives:
        held = holds(_absolute(context, folder))
        if held:
            shown = _in_repo(context, folder) or str(_absolute(context, folder))
            where = "the project's top folder" if shown == "." else shown
            return (f"Meridian: `{_one_line(text)}` extracts an archive whose members "
                    f"Meridian cannot list before it runs ({why}) into {where}, which holds "
                    f"{', '.join(held[:4])} ({kind}): its members could replace them. List "
                    "it first (`tar -tf`, `unzip -l`) and extract it on its own into a "
                    "folder that holds none of them (`tar -xf A -C /tmp/x`, `unzip A -d "
                    "/tmp/x`), then copy what you need.")
    return None


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 120 else text[:117] + "..."


def _resolve_git_marks(context: Located, written: list[str], found: Targets) -> list[str]:
    """``written`` with each ``bash_writes.GIT_MARK`` replaced by the files git says the
    command would write (absolute); unknown ones go to ``found.anywhere``."""
    from meridian.hooks.bash_writes import GIT_MARK, read_git_mark

    out = []
    for item in written:
        if not item.startswith(GIT_MARK):
            out.append(item)
            continue
        kind, where, args = read_git_mark(item)
        if kind == "anywhere":
            found.anywhere.append(args[0] if args else "a git command")
            continue
        if kind == "patch":
            found.patches.append(args[0] if args else "a patch")
            continue
        files = _git_mark_files(context, kind, context.cwd / where, args)
        if files is None:
            found.anywhere.append(" ".join(["git", kind, *args]))
        else:
            out += files
    return out


def _git_out(directory: Path, *args: str) -> str | None:
    """Standard output of a read-only git command in ``directory``; None when it fails."""
    import subprocess

    env = {k: v for k, v in os.environ.items()
           if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR")}
    try:
        proc = subprocess.run(["git", *args], cwd=directory, env=env, capture_output=True,
                              text=True, errors="surrogateescape", timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _git_mark_files(context: Located, kind: str, directory: Path,
                    args: list[str]) -> list[str] | None:
    """The files (absolute; directories end in '/') a work-tree rewriting git command
    writes, asked of git before it runs; None when git cannot tell (an unknown revision,
    no upstream): the caller counts that as files anywhere."""
    if context.repo is None:  # the cached view: only the full path runs git
        raise LookupError("asking git needs the full decision")
    if not os.path.isdir(directory):
        return None
    top = _git_out(directory, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    base = Path(top.strip())
    if kind == "switch":
        rev = args[0]
        if _git_out(directory, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}") is None:
            return [str(directory / rev)]  # `git checkout FILE`: the file, from the index
        args = ["HEAD", rev]
        kind = "diff"
    names: list[str] = []
    if kind == "diff":
        out = _git_out(directory, "diff", "--name-only", "--no-renames", "-z", *args, "--")
        if out is None:
            return None
        names = out.split("\0")
    elif kind == "show":
        for rev in args:
            if ".." in rev:
                out = _git_out(directory, "log", "--name-only", "-z", "--format=", rev, "--")
            else:
                out = _git_out(directory, "diff-tree", "--no-commit-id", "--name-only", "-r",
                               "-z", "--root", "-m", rev, "--")
            if out is None:
                return None
            names += out.split("\0")
    elif kind == "submodule":  # every submodule's folder (none without a .gitmodules)
        out = _git_out(base, "config", "-f", ".gitmodules", "--get-regexp",
                       r"^submodule\..*\.path$")
        return [str(base / line.split(" ", 1)[1].strip()) + "/"
                for line in (out or "").splitlines() if " " in line]
    elif kind == "log":
        out = _git_out(directory, "log", "--name-only", "-z", "--no-renames", "--format=", *args,
                       "--")
        if out is None:
            return None
        names = out.replace("\n", "\0").split("\0")
    elif kind == "clean":
        options = [a for a in args if a not in ("-f", "--force")]
        options = [("-" + a[1:].replace("f", "")) if a.startswith("-") and
                   not a.startswith("--") else a for a in options]
        out = _git_out(directory, "clean", "-n", *[a for a in options if a != "-"])
        if out is None:
            return None
        return [str(directory / line[len("Would remove "):])
                for line in out.splitlines() if line.startswith("Would remove ")]
    else:
        return None
    return [str(base / name) for name in dict.fromkeys(n.strip("\n") for n in names) if name]


def _stash_files(context: Located, ref: str) -> list[str]:
    """The files ``git stash pop|apply REF`` would write (absolute), read from the stash."""
    if context.repo is None:  # the cached view: only the full path reads the stash
        raise LookupError("reading a stash needs the repository")
    from meridian import gitio

    proc = gitio.git(["stash", "show", "--name-only", "--include-untracked", ref],
                     context.root, check=False)
    if proc.returncode != 0:
        proc = gitio.git(["stash", "show", "--name-only", ref], context.root, check=False)
    return [str(context.root / line) for line in proc.stdout.splitlines() if line.strip()]


# For tests only, on case-sensitive file systems: "1" makes Meridian treat the work tree's
# file system as case-insensitive (as macOS and Windows volumes are by default). It can
# only add denials.
CASE_INSENSITIVE_ENV = "MERIDIAN_TEST_CASE_INSENSITIVE"


def case_insensitive(root: Path) -> bool:
    """Whether the file system under ``root`` ignores case, probed once per call: the
    ``.git`` entry looked up as ``.GIT`` is the same file, or the repository's config says
    so (``core.ignorecase``, which git sets on such a volume and then records ``API/x``
    under the ``api/`` folder it knows). On such a file system ``.MERIDIAN/gates.yaml``
    *is* ``.meridian/gates.yaml``."""
    if os.environ.get(CASE_INSENSITIVE_ENV) == "1":
        return True
    try:
        if os.path.samefile(root / ".git", root / ".GIT"):
            return True
    except OSError:  # no .GIT: case-sensitive (or no .git at all)
        pass
    return _config_ignores_case(root / ".git")


IGNORECASE = lazy_pattern(r"^\s*ignorecase\s*=\s*(?:true|yes|on|1)\s*(?:[#;].*)?$",
                          re.IGNORECASE | re.MULTILINE)


def _config_ignores_case(git: Path) -> bool:
    """``core.ignorecase`` in the repository's own config (``git``: the ``.git`` entry, a
    directory or a gitfile of a linked work tree)."""
    from meridian.userfiles import read_bounded

    try:
        if git.is_file():
            pointed = read_bounded(git, limit=4096).decode("utf-8", "replace")
            gitdir = Path(pointed.split("gitdir:", 1)[1].strip())
            git = gitdir if gitdir.is_absolute() else git.parent / gitdir
            common = git / "commondir"
            if common.is_file():
                shared = Path(read_bounded(common, limit=4096).decode().strip())
                git = shared if shared.is_absolute() else git / shared
        text = read_bounded(git / "config", limit=1 << 20).decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - no config to read: git's default (false)
        return False
    return IGNORECASE.search(text) is not None


def windows_name(text: str) -> str:
    """``text`` ('/'-separated) with each name's trailing dots and spaces taken off, as
    Windows does (``api./x.py`` and ``api /x.py`` are ``api/x.py`` there)."""
    return "/".join(part.rstrip(". ") or part for part in text.split("/"))


def _nfc(text: str) -> str:
    """``text`` in Unicode NFC: a case-insensitive volume (macOS) also ignores the
    normalisation form, and git there stores names precomposed (core.precomposeUnicode),
    so ``cafe\u0301/x`` is ``café/x``."""
    if text.isascii():
        return text
    import unicodedata

    return unicodedata.normalize("NFC", text)


def _fold(text: str) -> str:
    """``text`` as a case-insensitive volume compares it: case-folded, in NFC, without the
    trailing dots and spaces Windows drops."""
    return windows_name(_nfc(text)).casefold()


def _on_disk_case(root: Path, relative: str) -> str:
    """``relative`` with each component that exists under ``root`` in another case spelled
    as it is on disk (a case-insensitive file system): ``API/app.py`` -> ``api/app.py``."""
    parts = relative.split("/")
    here = root
    out: list[str] = []
    for index, part in enumerate(parts):
        try:
            names = os.listdir(here)
        except OSError:
            return "/".join(out + parts[index:])
        if part not in names:
            part = next((n for n in names if _fold(n) == _fold(part)), _nfc(part))
        out.append(part)
        here = here / part
    return "/".join(out)


def _absolute(context: Located, target: str) -> Path:
    path = Path(os.path.expanduser(target))
    if not path.is_absolute():
        path = context.cwd / path
    return _real(path)


def _in_repo(context: Located, target: str) -> str | None:
    """``target`` relative to the work tree ('/'-separated, "." for the root itself),
    None when it lies outside."""
    path = _absolute(context, target)
    if context.folds_case:
        text, root = windows_name(_nfc(str(path))), _nfc(str(context.root))
        if text.casefold() == root.casefold():
            return "."
        if not text.casefold().startswith(root.casefold().rstrip("/") + "/"):
            return None
        return _on_disk_case(context.root, text[len(root.rstrip("/")) + 1:])
    try:
        return path.relative_to(context.root).as_posix()
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


class Harness(NamedTuple):
    """Every location whose change changes the harness, as absolute real paths with the
    name a reason shows; ``installed`` locations (Meridian's own installation) count
    only for writes inside them (removing a whole virtualenv only leaves the hooks
    unable to start, and PreToolUse then blocks)."""

    locations: tuple[tuple[Path, str], ...]
    installed: tuple[tuple[Path, str], ...] = ()
    fold: bool = False  # a case-insensitive file system: compare paths case-folded
    # the interpreter files the hooks run: the file itself, or a folder holding it
    # (removing or moving the virtualenv lets a new one stand in its place)
    interpreters: tuple[tuple[Path, str], ...] = ()

    def key(self, path: Path) -> Path:
        return Path(_fold(str(path))) if self.fold else path

    def hit(self, path: Path, *, into: bool = False) -> str | None:
        """The harness location ``path`` changes, or None. A path inside a location, the
        location itself, or a directory holding it (removing or moving ``.claude``)
        counts; writing unknown files ``into`` a directory counts when it holds a
        location and is not the work tree root."""
        mine, root = self.key(path), self.key(self.root)
        for location, name in self.locations:
            where = self.key(location)
            if mine == where or where in mine.parents:
                return name if mine == where else self._show(path, location, name)
            if mine in where.parents and not (into and mine == root):
                return self._show(path, location, name)
        for location, name in self.installed:
            where = self.key(location)
            if mine == where or where in mine.parents:
                return f"{name} ({path})"
        for location, name in self.interpreters:
            where = self.key(location)
            if mine == where or (mine in where.parents and not into):
                return name if mine == where else f"{name} (in {path})"
        return None

    def installation(self) -> tuple[tuple[Path, str], ...]:
        """Meridian's installation and the interpreter files, together."""
        return (*self.installed, *self.interpreters)

    @property
    def root(self) -> Path:
        return self.locations[0][0].parent

    def _show(self, path: Path, location: Path, name: str) -> str:
        for base, prefix in ((self.root, ""), (Path.home(), "~/")):
            with contextlib.suppress(ValueError):
                return prefix + (path.relative_to(base).as_posix() or ".")
        return str(path)

    def files(self) -> list[tuple[Path, str]]:
        """The locations and, for directories, the files in them now (bounded)."""
        out: list[tuple[Path, str]] = []
        for location, name in self.locations:
            out.append((location, name))
            if location.is_dir() and not location.is_symlink():
                for count, child in enumerate(location.rglob("*")):
                    if count > 2000:
                        break
                    out.append((child, self._show(child, location, name)))
        return out


def _home_harness() -> list[tuple[Path, str]]:
    """Claude Code's user settings (``disableAllHooks`` there switches every hook off) and
    the user-level git config (a ``core.hooksPath`` there replaces Meridian's hooks)."""
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    # Claude Code's managed (policy) settings outrank every other: disableAllHooks or
    # allowManagedHooksOnly there drop Meridian's hooks
    import sys

    policy = (("C:/Program Files/ClaudeCode", "C:/ProgramData/ClaudeCode") if os.name == "nt"
              else ("/Library/Application Support/ClaudeCode",) if sys.platform == "darwin"
              else ("/etc/claude-code/managed-settings.json", "/etc/claude-code/managed-settings.d"))
    managed = [(_real(path), path) for path in policy]
    return [*managed, (_real(home / ".claude" / "settings.json"), "~/.claude/settings.json"),
            (_real(home / ".claude" / "settings.local.json"), "~/.claude/settings.local.json"),
            (_real(home / ".gitconfig"), "~/.gitconfig"),
            (_real(xdg / "git" / "config"), "~/.config/git/config")]


def harness_for(context: Located, config_files: tuple[str, ...], branch: str | None) -> Harness:
    return make_harness(repository_harness(context, config_files, branch),
                        fold=context.folds_case)


def make_harness(repository: list[tuple[Path, str]], *, fold: bool = False) -> Harness:
    """The harness from ``repository_harness``'s locations, the user's own settings and
    Meridian's installation (both read now: they depend on who runs the hook)."""
    root = repository[0][0].parent
    return Harness((*repository, *_home_harness()), installed=_installed_harness(root),
                   fold=fold, interpreters=_interpreters(root))


def repository_harness(context: Located, config_files: tuple[str, ...],
                       branch: str | None) -> list[tuple[Path, str]]:
    """The harness locations of this repository (``.meridian`` first: ``Harness.root``
    is its parent), from its layout and its git config's ``core.hooksPath``."""
    from meridian import gitio

    root = context.root
    common = _real(gitio.common_dir(context.repo))
    gitdir = _real(context.repo.path)
    named = [(root / ".meridian", ".meridian"),
             (root / ".claude" / "settings.json", ".claude/settings.json"),
             (root / ".claude" / "settings.local.json", ".claude/settings.local.json"),
             # the pre-commit framework's hooks: Meridian's entries are a framework
             # user's git hooks
             (root / ".pre-commit-config.yaml", ".pre-commit-config.yaml")]
    named += [(_real(root / f), f) for f in config_files]
    show = "" if common == root / ".git" else f"{common}/"
    named += [(common / "hooks", f"{show or '.git/'}hooks"),
              (common / "meridian", f"{show or '.git/'}meridian"),
              (common / "config", f"{show or '.git/'}config"),
              (gitdir / "config.worktree", ".git/config.worktree"),
              (common / "packed-refs", f"{show or '.git/'}packed-refs"),
              # a `commondir` file (in any git dir, a main one too) moves git to another
              # common dir: other hooks, config and refs; so does a linked worktree's or a
              # submodule's `.git` file (`gitdir: PATH`) and what `worktrees/` holds
              (gitdir / "commondir", ".git/commondir"),
              # HEAD set to the state branch: a `git reset --soft` or `git commit` moves it
              (gitdir / "HEAD", ".git/HEAD"),
              (common / "commondir", f"{show or '.git/'}commondir"),
              (common / "worktrees", f"{show or '.git/'}worktrees")]
    if not os.path.isdir(root / ".git"):
        named.append((root / ".git", ".git"))
    if branch:
        named.append((common / "refs" / "heads" / branch, f".git/refs/heads/{branch}"))
    # a file a git config includes (`[include] path = ...`): a core.hooksPath set there
    # replaces Meridian's hooks as much as one set in the config itself
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    named += [(_real(p), str(p)) for p in config_includes(
        [common / "config", gitdir / "config.worktree", home / ".gitconfig",
         xdg / "git" / "config"])]
    hooks_path = gitio.config_value(context.repo, "core.hooksPath")
    if hooks_path:
        named.append((_real(root / os.path.expanduser(hooks_path)), hooks_path))
    # the root first: Harness.root reads it from the first location's parent
    return [(root / ".meridian", ".meridian"), *named[1:]]


_INCLUDE_SECTION = lazy_pattern(r"^\s*\[\s*include(?:if\s+\"[^\"]*\")?\s*\]", re.IGNORECASE)
_SECTION = lazy_pattern(r"^\s*\[")
_INCLUDE_PATH = lazy_pattern(r"^\s*path\s*=\s*(.*?)\s*$", re.IGNORECASE)


def config_includes(files: list[Path], limit: int = 64) -> list[Path]:
    """The files ``files`` (git config files) include, transitively (``[include]`` and
    ``[includeIf "..."]`` ``path =``; a relative path is relative to the including
    file, ``~/`` is the home directory), as git would read them; at most ``limit``."""
    from meridian.userfiles import read_bounded

    found: list[Path] = []
    pending = list(files)
    seen: set[Path] = set()
    while pending and len(found) < limit:
        path = pending.pop(0)
        if path in seen:
            continue
        seen.add(path)
        try:
            text = read_bounded(path, limit=1024 * 1024).decode("utf-8", "replace")
        except Exception:  # noqa: BLE001, S112 - absent, a FIFO, too large: not followed
            continue
        inside = False
        for line in text.splitlines():
            if _SECTION.match(line):
                inside = bool(_INCLUDE_SECTION.match(line))
                continue
            value = _INCLUDE_PATH.match(line) if inside else None
            if value is None or not value.group(1):
                continue
            raw = value.group(1).split(" #")[0].split(" ;")[0].strip().strip('"')
            included = Path(os.path.expanduser(raw))
            if not included.is_absolute():
                included = path.parent / included
            if included not in found:
                found.append(included)
                pending.append(included)
    return found


def _installed_harness(root: Path) -> tuple[tuple[Path, str], ...]:
    """Meridian's installation: the package the hooks run and the site-packages around it
    (a ``.pth`` file there runs at every start-up, ``-P`` or not), and the Python that runs
    them: every folder on its ``sys.path`` (its standard library, ``site.py`` and
    ``encodings`` included, the base interpreter's as well as a virtualenv's), its
    prefixes' ``pyvenv.cfg`` and the ``meridian`` console script. Not when Meridian is
    developed in this very work tree (an editable install from it). The running hook *is*
    that Python (``$MERIDIAN_PYTHON``), so all of it is read from ``sys`` (no file is
    read); ``interpreters`` names the executables themselves."""
    import sys
    import sysconfig

    import meridian

    raw: list[tuple[str, str]] = [(os.path.dirname(meridian.__file__),
                                   "Meridian's installed package")]
    with contextlib.suppress(KeyError, OSError):
        paths = sysconfig.get_paths()
        raw.append((paths["purelib"], "the site-packages Meridian runs from"))
        raw += [(paths[key], "the Python the hooks run")
                for key in ("platlib", "stdlib", "platstdlib") if paths.get(key)]
    # what the interpreter reads at start-up: sys.path (the hook runs with -I, so it holds
    # the standard library and the site folders only), site.py's own folder, the user site
    raw += [(entry, "the Python the hooks run") for entry in sys.path
            if entry and os.path.isabs(entry)]
    raw.append((os.path.dirname(os.__file__), "the Python the hooks run"))
    user_base = os.environ.get("PYTHONUSERBASE") if not sys.flags.ignore_environment else None
    raw.append((os.path.join(user_base or os.path.join(os.path.expanduser("~"), ".local"), "lib",
                             f"python{sys.version_info[0]}.{sys.version_info[1]}",
                             "site-packages"), "the Python the hooks run (user site)"))
    # the pre-commit framework's environments (a framework user's Meridian is there)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    # (both the default place and the one PRE_COMMIT_HOME names: the git command that
    # runs the framework may see another value than this hook)
    for place in {os.path.join(cache, "pre-commit"), os.environ.get("PRE_COMMIT_HOME") or ""}:
        if place:
            raw.append((place, "the pre-commit framework's hook environments"))
    for prefix in (sys.prefix, sys.base_prefix):
        raw.append((os.path.join(prefix, "pyvenv.cfg"), "the Python the hooks run"))
    for folder in (os.path.dirname(sys.executable), os.path.join(sys.prefix, "bin")):
        script = os.path.join(folder, "meridian.exe" if os.name == "nt" else "meridian")
        raw += [(script, "Meridian's console script")]
    found: list[tuple[Path, str]] = []
    seen: set[str] = set()
    for text, name in raw:
        if text in seen:
            continue
        seen.add(text)
        found.append((_real(text), name))
        if name == "Meridian's console script":
            found.append((Path(os.path.normpath(text)), name))  # as named (a symlink)
    return tuple(dict.fromkeys((path, name) for path, name in found
                               if _installed_counts(path, root)))


_PREFIXES: list[Path] = []


def _prefixes() -> list[Path]:
    import sys

    if not _PREFIXES:
        _PREFIXES.extend(_real(p) for p in dict.fromkeys(
            (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)))
    return _PREFIXES


def _installed_counts(path: Path, root: Path) -> bool:
    """Whether an installation location is protected for the project at ``root``: never
    the root or a folder holding it (every write would be denied); inside the work tree
    only within an interpreter's prefix (a project's own ``.venv``), not a source folder
    on ``sys.path`` (an editable install, Meridian developed in this work tree)."""
    # (strings, not Path.parents: this runs for every location on each call that writes)
    mine, top = str(path), str(root).rstrip("/") + "/"
    if mine == top[:-1] or top.startswith(mine.rstrip("/") + "/"):
        return False
    if not mine.startswith(top):
        return True
    for prefix in _prefixes():
        where = str(prefix)
        if where.startswith(top) and (mine == where or mine.startswith(where + "/")):
            return True
    return False


def _interpreters(root: Path) -> tuple[tuple[Path, str], ...]:
    """The executables the hooks run (``$MERIDIAN_PYTHON``, the running interpreter, its
    base), as named and resolved: replacing one, or removing or moving a folder that holds
    it, makes every hook run whatever stands there."""
    import sys

    named = [sys.executable, getattr(sys, "_base_executable", ""),
             os.environ.get("MERIDIAN_PYTHON", "")]
    out: list[tuple[Path, str]] = []
    for text in dict.fromkeys(n for n in named if n and os.path.isabs(n)):
        for path in (Path(os.path.normpath(text)), _real(text)):
            if _installed_counts(path, root):
                out.append((path, f"the Python the hooks run ({text})"))
    return tuple(dict.fromkeys(out))


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
    try:
        branch = project_branch(context.root)
    except MeridianError:
        branch = None
    return active, branch, ()


def _command(context: Located) -> str | None:
    tool_input = context.payload.get("tool_input")
    if context.payload.get("tool_name") not in ("Bash", "PowerShell") \
            or not isinstance(tool_input, dict):
        return None
    command = tool_input.get("command")
    return command if isinstance(command, str) else None


BYPASS_REASONS = {
    "skip-hooks": ("would skip the git hooks that check your work. Run it without "
                   "--no-verify / -n / core.hooksPath / GIT_CONFIG_* / HOME / PYTHON* settings "
                   "(and make commits with git commit, not plumbing), and fix what the hook "
                   "reports; if a hook is wrong, ask the user."),
    "state-branch": ("would move, delete or force-push Meridian's state branch, the record of "
                     "every gate verdict. Only Meridian writes it (meridian sync shares it); "
                     "if it needs repair, ask the user."),
    "uninstall": ("would remove Meridian's hooks. They are the user's to remove; if a hook "
                  "is in your way, fix what it reports or ask the user."),
    "approve": ("would approve a gate. Approval is a human's decision: ask the user to run "
                "it."),
    "pin": ("would pin a baseline: accepting the runs it is compared with is a human's "
            "decision. If the regression is intended, ask the user to pin it."),
    "acknowledge": ("would acknowledge tampering with Meridian's records, which only a human "
                    "may do: ask the user to look at what `meridian verify` reports."),
}


def _mentions(text: str, names: list[str]) -> str | None:
    found = HARNESS_MENTION.search(text)
    if found:
        return found.group(0)
    return next((name for name in names if name and name in text), None)


def _glob_hits(harness: Harness, context: Located, pattern: str) -> list[str]:
    """Harness files a glob target ("echo x > .merid*/gates.yaml", a ``find -name``
    pattern) could match, now or once created."""
    if any(c in pattern for c in "$`\n"):
        return []
    absolute = os.path.normpath(os.path.join(context.cwd, os.path.expanduser(pattern)))
    if harness.fold:
        hits = [name for path, name in harness.files()
                if fnmatch.fnmatchcase(_fold(str(path)), _fold(absolute))]
    else:
        hits = [name for path, name in harness.files()
                if fnmatch.fnmatchcase(str(path), absolute)]
    # Meridian's installation is not listed file by file: a glob under one of its folders
    # (`> site-packages/z?.pth`, a new name there once run) or matching an interpreter
    cut = min((absolute.index(c) for c in "*?[" if c in absolute), default=len(absolute))
    folder = _real(absolute[:cut].rsplit("/", 1)[0] or "/")
    for location, name in harness.installation():
        where = harness.key(location)
        if harness.key(folder) == where or where in harness.key(folder).parents \
                or fnmatch.fnmatchcase(str(where), harness.key(Path(absolute)).as_posix()):
            hits.append(f"{name} ({absolute})")
    return hits


def harness_hits(context: Located, harness: Harness, targets: Targets,
                 config_files: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(harness locations the targets change, harness names an unreadable text mentions)."""
    files = [hit for target in targets.paths
             if (hit := harness.hit(_absolute(context, target))) is not None]
    files += [hit for target in targets.into
              if (hit := harness.hit(_absolute(context, target), into=True)) is not None]
    unreadable: list[str] = []
    for text in targets.unresolved:  # (only a command has any: a file tool needs no Bash reader)
        from meridian.hooks.bash_writes import EXPANSION_MARK, read_expansion_mark

        if text.startswith(EXPANSION_MARK):
            # a target built by an expansion: denied when it may lie in the harness and
            # the command names a harness location
            pattern, text = read_expansion_mark(text)
            if not any(_may_be_under(context, pattern, str(path))
                       for path, _ in (*harness.locations, *harness.installation())):
                continue
            globbed = []
            if (near := near_harness(harness, pattern, text)) is not None:
                unreadable.append(near)
                continue
        else:
            globbed = _glob_hits(harness, context, text)
        files += globbed
        if not globbed and (named := _mentions(text, list(config_files))):
            unreadable.append(named)
    files = list(dict.fromkeys(files))
    return files, [n for n in dict.fromkeys(unreadable) if n not in files]


def bypass_branch(command: str, branch: str | None) -> str:
    """The state branch name ``hook_bypasses`` checks ``command`` against."""
    return (branch if "git" in command or "meridian" in command else None) or "meridian/state"


def protect_harness(context: Located) -> Reply | None:
    """Deny a change to Meridian's own configuration, its hooks, Claude Code's settings or
    the state branch, or a command that skips or removes the hooks; None when the tool
    call does none of these (or the rule is retired)."""
    command = _command(context)
    settings: tuple[bool, str | None, tuple[str, ...]] | None = None

    def read_settings() -> tuple[bool, str | None, tuple[str, ...]]:
        nonlocal settings
        if settings is None:
            settings = _harness_settings(context)
        return settings

    if command is not None:
        from meridian.hooks.bash_writes import hook_bypasses

        # the state branch's name, when a git or meridian command could touch it
        branch = read_settings()[1] if "git" in command or "meridian" in command else None
        bypasses = hook_bypasses(command, state_branch=bypass_branch(command, branch))
        if bypasses and read_settings()[0]:
            text, kind = bypasses[0]
            reason = f"Meridian: `{text}` {BYPASS_REASONS[kind]}"
            _block(context, read_settings()[1], reason, gate=None, files=[], event="PreToolUse",
                   extra={"tool": str(context.payload.get("tool_name")), "rule": HARNESS_RULE,
                          "command": text})
            return deny(reason)
    targets = _targets(context, removals=True)
    if not (targets.paths or targets.into or targets.unresolved or targets.patches
            or targets.archives):
        return None
    active, branch, config_files = read_settings()
    if not active:
        return None
    if targets.patches:
        reason = (f"Meridian: `{targets.patches[0]}` applies a patch from a pipe, which "
                  "Meridian cannot read before it runs: it may change any file, the harness "
                  "that checks your work included (Meridian's configuration, its hooks, the "
                  "Claude Code settings). Save the patch to a file first and apply that "
                  "file (`git apply FILE`), so its files can be checked.")
        _block(context, branch, reason, gate=None, files=[], event="PreToolUse",
               extra={"tool": str(context.payload.get("tool_name")), "rule": HARNESS_RULE})
        return deny(reason)
    harness = harness_for(context, config_files, branch)
    if targets.archives:
        def held(folder: Path) -> list[str]:
            key = harness.key(folder)
            return [name for location, name in (*harness.locations, *harness.installation())
                    if harness.key(location) == key or key in harness.key(location).parents]

        refusal = archive_refusal(context, targets, held, "part of the harness that checks "
                                  "your work")
        if refusal is not None:
            _block(context, branch, refusal, gate=None, files=[], event="PreToolUse",
                   extra={"tool": str(context.payload.get("tool_name")), "rule": HARNESS_RULE})
            return deny(refusal)
    files, unreadable = harness_hits(context, harness, targets, config_files)
    if not files and not unreadable:
        return None
    tool = str(context.payload.get("tool_name"))
    if files:
        reason = (f"Meridian: {', '.join(files)} {'is' if len(files) == 1 else 'are'} part "
                  "of the harness that checks your work (Meridian's configuration, gates and "
                  "rules, its git hooks, and the Claude Code settings that run these hooks). "
                  "These files are human-owned: do not change them, by this tool or any other "
                  "route. If a change is needed, ask the user to make it.")
    else:
        reason = (f"Meridian: this command names {', '.join(unreadable)} (part of the harness "
                  "that checks your work) in a form Meridian cannot read before it runs (a "
                  "shell expansion, a glob, an inline script), so it is denied. The harness "
                  "is human-owned: do not change it by any route; if you only meant to read "
                  "it, use a plain command such as cat or git diff.")
    _block(context, branch, reason, gate=None, files=files or unreadable, event="PreToolUse",
           extra={"tool": tool, "rule": HARNESS_RULE})
    return deny(reason)


def _covering_gates(context: Context, relative: str, *, directory: bool = False) -> list[str]:
    """Gates owning ``relative``; for a ``directory``, gates owning anything under it."""
    from meridian.gates import globs

    gates = list(context.facts.gates_for_path(relative))
    if directory:
        inside = relative.rstrip("/") + "/"
        for gate in context.facts.gates:
            if gate.id not in gates and any(
                    globs.matches(g, inside + "x") or _literal(g).startswith(inside)
                    for g in gate.artifacts):
                gates.append(gate.id)
    return gates


def _literal(pattern: str) -> str:
    """The part of an artifact glob before its first wildcard ("api/" of "api/**")."""
    found = re.search(r"[*?\[]", pattern)
    return pattern if found is None else pattern[:found.start()]


def _named_paths(context: Context, text: str) -> list[tuple[str, str]]:
    """(gate, literal path) for every gate whose artifact path is named in ``text``;
    for a write target built by an expansion (``bash_writes.EXPANSION_MARK``), every
    gate whose folder the target may lie in and whose folder's name the command line
    holds as a word (``cp x $(echo api)/y``, ``for d in api; do touch $d/y; done``)."""
    from meridian.hooks.bash_writes import EXPANSION_MARK, read_expansion_mark

    pattern = None
    if text.startswith(EXPANSION_MARK):
        pattern, text = read_expansion_mark(text)
    flags = re.IGNORECASE if context.folds_case else 0
    out = []
    for gate in context.facts.gates:
        for glob in gate.artifacts:
            literal = _literal(glob).removeprefix("./")
            if len(literal) < 2 or literal in ("/", "."):
                continue
            if pattern is None:
                if re.search(r"(?<![\w.-])" + re.escape(literal), text, flags):
                    out.append((gate.id, literal))
                continue
            if not _may_be_under(context, pattern, str(context.root / literal)):
                continue
            folder = literal.rstrip("/")
            names = {folder, folder.rsplit("/", 1)[-1]} if "/" in literal else {folder}
            # a computed target: the folder's name as a word in any case or after any
            # operator (`${X-api}`, `${D,,}` of API), or a glob matching it (`cd ap*`)
            if any(len(n) > 1 and re.search(NEAR_START + re.escape(n) + BARE_END, text,
                                            re.IGNORECASE) for n in names) \
                    or any(fnmatch.fnmatch(n, part) for part in _glob_parts(text)
                           for n in names):
                out.append((gate.id, literal))
    return out


def _glob_parts(text: str) -> list[str]:
    """The path components with a glob in the words of ``text`` (``cd "$(ls -d ap*)"``:
    ``ap*``)."""
    return [part for word in GLOB_WORD.findall(text) for part in word.split("/")
            if any(c in part for c in "*?[") and part.strip("*?") != ""]


GLOB_WORD = lazy_pattern(r"[^\s'\"`;|&()<>=$]*[*?\[][^\s'\"`;|&()<>=$]*")
NEAR_START = r"(?<![\w.])"
# What a command whose target lies in a folder that cannot be told must not hold while
# the target bears a harness file's name: a part of a harness folder's name, a glob
NEAR_HARNESS = lazy_pattern(r"\.gi|\.me|\.cl|hook|cdpath|[*?\[]", re.IGNORECASE)


def near_harness(harness: Harness, pattern: str, text: str) -> str | None:
    """The harness file a computed target in an unknown folder (``cd "$(ls -d .git/h*)"
    && echo x > pre-commit``: pattern UNKNOWN/pre-commit) may be, when ``text`` holds a
    name near a harness folder's (``NEAR_HARNESS``); None otherwise."""
    from meridian.hooks.bash_writes import UNKNOWN

    if not pattern.startswith(UNKNOWN) or not NEAR_HARNESS.search(text):
        return None
    first = pattern[len(UNKNOWN):].lstrip("/").split("/", 1)[0]
    if not first or UNKNOWN in first:
        return None
    key = _fold(first) if harness.fold else first
    for path, name in harness.files():
        if (_fold(path.name) if harness.fold else path.name) == key:
            return name
    return None


# What may follow a folder's name used as a word: the end of a word (Windows drops
# trailing dots and spaces from a name, so `api.` is `api` there)
BARE_START = r"(?:(?<=:-)|(?<=:=)|(?<![\w.-]))"  # (`${D:-api}`: a default is a word too)
BARE_END = r"(?=[. ]*(?:$|[/\s'\"`);|&<>},]))"


def _may_be_under(context: Located, pattern: str, location: str) -> bool:
    """Whether a target ``pattern`` (``bash_writes.unknown_pattern``: relative to cwd,
    UNKNOWN where an expansion is) may be ``location`` or lie in or around it: its part
    before the first expansion is a prefix of one or the other."""
    from meridian.hooks.bash_writes import UNKNOWN

    literal = pattern.split(UNKNOWN, 1)[0]
    if not literal:
        return True
    head, _, partial = literal.rpartition("/")
    base = _absolute(context, head) if head else (Path("/") if literal.startswith("/")
                                                  else context.cwd)
    text = str(base).rstrip("/") + "/" + partial
    where = location.rstrip("/")
    if context.folds_case:
        text, where = _fold(text), _fold(where)
    return where.startswith(text) or text.startswith(where + "/") or text.rstrip("/") == where


def gate_writes(context: Context, targets: Targets
                ) -> tuple[list[str], dict[str, list[str]], dict[str, list[str]]]:
    """What the targets write of the gates' files: (repository-relative paths some gate
    owns, gate -> directories written into whose members are unknown, gate -> its paths
    named in a text that cannot be read)."""
    paths: list[str] = []
    owners: dict[str, list[str]] = {}  # directories written into, members unknown
    for target in targets.paths:
        relative = _gate_case(context, _repo_relative(context, target))
        if relative is None:
            continue
        if context.facts.gates_for_path(relative):
            paths.append(relative)
        else:  # a directory (`git restore --source=main api`): the gates of what is in it
            for gate in _covering_gates(context, relative, directory=True):
                owners.setdefault(gate, []).append(relative)
    for target in targets.into:
        relative = _gate_case(context, _repo_relative(context, target))
        if relative is not None:
            for gate in _covering_gates(context, relative, directory=True):
                owners.setdefault(gate, []).append(relative)
    unreadable: dict[str, list[str]] = {}
    if targets.unresolved:  # (only a command has any: a file tool needs no Bash reader)
        from meridian.hooks.bash_writes import SCRIPT_MARK

        # (a script file the command runs is read for the harness only: naming a gate's
        # folder is what most build scripts do)
        for text in (t for t in targets.unresolved if not t.startswith(SCRIPT_MARK)):
            for gate, literal in _named_paths(context, text):
                unreadable.setdefault(gate, []).append(literal)
    return paths, owners, unreadable


def _gate_case(context: Context, relative: str | None) -> str | None:
    """``relative`` with its start spelled as a gate's artifact glob spells it, on a
    case-insensitive volume: ``API/new.py`` is ``api/new.py`` there even before ``api/``
    exists (the folder ``API`` made then *is* the gate's folder)."""
    if relative is None or not context.folds_case:
        return relative
    for gate in context.facts.gates:
        for glob in gate.artifacts:
            literal = _literal(glob).removeprefix("./")
            if literal and literal != relative[:len(literal)] \
                    and _fold(relative[:len(literal)]) == _fold(literal) \
                    and (literal.endswith("/") or relative[len(literal):len(literal) + 1]
                         in ("", "/")):
                return literal + relative[len(literal):]
    return relative


def _locked_under(context: Context, folder: Path) -> list[str]:
    """The artifacts of locked gates that may lie in ``folder`` (every gate's, for the
    work tree's top), each as "GLOB (gate G)"."""
    from meridian.hooks.gate_view import locked_gates

    relative = _in_repo(context, str(folder))
    if relative is None or relative == ".git" or relative.startswith(".git/"):
        return []
    gates = [g.id for g in context.facts.gates] if relative == "." else \
        _covering_gates(context, relative, directory=True)
    locked = locked_gates(context.repo, context.facts, gates) if gates else {}
    return [f"{glob} (gate {gate.id})" for gate in context.facts.gates if gate.id in locked
            for glob in gate.artifacts]


def _gates_with_files(context: Context) -> list[str]:
    """Gates with at least one file in the work tree now (what a `git pull` may change)."""
    from meridian.gates import globs

    listing = globs.worktree_files(context.repo, context.root)
    return [g.id for g in context.facts.gates
            if any(globs.matches_any(g.artifacts, path) for path in listing)]


def pre_tool_use(context: Context) -> Reply:
    if not context.facts.gates or not context.facts.is_active(LOCKED_RULE):
        return ALLOW
    gone = None
    if not _has_state(context):
        from meridian.hooks.state_gone import missing_state

        gone = missing_state(context.repo, context.facts.branch)
        if gone is None:
            return ALLOW
    # deleting or moving away a locked file changes it as much as writing it (the
    # pre-commit hook refuses the staged deletion too)
    targets = _targets(context, removals=True)
    if targets.archives and gone is None:
        reason = archive_refusal(context, targets, lambda folder: _locked_under(context, folder),
                                 "files of a locked gate")
        if reason is not None:
            _block(context, context.facts.branch, reason, gate=None, files=[],
                   event="PreToolUse", extra={"tool": str(context.payload.get("tool_name"))})
            return deny(reason)
    paths, owners, unreadable = gate_writes(context, targets)
    # files anywhere in the work tree (every gate with files owns some), and patches from
    # a pipe (any file, new ones too: every gate)
    anywhere = targets.anywhere + targets.patches
    if not paths and not owners and not unreadable and not anywhere:
        return ALLOW
    if gone is not None:  # a deleted state branch: every gate's files are denied
        named = list(dict.fromkeys(paths + [f for fs in owners.values() for f in fs]
                                   + [f for fs in unreadable.values() for f in fs]))
        gates = sorted({g for f in paths for g in context.facts.gates_for_path(f)}
                       | set(owners) | set(unreadable))
        return deny(f"Meridian: {', '.join(named[:5])} belongs to gate {', '.join(gates)}; "
                    f"{gone[0]}. Do not write it now; {gone[1]}.")
    from meridian.hooks.gate_view import locked_gates, path_decisions

    refusal = locked_refusal(
        context, paths, owners, unreadable, anywhere,
        lambda found: path_decisions(context.repo, context.facts, found),
        lambda gates: locked_gates(context.repo, context.facts, gates),
        patched=bool(targets.patches))
    if refusal is None:
        return ALLOW
    reason, gate, files = refusal
    tool = str(context.payload.get("tool_name"))
    _block(context, context.facts.branch, reason, gate=gate, files=files, event="PreToolUse",
           extra={"tool": tool})
    return deny(reason)


def locked_refusal(context: Context, paths: list[str], owners: dict[str, list[str]],
                   unreadable: dict[str, list[str]], anywhere: list[str],
                   decisions: Callable[[list[str]], list[Any]],
                   locked_of: Callable[[list[str]], dict[str, list[tuple[str, str]]]],
                   *, patched: bool = False) -> tuple[str, str, list[str]] | None:
    """(reason, gate, files) when what ``gate_writes`` found writes a locked gate's files,
    else None. Gate states come from ``decisions`` (``gate_view.path_decisions`` of some
    paths) and ``locked_of`` (``gate_view.locked_gates`` of some gates): the full path
    asks the snapshot, the cached view (``claude_view``) its phases, and one rule decides."""
    from meridian.hooks.gate_view import need_step

    owners = {gate: list(files) for gate, files in owners.items()}
    # The shared-file rule (gate_view.decide_path): refused only when every owner is locked.
    refused = [d for d in decisions(paths) if not d.allowed]
    for decision in refused:
        owners.setdefault(next(iter(decision.unmet)), []).append(decision.path)
    locked = {gate: unmet for d in refused for gate, unmet in d.unmet.items()}
    # Unknown files in a directory, or a path named in an unreadable command: any locked
    # gate among their owners refuses (which of its files they are cannot be told).
    others = [g for g in {**owners, **unreadable} if g not in locked]
    if anywhere:
        # (a patch from a pipe may add files: every gate, not only those with files now)
        reached = [g.id for g in context.facts.gates] if patched \
            else _gates_with_files(context)
        others += [g for g in reached if g not in locked and g not in others]
    if others:
        locked.update(locked_of(others))
    locked = {g: u for g, u in locked.items() if g in owners or g in unreadable
              or (anywhere and g in others)}
    if not locked:
        return None
    gate, unmet = next(iter(locked.items()))
    unmet_text = ", ".join(f"{need} ({state})" for need, state in unmet)
    if gate in owners:
        files = list(dict.fromkeys(owners[gate]))
        reason = (f"Meridian: {', '.join(files)} belongs to gate {gate}, which is locked: its "
                  f"needs have not passed: {unmet_text}. Do not write it now, nor by another "
                  f"route; {need_step(*unmet[0])}.")
    elif gate not in unreadable:
        files = []
        reason = (f"Meridian: `{anywhere[0]}` can change files anywhere in the work tree, "
                  f"which cannot be told before it runs, and gate {gate} is locked: its needs "
                  f"have not passed: {unmet_text}. Its files must not change now; "
                  f"{need_step(*unmet[0])}. To bring in other work meanwhile, use a form "
                  "Meridian can read, each as its own command: `git fetch`, then `git merge "
                  "REV` or `git rebase REV` (or ask the user).")
    else:
        files = list(dict.fromkeys(unreadable[gate]))
        reason = (f"Meridian: this command names {', '.join(files)} (files of gate {gate}, "
                  f"which is locked: its needs have not passed: {unmet_text}) in a form "
                  "Meridian cannot read before it runs (a shell expansion, a glob, an inline "
                  f"script), so it is denied. Do not write those files now; "
                  f"{need_step(*unmet[0])}.")
    return reason, gate, files


# --- Stop / SubagentStop ------------------------------------------------------------------


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)[:100] or "unknown"


def _agent_id(context: Located) -> str | None:
    """The subagent a hook fires in (Claude Code's ``agent_id``; absent on the main
    thread)."""
    value = context.payload.get("agent_id")
    return value if isinstance(value, str) and value else None


def _meridian_dir(context: Located) -> Path:
    """``.git/meridian`` of the context's repository (created when missing)."""
    if context.common is not None:
        path = context.common / "meridian"
        path.mkdir(parents=True, exist_ok=True)
        return path
    from meridian import gitio

    return gitio.meridian_dir(context.repo)


def _agent_writes_path(context: Located, agent: str) -> Path:
    directory = _meridian_dir(context) / "claude-agents"
    directory.mkdir(exist_ok=True)
    return directory / f"{_safe(context.session)}.{_safe(agent)}"


def note_agent_writes(context: Context) -> None:
    """In a subagent, remember the gate artifacts an allowed tool call writes, so its
    SubagentStop blocks only when it did gate work (a read-only explorer stops freely)."""
    agent = _agent_id(context)
    if agent is None or not context.facts.gates:
        return
    targets = _targets(context)
    written = [rel for target in targets.paths + targets.into
               if (rel := _repo_relative(context, target)) is not None
               and _covering_gates(context, rel, directory=target in targets.into)]
    from meridian.hooks.bash_writes import SCRIPT_MARK

    written += [literal for text in targets.unresolved if not text.startswith(SCRIPT_MARK)
                for _, literal in _named_paths(context, text)]
    if not written:
        return
    with contextlib.suppress(OSError), \
            _agent_writes_path(context, agent).open("a", encoding="utf-8") as handle:
        handle.write("".join(f"{path}\n" for path in dict.fromkeys(written)))


def _agent_written(context: Context, agent: str) -> list[str]:
    try:
        text = _agent_writes_path(context, agent).read_text(encoding="utf-8")
    except OSError:
        return []
    return list(dict.fromkeys(line for line in text.splitlines() if line))


def _counter_path(context: Context, event: str) -> Path:
    """One retry counter per main agent (session) and per subagent (``agent_id``), so
    parallel subagents never share one."""
    from meridian import gitio

    directory = gitio.meridian_dir(context.repo) / "claude-stops"
    directory.mkdir(exist_ok=True)
    safe = _safe(context.session)
    if event == "Stop":
        return directory / safe
    agent = _agent_id(context)
    return directory / (f"{safe}.{event}" if agent is None else f"{safe}.{_safe(agent)}")


def _read_count(path: Path) -> int:
    try:
        return int(path.read_text().strip() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def stop(context: Context, event: str) -> Reply:
    """Stop: block while the gate in progress has unfinished work. SubagentStop: the same,
    but only for a subagent that wrote that gate's artifacts in this task (a subagent
    that wrote none, or one Claude Code does not identify, stops freely)."""
    counter = _counter_path(context, event)
    agent = _agent_id(context) if event == "SubagentStop" else None
    written = _agent_written(context, agent) if agent is not None else []

    def release() -> Reply:
        counter.unlink(missing_ok=True)
        if agent is not None:
            _agent_writes_path(context, agent).unlink(missing_ok=True)
        return ALLOW

    if not context.facts.gates or not context.facts.is_active(STOP_RULE) \
            or not _has_state(context):
        return release()
    if event == "SubagentStop" and not written:
        return release()
    from meridian.hooks.gate_view import unfinished_work

    work = unfinished_work(context.repo, context.facts)
    if work is None:
        return release()
    if event == "SubagentStop" and not any(
            work.gate in _covering_gates(context, path, directory=True) for path in written):
        return release()  # the subagent's writes belong to other gates
    # A stop Claude makes on its own starts a new chain; one our block caused continues it.
    blocks = _read_count(counter) if context.payload.get("stop_hook_active") is True else 0
    cap = context.facts.claude_stop_retry_cap
    if blocks >= cap:
        release()
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
