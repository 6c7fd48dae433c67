"""Which files a shell command writes, where that can be told from its text.

Claude Code's PreToolUse hook sees a Bash command before it runs. Meridian denies
writes to a locked gate's artifacts, so it needs the files a command writes. A shell
is a programming language, so this is a best effort over the common forms:

    redirections      > f, >> f, >| f, &> f, &>> f, 2> f  (not >&2, not /dev/null)
    tee [-a] f...     every file argument
    cp / mv / ln /    the destination (dir/ + each source's name when it is a
    install / git mv  directory or given with -t/--target-directory)
    sed -i, perl -i   the files after the script
    touch, truncate   every file argument
    dd of=f
    sh/bash -c 'CMD'  the files CMD writes
    meridian rules    .meridian/rules.yaml (``retire``/``activate``; also as
                      ``python -m meridian``, after ``-C DIR`` in that directory)
    meridian init     .meridian/config.yaml, and .claude/settings.json with --claude

With ``removals=True`` the files a command takes away count too (for the harness
files, deleting or moving one aside is as much a change as rewriting it):

    rm / unlink /     every operand
    rmdir / shred
    mv / git mv       the sources
    git rm            every operand
    chmod / chown /   the files (a hook made non-executable no longer runs)
    chgrp
    git checkout --,  the paths they overwrite
    git restore
    git config        .git/config when it sets core.hooksPath (git then runs other hooks)

Commands that rewrite the work tree from other revisions come back as marks
(``GIT_MARK``) the Claude hook resolves with git before the command runs:
``git reset --hard|--merge|--keep REV``, ``git read-tree -u``, ``git checkout|switch
REV``, ``git merge REV``, ``git rebase UPSTREAM`` (the files that differ), ``git
cherry-pick|revert C`` (the files those commits change), ``git clean -f`` (what
``git clean -n`` with the same options would remove), ``git am MBOX``, ``patch <
FILE`` / ``git apply < FILE`` (the patch's headers). What cannot be told before it
runs (``git pull``, a merge after a ``git fetch`` in the same command, ``git
filter-branch``, a ``--continue``/``--abort``, a patch read from a pipe) is a mark of
kind ``anywhere``: files anywhere in the work tree.

Commands are split on ; && || | & and newlines; heredoc bodies are skipped; leading
``VAR=value`` and ``sudo``/``env``/``command``/``nohup``/``time`` are looked through.
``cd DIR`` (and ``pushd``) moves where the later relative paths point, until the
subshell it ran in, ``( ... )``, closes: ``cd api && echo x > app.py`` writes
``api/app.py``. A target holding ``$``, a backquote or a glob cannot be known before
the shell expands it and is left out, as are relative targets after a ``cd`` whose
directory cannot be told, and anything that fails to tokenize: a command Meridian
cannot read is allowed, not guessed at. A caller that must not allow what it cannot read
(the harness protection) passes ``unresolved``: it receives those targets as written,
and the command text when an interpreter runs inline code (``python -c``, ``python -
<<EOF``, ``node -e``) or ``xargs`` runs what its input names, whose writes cannot be
told at all: every word that code may be given, which leaves out the files a command
only reads and passes no name of (``cat api/app.py | python -c CODE`` gives CODE what
the file holds, not its name; ``_code_visible_text``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

from meridian.lean import lazy_pattern

SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "|&", ";;"})
# "<>" opens the file read-write (`exec 3<>FILE` then writes through fd 3)
WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
READ_REDIRECTS = frozenset({"<", "<<", "<<-", "<<<"})
WRAPPERS = frozenset({"sudo", "env", "command", "nohup", "time", "exec"})
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
CHANGE_DIR = frozenset({"cd", "pushd"})
NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
ASSIGNMENT = lazy_pattern(r"^[A-Za-z_][A-Za-z0-9_]*=")
INTERPRETER = lazy_pattern(r"^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl|ruby|php)$")
SUBSTITUTION = "\x01"  # a command substitution in a word: "$\x01N\x01" (N: its index)
PLACEHOLDER = lazy_pattern(r"\$\x01(\d+)\x01")
# Characters that end a word (and so start the next one) outside quotes
WORD_ENDS = frozenset(" \t\n;&|()<>")
# An extended glob group (`@(api|docs)`, `!(x)`): read as a substitution, a word that
# cannot be told (its text is still looked at as commands: harmless when it is none)
EXTGLOB = frozenset("@!+*?")


class Words(list[str]):
    """The words of one simple command, and what feeds its standard input when the
    command text tells: ``feed`` is ("text", TEXT) for a heredoc or here-string, ("pipe",
    SOURCE) for the command piped into it (SOURCE None: a subshell, not told)."""

    feed: tuple[str, Words | str | None] | None = None
    subs: dict[int, str] | None = None  # the texts of its words' command substitutions


def _quoted_end(text: str, start: int, quote: str) -> int:
    end = text.find(quote, start + 1)
    if end < 0:
        raise ValueError("No closing quotation")
    return end + 1


def _heredoc_word(text: str, start: int) -> tuple[str, int]:
    """The delimiter of a heredoc whose word starts at ``start`` (quotes taken off), and
    the index after the word."""
    index = start
    while index < len(text) and text[index] in " \t":
        index += 1
    out: list[str] = []
    while index < len(text) and text[index] not in WORD_ENDS:
        char = text[index]
        if char in "'\"":
            end = _quoted_end(text, index, char)
            out.append(text[index + 1:end - 1])
            index = end
        elif char == "\\":
            out.append(text[index + 1:index + 2])
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out), index


def _scan(text: str, start: int = 0, stop: str | None = None
          ) -> tuple[str, int, list[str], list[str]]:
    """Read shell text from ``start`` the way bash reads it, up to the ``)`` that closes
    a ``$(`` substitution (``stop``) or the end: (the text with backslash-newlines
    joined, comments and heredoc bodies taken out and each command substitution --
    ``$(...)``, backquotes, ``$((...))`` -- replaced by a placeholder word; the index
    after ``stop``; the substitutions' own texts; the heredoc bodies in order).
    Quotes are followed (a ``'`` in a heredoc body or a comment is no quote), so a
    substitution or a heredoc ends where the shell ends it."""
    out: list[str] = []
    subs: list[str] = []
    bodies: list[str] = []
    pending: list[tuple[str, bool]] = []  # heredocs whose bodies start after this line
    index, depth, in_double, word_start = start, 0, False, True
    while index < len(text):
        char = text[index]
        if char == "\\":
            if text[index + 1:index + 2] == "\n":
                index += 2
                continue
            out.append(text[index:index + 2])
            index, word_start = index + 2, False
            continue
        if char == "'" and not in_double:
            end = _quoted_end(text, index, "'")
            out.append(text[index:end])
            index, word_start = end, False
            continue
        if char == '"':
            in_double = not in_double
            out.append(char)
            index, word_start = index + 1, False
            continue
        group = (char == "$" or (char in EXTGLOB and not in_double)) \
            and text[index + 1:index + 2] == "("
        if group or char == "`":
            if char == "`":
                end, inner = index + 1, []
                while end < len(text) and text[end] != "`":
                    if text[end] == "\\" and text[end + 1:end + 2] in ("`", "\\", "$"):
                        end += 1
                    inner.append(text[end])
                    end += 1
                if end >= len(text):
                    raise ValueError("No closing backquote")
                subs.append("".join(inner))
                end += 1
            else:
                _, end, _, _ = _scan(text, index + 2, ")")
                subs.append(text[index + 2:end - 1])
            out.append(f"${SUBSTITUTION}{len(subs) - 1}{SUBSTITUTION}")
            index, word_start = end, False
            continue
        if in_double:
            out.append(char)
            index += 1
            continue
        if char == "#" and word_start:
            while index < len(text) and text[index] != "\n":
                index += 1
            continue
        if char == "(" and word_start and text[index + 1:index + 2] == "(":
            # an arithmetic command, `(( n << 2 ))`: no heredoc in it, no file written
            _, end, _, _ = _scan(text, index + 2, ")")
            subs.append(text[index + 2:end - 1])
            out.append(f": ${SUBSTITUTION}{len(subs) - 1}{SUBSTITUTION}")
            index = end + 1 if text[end:end + 1] == ")" else end
            word_start = False
            continue
        if stop is not None and char == "(":
            depth += 1
        elif stop is not None and char == ")":
            if depth == 0:
                return "".join(out), index + 1, subs, bodies
            depth -= 1
        if text.startswith("<<", index) and not text.startswith("<<<", index):
            strip = text.startswith("<<-", index)
            delimiter, end = _heredoc_word(text, index + (3 if strip else 2))
            pending.append((delimiter, strip))
            out.append(text[index:end])
            index, word_start = end, False
            continue
        if char == "\n" and pending:
            out.append("\n")
            index += 1
            for delimiter, strip in pending:
                lines: list[str] = []
                while index < len(text):
                    end = text.find("\n", index)
                    end = len(text) if end < 0 else end
                    line, index = text[index:end], end + 1
                    if (line.lstrip("\t") if strip else line) == delimiter:
                        break
                    lines.append(line)
                bodies.append("\n".join(lines) + "\n")
            pending.clear()
            word_start = True
            continue
        out.append(char)
        word_start = char in WORD_ENDS
        index += 1
    if in_double:
        raise ValueError("No closing quotation")
    if stop is not None:
        raise ValueError("No closing parenthesis")
    return "".join(out), index, subs, bodies


# Longest first: shlex returns a run of punctuation as one token (");" or "&&("), which
# is cut here into the operators the shell reads.
OPERATORS = ("&>>", "<<<", "<<-", "&&", "||", ";;", "|&", "&>", ">>", ">|", ">&", "<&", "<<",
             "<>", ";", "&", "|", "(", ")", "<", ">")
PUNCTUATION = frozenset("();<>|&")


def _operators(run: str) -> list[str]:
    out: list[str] = []
    while run:
        operator = next(op for op in OPERATORS if run.startswith(op))
        out.append(operator)
        run = run[len(operator):]
    return out


def _tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars="();<>|&")
    lexer.whitespace_split = True
    lexer.commenters = ""  # (comments: taken out by _scan)
    tokens: list[str] = []
    for token in lexer:
        # (shlex gives a quoted ";" back unquoted too; reading it as an operator can only
        # over-report a write, never hide one)
        if len(token) > 1 and set(token) <= PUNCTUATION:
            tokens += _operators(token)
        else:
            tokens.append(token)
    return tokens


SUBSHELL_OPEN = ["("]
SUBSHELL_CLOSE = [")"]


ANSI_C = lazy_pattern(r"\$'((?:[^'\\]|\\.)*)'")
ANSI_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
                "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _ansi_c_text(body: str) -> str:
    def one(match: re.Match[str]) -> str:
        text = match.group(0)[1:]
        if text[0] in "xuU":
            try:
                return chr(int(text[1:], 16))
            except ValueError:
                return text
        if text[0].isdigit():
            return chr(int(text, 8) % 256)
        return ANSI_ESCAPES.get(text[0], "\\" + text)

    return re.sub(r"\\(?:x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|.)",
                  one, body)


def _decode_ansi_c(line: str) -> str:
    """``$'\x2emeridian'`` as the shell reads it: a single-quoted ``'.meridian'``."""
    return ANSI_C.sub(lambda m: shlex.quote(_ansi_c_text(m.group(1))), line)


def _simple_commands(command: str, _depth: int = 0) -> list[list[str]]:
    """The simple commands in order; a subshell's bounds appear as ``["("]`` / ``[")"]``.
    A command substitution's commands come first, as a subshell, before the command whose
    word it is (``cp x $(rm y)/z`` runs ``rm y``); its word keeps a placeholder, which no
    target made from it can be told through."""
    text, _, subs, bodies = _scan(_decode_ansi_c(command))
    commands: list[list[str]] = []
    waiting = list(bodies)  # heredoc bodies, in the order of their `<<` operators

    def emit(words: Words) -> None:
        for index in dict.fromkeys(int(i) for w in words for i in PLACEHOLDER.findall(w)):
            if index < len(subs):
                words.subs = {**(words.subs or {}), index: subs[index]}
            if _depth < 8 and index < len(subs):
                commands.append(SUBSHELL_OPEN)
                commands.extend(_simple_commands(subs[index], _depth + 1))
                commands.append(SUBSHELL_CLOSE)
        commands.append(words)

    for line in text.split("\n"):
        current = Words()
        # commands suspended by a process substitution (`cp <(echo x) api/x.py`), with the
        # plain parentheses opened inside it
        suspended: list[Words] = []
        depth: list[int] = []
        tokens = _tokens(line)
        for position, token in enumerate(tokens):
            if token == "(" and current and current[-1] in ("<", ">"):
                current[-1] = "/dev/fd/63"  # the word the shell puts there
                suspended.append(current)
                depth.append(0)
                commands.append(SUBSHELL_OPEN)
                current = Words()
                continue
            if token == ")" and depth and depth[-1] == 0:
                if current:
                    emit(current)
                commands.append(SUBSHELL_CLOSE)
                current = suspended.pop()
                depth.pop()
                continue
            if depth and token in ("(", ")"):
                depth[-1] += 1 if token == "(" else -1
            if token in SEPARATORS:
                source = current if current else None
                if current:
                    emit(current)
                current = Words()
                if token in ("|", "|&"):
                    current.feed = ("pipe", source)
                if token == "(":
                    commands.append(SUBSHELL_OPEN)
                elif token == ")":
                    commands.append(SUBSHELL_CLOSE)
                continue
            if token in ("<<", "<<-") and waiting:
                current.feed = ("text", waiting.pop(0))
            elif position and tokens[position - 1] == "<<<":
                current.feed = ("text", token + "\n")
            current.append(token)
        while suspended:  # an unclosed process substitution: keep every word
            if current:
                emit(current)
            current = suspended.pop()
        if current:
            emit(current)
    return commands


def _stdin_file(tokens: list[str]) -> str | None:
    """The file a ``< FILE`` redirection feeds the command, if any."""
    for index, token in enumerate(tokens[:-1]):
        if token == "<":
            return tokens[index + 1]
    return None


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


# Words the shell reads before a command, and commands that run the command after their
# own options: name -> the options that take a value (the value is skipped too).
KEYWORDS = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!", "{", "}",
                      "time", "coproc", "fi", "done", "esac"})
WRAPPER_OPTIONS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-c",
                       "--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type",
                       "--other-user", "--command-timeout", "--close-from"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "nohup": frozenset(), "command": frozenset(), "exec": frozenset({"-a"}),
    "builtin": frozenset(), "setsid": frozenset(), "time": frozenset({"-f", "-o"}),
    "chronic": frozenset(), "caffeinate": frozenset(), "unbuffer": frozenset(),
    "flock": frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}),
    "chroot": frozenset(),
    "taskset": frozenset(), "runuser": frozenset({"-u", "-g", "--user", "--group"}),
    # multi-call binaries: `busybox rm F` runs their own rm
    "busybox": frozenset(), "toybox": frozenset(),
    # runners that start a command with other limits, clocks, namespaces or tools (rt3 F6)
    "prlimit": frozenset({"-p", "--pid"}), "chrt": frozenset(),
    "unshare": frozenset({"-S", "--setuid", "-G", "--setgid", "-w", "--wd", "-R", "--root"}),
    "nsenter": frozenset({"-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w", "--wd"}),
    "faketime": frozenset({"-f", "-m", "-p"}), "valgrind": frozenset(),
    "systemd-run": frozenset({"-u", "--unit", "-p", "--property", "-E", "--setenv", "--uid",
                              "--gid", "-M", "--machine", "--description", "--slice", "-H",
                              "--host", "--working-directory", "--on-calendar"}),
    "cpulimit": frozenset({"-l", "--limit", "-p", "--pid"}), "numactl": frozenset(),
    "firejail": frozenset(), "proot": frozenset({"-r", "-b", "-w"}), "xvfb-run": frozenset(),
    "dbus-run-session": frozenset(), "catchsegv": frozenset(), "torsocks": frozenset(),
    "proxychains": frozenset({"-f"}), "proxychains4": frozenset({"-f"}),
}


def _strip_prefix(words: list[str]) -> list[str]:
    """The command a line runs, with assignments, keywords and wrappers taken off
    (``timeout 5 nice -n 19 env -i FOO=1 sudo -u root rm x`` runs ``rm x``)."""
    index = 0
    while index < len(words):
        word = words[index]
        name = os.path.basename(word)
        if ASSIGNMENT.match(word) or word in KEYWORDS:
            index += 1
            continue
        if word == "function":  # `function f { BODY; }`: the body's first command
            index += 2
            continue
        runs = 1 if name in PACKAGE_RUNNERS else 2 if (
            (name in RUNNERS and words[index + 1:index + 2] == ["run"])
            or (name in ("npm", "pnpm", "yarn", "bun")
                and words[index + 1:index + 2] in (["exec"], ["dlx"], ["x"]))) else 0
        if runs:
            # `npx prettier --write api`, `uv run black api`: the tool a runner runs
            index += runs
            while index < len(words) and words[index].startswith("-"):
                if words[index] == "--":
                    index += 1
                    break
                index += 2 if words[index] in RUNNER_VALUES else 1
            continue
        if name not in WRAPPER_OPTIONS:
            break
        takes_value = WRAPPER_OPTIONS[name]
        index += 1
        while index < len(words):
            arg = words[index]
            if arg == "--":
                index += 1
                break
            if name == "env" and (ASSIGNMENT.match(arg) or arg == "-"):
                index += 1
                continue
            if name == "env" and arg.startswith(("-S", "--split-string")):
                # `env -S 'cp x y'`: the string is split into the words run
                value = arg.split("=", 1)[1] if arg.startswith("--split-string=") \
                    else arg[2:] if arg.startswith("-S") and len(arg) > 2 else \
                    (words[index + 1] if index + 1 < len(words) else "")
                taken = 1 if arg.startswith("--split-string=") or len(arg) > 2 else 2
                try:
                    split = shlex.split(value)
                except ValueError:
                    split = ["$env-S"]  # cannot be read: an unknown command
                words = [*words[:index], *split, *words[index + taken:]]
                continue
            if not arg.startswith("-") or arg == "-":
                break
            index += 2 if arg in takes_value else 1
        if name == "timeout" and index < len(words):
            index += 1  # the duration
        if name in ("flock", "chroot", "taskset", "faketime") and index < len(words):
            index += 1  # the lock file, new root, CPU mask or time
        if name == "chrt" and index < len(words) and words[index].isdigit():
            index += 1  # the priority
        if name in ("numactl", "firejail", "systemd-run", "proot") and index < len(words):
            while index < len(words) and words[index].startswith("-"):
                index += 1  # (their `--opt=value` options)
    # `gdb -batch -ex run --args CMD`, `lldb -- CMD`: the command debugged
    if words[index:index + 1] and os.path.basename(words[index]) in ("gdb", "lldb", "cgdb"):
        rest = words[index + 1:]
        for marker in ("--args", "--"):
            if marker in rest:
                return _strip_prefix(rest[rest.index(marker) + 1:])
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


def _copy_targets(args: list[str], cwd: Path,
                  takes_value: frozenset[str] = frozenset({"-S", "--suffix"})) -> list[str]:
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
    operands = _operands(rest, takes_value)
    if target_dir is not None:
        return [os.path.join(target_dir, os.path.basename(src.rstrip("/"))) for src in operands]
    if len(operands) < 2:
        return []
    *sources, dest = operands
    if any(c in dest for c in "*?[") and "$" not in dest:
        import glob

        # `cp x ap?/`: the folder the shell expands the glob to
        folders = [f for f in sorted(glob.glob(dest, root_dir=cwd))[:64] if (cwd / f).is_dir()]
        if folders:
            return [os.path.join(f, os.path.basename(src.rstrip("/")))
                    for f in folders for src in sources]
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


def _perl_targets(args: list[str]) -> list[str]:
    """``perl -i``/``-pi``/``-i.bak``: the files after the script (``-e`` or a script file)."""
    in_place = False
    script_given = False
    operands: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            operands += args[index + 1:]
            break
        if arg.startswith("-") and len(arg) > 1:
            letters = arg[1:]
            if "i" in letters:
                in_place = True
                letters = letters[:letters.index("i")]  # what follows -i is a backup suffix
            if letters.endswith(("e", "E")):
                script_given = True
                index += 1  # the script text
        else:
            operands.append(arg)
        index += 1
    if not in_place:
        return []
    return operands if script_given else operands[1:]


def _shell_script(args: list[str]) -> str | None:
    """The command string of ``sh -c CMD`` / ``bash -lc CMD``, or None."""
    for index, arg in enumerate(args):
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            return args[index + 1] if index + 1 < len(args) else None
        if not arg.startswith("-"):
            return None  # a script file comes first: not an inline command
    return None


def _move_sources(args: list[str]) -> list[str]:
    """The sources of ``mv ARGS``: every operand but the destination (all with ``-t``)."""
    targeted = any(a in ("-t", "--target-directory") or a.startswith("--target-directory=")
                   for a in args)
    operands = _operands(args, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
    return operands if targeted else operands[:-1]


def _removed(name: str, args: list[str]) -> list[str]:
    """The files command ``name`` deletes or moves away."""
    if name == "git":
        where, git_args = _git_location(args)
        if where:
            return [t if os.path.isabs(t) else os.path.join(where, t)
                    for t in _removed(name, git_args)]
        args = git_args
    if name in ("rm", "unlink", "rmdir", "shred"):
        return _operands(args)
    if name == "mv":
        return _move_sources(args)
    if name == "git" and args[:1] == ["mv"]:
        return _move_sources(args[1:])
    if name == "git" and args[:1] == ["rm"]:
        return _operands(args[1:])
    if name == "git" and args[:1] == ["config"] and _config_bypass(args[1:]):
        return [".git/config"]
    if name in ("chmod", "chown", "chgrp", "chattr", "setfacl"):
        return _mode_targets(args)
    if name == "cp" and any(a in ("--link", "--symbolic-link") or (
            a.startswith("-") and not a.startswith("--") and set(a[1:]) & set("ls"))
            for a in args):
        # `cp -l api/app.py x`: a hard (or symbolic) link, written through later
        return _move_sources(args)
    if name == "link":  # `link FILE NEW`: FILE's inode under a second name
        return _operands(args)[:2]
    if name in ("mount", "bindfs") and (name == "bindfs" or any(
            a in ("--bind", "--rbind", "-B", "-R", "--move", "-M") or "bind" in a
            for a in args)):
        # a bind mount shows a folder under a second name (a write there is a write to it)
        # or hides what stands at the mount point
        return _operands(args, _MOUNT_VALUES)
    if name == "ln":
        # a link to a harness file lets a later write through the link change it
        operands = _operands(args, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
        if len(operands) < 2:
            return operands
        *sources, link = operands
        # a relative symlink target is resolved from the link's directory
        # (`ln -s ../.meridian d/m` points d/m at .meridian), or from LINK when it is one
        relative = [s for s in sources if not os.path.isabs(s) and not s.startswith("~")]
        return sources + [os.path.normpath(os.path.join(base, s)) for s in relative
                          for base in (os.path.dirname(link) or ".", link)]
    return []


_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "-l", "--list", "--get-urlmatch",
                           "--show-origin", "--show-scope", "get", "list"})
_MOUNT_VALUES = frozenset({"-o", "--options", "-t", "--types", "-O", "--test-opts", "-L",
                           "-U", "--source", "--target", "-N", "--namespace"})


def _restored(verb: str, args: list[str], cwd: Path | None = None) -> list[str]:
    """The paths ``git checkout [TREE] -- PATHS`` / ``git restore PATHS`` overwrite
    (``git checkout BRANCH`` names no paths: nothing is told)."""
    if "--" in args:
        return _pathspecs(args[args.index("--") + 1:], cwd)
    operands = _operands(args, frozenset({"-s", "--source", "-b", "-B", "--orphan",
                                          "--conflict", "-U", "--pathspec-from-file"}))
    if verb == "checkout":
        # `git checkout REV PATH...` overwrites the paths; `git checkout BRANCH` moves HEAD
        return _pathspecs(operands[1:], cwd)
    return _pathspecs(operands, cwd)


_SHORT_MAGIC = {"/": "top", "!": "exclude", "^": "exclude"}


def _work_tree_top(cwd: Path) -> Path | None:
    for candidate in (cwd, *cwd.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def _pathspecs(specs: list[str], cwd: Path | None) -> list[str]:
    """Git pathspecs as the paths they cover: magic taken off (``:(glob)api/*``,
    ``:(literal)x``), the top-level forms (``:/api/app.py``, ``:(top)api``) made absolute
    from the work tree's top, and exclusions (``:!x``) read as covering everything else
    (``.``: the whole directory)."""
    out: list[str] = []
    excluded = False
    for spec in specs:
        if not spec.startswith(":") or spec == ":":
            out.append(spec)
            continue
        if spec.startswith(":(") and ")" in spec:
            magic, rest = spec[2:].split(")", 1)
            words = {m.strip().split(":")[0].split("=")[0].lower() for m in magic.split(",")}
        else:
            index, words = 1, set()
            while index < len(spec) and spec[index] in _SHORT_MAGIC:
                words.add(_SHORT_MAGIC[spec[index]])
                index += 1
            rest = spec[index + 1:] if spec[index:index + 1] == ":" else spec[index:]
        if "exclude" in words:
            excluded = True
            continue
        if "top" in words:
            top = _work_tree_top(cwd) if cwd is not None else None
            out.append(str(top / rest) if top is not None else (rest or "."))
            continue
        out.append(rest or ".")
    return out if out or not excluded else ["."]


# chmod's symbolic modes can look like options ("chmod -x FILE")
SYMBOLIC_MODE = lazy_pattern(r"^[-+=][rwxXstugo]+$")


def _mode_targets(args: list[str]) -> list[str]:
    """The files of ``chmod/chown/chgrp [OPTIONS] MODE|OWNER FILE...`` (no MODE with
    ``--reference``)."""
    referenced = any(a.startswith("--reference") for a in args)
    operands: list[str] = []
    options_done = False
    for arg in args:
        if not options_done and arg == "--":
            options_done = True
        elif not options_done and arg.startswith("-") and not SYMBOLIC_MODE.match(arg):
            continue
        else:
            operands.append(arg)
    return operands if referenced else operands[1:]


def _inline_code(name: str, args: list[str]) -> bool:
    """Whether interpreter ``name`` runs code given in the command (``-c``/``-e``, or a
    script on standard input: ``-`` or no script file, as with a heredoc)."""
    if not INTERPRETER.match(name):
        return False
    for arg in args:
        if arg == "-" or (arg.startswith("-") and not arg.startswith("--")
                          and any(flag in arg[1:] for flag in "ceE")):
            return True
        if not arg.startswith("-"):
            return False  # a script file (or "-m module") decides what is written
    return True


STASH_MARK = "\0stash:"  # a target: the files ``git stash pop|apply REF`` writes
# A target: files git would write, found by asking git (``git_mark``/``read_git_mark``).
GIT_MARK = "\0git:"
# Kinds of GIT_MARK: "diff" (``git diff --name-only ARGS``), "show" (the files commits
# change), "switch" (a revision, else a path), "clean" (``git clean -n OPTIONS``),
# "anywhere" (unknown files anywhere in the work tree; the text says what).
# "log" (the files ``git log ARGS`` commits change), "submodule" (the submodules' folders),
# "patch" (a patch from a pipe that cannot be read: any file, new ones too).
GIT_MARK_KINDS = ("diff", "show", "switch", "clean", "anywhere", "log", "submodule", "patch")


TEXT_FEED = "\0text:"  # a patch source: the text itself (a heredoc's body)


def git_mark(kind: str, args: list[str], where: str = "") -> str:
    return GIT_MARK + json.dumps([kind, where, args])


def read_git_mark(mark: str) -> tuple[str, str, list[str]]:
    """(kind, directory relative to the command's cwd, arguments) of a ``git_mark``."""
    kind, where, args = json.loads(mark[len(GIT_MARK):])
    return str(kind), str(where), [str(a) for a in args]


def _anywhere(text: str) -> str:
    return git_mark("anywhere", [text])


UNTOLD_PATCH = git_mark("patch", ["a patch from a pipe"])
# An ``unresolved`` entry for a write target built by an expansion the hook cannot read
# (``cp x $(echo api)/y``, ``cd "$D" && touch y``): ``expansion_mark(PATTERN, TEXT)``,
# PATTERN the target with UNKNOWN where the expansions are, TEXT the command line.
EXPANSION_MARK = "\0expansion:"
UNKNOWN = "\x02"
_UNKNOWN_PART = lazy_pattern(r"\$(?:\x01\d+\x01|\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]|"
                             r"(?=[^A-Za-z_{\x01]|$))")


def expansion_mark(pattern: str, text: str) -> str:
    return EXPANSION_MARK + json.dumps([pattern, text])


def read_expansion_mark(mark: str) -> tuple[str, str]:
    """(the target's pattern, with UNKNOWN for each part that cannot be told; the command
    line) of an ``expansion_mark``."""
    pattern, text = json.loads(mark[len(EXPANSION_MARK):])
    return str(pattern), str(text)


def unknown_pattern(target: str, here: str | None) -> str:
    """``target`` with each expansion left in it as UNKNOWN, under ``here`` (UNKNOWN too
    when the directory cannot be told)."""
    pattern = _UNKNOWN_PART.sub(UNKNOWN, target)
    if os.path.isabs(pattern) or pattern.startswith(UNKNOWN):
        return pattern
    if here is None:
        return UNKNOWN + "/" + pattern
    return pattern if here == "." else os.path.join(here, pattern)
SCRIPT_MARK = "\0script:"  # an ``unresolved`` entry holding a script file's text
SCRIPT_LIMIT = 256 * 1024
FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
FIND_NAMES = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename",
                        "-regex", "-iregex", "-lname", "-ilname"})


def _script_text(path: str, cwd: Path) -> str | None:
    """The first ``SCRIPT_LIMIT`` characters of a script file the command runs."""
    from meridian.userfiles import read_bounded

    try:
        return read_bounded(cwd / os.path.expanduser(path), limit=SCRIPT_LIMIT)\
            .decode("utf-8", "replace")
    except (OSError, ValueError, Exception):  # noqa: BLE001 - unreadable: nothing to add
        return None


def _script_file(name: str, args: list[str]) -> str | None:
    """The script file an interpreter or shell is given (``bash x.sh``, ``python x.py``,
    ``source x.sh``), or None."""
    if name in (".", "source"):
        return args[0] if args else None
    if name not in SHELLS and not INTERPRETER.match(name):
        return None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-m", "-c", "-e", "-E", "-"):
            return None
        if not arg.startswith("-"):
            return arg
        index += 2 if arg in ("-W", "-X", "-o", "-O", "--rcfile", "--init-file") else 1
    return None


FIND_WALK_LIMIT = 20_000


def _find_matches(cwd: Path, start: str, filters: list[tuple[str, str]]) -> list[str]:
    """The paths under ``start`` that a ``find`` name filter matches (any of them), as
    find prints them; past ``FIND_WALK_LIMIT`` entries, ``start/`` (members unknown)."""
    import fnmatch

    if not _knowable(start):
        return []
    checks: list[tuple[bool, re.Pattern[str]]] = []  # (on the whole path, pattern)
    for option, pattern in filters:
        flags = re.IGNORECASE if option.startswith("-i") else 0
        try:
            expression = re.compile(pattern if option.endswith("regex")
                                    else fnmatch.translate(pattern), flags)
        except re.error:
            return [start.rstrip("/") + "/"]
        checks.append((option not in ("-name", "-iname", "-lname", "-ilname"), expression))
    found: list[str] = []
    seen = 0
    for folder, dirs, files in os.walk(cwd / os.path.expanduser(start)):
        shown = os.path.join(start, os.path.relpath(folder, cwd / os.path.expanduser(start)))
        for entry in (*dirs, *files):
            seen += 1
            if seen > FIND_WALK_LIMIT:
                return [start.rstrip("/") + "/"]
            path = os.path.normpath(os.path.join(shown, entry))
            if any(check.fullmatch(path if whole else entry) for whole, check in checks):
                found.append(path)
    return found


def _find_targets(args: list[str], cwd: Path, removals: bool,
                  unresolved: list[str] | None) -> list[str]:
    """What ``find START... EXPR -delete | -exec CMD {} ;`` changes: each start path (as
    a directory written into) or, with name filters, ``START/**/PATTERN`` globs; the
    command of ``-exec`` is read with ``{}`` standing for them."""
    starts: list[str] = []
    index = 0
    while index < len(args) and not args[index].startswith(("-", "(", "!")):
        starts.append(args[index])
        index += 1
    starts = starts or ["."]
    found_files: list[str] = []
    patterns: list[str] = []
    filters: list[tuple[str, str]] = []
    negated = False
    actions: list[list[str]] = []
    deletes = False
    while index < len(args):
        arg = args[index]
        if arg in FIND_NAMES and index + 1 < len(args):
            patterns.append(args[index + 1])
            filters.append((arg, args[index + 1]))
            negated = negated or args[index - 1] in ("!", "-not")
            index += 2
            continue
        if arg == "-delete":
            deletes = True
        if arg in ("-fprint", "-fprint0", "-fls", "-fprintf") and index + 1 < len(args):
            found_files.append(args[index + 1])  # find writes FILE itself
        if arg in FIND_ACTIONS:
            end = index + 1
            while end < len(args) and args[end] not in (";", "+", "\\;"):
                end += 1
            actions.append(args[index + 1:end])
            index = end + 1
            continue
        index += 1
    matched = ([os.path.join(s, "**", p.lstrip("./") if "/" in p else p)
                for s in starts for p in patterns] if patterns else [s + "/" for s in starts])
    if patterns and (actions or deletes):
        # find acts on the files there now: the ones its filters match, at any depth (a
        # negated filter matches what the others do not: the start folders, unknown
        # members)
        matched += [s + "/" for s in starts] if negated else [
            found for s in starts for found in _find_matches(cwd, s, filters)]
    found: list[str] = found_files
    if deletes and removals:
        found += matched
    for action in actions:
        for target in matched:
            words = [target.rstrip("/") if w == "{}" else w.replace("{}", target) for w in action]
            found += _command_targets(words, cwd, removals=removals, unresolved=unresolved)
    return found


def _command_targets(words: list[str], cwd: Path, *, removals: bool = False,
                     unresolved: list[str] | None = None, stdin: str | None = None,
                     environment: dict[str, str] | None = None, feed: Feed = None,
                     text: str = "") -> list[str]:
    """The files one simple command writes. ``environment``: variables exported earlier
    in the command line (``export GIT_WORK_TREE=api; git ...``); ``feed``: what its
    standard input is when told (``Words.feed``); ``text``: the whole command line, for
    what cannot be told."""
    # `GIT_WORK_TREE=api git checkout HEAD -- app.py` is `git --work-tree=api ...`
    work_tree = next((w.split("=", 1)[1] for w in words if w.startswith("GIT_WORK_TREE=")),
                     (environment or {}).get("GIT_WORK_TREE"))
    assigned = [w for w in words if ASSIGNMENT.match(w)] + [
        f"{key}={value}" for key, value in (environment or {}).items()]
    words = _strip_prefix(words)
    if not words:
        return []
    if "$" in words[0] and unresolved is not None:
        # the command itself is built by an expansion (`$(echo cp) x api/y`, `$CMD ...`)
        unresolved.append(expansion_mark(UNKNOWN, text))
        return []
    name, args = os.path.basename(words[0]), words[1:]
    if work_tree and name == "git":
        args = [f"--work-tree={work_tree}", *args]
    for word in assigned:  # `BASH_ENV=/tmp/x.sh bash -c true`: the shell runs x.sh first
        key, _, value = word.partition("=")
        if key in _STARTUP_FILES and value and unresolved is not None:
            code = _script_text(value, cwd) if _knowable(value) else None
            _once(unresolved, SCRIPT_MARK + code if code is not None else text or value)
    script_text = _inline_script(name, args, stdin, feed)
    if script_text is not None:
        if PLACEHOLDER.search(script_text) or "$" in script_text.split(" ", 1)[0]:
            # `eval "$(curl ...)"`, `sh -c "$CMD"`: the code comes from an expansion
            if unresolved is not None:
                unresolved.append(expansion_mark(UNKNOWN, text))
            return []
        return written_files(script_text, cwd, removals=removals, unresolved=unresolved)
    if unresolved is not None and _reads_code_from_elsewhere(name, args, stdin, feed):
        unresolved.append(text or " ".join(words))  # `curl URL | sh`, `bash <(...)`
    if name == "xargs":
        # the operands come from standard input: what the command does cannot be told
        # (unless it only reads: `find api/ -name '*.py' | xargs grep -n x`)
        inner = _strip_xargs(args)
        if _only_reads(inner):
            return []
        if unresolved is not None and inner:
            unresolved.append(" ".join(words))
            listing = stdin or next((_option_value(args, i, a) for i, a in enumerate(args)
                                     if a in ("-a", "--arg-file") or a.startswith(
                                         ("--arg-file=", "-a"))), None)
            code = _script_text(listing, cwd) if listing and _knowable(listing) else None
            if code is not None:
                unresolved.append(code)  # the operands: the files named in that list
        return _command_targets(inner, cwd, removals=removals, unresolved=unresolved,
                                text=text) if inner else []
    if name == "find":
        return _find_targets(args, cwd, removals, unresolved)
    script = _script_file(name, args) or (stdin if name in SHELLS and not _operands(args)
                                          else None)
    if script is not None and unresolved is not None and _knowable(script):
        code = _script_text(script, cwd)
        if code is not None:
            unresolved.append(SCRIPT_MARK + code)
    elif unresolved is not None and words[0].startswith(("./", "/", "~/")) and "/" in words[0]:
        code = _script_text(words[0], cwd)  # ./run.sh: the script it runs
        if code is not None and not code.startswith("\x7fELF"):
            unresolved.append(SCRIPT_MARK + code)
    program = _awk_program(args) if name in AWK else None
    if name in AWK and program is None and any(
            _option_value(args, i, a) in STDIN_SCRIPTS for i, a in enumerate(args)
            if a.startswith("-f") or a == "--file"):
        program = _fed_text(feed)  # `awk -f /dev/stdin <<< PROGRAM`
    if unresolved is not None and program and re.search(r">|\|\s*getline|system", program):
        unresolved.append(program)  # `awk '{print > "api/x"}'`: the files it names
    if name in ("make", "gmake") and unresolved is not None:
        # a makefile's recipes are shell commands: one from standard input or --eval
        fed = any(_option_value(args, i, a) in STDIN_SCRIPTS for i, a in enumerate(args)
                  if a.startswith("-f") or a.split("=", 1)[0] in ("--file", "--makefile"))
        unresolved += [t for t in [_fed_text(feed) if fed else None] + [
            _option_value(args, i, a) for i, a in enumerate(args)
            if a.split("=", 1)[0] in ("--eval", "-E") or (a.startswith("-E") and len(a) > 2)]
            if t]
    if unresolved is not None and name == "sed" and _sed_writes(args)[1]:
        # sed's `e CMD`: a command it runs (`\/` is a `/` there)
        unresolved += [t.replace("\\/", "/") for t in _sed_writes(args)[1]]
    patch_feed = _patch_feed(feed, stdin)
    # command lines the command runs in turn (`git rebase -x CMD`, `git -c core.pager=CMD`,
    # `watch CMD`), read beside what the command itself writes
    nested = [found for code in _run_commands(name, args, assigned)
              for found in written_files(code, cwd, removals=removals, unresolved=unresolved)]
    # output options any tool may have, and variables that move a tool's output
    # (`PIP_TARGET=api` for pip, `make DESTDIR=api install`)
    tool, options = (args[1], args[2:]) if re.match(r"(?:python|pypy)[0-9.]*$", name) \
        and args[:1] == ["-m"] and len(args) > 1 else (name, args)  # `python -m coverage`
    outputs = (_output_options(tool, options) if tool != "git" else []) + _variable_outputs(
        tool, options, assigned)
    if removals:
        return _written(name, args, cwd, stdin, patch_feed) + _removed(name, args) + nested \
            + outputs
    return _written(name, args, cwd, stdin, patch_feed) + nested + outputs


# Variables naming where a tool writes: name -> whether the value is a folder
_OUTPUT_VARIABLES: dict[str, bool] = {
    **dict.fromkeys(("PIP_TARGET", "PIP_PREFIX", "PIP_SRC", "PIP_WHEEL_DIR", "PIP_ROOT",
                     "CARGO_TARGET_DIR", "CARGO_HOME", "GOBIN", "GOPATH", "GOMODCACHE",
                     "GOCACHE", "NPM_CONFIG_PREFIX", "npm_config_prefix", "npm_config_cache",
                     "YARN_CACHE_FOLDER", "UV_PROJECT_ENVIRONMENT", "UV_CACHE_DIR",
                     "PYTHONPYCACHEPREFIX", "MYPY_CACHE_DIR", "RUFF_CACHE_DIR", "TMPDIR",
                     "PRE_COMMIT_HOME", "POETRY_CACHE_DIR", "POETRY_VIRTUALENVS_PATH",
                     "PIPX_HOME", "PIPX_BIN_DIR", "XDG_CACHE_HOME", "XDG_DATA_HOME",
                     "DESTDIR", "PREFIX", "prefix", "BINDIR", "bindir", "OUTDIR", "BUILD_DIR",
                     "BUILDDIR", "O"), True),
    **dict.fromkeys(("COVERAGE_FILE", "PIP_LOG", "PIP_LOG_FILE"), False),
}


def _variable_outputs(name: str, args: list[str], assigned: list[str]) -> list[str]:
    """Where the variables set for a command (``assigned``, and ``make VAR=VALUE``
    arguments) move its output: ``_OUTPUT_VARIABLES``, and ``PYTEST_ADDOPTS`` read as
    pytest's options."""
    words = list(assigned)
    if name in ("make", "gmake"):
        words += [a for a in args if ASSIGNMENT.match(a)]
    found: list[str] = []
    for word in words:
        key, _, value = word.partition("=")
        if key == "PYTEST_ADDOPTS":
            try:
                found += _output_options("pytest", shlex.split(value))
            except ValueError:
                continue
        elif key in _OUTPUT_VARIABLES and value and value != "/" and _knowable(value):
            found.append(value.rstrip("/") + "/" if _OUTPUT_VARIABLES[key] else value)
    return found


# git settings and variables whose value is a command line git runs through the shell
_GIT_COMMAND_SETTINGS = lazy_pattern(
    r"(?:core\.(?:pager|editor|sshcommand|askpass|fsmonitor)|sequence\.editor|diff\.external"
    r"|pager\..*|(?:diff|merge|filter|difftool|mergetool)\..*\.(?:textconv|command|driver"
    r"|clean|smudge|process|cmd)|credential(?:\..*)?\.helper|gpg(?:\..*)?\.program"
    r"|sendemail\..*cmd|uploadpack\.packobjectshook|core\.gitproxy)$", re.IGNORECASE)
_COMMAND_VARIABLES = frozenset({"GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "GIT_EDITOR",
                                "EDITOR", "VISUAL", "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND",
                                "GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND"})


# Variables whose value is a command line some program runs: bash's PROMPT_COMMAND, a
# pager or editor any program may start, less's input preprocessor
_CODE_VARIABLES = frozenset({"PROMPT_COMMAND", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR",
                             "VISUAL", "LESSOPEN", "LESSCLOSE", "BROWSER", "SUDO_ASKPASS",
                             "PS0", "PS1", "PS4"})
# Variables naming a file of shell code a non-interactive shell runs first
_STARTUP_FILES = frozenset({"BASH_ENV", "ENV"})


def _run_commands(name: str, args: list[str], assigned: list[str]) -> list[str]:
    """The command lines ``name ARGS`` runs through the shell, as far as the command line
    tells them: git's ``rebase -x``, ``bisect run``, ``difftool -x``, a ``-c`` setting or
    an environment variable naming a pager, editor, diff or filter command."""
    found: list[str] = []
    if name in ("npm", "pnpm", "yarn", "bun") and args[:2] == ["pkg", "set"]:
        # `npm pkg set scripts.x=CMD`: `npm run x` runs CMD
        found += [a.split("=", 1)[1] for a in args[2:] if a.startswith("scripts.") and "=" in a]
    if name == "npm" and args[:1] == ["set-script"] and len(args) > 2:
        found.append(args[2])
    if name == "git":
        options, sub, rest, _ = _git_words(["git", *args])
        if sub == "config":
            operands = _operands(rest, frozenset({"-f", "--file", "--blob", "--type", "-t"}))
            operands = operands[1:] if operands[:1] in (["set"], ["--add"]) else operands
            if len(operands) >= 2 and _GIT_COMMAND_SETTINGS.match(operands[0]):
                found.append(operands[1].lstrip("!"))  # run by a later git command
        found += [value for word in assigned
                  if (split := word.split("=", 1))[0] in _COMMAND_VARIABLES
                  and (value := split[1])]
        options, sub, rest, _ = _git_words(["git", *args])
        for index, option in enumerate(options):
            value = options[index + 1] if index + 1 < len(options) else ""
            if option == "-c" and "=" in value and _GIT_COMMAND_SETTINGS.match(
                    value.split("=", 1)[0]):
                found.append(value.split("=", 1)[1].lstrip("!"))
        if sub in ("rebase", "difftool"):
            for index, arg in enumerate(rest):
                if arg in ("-x", "--exec", "--extcmd") or arg.startswith(
                        ("--exec=", "--extcmd=")):
                    found.append(_option_value(rest, index, arg) if arg.startswith("--")
                                 or len(arg) == 2 else arg[2:])
        if sub == "bisect" and rest[:1] == ["run"] and rest[1:]:
            found.append(shlex.join(rest[1:]))
    # variables any program (a shell, a pager user) runs as a command line
    for word in assigned:
        key, _, value = word.partition("=")
        if key in _CODE_VARIABLES and value:
            found.append(value.lstrip("|-") if key.startswith("LESS") else value)
    if name in ("strace", "ltrace"):  # `strace -f CMD`: the command it traces
        index = 0
        while index < len(args) and args[index].startswith("-"):
            index += 2 if args[index] in _TRACER_VALUES else 1
        if args[index:]:
            found.append(shlex.join(args[index:]))
    return [code for code in found if code]


_TRACER_VALUES = frozenset({"-o", "--output", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I",
                            "-O", "-S", "-X", "-P", "-n", "-l", "-L", "-x", "-F", "-A"})


AWK = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})


def _awk_program(args: list[str]) -> str | None:
    """The program text of ``awk [-F x] [-v a=b] 'PROGRAM' FILE...`` (None with ``-f``)."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-f", "--file") or arg.startswith("-f"):
            return None
        if arg in ("-F", "-v", "--assign", "--field-separator"):
            index += 2
            continue
        if arg == "--":
            return args[index + 1] if index + 1 < len(args) else None
        if not arg.startswith("-") or arg == "-":
            return arg
        index += 1
    return None


_SED_ADDRESS = r"(?:(?:[0-9$]+|/(?:\\.|[^/\n])*/)(?:,(?:[0-9$]+|/(?:\\.|[^/\n])*/))?)?!?\s*"
_SED_START = r"(?:^|[;\n{}])\s*" + _SED_ADDRESS
# `w FILE`, `W FILE` (to the end of the line), and `s/A/B/FLAGSw FILE`
_SED_WRITE = (_SED_START + r"[wW]\s*([^\n]+)|s([^\\\n])(?:\\.|(?!\2)[^\n])*\2"
              r"(?:\\.|(?!\2)[^\n])*\2[gpiImMeE0-9]*[wW]\s*([^\n]+)")
# `e COMMAND` (or `e`: the pattern space as a command), and the `e` flag of `s`
_SED_EXECUTE = (_SED_START + r"e(?:\s+([^\n]*))?(?:\n|$)|s([^\\\n])(?:\\.|(?!\2)"
                r"[^\n])*\2(?:\\.|(?!\2)[^\n])*\2[gpiImMwW0-9]*e")


def _compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile`` (cached by ``re`` itself), for patterns compiled only when used."""
    return re.compile(pattern, flags)


def _sed_scripts(args: list[str]) -> list[str]:
    scripts = [_option_value(args, i, a) for i, a in enumerate(args)
               if a in ("-e", "--expression") or a.startswith("--expression=")]
    if not scripts:
        operands = _operands(args, frozenset({"-e", "-f", "-l", "--expression", "--file"}))
        scripts = operands[:1]
    return scripts


def _sed_writes(args: list[str]) -> tuple[list[str], list[str]]:
    """(the files a sed script writes of its own: ``w FILE``, ``W FILE``, ``s/a/b/w FILE``;
    the scripts that run commands: ``e CMD``, ``s/a/b/e``)."""
    files: list[str] = []
    running: list[str] = []
    for script in _sed_scripts(args):
        files += [(m.group(1) or m.group(3) or "").strip()
                  for m in _compiled(_SED_WRITE).finditer(script)]
        if _compiled(_SED_EXECUTE).search(script):
            running.append(script)
    return [f for f in files if f], running


# What feeds a command's standard input, when the command text tells (``Words.feed``)
Feed = tuple[str, "Words | str | None"] | None
# Where code is read from standard input or a file the shell makes
STDIN_SCRIPTS = frozenset({"/dev/stdin", "-", "/dev/fd/0", "/proc/self/fd/0"})


def _fed_text(feed: Feed) -> str | None:
    """The text that reaches standard input, when the command line holds it: a heredoc,
    a here-string, or ``echo``/``printf`` of plain words piped in."""
    if feed is None:
        return None
    kind, source = feed
    if kind == "text":
        return source if isinstance(source, str) else None
    if isinstance(source, list) and source:
        words = _strip_prefix(_split_redirections(list(source))[0])
        inner = getattr(source, "feed", None)
        if words == ["cat"] and inner is not None and inner[0] == "text":
            return inner[1] if isinstance(inner[1], str) else None
        if words[:1] in (["echo"], ["printf"]):
            args = [a for a in words[1:] if not (words[0] == "echo" and a in ("-n", "-e", "-E"))]
            return " ".join(args) + "\n"
    return None


def _inline_script(name: str, args: list[str], stdin: str | None, feed: Feed) -> str | None:
    """The command text a shell runs in turn, when it is in the command line: ``sh -c
    CMD``, ``eval ARGS``, a shell reading a heredoc, a here-string or an echo piped in
    (``bash <<<'...'``, ``echo '...' | sh -s``, ``source /dev/stdin <<< ...``)."""
    if name in SHELLS and _shell_script(args) is not None:
        return _shell_script(args) or ""
    if name in ("su", "runuser", "sudo"):  # `su -c CMD`, `sudo -s CMD` after the wrapper
        value = next((_option_value(args, i, a) for i, a in enumerate(args)
                      if a in ("-c", "--command") or a.startswith("--command=")), None)
        if value is not None:
            return value
    if name == "eval":
        return " ".join(args)
    if name == "trap":  # `trap 'CODE' EXIT`: code the shell runs later
        return _trap_code(args)
    code = _runner_code(name, args)
    if code is not None:
        return code
    if name in ("at", "batch") and stdin is None and "-f" not in args:
        return _fed_text(feed)  # `echo CMD | at now`: a shell runs CMD
    if name == "watch":  # `watch -n1 'CMD'`: its words joined, run by `sh -c`
        index = 0
        while index < len(args) and args[index].startswith("-"):
            index += 2 if args[index] in ("-n", "--interval", "-q", "--equexit") else 1
        return " ".join(args[index:]) or None
    if name in ("tar", "bsdtar", "gtar") and _tar_command(args) is not None:
        return _tar_command(args)
    if stdin is not None:
        return None
    reads_stdin = (name in SHELLS and (not _operands(args, SHELL_VALUE_OPTIONS)
                                       or any(a.startswith("-") and "s" in a[1:]
                                              and not a.startswith("--") for a in args))) \
        or (name in (".", "source") and args[:1] and args[0] in STDIN_SCRIPTS)
    return _fed_text(feed) if reads_stdin else None


SHELL_VALUE_OPTIONS = frozenset({"-o", "-O", "+O", "+o", "--rcfile", "--init-file"})


def _reads_code_from_elsewhere(name: str, args: list[str], stdin: str | None,
                               feed: Feed) -> bool:
    """A shell or ``source`` running code the command line does not hold: from a pipe
    (``curl URL | sh``), or a process substitution (``bash <(curl URL)``, ``. <(...)``)."""
    if name not in SHELLS and name not in (".", "source"):
        return False
    operands = _operands(args, SHELL_VALUE_OPTIONS)
    if operands and (operands[0].startswith("/dev/fd/") or operands[0] in STDIN_SCRIPTS):
        return True
    return name in SHELLS and not operands and stdin is None and feed is not None \
        and _fed_text(feed) is None


def _patch_feed(feed: Feed, stdin: str | None) -> list[str] | None:
    """What a patch on standard input changes, when told: [the patch file] for ``cat
    FILE |``, git marks for ``git diff ARGS |``, ``git show REV |``, ``git format-patch
    --stdout REVS |``, ``git stash show -p REF |``; [UNTOLD_PATCH] for any other pipe;
    None when nothing is piped in."""
    if stdin is not None or feed is None:
        return None
    kind, source = feed
    if kind == "text":
        return [TEXT_FEED + source] if isinstance(source, str) else None
    words = _strip_prefix(list(source)) if isinstance(source, list) else []
    if words[:1] == ["cat"] and len(_operands(words[1:])) == 1:
        return _operands(words[1:])
    if words[:1] == ["git"]:
        _, sub, rest, _ = _git_words(words)
        revs = [a for a in rest if not a.startswith("-")]
        if sub == "diff" and not any(a.startswith(("--output", "--no-index")) for a in rest):
            return [git_mark("diff", [a for a in rest if a not in ("-p", "--patch", "-u",
                                                                 "--binary", "--full-index")])]
        if sub == "show" and revs and not any(":" in r for r in revs):
            return [git_mark("show", revs)]
        if sub == "format-patch" and "--stdout" in rest:
            counted = [a for a in rest if re.fullmatch(r"-\d+", a)]
            if len(revs) == 1 and ".." not in revs[0] and not counted:
                revs = [f"{revs[0]}..HEAD"]
            return [git_mark("log", counted + revs)] if revs else None
        if sub == "stash" and rest[:1] == ["show"]:
            refs = [a for a in rest[1:] if not a.startswith("-")]
            return [STASH_MARK + (refs[0] if refs else "stash@{0}")]
    return [UNTOLD_PATCH]


XARGS_VALUE_OPTIONS = frozenset({"-I", "-L", "-n", "-P", "-d", "-E", "-s", "-a", "--max-args",
                                 "--max-procs", "--delimiter", "--arg-file", "--max-lines",
                                 "--max-chars", "--eof", "--replace"})


def _strip_xargs(args: list[str]) -> list[str]:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in XARGS_VALUE_OPTIONS else 1
    return args[index:]


def _meridian_writes(args: list[str]) -> list[str]:
    """The harness files a ``meridian`` command line edits (its default paths: a project
    that moved its rules file still has its config under ``.meridian/``)."""
    base = ""
    while len(args) >= 2 and args[0] == "-C":
        base = os.path.join(base, args[1])
        args = args[2:]
    words = [a for a in args if not a.startswith("-")]
    if words[:2] in (["rules", "retire"], ["rules", "activate"]):
        written = [".meridian/rules.yaml"]
    elif words[:1] == ["init"] and "--list-templates" not in args:
        written = [".meridian/config.yaml"] + ([".claude/settings.json"] if "--claude" in args
                                               else [])
    else:
        return []
    return [os.path.join(base, path) for path in written]


def _moved_mark(mark: str, where: str) -> str:
    kind, inner, args = read_git_mark(mark)
    return git_mark(kind, args, os.path.join(where, inner) if inner else where)


def _written(name: str, args: list[str], cwd: Path, stdin: str | None = None,
             patch_feed: list[str] | None = None) -> list[str]:
    """The files command ``name`` writes (shells are read by the caller); ``stdin`` is the
    file a ``< FILE`` redirection feeds it, ``patch_feed`` what a patch read from standard
    input changes (``_patch_feed``)."""
    if name == "meridian":
        return _meridian_writes(args)
    if name.startswith("python") and args[:2] == ["-m", "meridian"]:
        return _meridian_writes(args[2:])
    if (name.startswith("python") and args[:1] == ["-m"] and args[1:2] in (["venv"],
                                                                           ["virtualenv"])) \
            or (name == "uv" and args[:1] == ["venv"]):
        return _tool_outputs("venv", args[2:] if name != "uv" else args[1:]) or []
    if name.startswith("python") and args[:1] == ["-m"] and args[1:2] in (["zipfile"],
                                                                        ["tarfile"]):
        # `python -m zipfile -e ARCHIVE DIR` extracts into DIR (tarfile: DIR or here)
        for index, arg in enumerate(args[2:], 2):
            if arg in ("-e", "--extract") and index + 1 < len(args):
                folder = args[index + 2] if index + 2 < len(args) else "."
                return [archive_mark(args[index + 1], [folder])]
        return []
    if re.match(r"(?:python|pypy)[0-9.]*$", name) and args[:1] == ["-m"] and len(args) > 1 \
            and re.fullmatch(r"[\w.]+", args[1]):
        # `python -m black api`, `python -m pytest --basetemp=D`: the tool's own writes
        return _written(args[1], args[2:], cwd, stdin, patch_feed)
    if name == "tee":
        return _operands(args)
    if name == "link":  # coreutils `link FILE NEW`: a hard link, like `ln`
        return _operands(args)[1:2]
    if name in ("sqlite3", "sqlite", "duckdb"):  # `.output F`, `.once F`, `.save F`
        return [arg.split()[-1] for arg in args if arg.startswith(
            (".output", ".once", ".save", ".backup", ".dump")) and len(arg.split()) > 1]
    if name == "socat":  # `socat - FILE:path`, `CREATE:`, `OPEN:`, `GOPEN:`
        return [arg.split(":", 1)[1].split(",", 1)[0] for arg in args if arg.upper().startswith(
            ("FILE:", "CREATE:", "OPEN:", "GOPEN:", "PIPE:", "UNIX-LISTEN:"))]
    if name == "cmake" and args[:1] == ["-E"] and len(args) > 2:
        verb, rest = args[1], _operands(args[2:])
        if verb in ("copy", "copy_if_different", "copy_directory", "rename",
                    "create_symlink", "create_hardlink"):
            return rest[-1:] + (rest[:-1] if verb in ("rename", "create_hardlink") else [])
        if verb in ("touch", "touch_nocreate", "remove", "rm", "remove_directory",
                    "make_directory", "chdir"):
            return rest
    if name == "git":
        _, sub, rest, _ = _git_words(["git", *args])
        files = [_option_value(rest, i, a) for i, a in enumerate(rest)
                 if a in ("-f", "--file") or a.startswith("--file=")]
        if sub == "config" and files and not any(a in _CONFIG_READS for a in rest):
            return files  # (no file named: git's own config, judged as git's command)
    if name == "mount":  # `mount --bind DIR ELSEWHERE`: what stands at ELSEWHERE changes
        return _operands(args, _MOUNT_VALUES)[1:2]
    if name == "history" and any(a.startswith("-") and set(a[1:]) & set("wa") for a in args):
        # `history -w FILE` / `-a FILE`: the shell's history written over (or onto) FILE
        return _operands(args)[:1]
    if name == "touch":
        return _operands(args, frozenset({"-d", "-t", "-r"}))
    if name in ("cp", "mv", "ln"):
        return _copy_targets(args, cwd)
    if name == "install":
        return _copy_targets(args, cwd, frozenset({"-m", "--mode", "-o", "--owner", "-g",
                                                    "--group", "-S", "--suffix"}))
    if name == "git" and args[:1] == ["mv"]:
        return _copy_targets(args[1:], cwd)
    if name == "sed":
        return _sed_targets(args) + _sed_writes(args)[0]
    if name in AWK and any(_option_value(args, i, a).removesuffix(".awk") == "inplace"
                           for i, a in enumerate(args)
                           if a in ("-i", "--include") or a.startswith(("-i", "--include="))):
        # gawk's inplace extension rewrites the files after the program
        rest = [a for i, a in enumerate(args) if not (a.startswith("-i") or (
            i and args[i - 1] in ("-i", "--include", "-v", "-F")))]
        program = _awk_program(rest)
        operands = _operands(rest, frozenset({"-v", "-F", "-f", "--assign"}))
        return operands[1:] if program is not None and operands[:1] == [program] else operands
    if name == "perl":
        return _perl_targets(args)
    if name == "truncate":
        return _operands(args, frozenset({"-s", "--size", "-r", "--reference"}))
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if name == "curl":
        return _curl_targets(args)
    if name == "wget":
        return _wget_targets(args)
    if name in ("rsync", "scp"):
        operands = _operands(args, frozenset({"-e", "--rsh", "-i", "-P", "-F", "-o", "-l",
                                              "--exclude", "--include", "--filter", "-f",
                                              "--files-from", "--backup-dir", "--suffix"}))
        if len(operands) < 2 or ":" in operands[-1].split("/")[0]:
            return []
        dest = operands[-1]
        # DEST itself (a file copied onto it) and whatever lands inside it; a
        # --link-dest folder gets hard links to its files, written through later
        # (a relative one is relative to DEST)
        linked = [os.path.join(dest, _option_value(args, i, a)).rstrip("/") + "/"
                  for i, a in enumerate(args) if a.split("=", 1)[0] == "--link-dest"
                  and _option_value(args, i, a)]
        return [dest.rstrip("/") or "/", dest.rstrip("/") + "/"] + linked
    if name in ("docker", "podman", "kubectl", "oc") and args[:1] == ["cp"]:
        # `docker cp CONTAINER:SRC DEST`: DEST on this machine unless it names a container
        operands = _operands(args[1:], frozenset({"-c", "--container", "-n", "--namespace",
                                                  "--retries", "--kubeconfig", "--context"}))
        if len(operands) < 2 or ":" in operands[-1].split("/")[0]:
            return []
        dest = operands[-1]
        return [dest.rstrip("/") or "/", dest.rstrip("/") + "/"]
    if name in ("tar", "bsdtar", "gtar"):
        return _tar_targets(args)
    if name in ("unzip", "bsdunzip"):
        return _unzip_targets(args)
    if name in ("7z", "7za", "7zz"):
        value = next((a[2:] for a in args if a.startswith("-o") and len(a) > 2), None)
        operands = _operands(args)
        if operands[:1] not in (["x"], ["e"]):
            return []  # a list, a test, an archive made (`7z a x.7z ...`): the archive
        return [archive_mark(operands[1] if len(operands) > 1 else None, [value or "."],
                             flat=operands[0] == "e")]
    tool = _tool_outputs(name, args)
    if tool is not None:
        return tool
    if name == "git":
        where, git_args = _git_location(args)
        if where:
            return [_moved_mark(t, where) if t.startswith(GIT_MARK) else t
                    if os.path.isabs(t) or t.startswith(STASH_MARK)
                    else os.path.join(where, t)
                    for t in _written(name, git_args, cwd, stdin, patch_feed)]
        args = _expand_alias(git_args, cwd, _inline_aliases(args))
        if args and args[0].startswith(GIT_MARK):
            return args  # an alias that runs a shell, or one that cannot be read
        found = _git_rewrites(args, cwd, stdin, patch_feed)
        if found is not None:
            return found
    if name == "patch":
        value = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-d", "--directory")),
                     None)
        patch = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-i", "--input")),
                     None)
        # `patch [OPTIONS] ORIGINALFILE [PATCHFILE]`: the first operand is the file written
        operands = _operands(args, frozenset({"-d", "--directory", "-i", "--input", "-p",
                                              "-o", "--output", "-r", "--reject-file", "-B",
                                              "-z", "-V", "-D", "-F", "-g"}))
        patch = patch or (operands[1] if len(operands) > 1 else None) or stdin
        if patch or not operands:
            # (a patch from a pipe that cannot be read, or a file that cannot be read now,
            # may write anything)
            found = _patched([patch] if patch else [], patch_feed, cwd, "patch " + " ".join(args))
        else:
            found = []
        if value and found and not operands:
            found = [f if f.startswith(GIT_MARK) else os.path.join(value, f) for f in found]
        found += operands[:1]
        found += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-o", "--output")]
        return found + [(value or ".").rstrip("/") + "/"]
    if name == "git" and args[:1] == ["apply"] and not any(
            a in ("--check", "--stat", "--numstat", "--summary") for a in args):
        files = _operands(args[1:], frozenset({"-p", "-C", "--directory", "--exclude",
                                               "--include"})) or ([stdin] if stdin else [])
        found = _patched(files, patch_feed, cwd, "git " + " ".join(args))
        # `--directory=api` puts every path of the patch under api/
        prefix = next((a.split("=", 1)[1] for a in args if a.startswith("--directory=")), None) \
            or next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "--directory"), None)
        if prefix:
            found = [f if f.startswith(("\0", "/")) else os.path.join(prefix, f) for f in found]
        return found + ["./"]
    if name == "git" and args[:1] == ["restore"] and any(
            a in ("--staged", "-S") or (a.startswith("-") and not a.startswith("--")
                                         and "S" in a) for a in args[1:]) and not any(
            a in ("--worktree", "-W") or (a.startswith("-") and not a.startswith("--")
                                           and "W" in a) for a in args[1:]):
        return []  # `git restore --staged PATH`: the index only
    if name == "git" and args[:1] in (["checkout"], ["restore"]):
        return _restored(args[0], args[1:], cwd)
    if name == "git" and args[:1] == ["stash"] and args[1:2] in (["pop"], ["apply"]):
        refs = [a for a in args[2:] if not a.startswith("-")]
        return [STASH_MARK + (refs[0] if refs else "stash@{0}")]
    return _output_options(name, args) if name == "git" else []


# Long options whose value is a file or folder the command writes, whatever the tool (not
# `--target`: a build target's name to cmake and docker, a folder to pip and uv)
# (`pytest --junitxml=F`, `--basetemp=DIR`, `git diff --output=F`, `mypy --html-report D`,
# `jest --outputFile F`, `cargo --target-dir D`, `docker build --iidfile F`, ...)
# (compiled when first needed: the allow path imports this module for every Bash call)
_OUTPUT_KEY = (
    r"--(?:[\w-]*[-_])?(?:out(?:put)?(?:[-_]?(?:file|dir|directory|path|document|name))?"
    r"|outdir|outfile|dest(?:ination)?(?:-dir)?|target-dir|pack-destination|report-log"
    r"|junit-?xml|[\w-]*-report|html|log-file|logfile|result-?log|json-report-file"
    r"|cache-dir|cache-location|workdir|work-dir|basetemp|build-dir|dist-dir|artifact-dir"
    r"|wheel-dir|iidfile|metadata-file|coverage-?directory|\w+_out)")
# Tools that only read, whose options of those names do not write (`grep --output`...)
_OPTION_READERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "jq", "kubectl", "gh",
                             "aws", "gcloud", "az"})
# docker/podman: only these name a file on this machine (`--workdir` is the container's)
_CONTAINER_OUTPUTS = frozenset({"-o", "--output", "--iidfile", "--metadata-file",
                                "--cidfile"})
# Short options that write, per tool (the generic rule reads long options only)
_SHORT_OUTPUTS: dict[str, frozenset[str]] = {
    "coverage": frozenset({"-d", "-o"}), "uv": frozenset({"-o", "-t", "--target"}),
    "poetry": frozenset({"-o"}), "pdm": frozenset({"-o"}), "pip-compile": frozenset({"-o"}),
    "mypy": frozenset(), "git": frozenset({"-o"}), "docker": frozenset({"-o"}),
    "podman": frozenset({"-o"}), "webpack": frozenset({"-o"}), "rollup": frozenset({"-o", "-d"}),
    "terraform": frozenset(), "openssl": frozenset(), "helm": frozenset({"-d"}),
}


def _output_options(name: str, args: list[str]) -> list[str]:
    """What the generic output options of ``name ARGS`` write: ``_OUTPUT_KEY`` long
    options, ``--cov-report=TYPE:PATH``, pytest's ``-o cache_dir=DIR``, docker's
    ``--output type=local,dest=DIR``, openssl/terraform's ``-out F``, a tool's
    ``_SHORT_OUTPUTS``; and the folders ``docker run -v SRC:DST`` mounts writable."""
    if name in _OPTION_READERS:
        return []
    found: list[str] = []
    shorts = _SHORT_OUTPUTS.get(name, frozenset())
    if name == "git" and args[:1] != ["archive"]:
        shorts = frozenset()  # (`git log -o` is no option; `git archive -o F` is)
    for index, arg in enumerate(args):
        key = arg.split("=", 1)[0]
        value = ""
        if name in ("docker", "podman") and key not in _CONTAINER_OUTPUTS and not (
                arg.startswith("-o") and len(arg) > 2):
            value = ""
        elif arg.startswith("--") and _compiled(_OUTPUT_KEY, re.IGNORECASE).fullmatch(key):
            value = _option_value(args, index, arg)
        elif key in ("-out", "-keyout", "-out=") and name in ("openssl", "terraform"):
            value = _option_value(args, index, key) if "=" not in arg else arg.split("=", 1)[1]
        elif key in shorts or (arg[:2] in shorts and len(arg) > 2 and not arg.startswith("--")):
            value = _option_value(args, index, arg)
        elif arg in ("-o", "--override-ini") and name in ("pytest", "py.test") \
                and index + 1 < len(args) and args[index + 1].startswith("cache_dir="):
            value = args[index + 1].split("=", 1)[1]
        if key == "--cov-report" and ":" in value:
            value = value.split(":", 1)[1]  # html:DIR, xml:FILE
        elif key == "--cov-report":
            value = ""
        if name in ("docker", "podman") and key in ("-o", "--output") and value:
            # `type=local,dest=DIR`, `type=tar,dest=F`, or the folder itself
            fields = dict(f.split("=", 1) for f in value.split(",") if "=" in f)
            value = fields.get("dest", "" if "=" in value else value)
        if value and value != "-" and not value.startswith(("-", "type=")):
            found.append(value)
    if name in ("docker", "podman") and args[:1] in (["run"], ["create"]) or (
            name in ("docker", "podman") and args[:2] in (["container", "run"],
                                                          ["container", "create"])):
        found += _writable_mounts(args)
    return found


def _writable_mounts(args: list[str]) -> list[str]:
    """The local folders ``docker run`` mounts writable: ``-v SRC:DST[:OPTS]``
    (``--volume``), ``--mount type=bind,source=SRC,target=DST`` (not ``ro``/``readonly``),
    SRC a path (a named volume is none), as folders written into."""
    found: list[str] = []
    for index, arg in enumerate(args):
        key = arg.split("=", 1)[0]
        if key in ("-v", "--volume") or (arg.startswith("-v") and len(arg) > 2
                                         and not arg.startswith("--")):
            value = _option_value(args, index, arg)
            parts = value.split(":")
            if len(parts) >= 2 and parts[0].startswith(("/", ".", "~", "$")) \
                    and not set(parts[2].split(",") if len(parts) > 2 else []) & {"ro",
                                                                                "readonly"}:
                found.append(parts[0].rstrip("/") + "/")
        elif key == "--mount":
            value = _option_value(args, index, arg)
            fields = dict((f.split("=", 1) + [""])[:2] for f in value.split(","))
            source = fields.get("source") or fields.get("src") or ""
            if fields.get("type", "volume") == "bind" and source and not (
                    {"ro", "readonly"} & set(fields)) and fields.get("readonly") in (None, "false"):
                found.append(source.rstrip("/") + "/")
    return found


# Options of the work-tree rewriting git commands that take a value (the value is no operand).
_REWRITE_VALUE_OPTIONS = frozenset({
    "-m", "-F", "-s", "-X", "--strategy", "--strategy-option", "--into-name", "-c", "-C",
    "-b", "-B", "--orphan", "--onto", "-x", "--exec", "-e", "--exclude", "-d", "--directory",
    "-p", "--conflict", "--mainline", "--cleanup", "--gpg-sign", "-S", "--prefix",
    "--index-output", "--upstream", "--patch-format", "-U", "--pathspec-from-file"})
_SEQUENCER = ("--continue", "--abort", "--skip", "--quit", "--edit-todo", "--resolved", "-r")


# git's own commands (an alias never shadows one, so these are never looked up as aliases)
_GIT_COMMANDS = frozenset({
    "add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bundle",
    "cat-file", "check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout",
    "checkout-index", "cherry", "cherry-pick", "citool", "clean", "clone", "column", "commit",
    "commit-graph", "commit-tree", "config", "count-objects", "credential", "describe", "diff",
    "diff-files", "diff-index", "diff-tree", "difftool", "fast-export", "fast-import", "fetch",
    "fetch-pack", "filter-branch", "for-each-ref", "format-patch", "fsck", "gc", "grep", "gui",
    "hash-object", "help", "index-pack", "init", "instaweb", "interpret-trailers", "log",
    "ls-files", "ls-remote", "ls-tree", "maintenance", "merge", "merge-base", "merge-file",
    "merge-tree", "mergetool", "mktag", "mktree", "mv", "name-rev", "notes", "pack-objects",
    "pack-refs", "pull", "push", "range-diff", "read-tree", "rebase", "reflog", "remote",
    "repack", "replace", "request-pull", "rerere", "reset", "restore", "rev-list", "rev-parse",
    "revert", "rm", "send-email", "shortlog", "show", "show-branch", "show-ref",
    "sparse-checkout", "stage", "stash", "status", "stripspace", "submodule", "switch",
    "symbolic-ref", "tag", "update-index", "update-ref", "var", "verify-commit", "verify-pack",
    "verify-tag", "version", "whatchanged", "worktree", "write-tree", "lfs",
})
# What a work-tree rewriting alias starts with: an alias set to one cannot be told ahead
_REWRITING = frozenset({"reset", "checkout", "switch", "restore", "merge", "rebase", "pull",
                        "cherry-pick", "revert", "clean", "am", "apply", "read-tree", "stash",
                        "worktree", "checkout-index", "filter-branch", "submodule"})


def _inline_aliases(args: list[str]) -> dict[str, str]:
    """``git -c alias.NAME=VALUE ...``: the aliases the command line itself defines."""
    found: dict[str, str] = {}
    for index, value in enumerate(args[1:], 1):
        if args[index - 1] == "-c" and value.lower().startswith("alias.") and "=" in value:
            key, text = value.split("=", 1)
            found[key[len("alias."):].lower()] = text
    return found


def _alias_value(name: str, cwd: Path) -> str | None:
    """``alias.NAME`` as git reads it in ``cwd`` (None: no such alias)."""
    import subprocess

    directory = cwd if cwd.is_dir() else Path(".")
    try:
        proc = subprocess.run(["git", "config", "--get", f"alias.{name}"], cwd=directory,
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def _expand_alias(args: list[str], cwd: Path, inline: dict[str, str]) -> list[str]:
    """``args`` (from the subcommand on) with a git alias replaced by what it runs
    (`git co main` with `alias.co = checkout` is `git checkout main`); ``[mark]`` (an
    undecidable write) for an alias that runs a shell or cannot be split."""
    for _ in range(8):  # git refuses alias loops; so does this
        if not args or args[0] in _GIT_COMMANDS or args[0].startswith("-"):
            return args
        value = inline.get(args[0].lower())
        if value is None:
            value = _alias_value(args[0], cwd)
        if value is None:
            return args
        text = "git " + " ".join(args)
        if value.startswith("!"):
            return [_anywhere(text)]
        try:
            args = [*shlex.split(value), *args[1:]]
        except ValueError:
            return [_anywhere(text)]
        if args and args[0] == "-c":  # `alias.x = -c k=v reset --hard`: drop global options
            _, sub, rest, _ = _git_words(["git", *args])
            args = [sub, *rest] if sub else []
    return [_anywhere("git " + " ".join(args))]


def text_of(args: list[str]) -> str:
    return "git " + " ".join(args)


def _git_rewrites(args: list[str], cwd: Path, stdin: str | None,
                  patch_feed: list[str] | None = None) -> list[str] | None:
    """Marks (``GIT_MARK``) for the git commands that rewrite the work tree from another
    revision; None for every other git command (read by the rest of ``_written``)."""
    if not args:
        return None
    sub, rest = args[0], args[1:]
    if "--help" in rest or "-h" in rest:
        return []
    if sub == "worktree" and rest[:1] == ["add"]:
        # `git worktree add PATH [REV]`: a whole checkout lands in PATH
        operands = _operands(rest[1:], frozenset({"-b", "-B", "--reason"}))
        return [operands[0], operands[0].rstrip("/") + "/"] if operands else []
    if sub in ("clone", "init") and not any(a in ("--bare", "--mirror") for a in rest):
        # a repository made in DIR (clone: the last part of the URL without .git)
        operands = _operands(rest, frozenset({"-b", "--branch", "-o", "--origin", "-c",
                                              "--config", "--depth", "--reference",
                                              "--separate-git-dir", "--template", "-u",
                                              "--upload-pack", "--filter", "-j", "--jobs",
                                              "--initial-branch", "--object-format",
                                              "--shallow-since", "--shallow-exclude"}))
        if sub == "clone":
            folder = operands[1] if len(operands) > 1 else (
                operands[0].rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
                .removesuffix(".git") if operands else "")
        else:
            folder = operands[0] if operands else ""
        return [folder, folder.rstrip("/") + "/"] if folder else []
    if sub == "submodule":
        return _submodule_writes(rest)
    if sub == "update-index":
        return _update_index_paths(rest)
    if sub == "checkout-index":
        prefix = next((a.split("=", 1)[1] for a in rest if a.startswith("--prefix=")), "")
        if "-a" in rest or "--all" in rest or "--stdin" in rest:
            # every file of the index: what differs from the work tree (or under --prefix)
            return [prefix.rstrip("/") + "/"] if prefix else [git_mark("diff", [])]
        paths = _operands(rest, frozenset({"--stage"}))
        return [prefix + p for p in paths] if prefix else paths
    if sub == "sparse-checkout" and rest[:1] and rest[0] in (
            "set", "add", "reapply", "disable", "init"):
        return [_anywhere(text_of(args))]  # files leave and return across the work tree
    if sub == "merge-file":
        if "-p" in rest or "--stdout" in rest:
            return []
        return _operands(rest, frozenset({"-L", "--marker-size", "--diff-algorithm"}))[:1]
    if sub == "format-patch":
        out = [rest[i + 1].rstrip("/") + "/" for i, a in enumerate(rest[:-1])
               if a in ("-o", "--output-directory")]
        out += [a.split("=", 1)[1].rstrip("/") + "/" for a in rest
                if a.startswith("--output-directory=")]
        out += [a.split("=", 1)[1] for a in rest if a.startswith("--output=")]
        return out or None
    if sub == "bundle" and rest[:1] == ["create"]:
        return _operands(rest[1:], frozenset({"--version"}))[:1]
    if sub in ("checkout", "restore") and ("-p" in rest or "--patch" in rest) \
            and "--" not in rest:
        # interactive hunks with no paths: any file that differs from the source
        operands = _operands(rest, frozenset({"-s", "--source", "-U", "--conflict"}))
        source = next((rest[i + 1] for i, a in enumerate(rest[:-1]) if a in ("-s", "--source")),
                      None) or next((a.split("=", 1)[1] for a in rest
                                     if a.startswith("--source=")), None)
        if sub == "checkout" and operands:
            source, operands = operands[0], operands[1:]
        if not operands:
            return [git_mark("diff", [source] if source else [])]
        return None
    if sub == "config":
        # an alias set to a work-tree rewrite: what it writes when it runs cannot be told
        words = [a for a in rest if not a.startswith("-")]
        if len(words) > 1 and words[0].lower().startswith("alias.") \
                and (words[1].split() or [""])[0] in _REWRITING:
            return [_anywhere("git " + " ".join(args))]
        return None
    operands = _operands(rest, _REWRITE_VALUE_OPTIONS)
    text = "git " + " ".join(args)
    if sub == "reset":
        rev = operands[0] if operands else "HEAD"
        if "--hard" in rest:
            return [git_mark("diff", [rev])]  # the work tree, put back to REV
        if "--merge" in rest or "--keep" in rest:
            return [git_mark("diff", ["HEAD", rev])]
        return None
    if sub == "read-tree":
        if "-u" not in rest:
            return []  # the index only
        trees = _operands(rest, frozenset({"--prefix", "--index-output"}))
        return [git_mark("diff", [tree]) for tree in trees] or [_anywhere(text)]
    if sub in ("checkout", "switch"):
        if "--" in rest or (sub == "checkout" and len(operands) > 1) \
                or any(a in ("-p", "--patch", "--pathspec-from-file") for a in rest):
            return None  # paths: `_restored`
        # -f throws local changes away: what differs from the work tree, not from HEAD
        forced = any(a in ("-f", "--force", "--discard-changes") for a in rest)
        if "-" in rest:
            return [git_mark("switch", ["@{-1}"])] + (
                [git_mark("diff", ["@{-1}"])] if forced else [])
        if "--orphan" in rest or not operands:
            # a new branch at HEAD: the work tree stays (unless forced back to HEAD)
            return [git_mark("diff", ["HEAD"])] if forced else []
        return [git_mark("switch", [operands[-1]])] + (
            [git_mark("diff", [operands[-1]])] if forced else [])
    if sub == "stash" and (not rest or rest[0] in ("push", "save") or rest[0].startswith("-")):
        # `git stash [push]` puts the changed files back as HEAD has them (and removes the
        # untracked ones with -u, the ignored ones too with -a)
        options = rest[1:] if rest and rest[0] in ("push", "save") else rest
        if "--" in options:
            return _pathspecs(options[options.index("--") + 1:], cwd)
        paths = _operands(options, frozenset({"-m", "--message", "--pathspec-from-file"})) \
            if rest[:1] != ["save"] else []
        if paths:
            return _pathspecs(paths, cwd)
        found = [git_mark("diff", ["HEAD"])]
        if any(a in ("-a", "--all") for a in options):
            found.append(git_mark("clean", ["-fdx"]))
        elif any(a in ("-u", "--include-untracked") for a in options):
            found.append(git_mark("clean", ["-fd"]))
        return found
    if sub in ("merge", "rebase"):
        if any(a in _SEQUENCER for a in rest) or "--root" in rest \
                or any(a in ("-x", "--exec") or a.startswith("--exec=") for a in rest):
            return [_anywhere(text)]
        onto = next((rest[i + 1] for i, a in enumerate(rest[:-1]) if a == "--onto"), None)
        onto = onto or next((a.split("=", 1)[1] for a in rest if a.startswith("--onto=")), None)
        revs = [onto] if onto else (operands[:1] if sub == "rebase" else operands)
        return [git_mark("diff", [f"HEAD...{rev}"]) for rev in revs or ["@{upstream}"]]
    if sub in ("cherry-pick", "revert"):
        if any(a in _SEQUENCER for a in rest) or not operands:
            return [_anywhere(text)]
        return [git_mark("show", operands)]
    if sub == "pull" and operands[:1] == ["."] and len(operands) > 1 \
            and not any(a in ("-r", "--rebase") or a.startswith("--rebase=") for a in rest):
        return [git_mark("diff", [f"HEAD...{rev}"]) for rev in operands[1:]]  # local branches
    if sub in ("pull", "filter-branch", "filter-repo"):
        return [_anywhere(text)]
    if sub == "am":
        if any(a in _SEQUENCER for a in rest):
            return [_anywhere(text)]
        return _patched(operands or ([stdin] if stdin else []), patch_feed, cwd, text)
    if sub == "clean":
        short = "".join(a[1:] for a in rest if a.startswith("-") and not a.startswith("--"))
        if "n" in short or "--dry-run" in rest:
            return []
        if "f" not in short and "--force" not in rest:
            return []  # refused by git unless clean.requireForce is off: nothing told
        if "i" in short or "--interactive" in rest:
            return [_anywhere(text)]
        return [git_mark("clean", rest)]
    return None


def _submodule_writes(rest: list[str]) -> list[str]:
    """What ``git submodule ...`` writes: ``add URL PATH`` the path and .gitmodules;
    ``update``/``foreach``/``deinit``/``absorbgitdirs`` the submodules' folders (named,
    or every one: a mark the hook reads from .gitmodules)."""
    if rest[:1] == ["add"]:
        operands = _operands(rest[1:], frozenset({"-b", "--branch", "--name", "--reference",
                                                  "--depth"}))
        if not operands:
            return []
        path = operands[1] if len(operands) > 1 else \
            operands[0].rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
        return [path, path.rstrip("/") + "/", ".gitmodules"]
    verb = rest[0] if rest and not rest[0].startswith("-") else "update"
    if verb not in ("update", "foreach", "deinit", "absorbgitdirs", "init"):
        return []  # status, summary, sync, set-url...: the work tree stays
    if verb == "init":
        return []
    paths = [] if verb == "foreach" else _operands(
        rest[1:] if rest[:1] == [verb] else rest,
        frozenset({"--reference", "--depth", "-j", "--jobs", "--filter"}))
    if paths:
        return [p.rstrip("/") + "/" for p in paths]
    return [git_mark("submodule", [])]


_UPDATE_INDEX_PATHS = frozenset({"--skip-worktree", "--no-skip-worktree", "--assume-unchanged",
                                 "--no-assume-unchanged", "--add", "--remove", "--force-remove",
                                 "--replace", "--info-only", "--fsmonitor-valid",
                                 "--no-fsmonitor-valid"})


def _update_index_paths(rest: list[str]) -> list[str]:
    """The paths ``git update-index`` changes the record of: the ones it marks as not to
    be looked at (``--skip-worktree``, ``--assume-unchanged``), adds, removes or
    replaces (``--cacheinfo MODE,OBJECT,PATH``); ``--index-info``/``--stdin`` read them
    from standard input: anywhere."""
    if any(a in ("--index-info", "--stdin") for a in rest):
        return [_anywhere("git update-index " + " ".join(rest))]
    found: list[str] = []
    index = 0
    while index < len(rest):
        arg = rest[index]
        if arg == "--cacheinfo":
            value = rest[index + 1] if index + 1 < len(rest) else ""
            if value.count(",") >= 2:
                found.append(value.split(",", 2)[2])
                index += 2
            else:
                found += rest[index + 3:index + 4]
                index += 4
            continue
        if arg.startswith("--chmod"):
            found += [a for a in rest[index + 1:] if not a.startswith("-")]
            break
        index += 1
    marked = any(a in _UPDATE_INDEX_PATHS for a in rest)
    operands = [a for a in _operands(rest, frozenset({"--cacheinfo", "--index-version"}))
                if a not in found and "," not in a]
    return found + (operands if marked else [])


PATCH_HEADER = lazy_pattern(r"^(?:\+\+\+|---) (?:[ab]/)?([^\t\n]+)|^diff --git a/\S+ b/(\S+)"
                            r"|^rename (?:from|to) (\S+)|^copy to (\S+)", re.MULTILINE)


def _git_location(args: list[str]) -> tuple[str, list[str]]:
    """(the directory git's global ``-C``/``--work-tree`` options move to, "" if none; the
    arguments from the subcommand on): `git -C api checkout REV -- app.py` writes
    api/app.py."""
    options, sub, rest, _ = _git_words(["git", *args])
    where = ""
    index = 0
    while index < len(options):
        option = options[index]
        value = options[index + 1] if index + 1 < len(options) else ""
        if option in ("-C", "--work-tree"):
            where = value if os.path.isabs(value) else os.path.join(where, value)
        elif option.startswith("--work-tree="):
            value = option.split("=", 1)[1]
            where = value if os.path.isabs(value) else os.path.join(where, value)
        index += 2 if option in _GIT_VALUE_OPTIONS else 1
    return where, ([sub, *rest] if sub else [])


def _patch_paths(patch: str, cwd: Path) -> list[str]:
    """The files a patch file changes, from its headers (``--- a/x``, ``+++ b/x``,
    ``diff --git``, renames), when the file can be read now."""
    text = _script_text(patch, cwd) if _knowable(patch) else None
    if text is None:
        return []
    found = [next(g for g in m.groups() if g).strip() for m in PATCH_HEADER.finditer(text)]
    return list(dict.fromkeys(p for p in found if p != "/dev/null"))


def _patched(files: list[str], patch_feed: list[str] | None, cwd: Path, text: str) -> list[str]:
    """What applying patches changes: the files their headers name, read from the patch
    ``files``, or from what standard input brings (``_patch_feed``): a heredoc's text, a
    patch file piped in, git's marks for a patch git makes; a mark of kind ``patch`` for
    a patch from a pipe that cannot be read, ``anywhere`` for a file that cannot be read."""
    if files:
        found = [p for f in files for p in _patch_paths(f, cwd)]
        return found or [_anywhere(text)]
    found = []
    for source in patch_feed or []:
        if source.startswith(TEXT_FEED):
            found += _header_paths(source[len(TEXT_FEED):])
        elif source == UNTOLD_PATCH:
            found.append(git_mark("patch", [text]))
        elif source.startswith(("\0",)):
            found.append(source)
        else:
            found += _patch_paths(source, cwd)
    return found or [_anywhere(text)]


def _header_paths(text: str) -> list[str]:
    found = [next(g for g in m.groups() if g).strip() for m in PATCH_HEADER.finditer(text)]
    return list(dict.fromkeys(p for p in found if p != "/dev/null"))


# Tools that write a file named by an option: name -> the options
_OUTPUT_OPTIONS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("gcc", "g++", "cc", "c++", "clang", "clang++", "rustc", "ld", "as",
                     "nasm", "tinygo", "zig", "swiftc", "ghc"), frozenset({"-o"})),
    **dict.fromkeys(("sort", "shuf", "pandoc", "pdftotext"), frozenset({"-o", "--output"})),
    "javac": frozenset({"-d"}), "csplit": frozenset({"-f", "--prefix"}),
    "esbuild": frozenset({"--outfile", "--outdir"}), "tsc": frozenset({"--outDir", "--outFile"}),
    "pip": frozenset({"-t", "--target", "-d", "--dest", "--prefix", "--root", "--src", "-w",
                      "--wheel-dir", "--report", "--log", "--log-file"}),
    **dict.fromkeys(("strace", "ltrace"), frozenset({"-o", "--output"})),
    "npm": frozenset({"--prefix"}), "dotnet": frozenset({"-o", "--output"}), "pnpm": frozenset({"--dir", "-C"}),
    "yarn": frozenset({"--cwd", "--modules-folder"}),
}
# Tools that rewrite their file operands in place (folders: what is in them), with the
# option that makes them do so where one is needed
_IN_PLACE: dict[str, str | None] = {
    "black": None, "isort": None, "autopep8": "-i", "yapf": "-i", "autoflake": "-i",
    "prettier": "--write", "eslint": "--fix", "gofmt": "-w", "goimports": "-w",
    "rustfmt": None, "clang-format": "-i", "shfmt": "-w", "dos2unix": None, "unix2dos": None,
    "sponge": None, "yq": "-i", "pyupgrade": None, "docformatter": "-i",
    "stylelint": "--fix", "markdownlint": "--fix", "markdownlint-cli2": "--fix",
    "standard": "--fix", "rubocop": "-a", "ktlint": "-F", "swiftformat": None,
    **dict.fromkeys(("vi", "vim", "nvim", "ex", "ed", "red", "nano", "emacs", "vim.basic",
                     "vim.tiny", "micro", "kak", "hx"), None),
}
_IN_PLACE_SHORT = {"prettier": "-w", "yq": "-i", "autopep8": "--in-place", "yapf": "--in-place",
                   "autoflake": "--in-place", "docformatter": "--in-place",
                   "stylelint": "--fix", "markdownlint": "--fix", "standard": "--fix",
                   "rubocop": "-A", "ktlint": "--format"}
_NOT_WRITING = frozenset({"--check", "--diff", "-c", "--dry-run", "-d", "-l", "--list-different",
                          "--version", "--help", "-h", "-R"})
# Options of those tools that take a value (not a file operand)
_TOOL_VALUES = frozenset({"-c", "--cmd", "-S", "-u", "-i", "-T", "-l", "--line-length",
                          "--config", "-t", "--target-version", "--ext", "--parser",
                          "--ignore-path", "-p", "--profile", "--settings-path", "-s",
                          "--style", "--edition", "--indent", "--plugin", "-e", "--expression",
                          "--fallback-style", "--assume-filename"})
# Editors' options that take a value (`vim -c wq F`, `ed -p '*' F`; ed's `-s` is a flag)
_EDITOR_VALUES = {
    **dict.fromkeys(("vi", "vim", "nvim", "ex", "vim.basic", "vim.tiny"),
                    frozenset({"-c", "--cmd", "-S", "-u", "-i", "-T", "-w", "-W", "-s", "-U"})),
    "ed": frozenset({"-p", "--prompt"}), "red": frozenset({"-p", "--prompt"}),
    "emacs": frozenset({"-l", "--load", "-f", "--funcall", "--eval", "-L"}),
}
_COMPRESSORS = frozenset({"gzip", "bzip2", "xz", "lzma", "lz4", "gunzip", "bunzip2", "unxz",
                          "pigz", "zstd", "unzstd", "compress", "uncompress"})


# Formatters with a subcommand that writes: name -> (subcommands, the flags one of which
# makes them write (none: they always do), flags that make them only check)
_SUBCOMMAND_FORMATTERS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "terraform": (("fmt",), (), ("-check", "--check", "-diff")),
    "tofu": (("fmt",), (), ("-check", "--check")),
    "dprint": (("fmt",), (), ()), "taplo": (("fmt", "format"), (), ("--check",)),
    "biome": (("format", "check", "lint"), ("--write", "--apply", "--apply-unsafe", "--fix"),
              ()),
    "php-cs-fixer": (("fix",), (), ("--dry-run",)), "buf": (("format",), ("-w", "--write"), ()),
    "mix": (("format",), (), ("--check-formatted",)),
}


def _tool_outputs(name: str, args: list[str]) -> list[str] | None:
    """What the tools of the tables above write; None for any other command."""
    if name == "ruff" and args[:1] and args[0].startswith("-") and "--fix" in args:
        args = ["check", *args]  # the old command line: `ruff --fix api`
    if re.fullmatch(r"pip3?(?:\.\d+)?", name):
        name = "pip"
    if name == "go":
        return _go_outputs(args)
    if name in _OUTPUT_OPTIONS:
        values = _OUTPUT_OPTIONS[name]
        found = []
        for index, arg in enumerate(args):
            key = arg.split("=", 1)[0] if arg.startswith("--") else (
                arg if arg in values else arg[:2])
            value = _option_value(args, index, arg) if key in values else ""
            if not value:
                continue
            if key in ("--report", "--log", "--log-file"):
                pass  # a file
            elif name in ("javac", "pip", "npm", "pnpm", "yarn", "dotnet") \
                    or key.lower().endswith("dir"):
                value = value.rstrip("/") + "/"
            elif name == "csplit":  # files PREFIX00, PREFIX01...: in PREFIX's folder
                value = os.path.dirname(value) + "/" if os.path.dirname(value) else ""
            if value:
                found.append(value)
        return found
    if name in ("uniq",):
        operands = _operands(args, frozenset({"-f", "-s", "-w", "--skip-fields",
                                              "--skip-chars", "--check-chars"}))
        return operands[1:2]
    if name == "split":
        operands = _operands(args, frozenset({"-b", "-l", "-n", "-C", "-a", "--bytes",
                                              "--lines", "--number", "--line-bytes",
                                              "--suffix-length", "--additional-suffix",
                                              "--filter"}))
        folder = os.path.dirname(operands[1]) if len(operands) > 1 else ""
        return [folder + "/"] if folder else []
    if name == "mktemp":
        operands = _operands(args, frozenset({"-p", "--tmpdir", "--suffix"}))
        base = next((_option_value(args, i, a) for i, a in enumerate(args)
                     if a.split("=", 1)[0] in ("-p", "--tmpdir")), None)
        if not operands or "-u" in args or "--dry-run" in args:
            return []
        folder = os.path.dirname(operands[0])
        return [os.path.join(base or folder or ".", "").rstrip("/") + "/"] \
            if base or folder else []
    if name in ("venv", "virtualenv"):
        return [o.rstrip("/") + "/" for o in _operands(args, frozenset({"-p", "--python",
                                                                        "--prompt"}))]
    if (name == "cargo" and args[:1] in (["new"], ["init"])) or (
            name in ("poetry", "uv", "pdm", "hatch") and args[:1] in (["new"], ["init"])):
        operands = _operands(args[1:], frozenset({"--name", "--vcs", "--edition", "--python",
                                                  "-p", "--src", "--build-backend"}))
        return [operands[0].rstrip("/") + "/"] if operands else []
    if name == "zip":
        operands = _operands(args, frozenset({"-b", "-n", "-t", "-tt", "-x", "-i", "-P",
                                              "--password"}))
        return operands[:1]
    if name in _COMPRESSORS:
        if any(a in ("-c", "--stdout", "-l", "--list", "-t", "--test", "-h", "--help")
               or (a.startswith("-") and not a.startswith("--") and "c" in a[1:]) for a in args):
            return []
        operands = _operands(args, frozenset({"-S", "--suffix", "-o", "-T", "--threads"}))
        # the file goes, and what replaces it lands beside it
        return operands + [os.path.dirname(o) + "/" for o in operands if os.path.dirname(o)]
    if name in _IN_PLACE:
        flag = _IN_PLACE[name]
        short = _IN_PLACE_SHORT.get(name)
        if flag is not None and not any(a == flag or a == short or a.startswith(flag + "=")
                                        or (flag == "-i" and a.startswith("-i"))
                                        or (name == "yq" and a == "--inplace")
                                        for a in args):
            return []
        if name in ("black", "isort", "rustfmt", "ruff") and any(a in _NOT_WRITING
                                                                 for a in args):
            return []
        values = _EDITOR_VALUES.get(name, _TOOL_VALUES) if flag is None else _TOOL_VALUES
        operands = _operands([a for a in args if not a.startswith("+")], values)
        return [o if "." in os.path.basename(o) else o.rstrip("/") + "/" for o in operands
                if o not in (".", "./")] if operands else []
    if name in _SUBCOMMAND_FORMATTERS and args[:1] and args[0] in \
            _SUBCOMMAND_FORMATTERS[name][0]:
        _, flags, checks = _SUBCOMMAND_FORMATTERS[name]
        if (flags and not any(a.split("=", 1)[0] in flags for a in args)) or any(
                a in checks for a in args):
            return []
        return [o if "." in os.path.basename(o) else o.rstrip("/") + "/"
                for o in _operands(args[1:], _TOOL_VALUES) if o not in (".", "./")]
    if name == "ruff" and args[:1] == ["format"] or (name == "ruff" and args[:1] == ["check"]
                                                     and "--fix" in args):
        if any(a in ("--check", "--diff") for a in args):
            return []
        return [o if "." in os.path.basename(o) else o.rstrip("/") + "/"
                for o in _operands(args[1:], _TOOL_VALUES) if o not in (".", "./")]
    return None


# go's flags that name a file it writes (single dash or double, `-flag=V` or `-flag V`);
# -outputdir a folder the profiles go to
_GO_OUTPUTS = frozenset({"-o", "-coverprofile", "-cpuprofile", "-memprofile",
                         "-blockprofile", "-mutexprofile", "-trace", "-outputdir"})


def _go_outputs(args: list[str]) -> list[str]:
    """What ``go build|test|...`` ARGS writes by its output flags."""
    found = []
    for index, arg in enumerate(args):
        if arg == "--":
            break
        key, sep, value = arg.lstrip("-").partition("=")
        key = "-" + key
        if not arg.startswith("-") or key not in _GO_OUTPUTS:
            continue
        if not sep:
            value = args[index + 1] if index + 1 < len(args) else ""
        if value:
            found.append(value.rstrip("/") + "/" if key == "-outputdir" else value)
    return found


def _option_value(args: list[str], index: int, arg: str) -> str:
    """The value of the option at ``args[index]``: ``--opt=V``, ``-oV`` or the next word."""
    if "=" in arg and arg.startswith("--"):
        return arg.split("=", 1)[1]
    if not arg.startswith("--") and len(arg) > 2:
        return arg[2:]
    return args[index + 1] if index + 1 < len(args) else ""


def _curl_targets(args: list[str]) -> list[str]:
    found: list[str] = []
    directory = ""
    remote_names = 0
    urls: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        value = args[index + 1] if index + 1 < len(args) else ""
        if arg in ("-o", "--output", "-c", "--cookie-jar", "-D", "--dump-header",
                   "--trace", "--trace-ascii", "--stderr", "--libcurl"):
            found.append(value)
            index += 2
            continue
        if arg.startswith("--output="):
            found.append(arg.split("=", 1)[1])
        elif arg == "--output-dir":
            directory = value
            index += 1
        elif arg in ("-O", "--remote-name", "--remote-name-all") or (
                arg.startswith("-") and not arg.startswith("--") and "O" in arg[1:]):
            remote_names += 1
        elif arg.startswith("-") and not arg.startswith("--") and arg[-1:] == "o" and value:
            found.append(value)  # -so FILE, -sSLo FILE
            index += 1
        elif not arg.startswith("-"):
            urls.append(arg)
        index += 1
    for url in urls[:remote_names] if remote_names else []:
        name = url.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        found.append(os.path.join(directory, name) if name else (directory or ".") + "/")
    return [os.path.join(directory, f) if directory and not os.path.isabs(f) else f
            for f in found]


def _wget_targets(args: list[str]) -> list[str]:
    found: list[str] = []
    directory = None
    urls: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        value = args[index + 1] if index + 1 < len(args) else ""
        if arg in ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output"):
            found.append(value)
            index += 2
            continue
        if arg.startswith(("--output-document=", "--output-file=", "--append-output=")):
            found.append(arg.split("=", 1)[1])
        elif arg in ("-P", "--directory-prefix"):
            directory = value
            index += 1
        elif arg.startswith("--directory-prefix="):
            directory = arg.split("=", 1)[1]
        elif arg.startswith("-O") and len(arg) > 2:
            found.append(arg[2:])
        elif not arg.startswith("-"):
            urls.append(arg)
        index += 1
    if not any(a in ("-O", "--output-document") or a.startswith(("-O", "--output-document="))
               for a in args):
        for url in urls:
            name = url.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
            found.append(os.path.join(directory or "", name) if name and "." in name
                         else (directory or ".").rstrip("/") + "/")
    return found


# An extraction (``tar -x``, ``unzip``, ``7z x``, ``python -m zipfile -e``): json [archive
# (None: standard input), [folders], components stripped, absolute names kept, flat (7z
# e), why the members cannot be told ("" if they may)]; ``written_files`` lists the
# archive's members (``archive_members``) and turns the mark into their paths, or into
# the folders and an ``UNLISTED_MARK`` for each when they cannot be told.
ARCHIVE_MARK = "\0archive:"
# json [folder, why its members cannot be told, the command line]: the Claude hook denies
# the command when the folder holds a protected path
UNLISTED_MARK = "\0unlisted:"


def archive_mark(archive: str | None, folders: list[str], *, strip: int = 0,
                 absolute: bool = False, flat: bool = False, why: str = "") -> str:
    return ARCHIVE_MARK + json.dumps([archive, folders, strip, absolute, flat, why])


def read_unlisted_mark(mark: str) -> tuple[str, str, str]:
    """(folder, relative to the command's cwd; why its members cannot be told; the
    command line) of an ``UNLISTED_MARK``."""
    folder, why, text = json.loads(mark[len(UNLISTED_MARK):])
    return str(folder), str(why), str(text)


# tar's short options that take a value, and its long ones (as `--opt VALUE` too)
_TAR_VALUE_LETTERS = frozenset("fCbTXgNKLVFIH")
_TAR_VALUE_LONG = frozenset({
    "--file", "--directory", "--strip-components", "--transform", "--xform", "--exclude",
    "--files-from", "--exclude-from", "--use-compress-program", "--format", "--owner",
    "--group", "--mode", "--mtime", "--label", "--newer", "--after-date", "--newer-mtime",
    "--blocking-factor", "--record-size", "--info-script", "--new-volume-script",
    "--tape-length", "--listed-incremental", "--starting-file", "--suffix", "--to-command",
    "--checkpoint-action", "--rsh-command", "--rmt-command", "--volno-file", "--index-file"})
_TAR_MODES = {"--extract": "x", "--get": "x", "--create": "c", "--append": "r",
              "--update": "u", "--catenate": "A", "--concatenate": "A", "--delete": "d",
              "--list": "t", "--diff": "d", "--compare": "d"}


def _tar_options(args: list[str]) -> tuple[set[str], dict[str, list[str]]]:
    """(the letters and long options given, option -> its values) of a tar command line,
    the old form too (``tar xzf x.tgz``: the letters' values follow in order)."""
    given: set[str] = set()
    values: dict[str, list[str]] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            break
        if arg.startswith("--"):
            key, eq, value = arg.partition("=")
            given.add(key)
            if eq:
                values.setdefault(key, []).append(value)
            elif key in _TAR_VALUE_LONG and index + 1 < len(args):
                values.setdefault(key, []).append(args[index + 1])
                index += 1
        elif arg.startswith("-") and len(arg) > 1 or (index == 0 and arg[:1].isalpha()):
            old = not arg.startswith("-")
            letters = arg if old else arg[1:]
            waiting: list[str] = []
            for position, letter in enumerate(letters):
                given.add(letter)
                if letter in _TAR_VALUE_LETTERS:
                    if old:
                        waiting.append(letter)
                        continue
                    rest = letters[position + 1:]
                    if rest:
                        values.setdefault(letter, []).append(rest)
                    elif index + 1 < len(args):
                        values.setdefault(letter, []).append(args[index + 1])
                        index += 1
                    break
            for letter in waiting:  # `tar xfC x.tar dir`
                if index + 1 < len(args):
                    values.setdefault(letter, []).append(args[index + 1])
                    index += 1
        index += 1
    for option, letter in _TAR_MODES.items():
        if option in given:
            given.add(letter)
    return given, values


def _tar_targets(args: list[str]) -> list[str]:
    """What ``tar`` writes: the archive it makes or changes (``-c``, ``-r``, ``-u``,
    ``-A``, ``--delete``); for ``-x`` an ``archive_mark`` of the archive and the
    ``-C``/``--directory`` folders it extracts into."""
    given, values = _tar_options(args)
    archives = values.get("f", []) + values.get("--file", [])
    archive = archives[-1] if archives else None
    if given & {"c", "r", "u", "A"} or "--delete" in given:
        return [archive] if archive and archive != "-" else []
    if "x" not in given:
        return []
    folders = values.get("C", []) + values.get("--directory", []) or ["."]
    strips = values.get("--strip-components", []) + values.get("--strip", [])
    strip = int(strips[-1]) if strips and strips[-1].isdigit() else 0
    why = ""
    if given & {"--transform", "--xform"} or (strips and not strips[-1].isdigit()):
        why = "its member names are rewritten as it extracts them"
    if archive in (None, "-"):
        why = why or "it is read from standard input"
        archive = None
    return [archive_mark(archive, folders, strip=strip,
                         absolute=bool(given & {"P", "--absolute-names"}), why=why)]


def _unzip_targets(args: list[str]) -> list[str]:
    """``unzip [OPTIONS] ZIP [MEMBERS] [-x EXCLUDED] [-d DIR]``: an ``archive_mark`` (none
    for ``-l``/``-t``/``-v``/``-Z``/``-p``/``-c``, which write no file)."""
    if any(a.startswith("-") and not a.startswith("--") and set(a[1:]) & set("ltvZpc")
           for a in args):
        return []
    folder = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "-d"), None) \
        or next((a[2:] for a in args if a.startswith("-d") and len(a) > 2), None)
    operands: list[str] = []
    index = 0
    while index < len(args) and args[index] != "-x":  # (the names after -x are excluded)
        arg = args[index]
        if arg in ("-d", "-P"):
            index += 2
            continue
        if not arg.startswith("-"):
            operands.append(arg)
        index += 1
    flat = any(a.startswith("-") and not a.startswith("--") and "j" in a for a in args)
    return [archive_mark(operands[0] if operands else None, [folder or "."], flat=flat)]


def _archive_targets(mark: str, cwd: Path, here: str | None, earlier: list[str],
                     named: set[str], text: str) -> list[str]:
    """The paths an extraction run in ``here`` writes (relative to it): its members under
    each folder (and, for a link member, where it points: a later write through the link
    changes that file); when they cannot be told, each folder and an ``UNLISTED_MARK``
    for it. ``earlier``, ``named``: what the commands before it in the line write and the
    file names they hold (an archive one of them may change is not judged by what it
    holds now, ``_may_change``)."""
    archive, folders, strip, absolute, flat, why = json.loads(mark[len(ARCHIVE_MARK):])
    found: list[str] = []
    listed = None
    if not why and archive is not None and not _knowable(archive):
        why = "its name is an expansion Meridian cannot read"
    elif not why and here is None:
        why = "the folder the command runs in cannot be told"
    elif not why and archive is not None and _may_change(archive, here or ".", earlier,
                                                          named):
        why = "an earlier part of the command may change it first"
    if not why:
        from meridian.hooks.archive_members import Unlisted, members

        try:
            listed = members(cwd / (here or ".") / os.path.expanduser(archive))
        except Unlisted as exc:
            why = str(exc)
    if listed is None:
        for folder in folders:
            found += [folder.rstrip("/") + "/", UNLISTED_MARK + json.dumps(
                [folder, f"{archive or 'the archive'}: {why}", text])]
        return found
    for folder in folders:
        for member in listed:
            parts = [p for p in member.name.split("/") if p not in ("", ".")][strip:]
            if not parts:
                continue
            name = "/".join(parts[-1:] if flat else parts)
            if absolute and member.name.startswith("/"):
                path = os.path.normpath("/" + name)
            else:
                path = os.path.normpath(os.path.join(folder, name))
            there = cwd / (here or ".") / path
            if member.folder and (not os.path.lexists(there) or there.is_dir()):
                continue  # a folder made (or there already): nothing in it is written
            found.append(path)
            if member.link:
                if member.hard:
                    base = "/".join([p for p in member.link.split("/")
                                     if p not in ("", ".")][strip:])
                    found.append(os.path.normpath(os.path.join(folder, base)))
                elif os.path.isabs(member.link):
                    found.append(os.path.normpath(member.link))
                else:
                    found.append(os.path.normpath(os.path.join(os.path.dirname(path),
                                                               member.link)))
    return list(dict.fromkeys(found))


def _may_change(archive: str, here: str, earlier: list[str], named: set[str]) -> bool:
    """Whether the commands before may change ``archive`` (relative to ``here``): one
    holds its file name as a word, or writes it, a folder holding it, or files that
    cannot be told (``earlier``: their targets, relative to the start; "\\0" for
    something that cannot be read)."""
    path = os.path.normpath(os.path.join(here, os.path.expanduser(archive)))
    if os.path.basename(path) in named:
        return True
    for target in earlier:
        if target.startswith(UNLISTED_MARK):
            target = read_unlisted_mark(target)[0] + "/"  # what an extraction wrote into
        elif target.startswith("\0"):
            return True  # git's files, a stash's, what cannot be read
        written = os.path.normpath(target)
        if written in (path, ".") or path.startswith(written.rstrip("/") + "/"):
            return True
    return False


VARIABLE = lazy_pattern(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


PARAMETER = lazy_pattern(r"\$\{([^{}$`\\]+)\}")
_PARAMETER_NAME = lazy_pattern(r"(#?)([A-Za-z_][A-Za-z0-9_]*)(.*)", re.DOTALL)
_CASE_OPS = (",,", "^^", "~~", ",", "^", "~")


def _case(value: str, op: str, pattern: str) -> str:
    """``${X,}``, ``${X^^PAT}``, ``${X~}`` ...: the case of the first (single operator) or
    of every character matching ``pattern`` (any character when empty) changed."""
    import fnmatch

    def change(char: str) -> str:
        if pattern and not fnmatch.fnmatchcase(char, pattern):
            return char
        return char.lower() if op[0] == "," else char.upper() if op[0] == "^" \
            else char.swapcase()

    if len(op) == 2:
        return "".join(change(c) for c in value)
    return change(value[:1]) + value[1:] if value else value


def _strip_pattern(value: str, op: str, pattern: str) -> str:
    """``${X#P}``, ``${X##P}``, ``${X%P}``, ``${X%%P}``."""
    import fnmatch

    ends = range(len(value) + 1)
    if op in ("#", "##"):
        cuts = [i for i in ends if fnmatch.fnmatchcase(value[:i], pattern)]
        return value[(max(cuts) if op == "##" else min(cuts)):] if cuts else value
    cuts = [i for i in ends if fnmatch.fnmatchcase(value[i:], pattern)]
    return value[:(min(cuts) if op == "%%" else max(cuts))] if cuts else value


def _replace_pattern(value: str, rest: str) -> str | None:
    """``${X/P/R}``, ``${X//P/R}``, ``${X/#P/R}``, ``${X/%P/R}`` (longest match, as bash)."""
    import fnmatch

    every, anchor = rest.startswith("//"), rest[1:2] if rest[1:2] in ("#", "%") else ""
    body = rest[2:] if every or anchor else rest[1:]
    pattern, _, replacement = body.partition("/")
    if not pattern:
        return value
    out, index = "", 0
    while index <= len(value):
        if anchor == "#" and index > 0:
            break
        ends = [j for j in range(len(value), index - 1, -1)
                if (anchor != "%" or j == len(value))
                and fnmatch.fnmatchcase(value[index:j], pattern)]
        if ends and ends[0] > index:
            out += replacement
            index = ends[0]
            if not every:
                return out + value[index:]
            continue
        if index < len(value):
            out += value[index]
        index += 1
    return out


def _parameter(body: str, variables: dict[str, str]) -> str | None:
    """The value of ``${BODY}`` when the variables the command set tell it exactly: the
    default, alternative, case, substring, removal and replacement forms; None (the
    expansion stays unknown) for an indirection, an unknown variable or a form not
    read here."""
    match = _PARAMETER_NAME.fullmatch(body)
    if match is None:
        return None  # `${!X}`, `${@}`, `${1}`...
    length, name, rest = match.groups()
    value = variables.get(name)
    if value is None or "\x01" in value or "$" in value:
        return None
    if length:
        return str(len(value)) if not rest else None
    if not rest:
        return value
    for op in (":-", ":=", ":+", ":?", "-", "=", "+", "?"):
        if rest.startswith(op):
            word = rest[len(op):]
            if any(c in word for c in "$`*?[") and op not in ("?", ":?"):
                return None
            if op in (":-", ":="):
                return value or word
            if op == ":+":
                return word if value else ""
            return word if op == "+" else value
    for op in _CASE_OPS:
        if rest.startswith(op):
            return _case(value, op, rest[len(op):])
    if rest in ("@U", "@L", "@u"):
        return value.upper() if rest == "@U" else value.lower() if rest == "@L" \
            else value[:1].upper() + value[1:]
    for op in ("##", "#", "%%", "%"):
        if rest.startswith(op):
            return _strip_pattern(value, op, rest[len(op):])
    if rest.startswith("/"):
        return _replace_pattern(value, rest)
    if rest.startswith(":"):
        parts = rest[1:].split(":")
        try:
            offset = int(parts[0].strip() or "0")
            size = int(parts[1].strip()) if len(parts) > 1 else None
        except ValueError:
            return None
        if len(parts) > 2:
            return None
        start = max(len(value) + offset, 0) if offset < 0 else offset
        if size is None:
            return value[start:]
        return value[start:start + size] if size >= 0 else value[start:len(value) + size]
    return None


def _expand(token: str, variables: dict[str, str]) -> str:
    """``~/x``, ``$HOME/x``, ``${PWD}/x`` and variables the command set to a plain value
    earlier (``D=.meridian; rm $D/gates.yaml``), as the shell expands them, the
    parameter forms (``${D,,}``, ``${X-api}``, ``${D/a/b}`` ...) included when they can be
    told exactly; any other expansion stays in the word (it cannot be told)."""
    if token == "~" or token.startswith("~/"):
        token = variables["HOME"] + token[1:]
    elif token == "~+" or token.startswith("~+/"):
        token = variables.get("PWD", "$PWD") + token[2:]
    elif re.match(r"~[A-Za-z_][\w.-]*(?:/|$)", token):
        token = os.path.expanduser(token)  # ~user/x
    if "$" not in token:
        return token
    token = VARIABLE.sub(lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), token)
    if "${" in token:
        token = PARAMETER.sub(lambda m: _told(_parameter(m.group(1), variables), m.group(0)),
                              token)
    return token


def _told(value: str | None, otherwise: str) -> str:
    return otherwise if value is None else value


def _knowable(path: str) -> bool:
    return bool(path) and path not in NOT_FILES and not any(c in path for c in "$`*?[{~")


def _changed_dir(here: str | None, args: list[str], cwd: Path | None = None,
                 made: list[str] | None = None, *, cdpath: bool = False) -> str | None:
    """Where ``cd ARGS`` run in ``here`` leads (relative to the start), None if unknown. A
    glob is expanded as the shell does (``cd .git/hoo*``: the one folder it matches; more
    or none and the cd fails or goes who knows where: unknown); with ``cdpath`` (CDPATH
    set) a bare relative name may lead anywhere."""
    operands = _operands(args)
    if here is None or len(operands) != 1:
        return None  # "cd" (home), "cd A B": somewhere that cannot be told
    target = operands[0]
    if target.startswith(("+", "-")) and target != "--":
        return None  # `pushd +1`, `cd -`: the directory stack
    if cwd is not None and any(c in target for c in "*?[") and "$" not in target \
            and "`" not in target:
        matches = [m for m in _expand_words(target, cwd, here, made or [])
                   if not any(c in m for c in "*?[")
                   and (os.path.isdir(cwd / here / m) or (made and m.rstrip("/") in made))]
        if len(matches) != 1:
            return None
        target = matches[0]
    if not _knowable(target):
        return None  # "cd $DIR", "cd ~": somewhere that cannot be told
    if cdpath and not os.path.isabs(target) and not target.startswith(("./", "../")) \
            and target not in (".", ".."):
        return None
    return target if os.path.isabs(target) else os.path.normpath(os.path.join(here, target))


# Wrapper options that run the command in another directory: `env -C DIR`, `sudo -D DIR`
_CHDIR_OPTIONS = {"env": ("-C", "--chdir"), "sudo": ("-D", "--chdir"), "doas": ()}


def _wrapper_chdirs(words: list[str]) -> list[str]:
    """The directories wrappers in front of a command move it to, in order (``env -C
    build make``: build; ``sudo -D /srv env --chdir=app cmd``: /srv, then app)."""
    out: list[str] = []
    index = 0
    while index < len(words) and (ASSIGNMENT.match(words[index]) or words[index] in KEYWORDS):
        index += 1
    while index < len(words) and os.path.basename(words[index]) in WRAPPER_OPTIONS:
        current = os.path.basename(words[index])
        options, takes_value = _CHDIR_OPTIONS.get(current, ()), WRAPPER_OPTIONS[current]
        index += 1
        while index < len(words):
            word = words[index]
            if word == "--":
                index += 1
                break
            value = None
            for option in options:
                if word == option:
                    value = words[index + 1] if index + 1 < len(words) else ""
                elif word.startswith(option + "=") and option.startswith("--"):
                    value = word.split("=", 1)[1]
                elif word.startswith(option) and not option.startswith("--") and len(word) > 2:
                    value = word[2:]
            if value is not None:
                out.append(value)
            if current == "env" and ASSIGNMENT.match(word):
                index += 1
                continue
            if not word.startswith("-") or word == "-":
                break
            index += 2 if word in takes_value else 1
        if current == "timeout" and index < len(words):
            index += 1
        if current in ("flock", "chroot", "taskset") and index < len(words):
            index += 1
    return out


def written_files(command: str, cwd: Path, *, removals: bool = False,
                  unresolved: list[str] | None = None) -> list[str]:
    """The files ``command`` writes, as written in it (relative ones relative to ``cwd``,
    prefixed by the directories a ``cd`` in the command moved to); with ``removals``,
    also the files it deletes or moves away. ``unresolved`` collects what may write
    but cannot be told (see the module docstring)."""
    try:
        commands = _simple_commands(command)
    except ValueError:  # unbalanced quotes: the shell would refuse it too
        if unresolved is not None:
            unresolved.append(command)
        return []
    found: list[str] = []
    fetched = False  # a `git fetch` ran earlier in the command
    state = _ShellState(cwd)
    state.plain = not re.search(r"\w\s*\(\s*\)|\bfunction\s|\balias\s|\bPATH=|\benable\s",
                                command)
    outer: list[_ShellState] = []  # the state each enclosing subshell started with
    judged: str | None = None  # the text inline code is judged by (_code_visible_text)
    named: set[str] = set()  # the file names the commands so far hold as words
    wrote: list[tuple[list[str], str]] = []  # each command's targets, and its source
    sources: dict[int, str] = {}  # id(command's words) -> what its output is made of
    deferred: list[str] = []  # code run later: `trap CODE EXIT`
    for tokens in commands:
        if tokens is SUBSHELL_OPEN:
            outer.append(state.copy())
            continue
        if tokens is SUBSHELL_CLOSE:
            state = outer.pop() if outer else state
            continue
        feed = getattr(tokens, "feed", None)
        here = state.here
        given = tokens
        tokens = state.read(tokens)
        words, redirected = _split_redirections(tokens)
        command_words = _strip_prefix(words)
        name = command_words[0] if command_words else ""
        targets = redirected
        before = len(unresolved) if unresolved is not None else 0
        for folder in _wrapper_chdirs(words):  # `env -C DIR CMD`: CMD runs in DIR
            here = _changed_dir(here, ["--", folder], cwd, state.made, cdpath=state.cdpath)
        if name == "trap" and _trap_code(command_words[1:]) is not None:
            deferred.append(_trap_code(command_words[1:]) or "")
        if name not in CHANGE_DIR and name != "popd":
            targets = targets + _command_targets(
                words, cwd / (here or "."), removals=removals, unresolved=unresolved,
                stdin=_stdin_file(tokens), environment=state.exported, feed=feed,
                text=command)
        if any(t.startswith(ARCHIVE_MARK) for t in targets):
            # (anything earlier in the line that cannot be read may change the archive,
            # and so may a command naming it: `python3 pack.py x.tgz && tar -xzf x.tgz`)
            earlier = found + (["\0"] if before else [])
            targets = [one for t in targets for one in (
                _archive_targets(t, cwd, here, earlier, named, command)
                if t.startswith(ARCHIVE_MARK) else [t])]
        if fetched:
            # a revision read now is not the one a `git fetch` earlier in the command leaves
            targets = [_anywhere(command) if t.startswith(GIT_MARK)
                       and read_git_mark(t)[0] not in ("clean", "patch") else t
                       for t in targets]
        if os.path.basename(name) == "git" and _git_words(command_words)[1] in (
                "fetch", "pull", "remote", "submodule"):
            fetched = True
        own = shlex.join(tokens) + ("\n" + feed[1] if feed is not None and feed[0] == "text"
                                    and isinstance(feed[1], str) else "")
        # what this command writes is made of its own words and what flows into it: the
        # command piped into it (the whole line when that is not told) and the files
        # earlier commands wrote that it names (`cp a.sh b.sh`, `ln -s a.sh b`, `< a.sh`)
        source = own
        if feed is not None and feed[0] == "pipe":
            source += "\n" + (sources.get(id(feed[1]), command) if feed[1] is not None
                              else command)
        mentioned = {os.path.basename(part.rstrip("/")) for w in tokens
                     for part in w.split("=")} - {"", ".", ".."}
        source += "".join("\n" + text for written, text in wrote if any(
            not w.startswith("\0") and os.path.basename(w.rstrip("/")) in mentioned
            for w in written))
        sources[id(given)] = source
        scripts = _scripts_run(command_words, words)
        stdin_script = _stdin_file(tokens)
        if stdin_script and _knowable(stdin_script) and command_words and (
                os.path.basename(name) in SHELLS or INTERPRETER.match(os.path.basename(name))
        ) and _script_file(os.path.basename(name), command_words[1:]) is None \
                and not _inline_code(os.path.basename(name), command_words[1:]):
            scripts.append(stdin_script)  # `sh < x.sh`, `python3 < x.py`: it runs x
        for script in scripts:
            if unresolved is None or here is None:
                break
            # a script file not there yet, or one an earlier part of the line may write
            # (`echo CMD > /tmp/x.sh && bash /tmp/x.sh`): what it runs is in the line, if
            # anywhere: in the commands that write it (`python -m venv .venv && source
            # .venv/bin/activate` holds no name the script is given), or anywhere before
            # when what may write it cannot be told
            path = os.path.normpath(os.path.join(here, os.path.expanduser(script)))
            writers = [text for written, text in wrote if any(
                w.startswith(UNLISTED_MARK) or (not w.startswith("\0") and (
                    os.path.normpath(w) in (path, ".")
                    or path.startswith(os.path.normpath(w) + "/"))) for w in written)]
            if writers:
                unresolved += [*writers, own]
            elif _may_change(script, here, found + (["\0"] if before else []), named):
                judged = judged if judged is not None else _code_visible_text(commands, command)
                unresolved.append(judged)
            elif not os.path.lexists(cwd / here / os.path.expanduser(script)):
                unresolved.append(own)  # (what it is given)
        if unresolved is not None and (
                _inline_code(os.path.basename(name), command_words[1:])
                or (os.path.basename(name) == "xargs"
                    and not _only_reads(_strip_xargs(command_words[1:])))):
            # what runs comes from elsewhere in the command: judged by the words it may be
            # given (the files a command only reads and passes no name of are none)
            judged = judged if judged is not None else _code_visible_text(commands, command)
            unresolved.append(judged)
        start = len(found)
        for path in targets:
            for one in _expand_words(path, cwd, here, state.made):
                _add_target(one, here, command, found, unresolved)
        wrote.append((found[start:], source))
        state.after(name, command_words, [t for t in targets if not t.startswith("\0")])
        if os.path.basename(name) not in _NAMES_ONLY_READ:
            named.update(os.path.basename(w.rstrip("/")) for w in tokens)
    for code in deferred:
        # a trap's code runs when the shell exits: in the directory the line ends in
        for path in written_files(code, cwd / (state.here or "."), removals=removals,
                                  unresolved=unresolved):
            _add_target(path, state.here, command, found, unresolved)
    return found


def _once(found: list[str], item: str) -> None:
    if item not in found:
        found.append(item)


_SSH_VALUES = frozenset({"-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-b", "-c", "-E",
                         "-e", "-m", "-O", "-Q", "-S", "-W", "-w", "-B"})


def _runner_code(name: str, args: list[str]) -> str | None:
    """The command line a runner takes as words (rt3 F6): ``parallel ::: CMD...`` (or
    ``parallel CMD ::: ARGS``), ``sqlite3 DB ".shell CMD"`` / ``.system``, ``socat``'s
    ``EXEC:``/``SYSTEM:`` addresses, ``ssh HOST CMD`` (the host may be this machine)."""
    if name in ("parallel", "sem") and ":::" in args:
        before, after = args[:args.index(":::")], args[args.index(":::") + 1:]
        after = [a for a in after if a not in (":::", "::::")]
        command = [a for a in before if not a.startswith("-")]
        if not command:
            return "; ".join(after) or None
        return "; ".join(" ".join([*command, a]) for a in after) or None
    if name in ("sqlite3", "sqlite", "duckdb"):
        code = [arg.split(None, 1)[1] for arg in args
                if arg.startswith((".shell", ".system")) and len(arg.split(None, 1)) > 1]
        return "; ".join(code) or None
    if name == "socat":
        code = [arg.split(":", 1)[1].split(",", 1)[0] for arg in args
                if arg.upper().startswith(("EXEC:", "SYSTEM:"))]
        return "; ".join(code) or None
    if name in ("ssh", "rsh", "mosh"):
        operands: list[str] = []
        index = 0
        while index < len(args):
            if not operands and args[index].startswith("-"):
                index += 2 if args[index] in _SSH_VALUES else 1
                continue
            operands.append(args[index])
            index += 1
        return " ".join(operands[1:]) or None
    return None


def _trap_code(args: list[str]) -> str | None:
    """The code ``trap CODE SIGNAL...`` runs later, or None (``trap -p``, ``trap - EXIT``)."""
    operands = _operands([a for a in args if a not in ("-p", "-l", "-P")])
    if len(operands) < 2 or operands[0] == "-":
        return None
    return operands[0]


# Commands that read their file operands and print what is in them, never their names:
# name -> the options that take a value. head and tail print a name above each file when
# given more than one (unless -q), or with -v.
CONTENT_READERS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("cat", "zcat", "bzcat", "xzcat"), frozenset()),
    "tac": frozenset({"-s", "--separator"}), "base64": frozenset({"-w", "--wrap"}),
    "nl": frozenset({"-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"}),
    **dict.fromkeys(("head", "tail"), frozenset({"-n", "-c", "--lines", "--bytes", "--pid",
                                                  "-s", "--sleep-interval"})),
}
# Commands that only read (their words are never a file they write and they run no
# command), whose output may hold the names they were given (`grep -r x api/`, `wc -l
# F`, `git diff F`): their words pass on no name when the output goes to the terminal
NAME_READERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "wc", "ls", "stat", "file",
                          "du", "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "sha512sum",
                          "b2sum", "cksum", "tree", "basename", "dirname", "realpath",
                          "readlink"})
# Options of those that write a file or run a command (`tree -o F`, `rg --pre CMD`,
# `git diff --output=F`, `--ext-diff`/`--textconv` run configured programs)
_READER_ACTIONS = ("--output", "--ext-diff", "--textconv", "-o", "--pre")
_READING_GIT = frozenset({"diff", "log", "show", "status", "blame", "grep", "ls-files",
                          "ls-tree", "shortlog", "cat-file"})
# Commands whose words never name a file they change (their writes, if any, are targets
# read already): an archive they name is not changed by them (`du -h x.tgz && tar -xzf
# x.tgz`)
_NAMES_ONLY_READ = frozenset({*CONTENT_READERS, *NAME_READERS, "tar", "bsdtar", "gtar",
                              "unzip", "bsdunzip", "echo", "printf", "test", "[", "[[", "cd",
                              "pushd", "mkdir", "true", ":", "sleep", "chmod", "which",
                              "type", "command"})


def _scripts_run(command: list[str], words: list[str]) -> list[str]:
    """The script files ``command`` (prefix taken off ``words``) runs: ``bash x.sh``,
    ``python x.py``, ``source x``, ``./x``, ``make -f F``, ``awk -f F``, ``sed -f F``, a
    ``BASH_ENV=F`` or ``ENV=F`` a shell reads first."""
    if not command:
        return []
    name, args = os.path.basename(command[0]), command[1:]
    found = [s for s in [_script_file(name, args)] if s and _knowable(s)]
    if command[0].startswith(("./", "/", "~/", "../")) and _knowable(command[0]):
        found.append(command[0])
    if name in ("make", "gmake") or name in AWK or name == "sed":
        letter = "-f"
        longs = ("--file", "--makefile") if name in ("make", "gmake") else ("--file",)
        found += [v for i, a in enumerate(args)
                  if (a == letter or a.startswith(letter) and name != "sed"
                      or a.split("=", 1)[0] in longs)
                  and (v := _option_value(args, i, a)) and _knowable(v)]
    if name in SHELLS:
        found += [w.split("=", 1)[1] for w in words[:len(words) - len(command)]
                  if w.startswith(("BASH_ENV=", "ENV=")) and _knowable(w.split("=", 1)[1])]
    return [f for f in found if f not in STDIN_SCRIPTS]


def _only_reads(words: list[str]) -> bool:
    """Whether ``words`` (a command without a prefix) only read: writes no file, runs no
    command (``NAME_READERS``, ``CONTENT_READERS``, ``git diff|log|show|...``)."""
    if not words or any("$" in w or "`" in w for w in words):
        return False
    name, args = os.path.basename(words[0]), words[1:]
    reads = name in NAME_READERS or name in CONTENT_READERS or (
        name == "git" and args[:1] != [] and args[0] in _READING_GIT)
    return reads and not any(a.startswith(_READER_ACTIONS) for a in args)


def _passes_names(tokens: list[str], piped: bool) -> list[str]:
    """The words of one simple command that may reach code run elsewhere in the command
    line: all of them, but the file operands of a ``CONTENT_READERS`` command (it passes
    their contents on, never their names) and, when its output goes to the terminal
    (not piped on, not redirected, not in a subshell or substitution: ``piped``), every
    word of a command that only reads (``NAME_READERS``, ``git diff|log|show|...``)."""
    words, redirected = _split_redirections(tokens)
    if not words:
        return tokens
    if any("$" in w or "`" in w for w in words):
        return tokens  # an expansion: what runs, or what it is given, is not read here
    command = _strip_prefix(words)
    if not command or command != words[len(words) - len(command):]:
        return tokens
    name, args = os.path.basename(command[0]), command[1:]
    if name not in CONTENT_READERS and (len(command) < len(words) or any(
            target not in NOT_FILES for target in redirected)):
        # a prefix (`GIT_PAGER=CMD git log`), or a file the output goes to, which may be
        # read back: kept (`sudo cat F` only reads F)
        return tokens
    drop: list[str] = []
    if name in CONTENT_READERS:
        operands = _operands(args, CONTENT_READERS[name])
        headers = name in ("head", "tail") and (
            any(a in ("-v", "--verbose") for a in args)
            or (len(operands) > 1 and not any(a in ("-q", "--quiet", "--silent")
                                              for a in args)))
        if not headers:
            drop = operands
    elif name == "git" and args[:1] in (["show"], ["cat-file"]):
        # `git show REV:PATH`, `git cat-file -p REV:PATH`: what the blob holds
        drop = [a for a in args[1:] if ":" in a and not a.startswith("-")]
    elif not piped and _only_reads(command):
        drop = args
    if not drop:
        return tokens
    kept = list(tokens)
    for word in drop:
        position = len(kept) - 1 - kept[::-1].index(word) if word in kept[1:] else -1
        if position > 0:
            del kept[position]
    return kept


def _code_visible_text(commands: list[list[str]], command: str) -> str:
    """``command`` as code run inline in it (``python -c``, ``node -e``, ``xargs``) is
    judged when the hook cannot read that code: the words it may be given, with heredoc
    bodies (``_passes_names``: a locked file only read by ``cat`` is no name given to
    ``python -c``). ``command`` itself when no word is left out."""
    piped = {id(w.feed[1]) for w in commands
             if isinstance(w, Words) and w.feed is not None and w.feed[0] == "pipe"}
    parts: list[str] = []
    depth = 0
    dropped = False
    for tokens in commands:
        if tokens is SUBSHELL_OPEN or tokens is SUBSHELL_CLOSE:
            depth += 1 if tokens is SUBSHELL_OPEN else -1
            continue
        kept = _passes_names(tokens, piped=depth > 0 or id(tokens) in piped)
        dropped = dropped or len(kept) != len(tokens)
        parts.append(shlex.join(kept))
        feed = getattr(tokens, "feed", None)
        if feed is not None and feed[0] == "text" and isinstance(feed[1], str):
            parts.append(feed[1])
    return "\n".join(parts) if dropped else command


_PROC_DIR = lazy_pattern(r"/proc/(?:self|thread-self|\d+|\$\$|\$BASHPID|\$\{BASHPID\}|"
                         r"\$\{\$\})/(cwd|root)(/.*)?$")


def _add_target(path: str, here: str | None, command: str, found: list[str],
                unresolved: list[str] | None) -> None:
    """Record one target of a command run in ``here``: in ``found`` when it can be told,
    else in ``unresolved``."""
    if path.startswith(STASH_MARK):
        found.append(path)
        return
    proc = _PROC_DIR.match(path)
    if proc is not None:
        # `/proc/$$/cwd/x` (the shell's own directory), `/proc/self/root/x`
        rest = (proc.group(2) or "").lstrip("/")
        path = "/" + rest if proc.group(1) == "root" else (rest or ".")
    if path.startswith(UNLISTED_MARK):
        folder, why, text = read_unlisted_mark(path)
        if here is not None:  # (else: the folder itself is a target that cannot be told)
            folder = folder if os.path.isabs(folder) or here == "." \
                else os.path.normpath(os.path.join(here, folder))
            found.append(UNLISTED_MARK + json.dumps([folder, why, text]))
        return
    if path.startswith(GIT_MARK):
        kind, where, args = read_git_mark(path)
        if here is None and kind not in ("anywhere", "patch"):
            path = _anywhere(command)  # run from a directory that cannot be told
        elif here not in (None, "."):
            path = git_mark(kind, args, os.path.normpath(os.path.join(here, where)))
        if path not in found:
            found.append(path)
        return
    if not _knowable(path):
        if unresolved is not None and path and path not in NOT_FILES:
            if "$" in path:
                # what the expansion holds may be named elsewhere in the command
                # ("for f in .meridian/*; do : > $f; done", "cp x $(echo api)/y")
                unresolved.append(expansion_mark(unknown_pattern(path, here), command))
            else:  # a glob that matches nothing now
                unresolved.append(path if here in (None, ".") or os.path.isabs(path)
                                  else os.path.join(here, path))
        return
    if not os.path.isabs(path):
        if here is None:
            if unresolved is not None:
                unresolved.append(expansion_mark(unknown_pattern(path, None), command))
            return
        path = os.path.normpath(os.path.join(here, path)) if here != "." else path
    if path not in found:
        found.append(path)


# Commands that set a variable to something the command text does not hold
_ASSIGNS_UNKNOWN = frozenset({"read", "mapfile", "readarray", "getopts", "for", "select"})


class _ShellState:
    """What earlier commands of a command line leave for the later ones: the directory
    (``cd``), the variables set to plain values, the exported ones (``export``,
    ``declare -x``, ``set -a``), the aliases, the folders made (``mkdir``)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.here: str | None = "."  # relative to cwd; None: cannot be told
        self.variables: dict[str, str] = {"HOME": str(Path.home())}
        self.exported: dict[str, str] = {}
        self.allexport = False
        self.aliases: dict[str, str] = {}
        self.made: list[str] = []
        self.plain = True  # no function, alias or PATH of its own: `git`, `pwd` are theirs
        self.namerefs = False  # a `declare -n` ran: an assignment may set another variable
        # CDPATH set (in the hook's environment or by the line): `cd NAME` may go elsewhere
        self.cdpath = bool(os.environ.get("CDPATH"))

    def substituted(self, text: str | None) -> str | None:
        """The output of a command substitution that only says where something is (``$(git
        rev-parse --show-toplevel)``, ``$(pwd)``, ``$(mktemp -d)``: a new name in the
        temporary folder), None for any other."""
        try:
            words = shlex.split(text or "")
        except ValueError:
            return None
        here = None if self.here is None else self.cwd / self.here
        if words == ["git", "rev-parse", "--show-toplevel"] and here is not None:
            top = _work_tree_top(here)
            return str(top) if top is not None else None
        if words[:1] == ["pwd"] and set(words[1:]) <= {"-L", "-P"} and here is not None:
            return os.path.normpath(here)
        if words[:1] == ["mktemp"] and set(words[1:]) <= {"-d", "-q", "--directory", "--quiet"}:
            return os.path.join(os.environ.get("TMPDIR") or "/tmp", "$" + UNKNOWN)
        return None

    def copy(self) -> _ShellState:
        other = _ShellState(self.cwd)
        other.here, other.allexport = self.here, self.allexport
        other.variables, other.exported = dict(self.variables), dict(self.exported)
        other.aliases, other.made = dict(self.aliases), list(self.made)
        other.plain, other.namerefs, other.cdpath = self.plain, self.namerefs, self.cdpath
        return other

    def read(self, tokens: list[str]) -> list[str]:
        """The command's words as the shell runs them: aliases, known variables and the
        substitutions whose output is known expanded; assignments, exports and ``set -a``
        taken in."""
        subs = getattr(tokens, "subs", None)
        if subs and self.plain:
            tokens = [PLACEHOLDER.sub(lambda m: self.substituted(subs.get(int(m.group(1)))) or
                                      m.group(0), t) for t in tokens]
        tokens = _apply_aliases(tokens, self.aliases)
        self.variables["PWD"] = str(self.cwd / self.here) if self.here is not None else "$PWD"
        tokens = [_expand(t, self.variables) for t in tokens]
        first = tokens[0] if tokens else ""
        if any(t.startswith("CDPATH=") or t == "CDPATH" for t in tokens) or (
                first == "shopt" and "cdable_vars" in tokens):
            self.cdpath = True  # (cdable_vars: `cd NAME` goes to $NAME)
        declaring = first in ("export", "declare", "typeset", "local", "readonly")
        if declaring and any(t.startswith("-") and not t.startswith("--") and "n" in t
                             for t in tokens[1:]):
            # `declare -n r=d`: $r is d's value, and `r=api` sets d; no value is known now
            self.namerefs = True
            self.variables = {"HOME": "$HOME"}
        if all(ASSIGNMENT.match(t) for t in tokens) or declaring:
            exporting = first == "export" or any(
                t.startswith("-") and not t.startswith("--") and "x" in t for t in tokens[1:])
            for token in tokens[1:] if declaring else tokens:
                if token.startswith(("-", "+")):
                    continue
                key, _, value = token.partition("=")
                if ASSIGNMENT.match(token):
                    if (_knowable(value) or value == "") and not self.namerefs:
                        self.variables[key] = value
                    else:
                        self.variables.pop(key, None)
                    if exporting or self.allexport or key in self.exported:
                        self.exported[key] = value
                elif exporting and re.fullmatch(r"[A-Za-z_]\w*", token):
                    self.exported[token] = self.variables.get(token, "$" + token)
        elif first == "set":
            for index, token in enumerate(tokens[1:], 1):
                if token.startswith(("-", "+")) and not token.startswith("--") \
                        and "a" in token[1:]:
                    self.allexport = token[0] == "-"
                if token in ("-o", "+o") and tokens[index + 1:index + 2] == ["allexport"]:
                    self.allexport = token == "-o"
        elif first == "unset":
            for token in tokens[1:]:
                self.variables.pop(token, None)
                self.exported.pop(token, None)
        elif first == "alias":
            for token in tokens[1:]:
                key, equals, value = token.partition("=")
                if equals and re.fullmatch(r"[^\s/=$`]+", key):
                    self.aliases[key] = value
        elif first in _ASSIGNS_UNKNOWN or (first == "printf" and "-v" in tokens):
            # `read x`, `for x in ...`, `printf -v x`: x no longer holds a told value
            for token in tokens[1:]:
                self.variables.pop(token, None)
        return tokens

    def after(self, name: str, words: list[str], targets: list[str]) -> None:
        if name in CHANGE_DIR:
            self.here = _changed_dir(self.here, words[1:], self.cwd, self.made,
                                     cdpath=self.cdpath)
        elif name == "popd":
            self.here = None
        elif name == "mkdir":
            self.made += [p if self.here in (None, ".") or os.path.isabs(p)
                          else os.path.join(self.here, p) for p in _operands(words[1:], frozenset(
                              {"-m", "--mode"}))]
        self.made += [t for t in targets if _knowable(t)]


def _apply_aliases(tokens: list[str], aliases: dict[str, str]) -> list[str]:
    """``tokens`` with an alias the command line defined replaced by what it stands for
    (``alias c=cp`` then ``c x api/y`` runs ``cp x api/y``)."""
    if not aliases:
        return tokens
    index = 0
    while index < len(tokens) and (ASSIGNMENT.match(tokens[index]) or tokens[index] in KEYWORDS):
        index += 1
    for _ in range(8):
        if index >= len(tokens) or tokens[index] not in aliases:
            break
        try:
            value = shlex.split(aliases.pop(tokens[index]))
        except ValueError:
            value = ["$alias"]  # cannot be read: an unknown command
        tokens = [*tokens[:index], *value, *tokens[index + 1:]]
    return tokens


BRACE = lazy_pattern(r"\{([^{}]*,[^{}]*)\}")


def _braces(word: str, limit: int = 64) -> list[str]:
    """``word`` with brace expansion done (``{api,docs}/x`` is ``api/x docs/x``)."""
    words = [word]
    for _ in range(8):
        expanded = []
        for one in words:
            match = BRACE.search(one)
            if match is None:
                expanded.append(one)
                continue
            expanded += [one[:match.start()] + part + one[match.end():]
                         for part in match.group(1).split(",")]
        if expanded == words or len(expanded) > limit:
            break
        words = expanded
    return words


def _expand_words(path: str, cwd: Path, here: str | None, made: list[str]) -> list[str]:
    """A target as the shell expands it before the command runs: braces, then globs
    against the files there now and the folders the command made before (a glob that
    matches nothing stays as written, as in the shell)."""
    if path.startswith("\0") or "$" in path:
        return [path]
    out: list[str] = []
    for word in _braces(path):
        if not any(c in word for c in "*?[") or here is None:
            out.append(word)
            continue
        import glob

        matches = sorted(glob.glob(word, root_dir=cwd / here))[:256]
        where = word if os.path.isabs(word) else os.path.join(here, word)
        for folder in made:
            found = _glob_made(where, folder)
            if found is not None:
                matches.append(found if os.path.isabs(word) else os.path.relpath(found, here))
        out += list(dict.fromkeys(matches)) or [word]
    return out


def _glob_made(pattern: str, made: str) -> str | None:
    """The path ``pattern`` stands for through ``made``, a folder or file the command
    made before (``ap?/x.py`` through ``api`` is ``api/x.py``), or None."""
    import fnmatch

    parts, names = os.path.normpath(pattern).split("/"), os.path.normpath(made).split("/")
    names = names[:len(parts)]
    if not all(fnmatch.fnmatchcase(n, p) for p, n in zip(parts, names)):
        return None
    return "/".join(names + parts[len(names):])


# Options of `git commit` that take a value, so the word after them is not an option
# (`git commit -m "-n"` does not skip the hooks).
_COMMIT_VALUE_OPTIONS = frozenset({"-m", "-F", "-C", "-c", "-t", "--author", "--date",
                                   "--message", "--file", "--template", "--fixup", "--squash",
                                   "--reuse-message", "--reedit-message", "--cleanup"})
# Subcommands whose hooks `--no-verify` skips. Only `commit` also reads `-n` that way:
# `git push -n` is a dry run and `git merge -n` hides the diffstat.
_VERIFYING = frozenset({"commit", "push", "merge", "am", "cherry-pick", "rebase", "revert",
                        "pull", "switch", "checkout", "worktree"})
_GIT_VALUE_OPTIONS = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace",
                                "--exec-path", "--super-prefix", "--config-env"})
# Config that makes git run other hooks, or none: any of these set anywhere (`git -c`,
# `git config`, GIT_CONFIG_* variables) changes the harness.
_DANGEROUS_KEY = lazy_pattern(r"^(?:core\.hookspath|include\.path|includeif\..*\.path|"
                              r"alias\..*|hook\..*|core\.fsmonitor|core\.sshcommand|"
                              r"core\.editor|sequence\.editor)$", re.IGNORECASE)
_GIT_ENV = lazy_pattern(r"^(?:GIT_CONFIG\w*|GIT_DIR|GIT_COMMON_DIR|GIT_INDEX_FILE|GIT_EXEC_PATH|"
                        r"HOME|XDG_CONFIG_HOME|GIT_TEMPLATE_DIR"
                        # the hooks' Python: PYTHONPATH/PYTHONHOME/PYTHONUSERBASE... set for
                        # git reach a hook run by a console script (the stubs run -I); the
                        # pre-commit framework's environments, the programs a hook finds,
                        # the dynamic loader's preloads
                        r"|PYTHON\w*|PRE_COMMIT_HOME|PATH|VIRTUAL_ENV|LD_\w+|DYLD_\w+)="
                        # the pre-commit framework skips the hook ids listed in $SKIP: one
                        # naming Meridian's (or a value the hook cannot read) skips its hooks
                        r"|^SKIP=(?:(?i:.*meridian)|.*[$`])", re.DOTALL)
# Variables that matter only to a git command run later in the same shell (`export
# HOME=/x; git commit` reads another ~/.gitconfig, `export PYTHONPATH=/x; git commit` hands
# a hook's Python other code): set alone they are no bypass
_HOOK_RUNTIME = ("PYTHON", "PRE_COMMIT_HOME=", "PATH=", "VIRTUAL_ENV=", "LD_", "DYLD_")
_LATER_GIT = ("HOME=", "XDG_", *_HOOK_RUNTIME)
# An alias is only a bypass when what it runs is one
_ALIAS_BYPASS = lazy_pattern(r"no-v|hookspath|-n\b|^!", re.IGNORECASE)
_FORCE = frozenset({"-f", "--force", "--force-with-lease", "--mirror", "-d", "--delete",
                    "--prune", "--force-if-includes"})


def _is_no_verify(arg: str) -> bool:
    """``--no-verify`` or a prefix git accepts for it (``--no-verif``, ``--no-ver``):
    git takes any unambiguous prefix of a long option."""
    name = arg.split("=", 1)[0]
    return len(name) >= len("--no-v") and "--no-verify".startswith(name)


def _dangerous_setting(key: str, value: str) -> bool:
    key = key.strip().lower()
    if key.startswith("alias."):
        return bool(_ALIAS_BYPASS.search(value.strip()))
    return bool(_DANGEROUS_KEY.match(key))


def _git_words(words: list[str]) -> tuple[list[str], str, list[str], bool]:
    """(global options, subcommand, its arguments, whether a global option is a bypass)."""
    index = 1
    bypass = False
    while index < len(words) and words[index].startswith("-"):
        option = words[index]
        value = words[index + 1] if index + 1 < len(words) else ""
        if option == "-c" and "=" in value:
            bypass |= _dangerous_setting(*value.split("=", 1))
        elif option == "-c":
            bypass |= _dangerous_setting(value, "")
        if option.startswith("--config-env"):
            setting = option.split("=", 1)[1] if "=" in option else value
            bypass |= _dangerous_setting(setting.split("=", 1)[0], "!")
        if option in ("--git-dir", "--work-tree", "--exec-path") or option.startswith(
                ("--git-dir=", "--exec-path=")):
            bypass = bypass or option.startswith(("--exec-path", "--git-dir"))
        index += 2 if option in _GIT_VALUE_OPTIONS else 1
    sub = words[index] if index < len(words) else ""
    return words[1:index], sub, words[index + 1:], bypass


def _commit_skips_hooks(args: list[str]) -> bool:
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--":
            return False
        if arg in _COMMIT_VALUE_OPTIONS:
            skip = True
            continue
        if arg.startswith("-") and not arg.startswith("--"):
            # in a cluster like -anm, letters after a value-taking one are its value
            for letter in arg[1:]:
                if letter == "n":
                    return True
                if letter in "mFCct":
                    break
    return False


def _config_bypass(args: list[str]) -> bool:
    """``git config [--global|--file F|...] KEY VALUE`` (or ``--add``, ``set``) writing a
    setting that changes which hooks run."""
    operands = _operands(args, frozenset({"-f", "--file", "--blob", "--type", "-t",
                                          "--default", "--comment", "--value"}))
    if operands[:1] in (["set"], ["unset"]):
        operands = operands[1:]
    if operands[:1] in (["get"], ["list"], ["get-regexp"]) or any(
            a in ("--get", "--get-all", "--get-regexp", "-l", "--list", "--unset",
                  "--unset-all", "--show-origin", "--get-urlmatch") for a in args):
        return False
    if len(operands) < 2:
        return False
    return _dangerous_setting(operands[0], operands[1])


def _glob_names(refspec: str, branch: str) -> bool:
    """Whether a refspec with a wildcard destination can write ``branch``'s ref."""
    import fnmatch

    if "*" not in refspec or refspec.startswith("-"):
        return False
    destination = refspec.rsplit(":", 1)[1] if ":" in refspec else refspec.lstrip("+^")
    return any(fnmatch.fnmatchcase(name, destination)
               for name in (f"refs/heads/{branch}", f"heads/{branch}", branch))


def _state_branch_change(sub: str, args: list[str], branch: str) -> bool:
    """Whether ``git SUB ARGS`` moves, deletes or force-pushes ``branch``."""
    names = {branch, f"refs/heads/{branch}", f"heads/{branch}"}

    def names_branch(arg: str) -> bool:
        return any(arg == n or arg.endswith(":" + n) or arg.lstrip("+:") in names
                   or arg.startswith(n + ":") for n in names) or arg.lstrip("+:") in names

    mentioned = any(names_branch(a) for a in args)
    forced_any = any(a in ("-f", "--force") or a.startswith("--force") for a in args)
    if sub in ("fetch", "push", "pull") and any(
            _glob_names(a, branch) and (a.startswith("+") or forced_any) for a in args):
        # `git fetch X '+refs/heads/meridian/*:refs/heads/meridian/*'`: a wildcard refspec
        # whose destination can be the state branch moves it as the named form does
        return True
    if sub == "reflog" and args[:1] in (["expire"], ["delete"]) and (
            mentioned or "--all" in args or any("meridian" in a for a in args)):
        return True  # the reflog remembers the verified tip
    if sub == "update-ref":
        return mentioned or "--stdin" in args
    if sub == "branch":
        changes = any(a in ("-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy",
                            "-f", "--force", "-u", "--set-upstream-to", "--unset-upstream")
                      or (a.startswith("-") and not a.startswith("--") and set(a[1:]) & set("dDmMfu"))
                      for a in args)
        return mentioned and changes
    if (sub == "fetch" or (sub == "push" and "." in args)) and any(
            ":" in a and a.rsplit(":", 1)[1].lstrip("+") in names for a in args):
        # `git fetch . X:meridian/state`, `git push . X:meridian/state`: the local branch
        # itself is the destination
        return True
    if sub == "push":
        forced = any(a in _FORCE or a.startswith(("--force-with-lease", "--force-if"))
                     or (a.startswith("-") and not a.startswith("--") and "f" in a[1:])
                     for a in args)
        deleting = any(a.startswith(":") and a.lstrip(":") in names for a in args)
        plus = any(a.startswith("+") and names_branch(a) for a in args)
        return ("--mirror" in args) or deleting or plus or (forced and (mentioned or any(
            a in ("--all", "--mirror", "--prune") for a in args)))
    if sub in ("reset", "rebase", "filter-branch", "filter-repo", "replace", "reflog",
               "symbolic-ref", "tag"):
        return mentioned and sub != "tag"
    if sub in ("checkout", "switch"):
        return mentioned and any(a in ("-B", "-C", "--force-create") for a in args)
    if sub == "worktree":  # a work tree with the state branch checked out commits onto it
        return mentioned and args[:1] == ["add"]
    return False


# git commands that only read a stash commit (`git stash show -p stash@{0}`)
_STASH_READERS = frozenset({"stash", "show", "log", "diff", "reflog", "rev-parse", "cat-file",
                            "ls-tree", "shortlog", "range-diff", "whatchanged", "grep",
                            "name-rev", "describe", "rev-list", "diff-tree", "blame"})


_GIT_MESSAGE_OPTIONS = frozenset({"-m", "--message", "-F", "--file", "-C", "-c", "-o",
                                  "--push-option", "--exec", "-x", "--onto", "-s",
                                  "--strategy", "-X", "--strategy-option"})
_STATE_MOVERS = frozenset({"branch", "update-ref", "reflog", "symbolic-ref", "send-pack",
                           "tag", "replace"})


def _unknown_option(args: list[str], takes_value: frozenset[str]) -> bool:
    """Whether a word of ``args`` that is no option's value starts with an expansion the
    reader could not tell (``${NV:---no-verify}``, ``"$@"``, ``$(echo -n)``): it may be
    any option."""
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--":
            return False
        if arg in takes_value or (arg.startswith("-") and not arg.startswith("--")
                                  and len(arg) > 2 and "-" + arg[-1] in takes_value):
            skip = True  # (`-qm "$MSG"`: the message)
            continue
        if arg.startswith("$"):
            return True
    return False


def _commits_past_hooks(sub: str, args: list[str]) -> bool:
    """Whether ``git SUB ARGS`` makes a commit git's pre-commit hook never sees, or puts one
    on a branch: the plumbing that writes commit objects (``commit-tree``, ``fast-import``,
    ``hash-object -t commit``), and a stash's commit (``git stash`` runs no hook) taken
    onto a branch (``git cherry-pick stash@{0}``, ``git merge refs/stash``, ``git branch x
    stash``). Ordinary merges, rebases and cherry-picks of commits that exist pass."""
    if sub in ("commit-tree", "fast-import"):
        return True
    if sub == "hash-object":
        for index, arg in enumerate(args):
            value = args[index + 1] if arg in ("-t", "--type") and index + 1 < len(args) \
                else arg[len("--type="):] if arg.startswith("--type=") \
                else arg[2:] if arg.startswith("-t") and len(arg) > 2 else None
            if value == "commit":
                return True
        return False
    if sub in _STASH_READERS:
        return False
    return any("stash@{" in arg or arg in ("stash", "refs/stash") or arg.endswith(
        (":stash", ":refs/stash", "=stash", "=refs/stash")) for arg in args)


def _meridian_guarded(args: list[str]) -> str | None:
    """The kind of a ``meridian`` command line only a human may run, or None."""
    while len(args) >= 2 and args[0] == "-C":
        args = args[2:]
    words = [a for a in args if not a.startswith("-")]
    if words[:2] == ["hooks", "uninstall"]:
        return "uninstall"
    if words[:2] == ["gate", "approve"]:
        return "approve"
    if words[:2] == ["baseline", "pin"]:
        return "pin"
    # argparse takes any unambiguous prefix of an option (`--ack`): every one counts
    if words[:1] == ["verify"] and any(
            len(a.split("=", 1)[0]) >= 3 and "--acknowledge".startswith(a.split("=", 1)[0])
            for a in args):
        return "acknowledge"
    return None


SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
# Runners whose ``run`` subcommand runs the rest as a command (``uv run meridian ...``).
RUNNERS = frozenset({"uv", "pipx", "poetry", "pdm", "hatch", "rye", "pixi", "conda"})
PACKAGE_RUNNERS = frozenset({"npx", "pnpx", "bunx", "uvx"})
# Options of those runners that take a value (`npx -p PKG`, `uvx --from PKG`, `uv run --with`)
RUNNER_VALUES = frozenset({"-p", "--package", "--from", "--with", "--python", "-n", "--name",
                           "--spec", "-c", "--call", "--env", "-e", "--project", "--extra",
                           "--group", "--index", "--env-file"})
XARGS_VALUED = frozenset({"-I", "-i", "-n", "-L", "-l", "-P", "-d", "-E", "-e", "-s", "-a",
                          "--arg-file", "--delimiter", "--max-args", "--max-procs"})


# tar's options whose value is a command line it runs through the shell
TAR_COMMANDS = ("--to-command", "--checkpoint-action", "--use-compress-program", "-I",
                "--info-script", "--new-volume-script", "-F")


def _tar_command(args: list[str]) -> str | None:
    """``tar -xf x.tar --to-command=CMD`` (and its other command options): the shell
    command line tar runs."""
    for index, arg in enumerate(args):
        for option in TAR_COMMANDS:
            if arg.startswith(option + "=") or (arg == option and index + 1 < len(args)):
                value = arg.split("=", 1)[1] if arg != option else args[index + 1]
                return value.removeprefix("exec=")
    return None


def _nested_command(words: list[str]) -> str | None:
    """The command line that ``words`` runs in turn, when it is a wrapper of another
    command line: ``sh -c CMD`` (any shell, ``-lc`` too), ``script -qec CMD``, ``eval
    ...``, ``xargs CMD``, ``find ... -exec CMD ;``, ``uv run CMD`` (and other runners),
    ``uvx``/``pipx run CMD``. None otherwise."""
    name = os.path.basename(words[0]) if words else ""
    args = words[1:]
    if name in SHELLS:
        for index, arg in enumerate(args):
            if not arg.startswith("-") or arg.startswith("--"):
                if arg.startswith("--"):
                    continue
                return None
            if "c" in arg[1:]:
                return args[index + 1] if index + 1 < len(args) else None
        return None
    if name == "script":
        for index, arg in enumerate(args):
            if arg.startswith("--command="):
                return arg.split("=", 1)[1]
            if arg == "--command" or (arg.startswith("-") and not arg.startswith("--")
                                      and arg.endswith("c")):
                return args[index + 1] if index + 1 < len(args) else None
        return None
    if name == "eval":
        return " ".join(args) or None
    if name == "trap":
        return _trap_code(args)
    if _runner_code(name, args) is not None:
        return _runner_code(name, args)
    if name == "xargs":
        index = 0
        while index < len(args) and args[index].startswith("-"):
            index += 2 if args[index] in XARGS_VALUED else 1
        return shlex.join(args[index:]) if args[index:] else None
    if name in ("tar", "bsdtar", "gtar"):
        return _tar_command(args)
    if name == "find":
        for index, arg in enumerate(args):
            if arg in ("-exec", "-execdir", "-ok", "-okdir"):
                rest = [a for a in args[index + 1:]]
                end = next((i for i, a in enumerate(rest) if a in (";", "\\;", "+")), len(rest))
                return shlex.join(rest[:end]) if rest[:end] else None
        return None
    if name == "uvx" or (name in RUNNERS and args[:1] in (["run"], ["exec"])):
        rest = args if name == "uvx" else args[1:]
        index = 0
        while index < len(rest) and rest[index].startswith("-"):
            index += 1
        return shlex.join(rest[index:]) if rest[index:] else None
    return None


def _python_runs_meridian(words: list[str]) -> list[str] | None:
    """The meridian arguments of ``python [options] -m meridian ARGS`` (``-P``, ``-I``,
    ``-Im meridian`` too), or ``["gate", "approve"]`` for ``python -c CODE`` whose code
    calls Meridian's approve; None when it runs something else."""
    index = 1
    while index < len(words):
        arg = words[index]
        if not arg.startswith("-") or arg == "-":
            return None
        if arg == "-c" or (not arg.startswith("--") and arg.endswith("c") and len(arg) > 2):
            code = words[index + 1] if index + 1 < len(words) else ""
            if "meridian" not in code:
                return None
            if "approve" in code:
                return ["gate", "approve"]
            if "pin" in code and "baseline" in code:
                return ["baseline", "pin"]
            return ["verify", "--acknowledge"] if "acknowledge" in code else None
        if arg == "-m" or (not arg.startswith("--") and arg.endswith("m") and len(arg) > 2):
            module = words[index + 1] if index + 1 < len(words) else ""
            return words[index + 2:] if module == "meridian" else None
        index += 2 if arg in ("-W", "-X", "--check-hash-based-pycs") else 1
    return None


def hook_bypasses(command: str, state_branch: str = "meridian/state",
                  _depth: int = 0) -> list[tuple[str, str]]:
    """The commands in ``command`` that would switch Meridian's guardrails off, each as
    (text, kind): ``skip-hooks`` (``git commit --no-verify``/``-n`` and prefixes git
    accepts, ``git -c core.hooksPath=...``, ``GIT_CONFIG_*`` or ``HOME`` set for a git
    command, ``git config`` of hooksPath, include.path, hook-skipping aliases),
    ``state-branch`` (moving, deleting or force-pushing it), ``uninstall`` (``meridian
    hooks uninstall``), ``approve`` (``meridian gate approve``), ``pin`` (``meridian
    baseline pin``), ``acknowledge`` (``meridian verify --acknowledge``)."""
    found: list[tuple[str, str]] = []
    try:
        commands = _simple_commands(command)
    except ValueError:
        commands = []
    exported_git_env = False
    # git's variables set as a shell variable (`GIT_DIR=x;`): in git's environment once
    # exported (`export GIT_DIR`, `declare -x`, or set after `set -a`)
    assigned: dict[str, str] = {}
    allexport = False
    home_moved = ""  # `export HOME=...`: a later git reads another ~/.gitconfig
    aliases: dict[str, str] = {}
    variables = {"HOME": str(Path.home())}
    for tokens in commands:
        if tokens is SUBSHELL_OPEN or tokens is SUBSHELL_CLOSE:
            continue
        raw = _apply_aliases(_split_redirections(tokens)[0], aliases)
        # assignments before the command (FOO=1 git ...), after env, or exported
        assignments = [w for w in raw if ASSIGNMENT.match(w)]
        first = raw[0] if raw else ""
        declaring = first in ("export", "declare", "typeset", "local", "readonly")
        exporting = first == "export" or (declaring and any(
            w.startswith("-") and not w.startswith("--") and "x" in w for w in raw[1:]))
        if first == "alias":
            aliases.update((k, v) for k, eq, v in (w.partition("=") for w in raw[1:]) if eq)
        if first == "set":
            allexport = allexport or "allexport" in raw or any(
                w.startswith("-") and not w.startswith("--") and "a" in w[1:] for w in raw[1:])
        if declaring and any(_GIT_ENV.match(w) and not w.startswith(_LATER_GIT)
                             for w in assignments):
            exported_git_env = True
            found.append((" ".join(raw), "skip-hooks"))
            continue
        if exporting:
            named = [w for w in raw[1:] if w in assigned]
            home_moved = home_moved or next((assigned[w] for w in named
                                             if assigned[w].startswith(_LATER_GIT)), "")
            named = [w for w in named if not assigned[w].startswith(_LATER_GIT)]
            if named:
                exported_git_env = True
                found.append((f"{assigned[named[0]]}; {' '.join(raw)}", "skip-hooks"))
                continue
            home_moved = home_moved or next((w for w in assignments if _GIT_ENV.match(w)
                                             and w.startswith(_LATER_GIT)), "")
        raw = [_expand(w, variables) for w in raw]
        for w in assignments:
            key, _, value = w.partition("=")
            if _knowable(value):
                variables[key] = value
            else:
                variables.pop(key, None)
        words = _strip_prefix(raw)
        if words and "$" in words[0] and any(
                _is_no_verify(a) or "hookspath" in a.lower() for a in words[1:]):
            # `$G commit --no-verify`, `$(echo git) -c core.hooksPath=...`: a command the
            # hook cannot read, with git's hook-skipping words
            found.append((" ".join(words), "skip-hooks"))
            continue
        if not words:
            if any(w.startswith("GIT_CONFIG") for w in assignments) or (allexport and any(
                    _GIT_ENV.match(w) and not w.startswith(_LATER_GIT)
                    for w in assignments)):
                exported_git_env = True  # GIT_CONFIG_COUNT=1; git commit (same shell)
                found.append((" ".join(raw), "skip-hooks"))
            for w in assignments:
                if _GIT_ENV.match(w):
                    assigned[w.split("=", 1)[0]] = w
            if allexport:
                home_moved = home_moved or next((w for w in assignments if _GIT_ENV.match(w)
                                                 and w.startswith(_LATER_GIT)), "")
            continue
        name = os.path.basename(words[0])
        nested = _nested_command(words)
        if nested is None:  # code fed to a shell: `bash <<<CMD`, `echo CMD | sh`
            nested = _inline_script(name, words[1:], _stdin_file(list(tokens)),
                                    getattr(tokens, "feed", None))
        if nested is not None:
            # A wrapper runs another command line: judge that one (a few levels deep).
            if _depth < 4:
                found += [(text, kind) for text, kind in
                          hook_bypasses(nested, state_branch, _depth + 1)]
            if name != "find":
                continue
        if name == "meridian" or (INTERPRETER.match(name) and name.startswith(("python", "pypy"))
                                  and _python_runs_meridian(words) is not None):
            kind = _meridian_guarded(words[1:] if name == "meridian"
                                     else _python_runs_meridian(words) or [])
            if kind:
                found.append((" ".join(words), kind))
            continue
        if name != "git":
            continue
        _, sub, args, bypass = _git_words(words)
        moved = [w for w in assignments if _GIT_ENV.match(w)] + ([home_moved] if home_moved
                                                                 else [])
        # a PYTHON* variable only reaches Meridian's hooks through a command that runs one
        # (a commit, a push, what may commit: a merge, a rebase, an alias)
        if any(not w.startswith(_HOOK_RUNTIME) for w in moved) or exported_git_env or (
                moved and (sub in _VERIFYING or sub not in _GIT_COMMANDS)):
            bypass = True
        if sub in _VERIFYING and any(_is_no_verify(a) for a in args):
            bypass = True
        if sub == "commit" and _commit_skips_hooks(args):
            bypass = True
        if sub == "config" and _config_bypass(args):
            bypass = True
        if _commits_past_hooks(sub, args) or sub in ("send-pack", "http-push"):
            bypass = True  # (send-pack: a push that runs no pre-push hook)
        if sub.startswith("$") or (sub in _VERIFYING and _unknown_option(
                args, _COMMIT_VALUE_OPTIONS if sub == "commit" else _GIT_MESSAGE_OPTIONS)):
            # `git commit ${NV:---no-verify}`, `git push "$@"`: a word that cannot be told
            # may be a hook-skipping option
            bypass = True
        if bypass:
            found.append((" ".join(words), "skip-hooks"))
        elif sub == "replace" and not (not args or args[0] in ("-l", "--list")
                                      or args[0].startswith("--format")):
            # a replace ref makes git read another commit in place of any commit, the
            # state branch's included
            found.append((" ".join(words), "state-branch"))
        elif _state_branch_change(sub, args, state_branch) or (
                sub in _STATE_MOVERS and _unknown_option(args, _GIT_MESSAGE_OPTIONS)):
            # (`git branch ${X:--D} meridian/state`: an option that cannot be told)
            found.append((" ".join(words), "state-branch"))
    return found
