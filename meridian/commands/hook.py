"""``meridian hook pre-commit|pre-push|claude EVENT``: what the installed hooks call.

These are entry points for git and Claude Code, not for people, though running one by
hand shows what it would refuse. Imports stay inside ``run``: the pre-commit path
pays only for what it uses.
"""

from __future__ import annotations

import argparse

CLAUDE_EVENTS = ("SessionStart", "PreToolUse", "Stop", "SubagentStop")


def add_arguments(parser: argparse.ArgumentParser) -> None:
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
        description="Speaks the Claude Code hook contract: JSON on stdin; JSON on stdout "
        "with exit 0, or the reason on stderr with exit 2, never both. A payload that is "
        "not JSON is reported on stderr with exit 1 (a non-blocking error).")
    claude.add_argument("event", choices=CLAUDE_EVENTS, help="the hook event")


def run(args: argparse.Namespace) -> int:
    import os
    import sys

    # pydantic scans every installed distribution's entry points for plugins when it
    # builds its first model; a hook has no plugins and runs on every commit.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if args.verb == "pre-commit":
        from meridian.hooks import precommit

        return precommit.run(".", use_cache=not args.no_cache)
    if args.verb == "pre-push":
        from meridian.hooks import prepush

        stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
        return prepush.run(".", stdin, remote=args.remote, use_cache=not args.no_cache)
    from meridian.hooks import claude

    payload = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    reply = claude.handle(args.event, payload)
    return reply.emit(sys.stdout, sys.stderr)
