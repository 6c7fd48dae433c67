"""``meridian hook pre-commit|pre-push|claude EVENT``: what the installed hooks call.

These are entry points for git and Claude Code, not for people, though running one by
hand shows what it would refuse. Imports stay inside ``run``: the pre-commit path
pays only for what it uses.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no `typing` on the Claude hook's allow path (meridian.lean)
if TYPE_CHECKING:  # `meridian hook claude` is routed here without building a parser
    import argparse

CLAUDE_EVENTS = ("SessionStart", "PreToolUse", "Stop", "SubagentStop", "SessionEnd")
# Claude Code cancels a hook after its settings' timeout (60 s) and then lets the call
# through; Meridian gives up first, so the answer is its own (a deny for PreToolUse).
DEADLINE_S = 40


def add_arguments(parser: argparse.ArgumentParser) -> None:
    import argparse

    verbs = parser.add_subparsers(dest="verb", required=True, metavar="HOOK",
                                  parser_class=type(parser))
    pre_commit = verbs.add_parser(
        "pre-commit", help="refuse a commit: invalid config, corrupt state, a locked gate's "
        "files, stubs or hollow tests in a gate's staged files",
        description="Checks the staged files as git is about to commit them. Exit 2 refuses.")
    pre_commit.add_argument("--no-cache", action="store_true",
                            help="recompute everything (config, gate snapshot, full verify)")
    pre_push = verbs.add_parser(
        "pre-push", help="refuse a push: a regression against a pinned baseline, a stale "
        "gate, corrupt memory",
        description="Reads '<local ref> <local sha> <remote ref> <remote sha>' lines on stdin "
        "as git gives them. Exit 2 refuses.")
    pre_push.add_argument("remote", nargs="?", help="remote name (git passes it)")
    pre_push.add_argument("url", nargs="?", help="remote URL (git passes it)")
    pre_push.add_argument("--no-cache", action="store_true",
                          help="recompute the gate snapshot and verify the whole state branch")
    claude = verbs.add_parser(
        "claude", help="Claude Code hook: JSON payload on stdin, decision out",
        description="Speaks the Claude Code hook contract: JSON on stdin, the decision as "
        "JSON on stdout with exit 0. PreToolUse fails closed: whatever stops it from "
        "deciding (a payload that is not JSON, a configuration it cannot read, a crash, "
        f"{DEADLINE_S} s passing) denies the tool call with a one-line reason. Every other "
        "event, and an event Meridian does not handle, reports a problem on stderr with "
        "exit 1 (a non-blocking error), never exit 2.")
    claude.add_argument("event", nargs="?", help=f"the hook event ({', '.join(CLAUDE_EVENTS)})")
    claude.add_argument("extra", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    import os
    import sys

    # pydantic scans every installed distribution's entry points for plugins when it
    # builds its first model; a hook has no plugins and runs on every commit.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if args.verb in ("pre-commit", "pre-push"):
        from meridian.hooks.install import refresh_stub

        refresh_stub(args.verb)  # an older stub (one without -I) is upgraded in place
    if args.verb == "pre-commit":
        from meridian.hooks import precommit

        return precommit.run(".", use_cache=not args.no_cache)
    if args.verb == "pre-push":
        from meridian.hooks import prepush

        stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
        return prepush.run(".", stdin, remote=args.remote, use_cache=not args.no_cache)
    if args.event is None:
        print(f"meridian: hook claude: name the hook event ({', '.join(CLAUDE_EVENTS)}), "
              "as the command `meridian init --claude` writes into .claude/settings.json "
              "does: meridian hook claude PreToolUse < payload.json", file=sys.stderr)
        return 2
    return run_claude(args.event, args.extra)


class _Deadline(BaseException):
    """Raised by the alarm: deciding took longer than ``DEADLINE_S``."""


def _undecided(event: str, problem: str) -> int:
    """The answer when Meridian's own code cannot run (stdlib only: an import failed)."""
    import json
    import sys

    problem = " ".join(problem.split())
    if event == "PreToolUse":
        print(json.dumps({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": f"Meridian could not check this tool call, so it is "
            f"denied: {problem}. Fix that (or ask the user to) and try again."}}))
        return 0
    print(f"meridian: {problem} (not blocking)", file=sys.stderr)
    return 1


def _decided_by_view(payload: str) -> object | None:
    """What the cached view proves (``hooks.claude_view.decide``: standard library only):
    ``ALLOWED``, a ``Denied`` (its block spooled), or None. Anything else, a problem with
    the view included, is decided in full."""
    try:
        from meridian.hooks import claude_view

        return claude_view.decide(payload)
    except Exception:  # noqa: BLE001 - the full path decides, and fails closed
        return None


def _answer_from_view(decided: object) -> int:
    """Answer what the view decided; a deny's block is recorded after the answer is out
    (``block_spool.record_soon``: the spool keeps it until then)."""
    import sys

    from meridian.hooks import block_spool, claude_view

    if not isinstance(decided, claude_view.Denied):
        return 0
    code = decided.reply.emit(sys.stdout, sys.stderr)
    sys.stdout.flush()
    block_spool.record_soon(decided.root)
    return code


def run_claude(event: str, extra: list[str]) -> int:
    import sys

    from meridian.lean import signal_module

    # the interpreter's own module behind ``signal`` (the same calls) where it is as
    # expected: importing ``signal`` builds three enums, ~0.5 ms of every tool call
    signal = signal_module()

    def expire(signum: int, frame: object) -> None:
        raise _Deadline

    if extra:
        return _undecided(event, f"unexpected arguments after the event: {' '.join(extra)}")
    timed = hasattr(signal, "SIGALRM")
    if timed:
        signal.signal(signal.SIGALRM, expire)
        signal.alarm(DEADLINE_S)
    try:
        payload = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
        if event == "PreToolUse":
            decided = _decided_by_view(payload)
            if decided is not None:
                if timed:
                    signal.alarm(0)
                return _answer_from_view(decided)
        from meridian.hooks import claude

        reply = claude.handle(event, payload)
        if timed:
            signal.alarm(0)
        return reply.emit(sys.stdout, sys.stderr)
    except _Deadline:
        return _undecided(event, f"the {event} hook took longer than {DEADLINE_S} s")
    except KeyboardInterrupt:
        return _undecided(event, f"the {event} hook was interrupted")
    except Exception as exc:  # noqa: BLE001 - an import or interpreter problem
        return _undecided(event, f"the {event} hook could not run: {type(exc).__name__}: {exc}")
    finally:
        if timed:
            signal.alarm(0)
