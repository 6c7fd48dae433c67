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
and the whole command text when an interpreter runs inline code (``python -c``,
``python - <<EOF``, ``node -e``), whose writes cannot be told at all.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "|&", ";;", "`"})
# "<>" opens the file read-write (`exec 3<>FILE` then writes through fd 3)
WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
READ_REDIRECTS = frozenset({"<", "<<", "<<-", "<<<"})
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
             "<>", ";", "&", "|", "(", ")", "<", ">", "`")
PUNCTUATION = frozenset("();<>|&`")


def _operators(run: str) -> list[str]:
    out: list[str] = []
    while run:
        operator = next(op for op in OPERATORS if run.startswith(op))
        out.append(operator)
        run = run[len(operator):]
    return out


def _tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars="();<>|&`")
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


ANSI_C = re.compile(r"\$'((?:[^'\\]|\\.)*)'")
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


def _simple_commands(command: str) -> list[list[str]]:
    """The simple commands in order; a subshell's bounds appear as ``["("]`` / ``[")"]``."""
    commands: list[list[str]] = []
    for line in _logical_lines(_decode_ansi_c(command)):
        current: list[str] = []
        # commands suspended by a process substitution (`cp <(echo x) api/x.py`), with the
        # plain parentheses opened inside it
        suspended: list[list[str]] = []
        depth: list[int] = []
        for token in _tokens(line):
            if token == "(" and current and current[-1] in ("<", ">"):
                current[-1] = "/dev/fd/63"  # the word the shell puts there
                suspended.append(current)
                depth.append(0)
                commands.append(SUBSHELL_OPEN)
                current = []
                continue
            if token == ")" and depth and depth[-1] == 0:
                if current:
                    commands.append(current)
                commands.append(SUBSHELL_CLOSE)
                current = suspended.pop()
                depth.pop()
                continue
            if depth and token in ("(", ")"):
                depth[-1] += 1 if token == "(" else -1
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
        while suspended:  # an unclosed process substitution: keep every word
            if current:
                commands.append(current)
            current = suspended.pop()
        if current:
            commands.append(current)
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
    "watch": frozenset({"-n", "-d", "--interval"}), "chroot": frozenset(),
    "taskset": frozenset(), "runuser": frozenset({"-u", "-g", "--user", "--group"}),
    # multi-call binaries: `busybox rm F` runs their own rm
    "busybox": frozenset(), "toybox": frozenset(),
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
            if not arg.startswith("-") or arg == "-":
                break
            index += 2 if arg in takes_value else 1
        if name == "timeout" and index < len(words):
            index += 1  # the duration
        if name in ("flock", "chroot", "taskset") and index < len(words):
            index += 1  # the lock file, new root or CPU mask
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


STASH_MARK = "\0stash:"  # a target: the files ``git stash pop|apply REF`` writes
# A target: files git would write, found by asking git (``git_mark``/``read_git_mark``).
GIT_MARK = "\0git:"
# Kinds of GIT_MARK: "diff" (``git diff --name-only ARGS``), "show" (the files commits
# change), "switch" (a revision, else a path), "clean" (``git clean -n OPTIONS``),
# "anywhere" (unknown files anywhere in the work tree; the text says what).
GIT_MARK_KINDS = ("diff", "show", "switch", "clean", "anywhere")


def git_mark(kind: str, args: list[str], where: str = "") -> str:
    return GIT_MARK + json.dumps([kind, where, args])


def read_git_mark(mark: str) -> tuple[str, str, list[str]]:
    """(kind, directory relative to the command's cwd, arguments) of a ``git_mark``."""
    kind, where, args = json.loads(mark[len(GIT_MARK):])
    return str(kind), str(where), [str(a) for a in args]


def _anywhere(text: str) -> str:
    return git_mark("anywhere", [text])
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
    patterns: list[str] = []
    actions: list[list[str]] = []
    deletes = False
    while index < len(args):
        arg = args[index]
        if arg in FIND_NAMES and index + 1 < len(args):
            patterns.append(args[index + 1])
            index += 2
            continue
        if arg == "-delete":
            deletes = True
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
    found: list[str] = []
    if deletes and removals:
        found += matched
    for action in actions:
        for target in matched:
            words = [target.rstrip("/") if w == "{}" else w.replace("{}", target) for w in action]
            found += _command_targets(words, cwd, removals=removals, unresolved=unresolved)
    return found


def _command_targets(words: list[str], cwd: Path, *, removals: bool = False,
                     unresolved: list[str] | None = None, stdin: str | None = None) -> list[str]:
    # `GIT_WORK_TREE=api git checkout HEAD -- app.py` is `git --work-tree=api ...`
    work_tree = next((w.split("=", 1)[1] for w in words if w.startswith("GIT_WORK_TREE=")),
                     None)
    words = _strip_prefix(words)
    if not words:
        return []
    name, args = os.path.basename(words[0]), words[1:]
    if work_tree and name == "git":
        args = [f"--work-tree={work_tree}", *args]
    if name in SHELLS and _shell_script(args) is not None:
        return written_files(_shell_script(args) or "", cwd, removals=removals,
                             unresolved=unresolved)
    if name == "eval":
        return written_files(" ".join(args), cwd, removals=removals, unresolved=unresolved)
    if name == "xargs":
        # the operands come from standard input: what the command does cannot be told
        inner = _strip_xargs(args)
        if unresolved is not None and inner:
            unresolved.append(" ".join(words))
        return _command_targets(inner, cwd, removals=removals, unresolved=unresolved) \
            if inner else []
    if name == "find":
        return _find_targets(args, cwd, removals, unresolved)
    script = _script_file(name, args)
    if script is not None and unresolved is not None and _knowable(script):
        text = _script_text(script, cwd)
        if text is not None:
            unresolved.append(SCRIPT_MARK + text)
    elif unresolved is not None and words[0].startswith(("./", "/", "~/")) and "/" in words[0]:
        text = _script_text(words[0], cwd)  # ./run.sh: the script it runs
        if text is not None and not text.startswith("\x7fELF"):
            unresolved.append(SCRIPT_MARK + text)
    if removals:
        return _written(name, args, cwd, stdin) + _removed(name, args)
    return _written(name, args, cwd, stdin)


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


def _written(name: str, args: list[str], cwd: Path, stdin: str | None = None) -> list[str]:
    """The files command ``name`` writes (shells are read by the caller); ``stdin`` is the
    file a ``< FILE`` redirection feeds it."""
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
        # DEST itself (a file copied onto it) and whatever lands inside it
        return [dest.rstrip("/") or "/", dest.rstrip("/") + "/"]
    if name in ("tar", "bsdtar", "gtar"):
        return _tar_targets(args)
    if name in ("unzip", "7z", "bsdunzip"):
        value = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "-d"), None)
        return [(value or ".").rstrip("/") + "/"]
    if name == "git":
        where, git_args = _git_location(args)
        if where:
            return [_moved_mark(t, where) if t.startswith(GIT_MARK) else t
                    if os.path.isabs(t) or t.startswith(STASH_MARK)
                    else os.path.join(where, t) for t in _written(name, git_args, cwd, stdin)]
        args = _expand_alias(git_args, cwd, _inline_aliases(args))
        if args and args[0].startswith(GIT_MARK):
            return args  # an alias that runs a shell, or one that cannot be read
        found = _git_rewrites(args, cwd, stdin)
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
        found = _patch_paths(patch, cwd) if patch else []
        if not operands and not found:
            # the patch comes from a pipe, or cannot be read now: it may write anything
            found.append(_anywhere("patch " + " ".join(args)))
        if value and found and not operands:
            found = [f if f.startswith(GIT_MARK) else os.path.join(value, f) for f in found]
        found += operands[:1]
        found += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-o", "--output")]
        return found + [(value or ".").rstrip("/") + "/"]
    if name == "git" and args[:1] == ["apply"] and not any(
            a in ("--check", "--stat", "--numstat", "--summary") for a in args):
        files = _operands(args[1:], frozenset({"-p", "-C", "--directory", "--exclude",
                                               "--include"})) or ([stdin] if stdin else [])
        found = [p for f in files for p in _patch_paths(f, cwd)]
        if not found:  # from a pipe, or a patch that cannot be read now
            found.append(_anywhere("git " + " ".join(args)))
        return found + ["./"]
    if name == "git" and args[:1] in (["checkout"], ["restore"]):
        return _restored(args[0], args[1:], cwd)
    if name == "git" and args[:1] == ["stash"] and args[1:2] in (["pop"], ["apply"]):
        refs = [a for a in args[2:] if not a.startswith("-")]
        return [STASH_MARK + (refs[0] if refs else "stash@{0}")]
    return []


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


def _git_rewrites(args: list[str], cwd: Path, stdin: str | None) -> list[str] | None:
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
        files = operands or ([stdin] if stdin else [])
        found = [p for f in files for p in _patch_paths(f, cwd)]
        return found or [_anywhere(text)]
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


PATCH_HEADER = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?([^\t\n]+)|^diff --git a/\S+ b/(\S+)"
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


def _heredoc_patch(target: str, command: str) -> list[str]:
    """``target``, or for a patch applied from standard input (an ``anywhere`` mark of
    ``git apply``, ``git am`` or ``patch``) the files the patch headers in ``command``
    name, when it has any."""
    if not target.startswith(GIT_MARK):
        return [target]
    kind, _, args = read_git_mark(target)
    text = args[0] if args else ""
    if kind != "anywhere" or not text.startswith(("git apply", "git am", "patch")):
        return [target]
    found = [next(g for g in m.groups() if g).strip() for m in PATCH_HEADER.finditer(command)]
    found = list(dict.fromkeys(p for p in found if p != "/dev/null"))
    return found or [target]


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


def _tar_targets(args: list[str]) -> list[str]:
    """Where ``tar -x`` extracts: the ``-C``/``--directory`` folder (members unknown)."""
    first = args[0] if args else ""
    extracting = any(a in ("-x", "--extract", "--get") or (a.startswith("-") and not
                     a.startswith("--") and "x" in a) for a in args) or (
        not first.startswith("-") and "x" in first)
    if not extracting:
        return []
    directory = "."
    for index, arg in enumerate(args):
        if arg in ("-C", "--directory") and index + 1 < len(args):
            directory = args[index + 1]
        elif arg.startswith("--directory="):
            directory = arg.split("=", 1)[1]
    return [directory.rstrip("/") + "/"]


VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _expand(token: str, variables: dict[str, str]) -> str:
    """``~/x``, ``$HOME/x``, ``${PWD}/x`` and variables the command set to a plain value
    earlier (``D=.meridian; rm $D/gates.yaml``), as the shell expands them."""
    if token == "~" or token.startswith("~/"):
        token = variables["HOME"] + token[1:]
    if "$" not in token:
        return token
    return VARIABLE.sub(lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), token)


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
    if unresolved is not None and "`" in command:
        unresolved.append(command)  # a backquoted substitution builds words that cannot be told
    try:
        commands = _simple_commands(command)
    except ValueError:  # unbalanced quotes: the shell would refuse it too
        if unresolved is not None:
            unresolved.append(command)
        return []
    found: list[str] = []
    fetched = False  # a `git fetch` ran earlier in the command
    here: str | None = "."  # where the next command runs, relative to cwd; None: unknown
    outer: list[str | None] = []  # where each enclosing subshell started
    variables = {"HOME": str(Path.home())}
    for tokens in commands:
        if tokens is SUBSHELL_OPEN:
            outer.append(here)
            continue
        if tokens is SUBSHELL_CLOSE:
            here = outer.pop() if outer else here
            continue
        variables["PWD"] = str(cwd / here) if here is not None else "$PWD"
        tokens = [_expand(t, variables) for t in tokens]
        if all(ASSIGNMENT.match(t) for t in tokens) or tokens[:1] in (["export"], ["declare"],
                                                                        ["local"], ["readonly"]):
            for token in tokens:
                if ASSIGNMENT.match(token):
                    key, value = token.split("=", 1)
                    if _knowable(value) or value == "":
                        variables[key] = value
        words, redirected = _split_redirections(tokens)
        command_words = _strip_prefix(words)
        name = command_words[0] if command_words else ""
        targets = redirected
        if name not in CHANGE_DIR and name != "popd":
            targets = targets + _command_targets(words, cwd / (here or "."), removals=removals,
                                                 unresolved=unresolved,
                                                 stdin=_stdin_file(tokens))
        if "<<" in tokens or "<<-" in tokens or "<<<" in tokens:
            # a patch fed from a heredoc or here-string (`git apply <<EOF`): its headers
            # are in the command itself
            targets = [t for target in targets for t in _heredoc_patch(target, command)]
        if fetched:
            # a revision read now is not the one a `git fetch` earlier in the command leaves
            targets = [_anywhere(command) if t.startswith(GIT_MARK)
                       and read_git_mark(t)[0] != "clean" else t for t in targets]
        if os.path.basename(name) == "git" and _git_words(command_words)[1] in (
                "fetch", "pull", "remote", "submodule"):
            fetched = True
        if unresolved is not None and (
                _inline_code(os.path.basename(name), command_words[1:])
                or os.path.basename(name) == "xargs"):
            unresolved.append(command)  # what runs comes from elsewhere in the command
        for path in targets:
            if path.startswith(STASH_MARK):
                found.append(path)
                continue
            if path.startswith(GIT_MARK):
                kind, where, args = read_git_mark(path)
                if here is None and kind != "anywhere":
                    path = _anywhere(command)  # run from a directory that cannot be told
                elif here not in (None, "."):
                    path = git_mark(kind, args, os.path.normpath(os.path.join(here, where)))
                if path not in found:
                    found.append(path)
                continue
            if not _knowable(path):
                if unresolved is not None and path and path not in NOT_FILES:
                    # what the variable holds may be named elsewhere in the command
                    # ("for f in .meridian/*; do : > $f; done"); "$(pwd)/x" arrives as "$"
                    unresolved.append(command if "$" in path or "`" in path else path)
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
_VERIFYING = frozenset({"commit", "push", "merge", "am", "cherry-pick", "rebase", "revert",
                        "pull", "switch", "checkout", "worktree"})
_GIT_VALUE_OPTIONS = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace",
                                "--exec-path", "--super-prefix", "--config-env"})
# Config that makes git run other hooks, or none: any of these set anywhere (`git -c`,
# `git config`, GIT_CONFIG_* variables) changes the harness.
_DANGEROUS_KEY = re.compile(r"^(?:core\.hookspath|include\.path|includeif\..*\.path|"
                            r"alias\..*|hook\..*|core\.fsmonitor|core\.sshcommand|"
                            r"core\.editor|sequence\.editor)$", re.IGNORECASE)
_GIT_ENV = re.compile(r"^(?:GIT_CONFIG\w*|GIT_DIR|GIT_COMMON_DIR|GIT_INDEX_FILE|GIT_EXEC_PATH|"
                      r"HOME|XDG_CONFIG_HOME|GIT_TEMPLATE_DIR)=")
# An alias is only a bypass when what it runs is one
_ALIAS_BYPASS = re.compile(r"no-v|hookspath|-n\b|^!", re.IGNORECASE)
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


def _state_branch_change(sub: str, args: list[str], branch: str) -> bool:
    """Whether ``git SUB ARGS`` moves, deletes or force-pushes ``branch``."""
    names = {branch, f"refs/heads/{branch}", f"heads/{branch}"}

    def names_branch(arg: str) -> bool:
        return any(arg == n or arg.endswith(":" + n) or arg.lstrip("+:") in names
                   or arg.startswith(n + ":") for n in names) or arg.lstrip("+:") in names

    mentioned = any(names_branch(a) for a in args)
    if sub == "update-ref":
        return mentioned or "--stdin" in args
    if sub == "branch":
        changes = any(a in ("-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy",
                            "-f", "--force", "-u", "--set-upstream-to", "--unset-upstream")
                      or (a.startswith("-") and not a.startswith("--") and set(a[1:]) & set("dDmMfu"))
                      for a in args)
        return mentioned and changes
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


def _meridian_guarded(args: list[str]) -> str | None:
    """The kind of a ``meridian`` command line only a human may run, or None."""
    while len(args) >= 2 and args[0] == "-C":
        args = args[2:]
    words = [a for a in args if not a.startswith("-")]
    if words[:2] == ["hooks", "uninstall"]:
        return "uninstall"
    if words[:2] == ["gate", "approve"]:
        return "approve"
    return None


SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
# Runners whose ``run`` subcommand runs the rest as a command (``uv run meridian ...``).
RUNNERS = frozenset({"uv", "pipx", "poetry", "pdm", "hatch", "rye", "pixi", "conda"})
XARGS_VALUED = frozenset({"-I", "-i", "-n", "-L", "-l", "-P", "-d", "-E", "-e", "-s", "-a",
                          "--arg-file", "--delimiter", "--max-args", "--max-procs"})


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
    if name == "xargs":
        index = 0
        while index < len(args) and args[index].startswith("-"):
            index += 2 if args[index] in XARGS_VALUED else 1
        return shlex.join(args[index:]) if args[index:] else None
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
            return ["gate", "approve"] if ("meridian" in code and "approve" in code) else None
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
    hooks uninstall``), ``approve`` (``meridian gate approve``)."""
    found: list[tuple[str, str]] = []
    try:
        commands = _simple_commands(command)
    except ValueError:
        commands = []
    exported_git_env = False
    for tokens in commands:
        if tokens is SUBSHELL_OPEN or tokens is SUBSHELL_CLOSE:
            continue
        raw = _split_redirections(tokens)[0]
        # assignments before the command (FOO=1 git ...), after env, or exported
        assignments = [w for w in raw if ASSIGNMENT.match(w)]
        if raw[:1] in (["export"], ["declare"], ["typeset"]) and any(
                _GIT_ENV.match(w) and not w.startswith(("HOME=", "XDG_")) for w in assignments):
            exported_git_env = True
            found.append((" ".join(raw), "skip-hooks"))
            continue
        words = _strip_prefix(raw)
        if not words:
            if any(w.startswith("GIT_CONFIG") for w in assignments):
                exported_git_env = True  # GIT_CONFIG_COUNT=1; git commit (same shell)
                found.append((" ".join(raw), "skip-hooks"))
            continue
        name = os.path.basename(words[0])
        nested = _nested_command(words)
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
        if any(_GIT_ENV.match(w) for w in assignments) or exported_git_env:
            bypass = True
        if sub in _VERIFYING and any(_is_no_verify(a) for a in args):
            bypass = True
        if sub == "commit" and _commit_skips_hooks(args):
            bypass = True
        if sub == "config" and _config_bypass(args):
            bypass = True
        if bypass:
            found.append((" ".join(words), "skip-hooks"))
        elif sub == "replace" and not (not args or args[0] in ("-l", "--list")
                                      or args[0].startswith("--format")):
            # a replace ref makes git read another commit in place of any commit, the
            # state branch's included
            found.append((" ".join(words), "state-branch"))
        elif _state_branch_change(sub, args, state_branch):
            found.append((" ".join(words), "state-branch"))
    return found
