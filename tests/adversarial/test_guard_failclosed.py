"""Attack: switch the hooks off by crashing, hanging or replacing Meridian.

Layer: the local guardrails. The git stubs and the Claude Code command run the installed
Meridian with the work tree off ``sys.path`` (a shadow ``meridian/`` package changes
nothing); PreToolUse denies whenever it cannot decide (a payload it cannot read, a
configuration it cannot load, a crash); every other event exits 1 with one line (never
2, which Claude Code reads as a block); YAML loading is bounded (a bomb, a FIFO or a
device is a one-line error, never a hang). Each case runs under a subprocess timeout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.adversarial.guard_support import (
    base_env,
    bash,
    claude_env,
    hook,
    make_project,
    run,
    settings_command,
    tool,
)

BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""
SHADOW_INIT = "import json, sys\nprint('{}')\nsys.exit(0)\n"


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    return make_project(tmp_path / "project", home), home


def _meridian(root: Path, home: Path, *args: str, python: str = sys.executable,
              timeout: int = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python, "-P", "-m", "meridian", *args], cwd=root,
                          env=base_env(home), capture_output=True, text=True, timeout=timeout,
                          check=False)


def _stage_locked_file(root: Path, home: Path) -> None:
    (root / "api").mkdir(exist_ok=True)
    (root / "api" / "app.py").write_text("x = 1\n")
    run(["git", "add", "api/app.py"], root, base_env(home))


# --- the installed Meridian, never the work tree's ----------------------------------------


def test_a_shadow_package_in_the_work_tree_changes_nothing(project: tuple[Path, Path]) -> None:
    root, home = project
    shadow = root / "meridian"
    shadow.mkdir()
    (shadow / "__init__.py").write_text(SHADOW_INIT)
    (shadow / "__main__.py").write_text(SHADOW_INIT)
    # Claude Code: the write to a locked gate is still denied, by the real Meridian
    outcome = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / "api/app.py"),
                                                  content="x"))
    assert outcome.denied and "belongs to gate api, which is locked" in outcome.reason, outcome
    # and with no MERIDIAN_PYTHON, through the fallbacks, from the work tree as cwd
    env = claude_env(root, home, extra={"MERIDIAN_PYTHON": ""})
    outcome = hook(root, home, "PreToolUse", bash("echo x > .meridian/gates.yaml"), env=env)
    assert outcome.denied, outcome
    # git: the pre-commit stub still refuses the locked gate's file
    _stage_locked_file(root, home)
    committed = run(["git", "commit", "-q", "-m", "sneak"], root, base_env(home), check=False)
    assert committed.returncode != 0, committed.stdout + committed.stderr
    assert "api/app.py" in committed.stdout + committed.stderr


def _venv(path: Path) -> Path:
    """A second virtual environment that has Meridian installed (its dependencies and
    this checkout on its path, through a .pth file: no network), with a console script."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True,
                   timeout=120)
    python = path / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", ("import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])")], capture_output=True,
                             text=True, check=True).stdout.strip()
    source = Path(__file__).resolve().parents[2]
    Path(purelib, "meridian-test.pth").write_text(
        f"{sysconfig.get_paths()['purelib']}\n{source}\n")
    script = path / "bin" / "meridian"
    script.write_text(f"#!{python}\nimport sys\nfrom meridian.cli import main\n"
                      "sys.exit(main())\n")
    script.chmod(0o755)
    return python


def test_the_command_works_from_a_second_venv_and_with_the_first_deleted(
        tmp_path: Path) -> None:
    first = _venv(tmp_path / "venv-one")
    second = _venv(tmp_path / "venv-two")
    home = tmp_path / "home"
    root = make_project(tmp_path / "project", home, python=str(first))
    local = (root / ".claude" / "settings.local.json").read_text()
    assert str(first) in local  # the machine-specific path lives here...
    assert str(first) not in (root / ".claude" / "settings.json").read_text()  # ...not here
    system = "/usr/bin:/bin"
    payload = tool("Write", file_path=str(root / ".meridian/gates.yaml"), content="x")
    on_path = claude_env(root, home, extra={"PATH": f"{second.parent}:{system}"})
    assert hook(root, home, "PreToolUse", payload, env=on_path).denied
    shutil.rmtree(tmp_path / "venv-one")
    # MERIDIAN_PYTHON now names nothing: the `meridian` of the second venv answers
    outcome = hook(root, home, "PreToolUse", payload, env=on_path)
    assert outcome.denied and "part of the harness" in outcome.reason, outcome
    stop = hook(root, home, "Stop", {"stop_hook_active": False}, env=on_path)
    assert (stop.code, stop.out, stop.err) == (0, "", "")


def test_no_meridian_at_all_denies_pretooluse_and_warns_elsewhere(tmp_path: Path) -> None:
    first = _venv(tmp_path / "venv-one")
    home = tmp_path / "home"
    root = make_project(tmp_path / "project", home, python=str(first))
    shutil.rmtree(tmp_path / "venv-one")
    bare = tmp_path / "bin"
    bare.mkdir()
    for name in ("sh", "git", "dirname", "cat"):
        found = shutil.which(name, path="/usr/bin:/bin")
        assert found is not None
        (bare / name).symlink_to(found)
    env = claude_env(root, home, extra={"PATH": str(bare)})
    payload = tool("Write", file_path=str(root / "api/app.py"), content="x")
    outcome = hook(root, home, "PreToolUse", payload, env=env)
    assert outcome.code == 2 and outcome.out == "", outcome  # blocking, reason on stderr
    assert outcome.err.count("\n") == 1 and "the tool call is denied until then" in outcome.err
    for event in ("Stop", "SubagentStop", "SessionStart"):
        outcome = hook(root, home, event, {"stop_hook_active": False}, env=env)
        assert outcome.code == 1 and outcome.err.startswith(
            f"meridian: cannot run the Claude Code {event} hook: "), outcome
    # a broken install that starts but cannot import Meridian: still a block
    (bare / "python3").symlink_to(shutil.which("python3", path="/usr/bin:/bin") or "")
    broken = bare / "meridian"
    broken.write_text("#!/bin/sh\necho 'Traceback: ImportError' >&2\nexit 1\n")
    broken.chmod(0o755)
    outcome = hook(root, home, "PreToolUse", payload, env=env)
    assert outcome.code == 2, outcome
    assert "the PreToolUse hook failed to run (meridian exited 1)" in outcome.err


# --- crashes and bad input deny ------------------------------------------------------------


def test_a_symlink_loop_does_not_crash_the_hook_open(project: tuple[Path, Path]) -> None:
    root, home = project
    (root / "loop").symlink_to("loop")
    outcome = hook(root, home, "PreToolUse",
                   bash("echo x > loop/a; echo x > .meridian/gates.yaml"))
    assert outcome.code == 0 and outcome.denied and ".meridian/gates.yaml" in outcome.reason
    for payload in (tool("Write", file_path=str(root / "loop/a"), content="x"),
                    bash("echo x > loop/a")):
        outcome = hook(root, home, "PreToolUse", payload)
        assert outcome.code == 0 and outcome.err == "", outcome  # decided, not crashed


@pytest.mark.parametrize(("name", "command"), [(".meridian/config.yaml", "status"),
                                               (".meridian/gates.yaml", "status"),
                                               (".meridian/rules.yaml", "rules")])
def test_a_yaml_bomb_is_a_one_line_refusal(project: tuple[Path, Path], name: str,
                                           command: str) -> None:
    root, home = project
    (root / name).write_text(BOMB)
    status = _meridian(root, home, command)
    assert status.returncode == 2 and status.stderr.count("\n") == 1, status
    assert name in status.stderr and "expands to more than" in status.stderr
    outcome = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / "api/x.py"),
                                                  content="x"))
    assert outcome.denied and "expands to more than" in outcome.reason, outcome
    _stage_locked_file(root, home)
    committed = run(["git", "commit", "-q", "-m", "x"], root, base_env(home), check=False)
    assert committed.returncode != 0 and "expands to more than" in committed.stderr + \
        committed.stdout


@pytest.mark.parametrize("loader", [
    "from meridian.features import load_features as f; f(PATH)",
    "from meridian.evals.suite import load_suite as f; f(PATH)",
    ("from meridian.config import load_config as f; import pathlib; "
    "p = pathlib.Path(PATH); (p.parent / '.meridian').mkdir(); "
    "(p.parent / '.meridian' / 'config.yaml').write_text(open(PATH).read()); f(p.parent)"),
])
def test_every_loader_is_bounded(tmp_path: Path, loader: str) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    proc = subprocess.run([sys.executable, "-c", "from meridian.errors import ConfigError\n"
                           f"PATH = {str(path)!r}\ntry:\n    " + loader.replace("; ", "\n    ")
                           + "\nexcept ConfigError as e:\n    print(e)"],
                          capture_output=True, text=True, timeout=30, cwd=tmp_path, check=False)
    assert proc.returncode == 0 and "expands to more than" in proc.stdout, proc
    assert proc.stdout.count("\n") == 1


@pytest.mark.parametrize("special", ["fifo", "dev-zero", "dangling"])
def test_a_special_file_as_gates_yaml_is_refused_not_waited_on(project: tuple[Path, Path],
                                                               special: str) -> None:
    root, home = project
    gates = root / ".meridian" / "gates.yaml"
    gates.unlink()
    if special == "fifo":
        os.mkfifo(gates)
    elif special == "dev-zero":
        gates.symlink_to("/dev/zero")
    else:
        gates.symlink_to("nowhere.yaml")
    status = _meridian(root, home, "status")
    assert status.returncode == 2 and status.stderr.count("\n") == 1, status
    assert ".meridian/gates.yaml" in status.stderr
    outcome = hook(root, home, "PreToolUse", tool("Write", file_path=str(root / "api/x.py"),
                                                  content="x"))
    assert outcome.denied and ".meridian/gates.yaml" in outcome.reason, outcome
    _stage_locked_file(root, home)
    committed = run(["git", "commit", "-q", "-m", "x"], root, base_env(home), check=False)
    assert committed.returncode != 0, committed


def test_a_payload_that_is_not_an_object_is_denied(project: tuple[Path, Path]) -> None:
    root, home = project
    for payload in ("{not json", "[1, 2]", "", '"x"'):
        outcome = hook(root, home, "PreToolUse", payload)
        assert outcome.code == 0 and outcome.denied, (payload, outcome)
        assert outcome.reason.startswith("Meridian could not check this tool call")


@pytest.mark.parametrize("event", ["PostToolUse", "UserPromptSubmit", "Notification",
                                   "PreCompact", "Whatever"])
def test_unknown_events_exit_1_never_2(project: tuple[Path, Path], event: str) -> None:
    root, home = project
    command = settings_command(root, "Stop").replace("hook claude Stop", f"hook claude {event}")
    outcome = hook(root, home, event, {"prompt": "hello"}, command=command)
    assert (outcome.code, outcome.out) == (1, ""), outcome
    assert outcome.err.count("\n") == 1 and f"unknown Claude Code hook event '{event}'" in \
        outcome.err
    extra = _meridian(root, home, "hook", "claude", "Stop", "--what")
    assert extra.returncode == 1 and extra.stderr.count("\n") == 1, extra


# --- writes by git itself ------------------------------------------------------------------


def test_git_stash_pop_is_judged_by_the_files_it_writes(project: tuple[Path, Path]) -> None:
    root, home = project
    env = base_env(home)
    gates = root / ".meridian" / "gates.yaml"
    gates.write_text(gates.read_text() + "# loosened\n")
    run(["git", "stash"], root, env)
    outcome = hook(root, home, "PreToolUse", bash("git stash pop"))
    assert outcome.denied and ".meridian/gates.yaml" in outcome.reason, outcome
    run(["git", "stash", "drop"], root, env)
    (root / "schema").mkdir()
    (root / "schema" / "shapes.py").write_text("x = 1\n")
    run(["git", "add", "schema/shapes.py"], root, env)
    run(["git", "stash"], root, env)
    outcome = hook(root, home, "PreToolUse", bash("git stash pop"))
    assert (outcome.code, outcome.out, outcome.err) == (0, "", ""), outcome


def test_a_meridian_that_exits_2_never_blocks_a_stop(tmp_path: Path) -> None:
    """An older or broken Meridian (a usage error is exit 2) must not block a stop or
    erase a prompt; for PreToolUse the same failure blocks the tool call."""
    home = tmp_path / "home"
    root = make_project(tmp_path / "project", home)
    bare = tmp_path / "bin"
    bare.mkdir()
    for name in ("sh", "git", "dirname", "cat"):
        (bare / name).symlink_to(shutil.which(name, path="/usr/bin:/bin") or "")
    old = bare / "meridian"
    old.write_text("#!/bin/sh\necho 'meridian: error: invalid choice' >&2\nexit 2\n")
    old.chmod(0o755)
    env = claude_env(root, home, extra={"PATH": str(bare), "MERIDIAN_PYTHON": ""})
    stop = hook(root, home, "Stop", {"stop_hook_active": False}, env=env)
    assert stop.code == 1 and "exited 2 (not blocking)" in stop.err, stop
    pre = hook(root, home, "PreToolUse", bash("ls"), env=env)
    assert pre.code == 2, pre


def test_a_decision_that_takes_too_long_is_a_deny(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The internal deadline answers before Claude Code's hook timeout would let the call
    through (a hang Meridian did not foresee)."""
    import io
    import json
    import time

    from meridian.commands import hook as hook_command
    from meridian.hooks import claude

    def hang(event: str, payload: str) -> claude.Reply:
        time.sleep(30)
        raise AssertionError("the deadline did not fire")

    monkeypatch.setattr(hook_command, "DEADLINE_S", 1)
    monkeypatch.setattr(claude, "handle", hang)
    monkeypatch.setattr(sys, "stdin", io.StringIO("{}"))
    assert hook_command.run_claude("PreToolUse", []) == 0
    decision = json.loads(capsys.readouterr().out)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert "took longer than 1 s" in decision["permissionDecisionReason"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("{}"))
    assert hook_command.run_claude("Stop", []) == 1
    assert "took longer than 1 s" in capsys.readouterr().err


def test_no_event_named_is_a_one_line_usage_error(project: tuple[Path, Path]) -> None:
    root, home = project
    outcome = _meridian(root, home, "hook", "claude")
    assert outcome.returncode == 2 and outcome.stdout == "", outcome
    assert outcome.stderr.count("\n") == 1 and "name the hook event" in outcome.stderr \
        and "PreToolUse" in outcome.stderr and "extra" not in outcome.stderr, outcome
