"""Which files a shell command writes, where that can be told from its text.

Claude Code's PreToolUse hook sees a Bash command before it runs. Meridian denies
writes to a locked gate's artifacts, so it needs the files a command writes. A shell
is a programming language, so this is a best effort over the common forms:

    redirections      > f, >> f, >| f, &> f, &>> f, 2> f  (not >&2, not /dev/null)
    tee [-a] f...     every file argument
    cp / mv           the destination (dir/ + each source's name when it is a
                      directory or given with -t/--target-directory)
    sed -i            the files after the script
    touch f...        every file argument
    dd of=f

Commands are split on ; && || | & and newlines; heredoc bodies are skipped; leading
``VAR=value`` and ``sudo``/``env``/``command``/``nohup``/``time`` are looked through.
A target holding ``$``, a backquote or a glob cannot be known before the shell
expands it and is left out, as is anything that fails to tokenize: a command Meridian
cannot read is allowed, not guessed at.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "|&", ";;"})
WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
READ_REDIRECTS = frozenset({"<", "<<", "<<-", "<<<", "<>"})
WRAPPERS = frozenset({"sudo", "env", "command", "nohup", "time", "exec"})
NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


def _logical_lines(command: str) -> list[str]:
    """Lines with backslash continuations joined and heredoc bodies removed."""
    joined = re.sub(r"\\\n", " ", command)
    out: list[str] = []
    terminator: str | None = None
    for line in joined.split("\n"):
        if terminator is not None:
            if line.strip() == terminator:
                terminator = None
            continue
        out.append(line)
        found = HEREDOC.search(line)
        if found:
            terminator = found.group(2)
    return out


def _tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def _simple_commands(command: str) -> list[list[str]]:
    commands: list[list[str]] = []
    for line in _logical_lines(command):
        current: list[str] = []
        for token in _tokens(line):
            if token in SEPARATORS:
                if current:
                    commands.append(current)
                current = []
            else:
                current.append(token)
        if current:
            commands.append(current)
    return commands


def _split_redirections(tokens: list[str]) -> tuple[list[str], list[str]]:
    """(words without redirections, files written by redirection)."""
    words: list[str] = []
    written: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        target = tokens[index + 1] if index + 1 < len(tokens) else None
        if token in WRITE_REDIRECTS or token == ">&":
            if words and words[-1].isdigit():
                words.pop()  # the file descriptor of "2>" was split off as a word
            if target is not None and not (token == ">&" and (target.isdigit() or target == "-")):
                written.append(target)
            index += 2
            continue
        if token in READ_REDIRECTS or token == "<&":
            index += 2
            continue
        words.append(token)
        index += 1
    return words, written


def _strip_prefix(words: list[str]) -> list[str]:
    index = 0
    while index < len(words) and (ASSIGNMENT.match(words[index]) or words[index] in WRAPPERS):
        index += 1
    return words[index:]


def _operands(args: list[str], takes_value: frozenset[str] = frozenset()) -> list[str]:
    """Arguments that are not options (``--`` ends the options)."""
    out: list[str] = []
    index = 0
    options_done = False
    while index < len(args):
        arg = args[index]
        if not options_done and arg == "--":
            options_done = True
        elif not options_done and arg.startswith("-") and arg != "-":
            if arg in takes_value:
                index += 1
        else:
            out.append(arg)
        index += 1
    return out


def _copy_targets(args: list[str], cwd: Path) -> list[str]:
    target_dir = None
    rest: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-t", "--target-directory") and index + 1 < len(args):
            target_dir = args[index + 1]
            index += 2
            continue
        if arg.startswith("--target-directory="):
            target_dir = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        index += 1
    operands = _operands(rest, frozenset({"-S", "--suffix"}))
    if target_dir is not None:
        return [os.path.join(target_dir, os.path.basename(src.rstrip("/"))) for src in operands]
    if len(operands) < 2:
        return []
    *sources, dest = operands
    if dest.endswith("/") or (cwd / dest).is_dir():
        return [os.path.join(dest, os.path.basename(src.rstrip("/"))) for src in sources]
    return [dest]


def _sed_targets(args: list[str]) -> list[str]:
    in_place = any(a == "--in-place" or a.startswith("--in-place=")
                   or (a.startswith("-") and not a.startswith("--") and "i" in a[1:].split(".")[0])
                   for a in args)
    if not in_place:
        return []
    has_script_option = any(a in ("-e", "-f", "--expression", "--file")
                            or a.startswith(("--expression=", "--file=")) for a in args)
    operands = _operands(args, frozenset({"-e", "-f", "-l", "--expression", "--file"}))
    return operands if has_script_option else operands[1:]


def _command_targets(words: list[str], cwd: Path) -> list[str]:
    words = _strip_prefix(words)
    if not words:
        return []
    name, args = os.path.basename(words[0]), words[1:]
    if name == "tee":
        return _operands(args)
    if name == "touch":
        return _operands(args, frozenset({"-d", "-t", "-r"}))
    if name in ("cp", "mv"):
        return _copy_targets(args, cwd)
    if name == "sed":
        return _sed_targets(args)
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    return []


def _knowable(path: str) -> bool:
    return bool(path) and path not in NOT_FILES and not any(c in path for c in "$`*?[{~")


def written_files(command: str, cwd: Path) -> list[str]:
    """The files ``command`` writes, as written in it (relative ones relative to ``cwd``)."""
    try:
        commands = _simple_commands(command)
    except ValueError:  # unbalanced quotes: the shell would refuse it too
        return []
    found: list[str] = []
    for tokens in commands:
        words, redirected = _split_redirections(tokens)
        for path in redirected + _command_targets(words, cwd):
            if _knowable(path) and path not in found:
                found.append(path)
    return found
