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

Commands are split on ; && || | & and newlines; heredoc bodies are skipped; leading
``VAR=value`` and ``sudo``/``env``/``command``/``nohup``/``time`` are looked through.
``cd DIR`` (and ``pushd``) moves where the later relative paths point, until the
subshell it ran in, ``( ... )``, closes: ``cd api && echo x > app.py`` writes
``api/app.py``. A target holding ``$``, a backquote or a glob cannot be known before
the shell expands it and is left out, as are relative targets after a ``cd`` whose
directory cannot be told, and anything that fails to tokenize: a command Meridian
cannot read is allowed, not guessed at. A caller that must not allow what it cannot read
(the harness protection) passes ``unresolved``: it receives those targets as written,
and the whole command text when an interpreter runs inline code (``python -c``,
``python - <<EOF``, ``node -e``), whose writes cannot be told at all.
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
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
CHANGE_DIR = frozenset({"cd", "pushd"})
NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
INTERPRETER = re.compile(r"^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl|ruby|php)$")
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
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
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


def _simple_commands(command: str) -> list[list[str]]:
    """The simple commands in order; a subshell's bounds appear as ``["("]`` / ``[")"]``."""
    commands: list[list[str]] = []
    for line in _logical_lines(command):
        current: list[str] = []
        for token in _tokens(line):
            if token in SEPARATORS:
                if current:
                    commands.append(current)
                current = []
                if token == "(":
                    commands.append(SUBSHELL_OPEN)
                elif token == ")":
                    commands.append(SUBSHELL_CLOSE)
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
    if name in ("rm", "unlink", "rmdir", "shred"):
        return _operands(args)
    if name == "mv":
        return _move_sources(args)
    if name == "git" and args[:1] == ["mv"]:
        return _move_sources(args[1:])
    if name == "git" and args[:1] == ["rm"]:
        return _operands(args[1:])
    if name == "git" and args[:1] == ["config"] and any(
            a.lower().startswith("core.hookspath") for a in args[1:]):
        return [".git/config"]
    if name == "git" and args[:1] in (["checkout"], ["restore"]):
        return _restored(args[0], args[1:])
    if name in ("chmod", "chown", "chgrp"):
        return _mode_targets(args)
    return []


def _restored(verb: str, args: list[str]) -> list[str]:
    """The paths ``git checkout [TREE] -- PATHS`` / ``git restore PATHS`` overwrite
    (``git checkout BRANCH`` names no paths: nothing is told)."""
    if "--" in args:
        return args[args.index("--") + 1:]
    if verb == "checkout":
        return []
    return _operands(args, frozenset({"-s", "--source"}))


# chmod's symbolic modes can look like options ("chmod -x FILE")
SYMBOLIC_MODE = re.compile(r"^[-+=][rwxXstugo]+$")


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


def _command_targets(words: list[str], cwd: Path, *, removals: bool = False,
                     unresolved: list[str] | None = None) -> list[str]:
    words = _strip_prefix(words)
    if not words:
        return []
    name, args = os.path.basename(words[0]), words[1:]
    if name in SHELLS:
        script = _shell_script(args)
        return [] if script is None else written_files(script, cwd, removals=removals,
                                                       unresolved=unresolved)
    if removals:
        return _written(name, args, cwd) + _removed(name, args)
    return _written(name, args, cwd)


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


def _written(name: str, args: list[str], cwd: Path) -> list[str]:
    """The files command ``name`` writes (shells are read by the caller)."""
    if name == "meridian":
        return _meridian_writes(args)
    if name.startswith("python") and args[:2] == ["-m", "meridian"]:
        return _meridian_writes(args[2:])
    if name == "tee":
        return _operands(args)
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
        return _sed_targets(args)
    if name == "perl":
        return _perl_targets(args)
    if name == "truncate":
        return _operands(args, frozenset({"-s", "--size", "-r", "--reference"}))
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    return []


def _knowable(path: str) -> bool:
    return bool(path) and path not in NOT_FILES and not any(c in path for c in "$`*?[{~")


def _changed_dir(here: str | None, args: list[str]) -> str | None:
    """Where ``cd ARGS`` run in ``here`` leads (relative to the start), None if unknown."""
    operands = _operands(args)
    if here is None or len(operands) != 1 or not _knowable(operands[0]):
        return None  # "cd" (home), "cd -", "cd $DIR": somewhere that cannot be told
    target = operands[0]
    return target if os.path.isabs(target) else os.path.normpath(os.path.join(here, target))


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
    here: str | None = "."  # where the next command runs, relative to cwd; None: unknown
    outer: list[str | None] = []  # where each enclosing subshell started
    for tokens in commands:
        if tokens is SUBSHELL_OPEN:
            outer.append(here)
            continue
        if tokens is SUBSHELL_CLOSE:
            here = outer.pop() if outer else here
            continue
        words, redirected = _split_redirections(tokens)
        command_words = _strip_prefix(words)
        name = command_words[0] if command_words else ""
        targets = redirected
        if name not in CHANGE_DIR and name != "popd":
            targets = targets + _command_targets(words, cwd / (here or "."), removals=removals,
                                                 unresolved=unresolved)
        if unresolved is not None and _inline_code(os.path.basename(name), command_words[1:]):
            unresolved.append(command)
        for path in targets:
            if not _knowable(path):
                if unresolved is not None and path and path not in NOT_FILES:
                    # "$(pwd)/x" reaches here as "$" (the substitution tokenizes apart)
                    unresolved.append(command if path == "$" else path)
                continue
            if not os.path.isabs(path):
                if here is None:
                    if unresolved is not None:
                        unresolved.append(path)
                    continue
                path = os.path.normpath(os.path.join(here, path)) if here != "." else path
            if path not in found:
                found.append(path)
        # After the command's own redirections: "cd x > log" writes log where it started.
        if name in CHANGE_DIR:
            here = _changed_dir(here, command_words[1:])
        elif name == "popd":
            here = None
    return found


# Options of `git commit` that take a value, so the word after them is not an option
# (`git commit -m "-n"` does not skip the hooks).
_COMMIT_VALUE_OPTIONS = frozenset({"-m", "-F", "-C", "-c", "-t", "--author", "--date",
                                   "--message", "--file", "--template", "--fixup", "--squash",
                                   "--reuse-message", "--reedit-message", "--cleanup"})
# Subcommands whose hooks `--no-verify` skips. Only `commit` also reads `-n` that way:
# `git push -n` is a dry run and `git merge -n` hides the diffstat.
_VERIFYING = frozenset({"commit", "push", "merge", "am", "cherry-pick", "rebase", "revert"})


def hook_bypasses(command: str) -> list[str]:
    """The git invocations in ``command`` that would skip Meridian's git hooks.

    ``git commit --no-verify`` (or ``-n``), ``git push --no-verify``, and
    ``git -c core.hooksPath=...`` are returned as written; everything else is not.
    """
    found: list[str] = []
    for words in _simple_commands(command):
        words = _strip_prefix(_split_redirections(words)[0])
        if not words or os.path.basename(words[0]) != "git":
            continue
        index = 1
        bypass = False
        while index < len(words) and words[index].startswith("-"):
            option = words[index]
            value = words[index + 1] if index + 1 < len(words) else ""
            if option == "-c" and value.lower().startswith("core.hookspath"):
                bypass = True
            if option.lower().startswith("--config-env") and "core.hookspath" in option.lower():
                bypass = True
            index += 2 if option in ("-c", "-C", "--git-dir", "--work-tree", "--namespace") else 1
        sub = words[index] if index < len(words) else ""
        args = words[index + 1:]
        if sub in _VERIFYING and "--no-verify" in args:
            bypass = True
        if sub == "commit":
            skip = False
            for arg in args:
                if skip:
                    skip = False
                    continue
                if arg in _COMMIT_VALUE_OPTIONS:
                    skip = True
                    continue
                if arg.startswith("-") and not arg.startswith("--"):
                    letters = arg[1:]
                    # in a cluster like -anm, letters after a value-taking one are its value
                    for letter in letters:
                        if letter == "n":
                            bypass = True
                        if letter in "mFCct":
                            break
        if bypass:
            found.append(" ".join(words))
    return found
