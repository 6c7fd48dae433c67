"""Command-line entry point: ``main(argv) -> int``.

The CLI is a thin skin over the library. Each sub-command lives in
``meridian/commands/<name>.py`` and exposes ``add_arguments(parser)`` and
``run(args) -> int``. Only the module of the command being run is imported, so the
git hooks (``meridian hook pre-commit``) pay for nothing they do not use.
"""

from __future__ import annotations

import errno
import os
import sys

from meridian import __version__
from meridian.errors import MeridianError

TYPE_CHECKING = False  # no `typing` on the Claude hook's allow path (meridian.lean)
if TYPE_CHECKING:  # imported where used: `meridian hook claude` (every tool call) needs no parser
    import argparse
    from collections.abc import Sequence
    from typing import Any, Protocol

    class CommandModule(Protocol):
        def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

        def run(self, args: argparse.Namespace) -> int: ...

# name -> (module under meridian.commands, one-line help). Order is the help order.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("init", "set up Meridian in this repository (config, state branch, hooks)"),
    "status": ("status", "every gate in dependency order with its state"),
    "gate": ("gate", "start, submit, approve, reopen or show a gate"),
    "owners": ("owners", "which gates own a path and what committing it would do"),
    "why": ("why", "the story of a gate: submissions, verdicts, blocks"),
    "log": ("log", "events on the state branch, newest first"),
    "memory": ("memory", "add, list, export and verify schema-validated memory"),
    "calibration": ("calibration", "predicted vs actual hours and the project's multiplier"),
    "rules": ("rules", "the rules the harness enforces, and which are due for review"),
    "features": ("features", "completion tracker: working and hardened features from JUnit"),
    "health": ("health", "health report: gates, calibration, evaluator, cost, completion"),
    "eval": ("eval", "run agent evaluation suites, inspect and compare runs"),
    "baseline": ("baseline", "pin evaluation runs as named baselines (git tags)"),
    "sync": ("sync", "merge the state branch with a remote's, by record id"),
    "hooks": ("hooks", "install or uninstall Meridian's git hooks"),
    "hook": ("hook", "entry points called by git hooks and Claude Code hooks"),
    "evaluator": ("evaluator", "measure the offline (or any) evaluator on a corpus of cases"),
    "verify": ("verify", "prove the state branch is append-only and every record valid"),
    "ci": ("ci", "in CI: re-derive every pass from scratch; exit 1 on one that does not reproduce"),
    "demo": ("demo", "a one-minute offline tour in a throwaway repository"),
}


def _load(name: str) -> CommandModule:
    import importlib

    module_name, _ = COMMANDS[name]
    return importlib.import_module(f"meridian.commands.{module_name}")  # type: ignore[return-value]


_PARSER_CLASS: list[type[argparse.ArgumentParser]] = []


def _parser_class() -> type[argparse.ArgumentParser]:
    """argparse that reports usage errors as one line and exit code 2 (made on first use)."""
    if _PARSER_CLASS:
        return _PARSER_CLASS[0]
    import argparse

    class _Parser(argparse.ArgumentParser):
        def format_help(self) -> str:
            # The epilog (the example) is printed as written, not re-wrapped.
            epilog, self.epilog = self.epilog, None
            try:
                text = super().format_help()
            finally:
                self.epilog = epilog
            return f"{text}\n{epilog}\n" if epilog else text

        def error(self, message: str) -> None:  # type: ignore[override]
            # main() prints "meridian: " before every error; name only the sub-command here
            where = self.prog.removeprefix("meridian").strip()
            raise MeridianError(
                f"{where + ': ' if where else ''}{message} (see '{self.prog} --help')")

    _PARSER_CLASS.append(_Parser)
    return _Parser


def build_parser(command: str | None) -> argparse.ArgumentParser:
    _Parser = _parser_class()
    parser = _Parser(
        prog="meridian",
        description=(
            "Meridian keeps an AI coding agent honest across a long build: gates judged by "
            "an independent evaluator, schema-validated memory, an evaluation harness and "
            "structured events, all stored on a git branch."
        ),
    )
    parser.add_argument("--version", action="version", version=f"meridian {__version__}")
    parser.add_argument(
        "-C", dest="repo_path", default=None, metavar="PATH",
        help="run as if meridian was started in PATH",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (_, help_text) in COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        if name == command:
            _load(name).add_arguments(sub)
            _describe(sub, name)
    return parser


def _describe(parser: argparse.ArgumentParser, path: str) -> None:
    """Give every command under ``parser`` a description (its one-line help when it has
    none) and its example from ``meridian.help_examples``."""
    import argparse

    from meridian.help_examples import example_epilog

    parser.epilog = example_epilog(path, parser.epilog)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for verb, child in action.choices.items():
                if not child.description and helps.get(verb):
                    child.description = helps[verb]
                _describe(child, f"{path} {verb}")


def _first_command(argv: Sequence[str]) -> str | None:
    skip_next = False
    for token in argv:
        if skip_next:
            skip_next = False
            continue
        if token == "-C":
            skip_next = True
            continue
        if token.startswith("-"):
            continue
        return token if token in COMMANDS else None
    return None


def _log_internal_error(exc: BaseException) -> str:
    """Write the traceback under .git/meridian/ (or a temp dir) and return the path."""
    import traceback

    text = "".join(traceback.format_exception(exc))
    try:
        from meridian import gitio

        log_dir = str(gitio.meridian_dir(gitio.open_repo(".")))
    except Exception:  # noqa: BLE001 - no repository (or a broken one): log to a temp dir
        import tempfile

        log_dir = os.path.join(tempfile.gettempdir(), "meridian")
    path = os.path.join(log_dir, "error.log")
    try:
        os.makedirs(log_dir, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"meridian {__version__} argv={sys.argv!r}\n{text}\n")
    except OSError as log_error:  # a full disk must not turn into a second traceback
        return f"nowhere: {path} could not be written: {log_error.strerror or log_error}"
    return str(path)


def _git_hook_args(argv: list[str]) -> Any:
    """The parsed arguments of ``hook pre-commit [--no-cache]`` and ``hook pre-push
    [REMOTE [URL]] [--no-cache]`` as the stubs run them (git runs one on every commit
    and push), without importing argparse or building the parser (some 15 ms); None for
    anything else, which the parser reads (and explains)."""
    if argv[:1] != ["hook"] or len(argv) < 2 or argv[1] not in ("pre-commit", "pre-push"):
        return None
    rest = argv[2:]
    no_cache = rest[-1:] == ["--no-cache"]
    if no_cache:
        rest = rest[:-1]
    if any(a.startswith("-") for a in rest) or len(rest) > (2 if argv[1] == "pre-push" else 0):
        return None
    from types import SimpleNamespace

    from meridian.commands.hook import run

    return SimpleNamespace(command="hook", verb=argv[1], no_cache=no_cache, repo_path=None,
                           remote=rest[0] if rest else None,
                           url=rest[1] if len(rest) > 1 else None, func=run)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["hook", "claude"] and len(argv) > 2 and not argv[2].startswith("-"):
        # Claude Code runs this before every tool call: no parser for every command
        from meridian.commands.hook import run_claude

        return run_claude(argv[2], argv[3:])
    # Text from a run file, a commit or a tool's output may hold what UTF-8 cannot encode
    # (a lone surrogate JSON kept): print it escaped rather than stop with an error.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
    hook = argv[:1] == ["hook"]
    if hook:
        # A git hook's answer is its exit code: whether its message could be written
        # (`git commit 2>&1 | true` closes the pipe before the refusal is printed) must
        # not change it, so a hook's output that cannot be written is dropped.
        sys.stdout, sys.stderr = _Unbroken(sys.stdout), _Unbroken(sys.stderr)
    try:
        args = _git_hook_args(argv)
        if args is None:
            command = _first_command(argv)
            parser = build_parser(command)
            args = parser.parse_args(argv)
            if args.command is None:
                parser.print_help()
                return 0
        if args.repo_path:
            try:
                os.chdir(args.repo_path)
            except OSError as exc:
                raise MeridianError(f"-C {args.repo_path}: {exc.strerror}") from None
        if not hasattr(args, "func"):
            args.func = _load(args.command).run
        # blocks a Claude Code deny spooled and has not recorded yet: every command reads
        # (and every hook verifies) the branch with them (meridian.hooks.block_spool)
        from meridian.hooks import block_spool

        block_spool.drain_here()
        # a command (a git hook too) that moves the state tip leaves the Claude PreToolUse
        # view valid for the new one (re-keyed, or computed again after a phase change),
        # so the next tool call is decided from it (meridian.hooks.claude_view.update)
        tips = block_spool.view_tips()
        try:
            return int(args.func(args))
        finally:
            if tips is not None and sys.exc_info()[0] is not KeyboardInterrupt \
                    and block_spool.view_tips() != tips:
                from meridian.hooks.claude_view import update_views

                update_views()
    except MeridianError as exc:
        print(f"meridian: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("meridian: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the reader went away: not an error, except for a
        # hook (its writes cannot raise this; whatever did, it did not decide: refuse).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 2 if hook else 0
    except SystemExit as exc:  # argparse --help / --version
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    except OSError as exc:
        if exc.errno not in _DISK_ERRORS:
            return _internal_error(exc)
        # A full disk, a read-only file system, a quota: the user's to fix, in one line.
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"meridian: {exc.strerror or exc}{where}; nothing was written", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the one place internal errors are handled
        if _is_git_error(exc):
            # libgit2 could not read the repository (a damaged pack or loose object): the
            # user's to repair, in one line; the traceback is kept for a report
            path = _log_internal_error(exc)
            first_line = (str(exc).strip().splitlines() or [""])[0]
            print(f"meridian: git cannot read this repository: {first_line}; "
                  f"`git fsck --full` names the damage (traceback in {path})", file=sys.stderr)
            return 2
        return _internal_error(exc)


class _Unbroken:
    """A hook's output stream whose writes cannot fail: a reader gone (EPIPE) or any
    other write error drops the rest of the output, and the stream's descriptor is
    pointed at /dev/null so the interpreter's final flush cannot fail either (which
    would turn the hook's exit code into 120)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._broken = False

    def write(self, text: str) -> int:
        if not self._broken:
            try:
                self._stream.write(text)
                if "\n" in text:
                    self._stream.flush()
            except (OSError, ValueError):
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self._broken:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._drop()

    def _drop(self) -> None:
        self._broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _is_git_error(exc: BaseException) -> bool:
    pygit2 = sys.modules.get("pygit2")  # imported by whatever raised it, if anything did
    return pygit2 is not None and isinstance(exc, pygit2.GitError)


_DISK_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})


def _internal_error(exc: BaseException) -> int:
    path = _log_internal_error(exc)
    first_line = (str(exc).strip().splitlines() or [""])[0]
    print(f"meridian: internal error: {type(exc).__name__}: {first_line} (traceback in {path})",
          file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
