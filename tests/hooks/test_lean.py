"""``meridian.lean`` (what the Claude hook's allow path uses instead of ``typing`` and
eager regex compiles), held to what it stands in for, and the allow path's imports held
to what it needs: the settings' command, run as Claude Code runs it, must decide a file
tool's allow and a plain Bash command's allow from the view without importing
``typing`` (nor, for a file tool, the Bash reader), and without compiling the Bash
reader's patterns a plain command does not use. A change that brings one back fails
here, so the start-up cost it saves cannot return unnoticed (the cost itself is
measured by ``benchmarks/hook_latency.py``, never timed in a test)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from meridian import lean
from tests.adversarial.guard_support import (
    bash,
    claude_env,
    hook,
    make_project,
    settings_command,
    tool,
)

# --- NamedTuple: the same class typing.NamedTuple builds ---------------------------------


def _pair(base: type) -> type:
    class Reply(base):  # type: ignore[misc, valid-type]
        """One answer."""

        exit_code: int
        stdout: dict[str, str] | None = None
        stderr: str | None = None

        def channels(self) -> int:
            return (self.stdout is not None) + (self.stderr is not None)

        @property
        def failed(self) -> bool:
            return self.exit_code != 0

    return Reply


def test_lean_namedtuple_builds_what_typing_builds() -> None:
    lean_cls, typing_cls = _pair(lean.NamedTuple), _pair(typing.NamedTuple)
    for cls in (lean_cls, typing_cls):
        assert cls.__mro__[1:] == (tuple, object)
    assert lean_cls._fields == typing_cls._fields == ("exit_code", "stdout", "stderr")
    assert lean_cls._field_defaults == typing_cls._field_defaults == {"stdout": None,
                                                                      "stderr": None}
    assert lean_cls.__doc__ == typing_cls.__doc__ == "One answer."
    assert lean_cls.__name__ == typing_cls.__name__ == "Reply"
    assert lean_cls.__qualname__ == typing_cls.__qualname__
    assert lean_cls.__module__ == typing_cls.__module__ == __name__
    assert list(lean_cls.__annotations__) == list(typing_cls.__annotations__)
    one, other = lean_cls(2, stderr="no"), typing_cls(2, stderr="no")
    assert one == other == (2, None, "no") and hash(one) == hash(other)
    assert repr(one) == repr(other) == "Reply(exit_code=2, stdout=None, stderr='no')"
    assert one._replace(exit_code=0) == (0, None, "no")
    assert one._asdict() == other._asdict()
    assert lean_cls._make([1, {}, None]) == typing_cls._make([1, {}, None])
    assert one.channels() == other.channels() == 1 and one.failed and other.failed
    with pytest.raises(AttributeError):
        one.exit_code = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        lean_cls()


def test_lean_namedtuple_refuses_what_typing_refuses() -> None:
    for base in (lean.NamedTuple, typing.NamedTuple):
        with pytest.raises(TypeError, match="Non-default namedtuple field b cannot follow"):
            class Bad(base):  # type: ignore[misc, valid-type]
                a: int = 0
                b: int
        with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _make"):
            class Clash(base):  # type: ignore[misc, valid-type]
                a: int

                def _make(self) -> None: ...


def test_the_hook_tuples_are_lean_ones() -> None:
    """Reply, Harness and GateFacts stay tuples with their fields and defaults."""
    from meridian.hooks import claude, project

    assert claude.ALLOW == (0, None, None) and claude.Reply(stderr="x").exit_code == 0
    assert claude.Harness(()).installed == () and claude.Harness(()).fold is False
    facts = project.GateFacts("a", (), ("a/**",))
    assert facts == ("a", (), ("a/**",), (), False)
    assert facts._replace(exclude=("x",)).exclude == ("x",)


# --- the fallbacks: where the internals are not as mirrored ------------------------------

_TUPLES = (
    "import json, sys\n"
    "{patch}"
    "from meridian import lean\n"
    "from meridian.hooks import claude, project\n"
    "facts = project.GateFacts('a', (), ('a/**',))\n"
    "print(json.dumps({{'typing': lean.NamedTuple.__module__, 'supported': lean.lean_supported(),\n"
    "    'signal': lean.signal_module().__name__,\n"
    "    'tuples': [[c.__name__, list(c._fields), repr(sorted(c._field_defaults.items())),\n"
    "                c.__mro__[1:] == (tuple, object), c.__doc__]\n"
    "               for c in (claude.Reply, claude.Harness, project.GateFacts)],\n"
    "    'values': [repr(claude.ALLOW), repr(claude.Reply(stderr='x')), repr(facts),\n"
    "               repr(facts._replace(exclude=('x',))), repr(claude.Harness(()))]}}))\n")


def _tuples(patch: str) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-P", "-c", _TUPLES.format(patch=patch)],
                          capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("patch", [
    "sys.version_info = (3, 14, 0, 'final', 0)\n",  # lazily evaluated annotations
    ("import types\n"
     "sys.implementation = types.SimpleNamespace(**{**vars(sys.implementation), 'name': 'pypy'})\n"),
])
def test_an_interpreter_whose_internals_differ_gets_typing_and_signal_and_the_same_tuples(
        patch: str) -> None:
    """The version or implementation check fails: ``typing.NamedTuple`` and ``signal``
    themselves are used, and the hook's tuples come out exactly as the lean ones do."""
    lean_run, fallback = _tuples(""), _tuples(patch)
    assert (lean_run["typing"], lean_run["supported"], lean_run["signal"]) == (
        "meridian.lean", True, "_signal")
    assert (fallback["typing"], fallback["supported"], fallback["signal"]) == (
        "typing", False, "signal")
    assert fallback["tuples"] == lean_run["tuples"]
    assert fallback["values"] == lean_run["values"]


def test_the_signal_stand_in_is_the_signal_module_s_own_calls(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What the hook's deadline uses, from ``_signal`` and from the fallback: the same
    ``alarm``, the same ``SIGALRM``, and a handler set through either one runs."""
    import signal
    import types

    lean_module = lean.signal_module()
    monkeypatch.setattr(lean.sys, "implementation",
                        types.SimpleNamespace(**{**vars(sys.implementation), "name": "other"}))
    fallback = lean.signal_module()
    assert lean_module.__name__ == "_signal" and fallback is signal
    assert lean_module.alarm is fallback.alarm and lean_module.SIGALRM == fallback.SIGALRM
    fired: list[str] = []
    previous = signal.getsignal(signal.SIGALRM)
    try:
        for name, module in (("lean", lean_module), ("fallback", fallback)):
            module.signal(module.SIGALRM, lambda signum, frame, name=name: fired.append(name))
            signal.raise_signal(signal.SIGALRM)
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert fired == ["lean", "fallback"]


# --- lazy_pattern -------------------------------------------------------------------------


def test_a_lazy_pattern_compiles_on_first_use_and_answers_as_the_compiled_one() -> None:
    source, flags = r"^(?:\+\+\+|---) ([^\t\n]+)|^diff --git a/\S+ b/(\S+)", re.MULTILINE
    lazy, compiled = lean.lazy_pattern(source, flags), re.compile(source, flags)
    assert "_compiled" not in vars(lazy)
    text = "diff --git a/x b/x\n--- a/x\n+++ b/y\n"
    assert [m.groups() for m in lazy.finditer(text)] == \
        [m.groups() for m in compiled.finditer(text)]
    assert "_compiled" in vars(lazy)
    assert lazy.search("nothing") is None
    assert lazy.sub("!", text) == compiled.sub("!", text)
    assert (lazy.pattern, lazy.flags) == (compiled.pattern, compiled.flags)
    with pytest.raises(AttributeError):
        lazy.no_such_method  # noqa: B018


# --- the hook's start-up, through the settings' command -----------------------------------

# Modules the allow path must not import (typing: ~3 ms, the Bash reader and shlex for a
# file tool: ~3 ms more) besides the heavy ones tests/adversarial/test_guard_view.py holds
# off it (pygit2, pydantic, yaml).
NEVER = ("typing", "pygit2", "pydantic", "yaml", "dataclasses", "inspect", "hashlib")
NOT_FOR_A_FILE_TOOL = ("meridian.hooks.bash_writes", "shlex")


@pytest.fixture
def guarded(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    root = make_project(tmp_path / "project", home)
    # the full path decides the first call and writes the view the next ones are decided from
    assert not hook(root, home, "PreToolUse", tool("Write", file_path=str(root / "schema/a.py"),
                                                   content="x = 1\n")).denied
    return root, home


def _imports(root: Path, home: Path, fields: dict[str, object]) -> list[str]:
    # the settings' command, with -X importtime (it runs Python isolated, -I, which
    # ignores PYTHONPROFILEIMPORTTIME)
    command = settings_command(root, "PreToolUse")
    assert command.count('"$p" -I -m meridian') == 1, command
    outcome = hook(root, home, "PreToolUse", fields, env=claude_env(root, home),
                   command=command.replace('"$p" -I -m meridian',
                                           '"$p" -I -X importtime -m meridian'))
    assert outcome.code == 0 and not outcome.denied, outcome
    modules = [line.rsplit("|", 1)[-1].strip() for line in outcome.err.splitlines()
               if line.startswith("import time:")]
    assert "meridian.hooks.claude_view" in modules, outcome.err[-500:]
    assert "meridian.hooks.gate_view" not in modules, "not decided from the view"
    return modules


def test_a_file_tool_allow_imports_no_typing_and_no_bash_reader(
        guarded: tuple[Path, Path]) -> None:
    root, home = guarded
    for path in ("schema/shapes.py", "notes/todo.md"):
        modules = _imports(root, home, tool("Write", file_path=str(root / path), content="x"))
        assert [m for m in modules if m.split(".")[0] in NEVER or m in NOT_FOR_A_FILE_TOOL] == []


def test_a_plain_bash_allow_imports_no_typing(guarded: tuple[Path, Path]) -> None:
    root, home = guarded
    modules = _imports(root, home, bash("pytest -q tests && git status"))
    assert "meridian.hooks.bash_writes" in modules
    assert [m for m in modules if m.split(".")[0] in NEVER] == []


def test_a_plain_bash_allow_leaves_the_unused_patterns_uncompiled(
        guarded: tuple[Path, Path]) -> None:
    """In process, as the hook decides (``claude_view.decide``): a command that applies
    no patch, runs no PowerShell and sets no git config compiles none of those patterns."""
    root, home = guarded
    payload = json.dumps({"session_id": "s", "transcript_path": "/dev/null", "cwd": str(root),
                          "hook_event_name": "PreToolUse", "permission_mode": "default",
                          **bash("pytest -q tests && git status")})
    script = (
        "import json, sys\n"
        "from meridian.hooks import bash_writes, claude, claude_view\n"
        "print(json.dumps([claude_view.decide(sys.stdin.read()) is claude_view.ALLOWED, sorted(\n"
        "    name for module in (bash_writes, claude) for name, value in vars(module).items()\n"
        "    if type(value).__name__ == '_LazyPattern' and '_compiled' in vars(value))]))\n")
    proc = subprocess.run([sys.executable, "-P", "-c", script], input=payload, cwd=root,
                          env=claude_env(root, home), capture_output=True, text=True,
                          check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    allowed, compiled = json.loads(proc.stdout)
    assert allowed
    assert not {"PATCH_HEADER", "POWERSHELL_WRITES", "_GIT_COMMAND_SETTINGS", "_DANGEROUS_KEY",
                "HARNESS_MENTION", "READ_ONLY_MCP", "PATH_KEY"} & set(compiled), compiled
