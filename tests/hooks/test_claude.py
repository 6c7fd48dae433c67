"""Claude Code hooks: payloads in the documented shapes, piped through the exact command
``meridian init --claude`` wrote into ``.claude/settings.json``, run by a shell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from meridian.ledger import Ledger
from tests.conftest import git
from tests.hooks.conftest import CLEAN_MODULE, STUB_MODULE, Proc, blocked_events, write


@pytest.fixture
def claude_project(project: Path, cli: Callable[..., Proc]) -> Path:
    assert cli("init", "--no-hooks", "--claude").code == 0
    return project


def _command(root: Path, event: str) -> str:
    settings = json.loads((root / ".claude" / "settings.json").read_text())
    [command] = [hook["command"] for entry in settings["hooks"][event] for hook in entry["hooks"]
                 if "meridian hook claude" in hook["command"]]
    return command


def claude_env(root: Path, project_dir: Path | None = None) -> dict[str, str]:
    """The environment Claude Code gives a hook: its own, the ``env`` of the project's
    settings files, and ``CLAUDE_PROJECT_DIR``."""
    env = dict(os.environ)
    for name in ("settings.json", "settings.local.json"):
        path = root / ".claude" / name
        if path.exists():
            env.update(json.loads(path.read_text()).get("env", {}))
    env["CLAUDE_PROJECT_DIR"] = str(project_dir or root)
    return env


def claude(root: Path, event: str, payload: dict[str, Any] | str, *,
           cwd: Path | None = None, env: dict[str, str] | None = None) -> Proc:
    """Run the hook as Claude Code does: the settings' command string through a shell."""
    if isinstance(payload, dict):
        payload = json.dumps({"session_id": "sess-1", "transcript_path": "/dev/null",
                              "cwd": str(cwd or root), "hook_event_name": event,
                              "permission_mode": "default", **payload})
    proc = subprocess.run(_command(root, event), shell=True, input=payload, cwd=cwd or root,
                          capture_output=True, text=True, check=False,
                          env=claude_env(root) if env is None else env, timeout=60)
    return Proc(proc)


def _decision(result: Proc) -> dict[str, Any]:
    assert result.code == 0 and result.err == "", result
    return json.loads(result.out)


def _write_payload(root: Path, path: str, tool: str = "Write") -> dict[str, Any]:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return {"tool_name": tool, "tool_use_id": "toolu_01", "tool_input": {key: str(root / path),
                                                                          "content": "x = 1\n"}}


def _fail_schema(root: Path, cli: Callable[..., Proc]) -> None:
    cli("gate", "start", "schema")
    write(root, "schema/shapes.py", STUB_MODULE)
    assert cli("gate", "submit", "schema").code == 2  # the heuristic finds the stub


# --- settings.json ------------------------------------------------------------------------


def test_init_claude_merges_without_clobbering_and_is_idempotent(project: Path,
                                                                 cli: Callable[..., Proc]) -> None:
    user = {
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "./scripts/guard.sh"}]}],
            "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]},
    }
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(user))
    result = cli("init", "--no-hooks", "--claude")
    assert ("created .claude/settings.json (merged into: SessionStart: added, PreToolUse: added, "
            "Stop: added, SubagentStop: added, SessionEnd: added)") in result.out.splitlines()
    merged = json.loads(settings.read_text())
    assert merged["permissions"] == user["permissions"]
    assert merged["hooks"]["Notification"] == user["hooks"]["Notification"]
    assert merged["hooks"]["PreToolUse"][0] == user["hooks"]["PreToolUse"][0]
    assert merged["hooks"]["PreToolUse"][1]["matcher"] == \
        "^(Write|Edit|NotebookEdit|Bash|PowerShell|mcp__.*)$"
    for event in ("SessionStart", "PreToolUse", "Stop", "SubagentStop", "SessionEnd"):
        assert _command(project, event).startswith(f": meridian hook claude {event}; ")
        assert sys.executable not in _command(project, event)  # portable: no machine path
    text = settings.read_text()
    again = cli("init", "--no-hooks", "--claude")
    assert "  kept .claude/settings.json (Meridian's Claude Code hooks already present)" in \
        again.out.splitlines()
    assert settings.read_text() == text


def test_an_old_machine_specific_command_is_updated_in_place(claude_project: Path,
                                                             cli: Callable[..., Proc]) -> None:
    settings = claude_project / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["command"] = "/old/python -m meridian hook claude Stop"
    settings.write_text(json.dumps(data))
    result = cli("init", "--no-hooks", "--claude")
    assert "created .claude/settings.json (merged into: Stop: updated)" in result.out.splitlines()
    stop_entries = json.loads(settings.read_text())["hooks"]["Stop"]
    assert len(stop_entries) == 1 and "/old/python" not in stop_entries[0]["hooks"][0]["command"]


def test_malformed_settings_are_reported_not_overwritten(project: Path,
                                                         cli: Callable[..., Proc]) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "hooks": {,\n}\n')
    result = cli("init", "--no-hooks", "--claude")
    assert result.code == 2
    assert result.err == (f"meridian: {settings}:2: invalid JSON (Expecting property name "
                          "enclosed in double quotes); fix it and run `meridian init --claude` "
                          "again\n")
    assert settings.read_text() == '{\n  "hooks": {,\n}\n'


# --- PreToolUse ---------------------------------------------------------------------------


def test_a_write_to_a_locked_gate_is_denied_with_the_reason(claude_project: Path) -> None:
    decision = _decision(claude(claude_project, "PreToolUse",
                                _write_payload(claude_project, "api/app.py")))
    reason = ("Meridian: api/app.py belongs to gate api, which is locked: its needs have not "
              "passed: schema (open). Do not write it now, nor by another route; start schema "
              "first: meridian gate start schema.")
    assert decision == {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                               "permissionDecision": "deny",
                                               "permissionDecisionReason": reason}}
    [event] = blocked_events(claude_project, "claude")
    assert event.data == {"gate": "api", "source": "claude", "reason": reason,
                          "files": ["api/app.py"], "event": "PreToolUse", "session": "sess-1",
                          "tool": "Write"}


@pytest.mark.parametrize("tool", ["Edit", "MultiEdit", "NotebookEdit"])
def test_every_file_tool_is_checked(claude_project: Path, tool: str) -> None:
    decision = _decision(claude(claude_project, "PreToolUse",
                                _write_payload(claude_project, "api/app.py", tool)))
    assert decision["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_writes_outside_locked_gates_are_allowed_silently(claude_project: Path,
                                                          cli: Callable[..., Proc]) -> None:
    for path in ("schema/shapes.py", "README.md", "../elsewhere.txt"):
        result = claude(claude_project, "PreToolUse", _write_payload(claude_project, path))
        assert (result.code, result.out, result.err) == (0, "", "")
    cli("rules", "retire", "locked-gates-stay-untouched", "--reason", "restructuring")
    result = claude(claude_project, "PreToolUse", _write_payload(claude_project, "api/app.py"))
    assert (result.code, result.out, result.err) == (0, "", "")


@pytest.mark.parametrize("command", [
    "cat > api/app.py <<'EOF'\nprint('hi')\nEOF",
    "echo 'x = 1' >> app.py",
    "sed -i 's/a/b/' app.py",
    "cp ../schema/shapes.py .",
    "touch notes.md && ls",
    "python gen.py | tee app.py > /dev/null",
    "cd api && printf 'x = 1\\n' > app.py",
    "bash -c 'cd api; echo x > app.py'",
])
def test_bash_commands_that_write_a_locked_gate_file_are_denied(claude_project: Path,
                                                                command: str) -> None:
    (claude_project / "api").mkdir()
    at_root = command.startswith(("cat", "cd ", "bash "))
    cwd = claude_project if at_root else claude_project / "api"
    decision = _decision(claude(claude_project, "PreToolUse",
                                {"tool_name": "Bash", "tool_input": {"command": command}}, cwd=cwd))
    assert decision["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "belongs to gate api, which is locked" in \
        decision["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.parametrize("command", ["ls api", "cat api/app.py", "echo hi > /dev/null",
                                     "python -c 'print(1)'", "echo $X > build/$F"])
def test_bash_commands_that_cannot_be_told_to_write_are_allowed(claude_project: Path,
                                                                command: str) -> None:
    result = claude(claude_project, "PreToolUse",
                    {"tool_name": "Bash", "tool_input": {"command": command}})
    assert (result.code, result.out, result.err) == (0, "", "")


def test_a_malformed_payload_is_denied_for_pretooluse_and_reported_otherwise(
        claude_project: Path) -> None:
    for event in ("Stop", "SessionStart", "SubagentStop"):
        result = claude(claude_project, event, "{not json")
        assert result.code == 1 and result.out == ""
        assert result.err.startswith(f"meridian: the Claude Code {event} payload is not JSON (")
        assert result.err.endswith("(not blocking)\n") and result.err.count("\n") == 1
    result = claude(claude_project, "Stop", "[1, 2]")
    assert (result.code, result.out) == (1, "")
    assert result.err == ("meridian: the Claude Code Stop payload is not a JSON object "
                          "(not blocking)\n")
    decision = _decision(claude(claude_project, "PreToolUse", "{not json"))
    assert decision["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert decision["hookSpecificOutput"]["permissionDecisionReason"].startswith(
        "Meridian could not check this tool call, so it is denied: the Claude Code PreToolUse "
        "payload is not JSON (")


def test_outside_a_repository_everything_is_allowed(claude_project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "scratch"
    outside.mkdir()
    result = claude(claude_project, "PreToolUse", _write_payload(outside, "a.py"), cwd=outside,
                    env={**claude_env(claude_project), "CLAUDE_PROJECT_DIR": str(outside)})
    assert (result.code, result.out, result.err) == (0, "", "")


# --- PreToolUse: the harness is human-owned -----------------------------------------------

HARNESS_REASON = (
    "Meridian: {files} {verb} part of the harness that checks your work (Meridian's "
    "configuration, gates and rules, its git hooks, and the Claude Code settings that run these "
    "hooks). These files are human-owned: do not change them, by this tool or any other route. "
    "If a change is needed, ask the user to make it.")


def _denied_harness(result: Proc, *files: str) -> None:
    reason = HARNESS_REASON.format(files=", ".join(files), verb="is" if len(files) == 1 else "are")
    assert _decision(result) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": reason}}


@pytest.mark.parametrize(("tool", "path"), [
    ("Write", ".meridian/gates.yaml"),
    ("Edit", ".meridian/config.yaml"),
    ("MultiEdit", ".meridian/rules.yaml"),
    ("Write", ".meridian/features.yaml"),
    ("Write", ".meridian/schemas/gates.schema.json"),
    ("Edit", ".claude/settings.json"),
    ("Write", ".claude/settings.local.json"),
    ("Write", ".git/hooks/pre-commit"),
    ("NotebookEdit", ".meridian/notes.ipynb"),
])
def test_the_agent_may_not_change_the_harness(claude_project: Path, tool: str, path: str) -> None:
    before = {p: p.read_bytes() for p in (claude_project / ".meridian").rglob("*") if p.is_file()}
    _denied_harness(claude(claude_project, "PreToolUse",
                           _write_payload(claude_project, path, tool)), path)
    [event] = blocked_events(claude_project, "claude")
    assert event.data == {"source": "claude", "reason": HARNESS_REASON.format(files=path, verb="is"),
                          "files": [path], "event": "PreToolUse", "session": "sess-1",
                          "tool": tool, "rule": "claude:protect_harness"}
    after = {p: p.read_bytes() for p in (claude_project / ".meridian").rglob("*") if p.is_file()}
    assert after == before


@pytest.mark.parametrize(("command", "files"), [
    ("sed -i 's/threshold: 7.0/threshold: 1.0/' .meridian/config.yaml", [".meridian/config.yaml"]),
    ("echo '  allow_non_interactive: true' >> .meridian/config.yaml", [".meridian/config.yaml"]),
    ("cd .meridian && cat > rules.yaml <<'EOF'\nversion: 1\nrules: []\nEOF",
     [".meridian/rules.yaml"]),
    ("rm -f .meridian/gates.yaml", [".meridian/gates.yaml"]),
    ("mv .meridian/gates.yaml /tmp/gates.yaml", [".meridian/gates.yaml"]),
    ("rm -rf .claude && git status", [".claude"]),
    ("meridian rules retire no-stub-code --reason 'in the way'", [".meridian/rules.yaml"]),
    ("bash -c 'cp evil.sh .git/hooks/pre-commit'", [".git/hooks/pre-commit"]),
    ("touch .meridian/a .claude/settings.json", [".meridian/a", ".claude/settings.json"]),
    # targets the shell expands as Meridian can: $PWD, globs
    ('echo x > "$PWD/.meridian/gates.yaml"', [".meridian/gates.yaml"]),
    ("echo x > .merid*/gates.yaml", [".meridian/gates.yaml"]),
    # a hook made non-executable no longer runs
    ("chmod -x .git/hooks/pre-commit", [".git/hooks/pre-commit"]),
    ("git checkout HEAD~1 -- .meridian/gates.yaml", [".meridian/gates.yaml"]),
    ("git restore --source=HEAD~1 .meridian", [".meridian"]),
])
def test_bash_changes_to_the_harness_are_denied(claude_project: Path, command: str,
                                                files: list[str]) -> None:
    _denied_harness(claude(claude_project, "PreToolUse",
                           {"tool_name": "Bash", "tool_input": {"command": command}}), *files)


UNREADABLE_REASON = (
    "Meridian: this command names {name} (part of the harness that checks your work) in a "
    "form Meridian cannot read before it runs (a shell expansion, a glob, an inline script), "
    "so it is denied. The harness is human-owned: do not change it by any route; if you only "
    "meant to read it, use a plain command such as cat or git diff.")


@pytest.mark.parametrize(("command", "name"), [
    ("echo x > $(cat where.txt)/.meridian/gates.yaml", ".meridian"),
    ("python - <<'EOF'\nopen('.meridian/gates.yaml', 'w').write('')\nEOF", ".meridian"),
    ("python3 -c \"open('.git/hooks/pre-commit', 'w')\"", ".git/hooks"),
])
def test_unreadable_commands_naming_the_harness_are_denied(claude_project: Path, command: str,
                                                           name: str) -> None:
    assert _decision(claude(claude_project, "PreToolUse",
                            {"tool_name": "Bash", "tool_input": {"command": command}})) == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": UNREADABLE_REASON.format(name=name)}}


@pytest.mark.parametrize("command", [
    "cat .meridian/config.yaml", "meridian status", "meridian rules --due",
    "git diff -- .meridian", "ls .claude", "echo x > .claude/commands/review.md",
    "python -c 'print(1)' > out.txt", "echo x > \"$PWD/notes.md\"", "git config user.name x",
    "chmod +x scripts/run.sh", "git checkout -b feature",
])
def test_reading_the_harness_and_writing_elsewhere_is_allowed(claude_project: Path,
                                                              command: str) -> None:
    result = claude(claude_project, "PreToolUse",
                    {"tool_name": "Bash", "tool_input": {"command": command}})
    assert (result.code, result.out, result.err) == (0, "", "")
    result = claude(claude_project, "PreToolUse", _write_payload(claude_project, "NOTES.md"))
    assert (result.code, result.out, result.err) == (0, "", "")


def test_the_harness_stays_protected_when_the_gate_graph_is_broken(claude_project: Path) -> None:
    (claude_project / ".meridian" / "gates.yaml").write_text("gates: [\n")
    # An ordinary write cannot be judged against a broken graph: denied, saying why...
    reason = _decision(claude(claude_project, "PreToolUse", _write_payload(
        claude_project, "api/app.py")))["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("Meridian could not check this tool call, so it is denied: "
                             "PreToolUse hook could not decide: .meridian/gates.yaml:2: ")
    # ...but the graph itself, and the rest of the harness, stay the human's.
    _denied_harness(claude(claude_project, "PreToolUse",
                           _write_payload(claude_project, ".meridian/gates.yaml")),
                    ".meridian/gates.yaml")
    [event] = blocked_events(claude_project, "claude")
    assert event.data["rule"] == "claude:protect_harness"


def test_the_harness_stays_protected_when_the_config_is_broken(claude_project: Path) -> None:
    config = claude_project / ".meridian" / "config.yaml"
    text = config.read_text()
    config.write_text("evaluator: {kind: nobody}\n")
    _denied_harness(claude(claude_project, "PreToolUse",
                           _write_payload(claude_project, ".meridian/config.yaml", "Edit")),
                    ".meridian/config.yaml")
    # No readable config names the state branch, so the block is logged, not recorded.
    config.write_text(text)
    assert blocked_events(claude_project, "claude") == []
    log = (claude_project / ".git" / "meridian" / "error.log").read_text()
    assert log == ("meridian hook claude PreToolUse: block not recorded: the configuration "
                   "cannot be read, so it names no state branch\n")


def test_a_gate_graph_kept_outside_meridian_is_harness_too(claude_project: Path) -> None:
    config = claude_project / ".meridian" / "config.yaml"
    config.write_text(config.read_text().replace("  gates: .meridian/gates.yaml",
                                                 "  gates: plan/gates.yaml"))
    (claude_project / "plan").mkdir()
    (claude_project / ".meridian" / "gates.yaml").rename(claude_project / "plan" / "gates.yaml")
    _denied_harness(claude(claude_project, "PreToolUse",
                           _write_payload(claude_project, "plan/gates.yaml")), "plan/gates.yaml")
    result = claude(claude_project, "PreToolUse", _write_payload(claude_project, "plan/notes.md"))
    assert (result.code, result.out, result.err) == (0, "", "")


def test_a_human_can_retire_the_protection(claude_project: Path,
                                           cli: Callable[..., Proc]) -> None:
    assert cli("rules", "retire", "harness-is-human-owned", "--reason",
               "the agent maintains the gate graph in this prototype").code == 0
    result = claude(claude_project, "PreToolUse",
                    _write_payload(claude_project, ".meridian/gates.yaml"))
    assert (result.code, result.out, result.err) == (0, "", "")
    # With the gate graph broken the rule is read from the rules file alone: still retired,
    # so the harness rule does not deny; the broken graph itself cannot be judged, and
    # PreToolUse fails closed on it.
    (claude_project / ".meridian" / "gates.yaml").write_text("gates: [\n")
    reason = _decision(claude(claude_project, "PreToolUse", _write_payload(
        claude_project, ".meridian/gates.yaml")))["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("Meridian could not check this tool call, so it is denied: ")
    assert "part of the harness" not in reason


# --- SessionStart -------------------------------------------------------------------------


def test_session_start_injects_the_gate_and_records_the_session(
        claude_project: Path, cli: Callable[..., Proc]) -> None:
    _fail_schema(claude_project, cli)
    assert cli("memory", "add", "semantic", "--json", json.dumps({
        "text": "Type every schema field before writing the API.", "confidence": 0.8,
        "source_gates": ["schema"]})).code == 0
    assert cli("memory", "add", "corrections", "--json", json.dumps({
        "gate": "schema", "predicted_hours": 2, "actual_hours": 5,
        "root_cause": "validation rules were discovered late"})).code == 0
    decision = _decision(claude(claude_project, "SessionStart", {"source": "startup"}))
    output = decision["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    context = output["additionalContext"].splitlines()
    assert context[1].startswith("Current gate: schema (failed): overall ")
    assert "Description: The data schema." in context
    assert "  Every field is typed and documented." in context
    assert "Artifacts: schema/**" in context
    assert any(line.startswith("- high schema/shapes.py:2: ") for line in context)
    assert "- Type every schema field before writing the API. [confidence 0.8]" in context
    assert ("- gate schema; predicted 2 h, took 5 h (ratio 2.5); root cause: validation rules "
            "were discovered late") in context
    assert "When the work is done: meridian gate submit schema" in context
    episodes = [r.data for r in Ledger.open(claude_project).records("memory/episodic")]
    assert {"session": "sess-1", "event": "session_started", "gate": "schema",
            "notes": "Claude Code session (startup)"} in episodes


def test_session_start_with_no_gate_in_progress_names_the_next(claude_project: Path) -> None:
    context = _decision(claude(claude_project, "SessionStart", {"source": "startup"}))
    assert ("No gate is in progress. Ready to start: schema (meridian gate start schema)."
            in context["hookSpecificOutput"]["additionalContext"].splitlines())


# --- Stop / SubagentStop ------------------------------------------------------------------


def test_stop_is_blocked_while_the_failed_verdict_stands(claude_project: Path,
                                                         cli: Callable[..., Proc]) -> None:
    _fail_schema(claude_project, cli)
    decision = _decision(claude(claude_project, "Stop", {"stop_hook_active": False}))
    assert decision["decision"] == "block"
    reason = decision["reason"].splitlines()
    assert reason[0].startswith("Meridian: do not stop yet. Gate schema failed its last verdict")
    assert reason[1].startswith("- high schema/shapes.py:2: ")
    assert reason[-1] == ("Fix them, then run `meridian gate submit schema` and continue until it "
                          "passes (`meridian why schema` shows the whole verdict).")
    [event] = blocked_events(claude_project, "claude")
    assert (event.data["gate"], event.data["event"], event.data["attempt"]) == ("schema", "Stop", 1)

    # Fixed but not submitted: still no stop, and the reason says to submit.
    write(claude_project, "schema/shapes.py", CLEAN_MODULE)
    decision = _decision(claude(claude_project, "Stop", {"stop_hook_active": True}))
    assert decision["reason"] == (
        "Meridian: do not stop yet. You changed gate schema's artifacts since its failed verdict "
        "(schema/shapes.py) but did not submit them. Run `meridian gate submit schema`; if it "
        "fails, fix the issues it lists and submit again.")

    # Submitted and passed: the stop goes through.
    assert cli("gate", "submit", "schema").code == 0
    result = claude(claude_project, "Stop", {"stop_hook_active": True})
    assert (result.code, result.out, result.err) == (0, "", "")


def test_stop_with_unsubmitted_work_on_a_gate_in_progress(claude_project: Path,
                                                          cli: Callable[..., Proc]) -> None:
    cli("gate", "start", "schema")
    result = claude(claude_project, "Stop", {"stop_hook_active": False})
    assert (result.code, result.out, result.err) == (0, "", "")  # nothing done yet
    write(claude_project, "schema/shapes.py", CLEAN_MODULE)
    # a subagent that wrote none of the gate's files stops freely...
    result = claude(claude_project, "SubagentStop", {"stop_hook_active": False,
                                                     "agent_id": "reader"})
    assert (result.code, result.out, result.err) == (0, "", "")
    # ...one that wrote them is held
    result = claude(claude_project, "PreToolUse", {
        **_write_payload(claude_project, "schema/shapes.py"), "agent_id": "writer"})
    assert (result.code, result.out, result.err) == (0, "", "")
    decision = _decision(claude(claude_project, "SubagentStop", {"stop_hook_active": False,
                                                                 "agent_id": "writer"}))
    assert decision == {"decision": "block", "reason": (
        "Meridian: do not stop yet. Gate schema is in progress and its artifacts changed "
        "(schema/shapes.py) but were never submitted. Run `meridian gate submit schema` so an "
        "independent evaluator judges them; if it fails, fix what it lists and submit again.")}


def test_the_retry_cap_releases_a_stuck_agent_and_says_so(claude_project: Path,
                                                          cli: Callable[..., Proc]) -> None:
    config = claude_project / ".meridian" / "config.yaml"
    config.write_text(config.read_text().replace(
        "  block_stale_on_push: true\n", "  block_stale_on_push: true\n  claude_stop_retry_cap: 2\n"))
    _fail_schema(claude_project, cli)
    first = _decision(claude(claude_project, "Stop", {"stop_hook_active": False}))
    second = _decision(claude(claude_project, "Stop", {"stop_hook_active": True}))
    assert first["decision"] == second["decision"] == "block"
    counter = claude_project / ".git" / "meridian" / "claude-stops" / "sess-1"
    assert counter.read_text() == "2\n"
    released = _decision(claude(claude_project, "Stop", {"stop_hook_active": True}))
    assert set(released) == {"systemMessage"}
    assert released["systemMessage"].startswith(
        "Meridian: stop allowed after 2 block(s) (hooks.claude_stop_retry_cap = 2) although "
        "gate schema is unfinished: ")
    assert not counter.exists()
    last = blocked_events(claude_project, "claude")[-1]
    assert last.data["released_by_retry_cap"] is True and last.data["blocks"] == 2
    # The next turn's stop starts a new chain.
    assert _decision(claude(claude_project, "Stop", {"stop_hook_active": False}))["decision"] \
        == "block"
    # A subagent's stops are counted apart from the main agent's, per agent id.
    claude(claude_project, "PreToolUse", {**_write_payload(claude_project, "schema/shapes.py"),
                                          "agent_id": "agent-7"})
    assert _decision(claude(claude_project, "SubagentStop", {"stop_hook_active": True,
                                                             "agent_id": "agent-7"}))[
        "decision"] == "block"
    assert (counter.parent / "sess-1.agent-7").read_text() == "1\n"


def test_retiring_the_stop_rule_lets_the_agent_stop(claude_project: Path,
                                                    cli: Callable[..., Proc]) -> None:
    _fail_schema(claude_project, cli)
    cli("rules", "retire", "stop-on-failed-verdict", "--reason", "interactive pairing session")
    result = claude(claude_project, "Stop", {"stop_hook_active": False})
    assert (result.code, result.out, result.err) == (0, "", "")


def test_claude_hook_commands_are_committed_config(claude_project: Path) -> None:
    git(claude_project, "add", ".claude/settings.json")
    git(claude_project, "commit", "-q", "-m", "claude hooks")
    assert "meridian hook claude PreToolUse" in git(claude_project, "show",
                                                    "HEAD:.claude/settings.json")


def test_a_block_that_cannot_be_recorded_still_denies(claude_project: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A full ledger lock or a refused write must not turn a deny into a non-blocking
    error (exit 1), which would let the write through."""
    from meridian.errors import MeridianError
    from meridian.hooks import claude as claude_hook

    def refuse(*args: object, **kwargs: object) -> bool:
        raise MeridianError("state branch locked by another writer")

    monkeypatch.setattr(claude_hook, "record_block", refuse)
    payload = json.dumps({"session_id": "s", "cwd": str(claude_project),
                          "hook_event_name": "PreToolUse",
                          **_write_payload(claude_project, "api/app.py")})
    reply = claude_hook.handle("PreToolUse", payload)
    assert (reply.exit_code, reply.stderr) == (0, None)
    assert reply.stdout is not None
    assert reply.stdout["hookSpecificOutput"]["permissionDecision"] == "deny"
    log = (claude_project / ".git" / "meridian" / "error.log").read_text()
    assert log == ("meridian hook claude PreToolUse: block not recorded: state branch locked "
                   "by another writer\n")


@pytest.mark.parametrize("command", [
    "git commit --no-verify -m 'done'",
    "git add -A && git commit -nm 'done'",
    "git commit -a -n -m x",
    "git push --no-verify origin main",
    "git -c core.hooksPath=/dev/null commit -m x",
    "git config core.hooksPath /dev/null",
])
def test_skipping_the_git_hooks_is_denied(claude_project: Path, command: str) -> None:
    result = claude(claude_project, "PreToolUse",
                    {"tool_name": "Bash", "tool_input": {"command": command}})
    assert (result.code, result.err) == (0, "")
    decision = json.loads(result.out)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert "would skip the git hooks that check your work" in decision["permissionDecisionReason"]
    [event] = blocked_events(claude_project, "claude")
    assert event.data["rule"] == "claude:protect_harness" and event.data["command"].startswith("git")


@pytest.mark.parametrize("command", [
    "git commit -m 'fix -n handling'", "git commit -m \"-n\"", "git push -n origin main",
    "git merge -n feature", "git commit -am 'wip'",
])
def test_ordinary_git_commands_are_not_mistaken_for_a_bypass(claude_project: Path,
                                                             command: str) -> None:
    result = claude(claude_project, "PreToolUse",
                    {"tool_name": "Bash", "tool_input": {"command": command}})
    assert (result.code, result.out, result.err) == (0, "", "")
