"""``meridian hook pre-commit`` through real ``git commit`` with the installed stub."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian import gitio
from meridian.hooks import project as project_facts
from meridian.ledger import Ledger
from meridian.verify import cache_path
from tests.conftest import git
from tests.hooks.conftest import (
    CLEAN_MODULE,
    GATES,
    HOLLOW_TEST,
    PYTHON,
    STUB_MODULE,
    Proc,
    blocked_events,
    head,
    run_git,
    write,
)


def _commit(root: Path, *paths: str, message: str = "work") -> Proc:
    for path in paths:
        git(root, "add", path)
    return run_git(root, "commit", "-q", "-m", message)


def test_a_clean_commit_of_a_gate_file_is_allowed(hooked: Path, cli: Callable[..., Proc]) -> None:
    assert cli("gate", "start", "schema").code == 0
    write(hooked, "schema/shapes.py", CLEAN_MODULE)
    before = head(hooked)
    result = _commit(hooked, "schema/shapes.py")
    assert result.code == 0, result
    assert result.err == ""
    assert head(hooked) != before
    assert blocked_events(hooked) == []


def test_a_staged_stub_is_refused_with_file_and_line(hooked: Path) -> None:
    write(hooked, "schema/shapes.py", STUB_MODULE)
    before = head(hooked)
    result = _commit(hooked, "schema/shapes.py")
    assert result.code == 1
    lines = result.err.splitlines()
    assert lines[0] == "meridian pre-commit: commit refused (1 problem)"
    assert lines[1].startswith("- 1 high-severity finding(s) in staged files of gate schema, "
                               "first schema/shapes.py:2: ")
    assert lines[2].startswith("    schema/shapes.py:2  [stub_code] ")
    assert lines[3] == ("  next: fix them and commit again. The checks are rules: rule no-stub-code "
                        "(heuristic:stub_code); switching one off takes a recorded reason: "
                        "meridian rules retire ID --reason WHY, then git add .meridian/rules.yaml")
    assert head(hooked) == before
    [event] = blocked_events(hooked)
    assert event.data["source"] == "pre-commit"
    assert event.data["gate"] == "schema"
    assert event.data["files"] == ["schema/shapes.py"]
    assert event.data["rule"] == "hook:staged_heuristics"
    assert event.data["reason"] == lines[1][2:]


def test_a_hollow_test_is_refused(hooked: Path) -> None:
    write(hooked, "schema/shapes.py", CLEAN_MODULE)
    write(hooked, "schema/test_shapes.py", HOLLOW_TEST)
    result = _commit(hooked, "schema/shapes.py", "schema/test_shapes.py")
    assert result.code == 1
    assert "    schema/test_shapes.py:4  [hollow_test] " in result.err


def test_the_staged_content_is_judged_not_the_work_tree(hooked: Path) -> None:
    write(hooked, "schema/shapes.py", STUB_MODULE)
    git(hooked, "add", "schema/shapes.py")
    write(hooked, "schema/shapes.py", CLEAN_MODULE)  # fixed, but the fix is not staged
    assert run_git(hooked, "commit", "-q", "-m", "w").code == 1
    git(hooked, "add", "schema/shapes.py")
    write(hooked, "schema/shapes.py", STUB_MODULE)  # broken again, not staged
    assert run_git(hooked, "commit", "-q", "-m", "w").code == 0
    assert git(hooked, "show", "HEAD:schema/shapes.py") == CLEAN_MODULE


def test_partial_and_all_commits_are_judged_by_their_own_index(hooked: Path) -> None:
    write(hooked, "notes.txt", "one\n")
    write(hooked, "schema/shapes.py", CLEAN_MODULE)
    assert _commit(hooked, "notes.txt", "schema/shapes.py").code == 0
    write(hooked, "schema/shapes.py", STUB_MODULE)
    git(hooked, "add", "schema/shapes.py")
    write(hooked, "notes.txt", "two\n")
    # `git commit PATH` builds the commit from a temporary index (GIT_INDEX_FILE): the
    # staged stub is not part of it.
    assert run_git(hooked, "commit", "-q", "-m", "notes only", "notes.txt").code == 0
    git(hooked, "restore", "--staged", "schema/shapes.py")
    # `git commit -a` takes the modified work-tree file, stub included.
    result = run_git(hooked, "commit", "-q", "-a", "-m", "everything")
    assert result.code == 1 and "schema/shapes.py:2  [stub_code]" in result.err


def test_a_locked_gate_file_is_refused_naming_the_gate_and_its_needs(hooked: Path) -> None:
    write(hooked, "api/app.py", CLEAN_MODULE)
    result = _commit(hooked, "api/app.py")
    assert result.code == 1
    assert result.err.splitlines() == [
        "meridian pre-commit: commit refused (1 problem)",
        ("- 1 staged file(s) belong to gate api, which is locked: its needs have not passed: "
        "schema (open)"),
        "    api/app.py",
        ("  next: start schema first: meridian gate start schema, or leave these files out of "
        "the commit: git restore --staged -- api/app.py"),
    ]
    [event] = blocked_events(hooked, "pre-commit")
    assert (event.data["gate"], event.data["files"], event.data["rule"]) == (
        "api", ["api/app.py"], "hook:locked_gate_artifacts")


def test_a_locked_gate_opens_when_its_need_passes(hooked: Path, cli: Callable[..., Proc]) -> None:
    cli("gate", "start", "schema")
    write(hooked, "schema/shapes.py", CLEAN_MODULE)
    assert _commit(hooked, "schema/shapes.py").code == 0
    write(hooked, "api/app.py", CLEAN_MODULE)
    git(hooked, "add", "api/app.py")
    refused = run_git(hooked, "commit", "-q", "-m", "api")
    assert "its needs have not passed: schema (in_progress)" in refused.err
    assert "next: finish schema first: meridian gate submit schema" in refused.err
    assert cli("gate", "submit", "schema").code == 0
    assert run_git(hooked, "commit", "-q", "-m", "api").code == 0


def test_retiring_a_rule_switches_its_check_off(hooked: Path, cli: Callable[..., Proc]) -> None:
    write(hooked, "schema/shapes.py", STUB_MODULE)
    write(hooked, "schema/test_shapes.py", HOLLOW_TEST)
    git(hooked, "add", "schema")
    assert cli("rules", "retire", "no-stub-code", "--reason", "abstract bases everywhere").code == 0
    git(hooked, "add", ".meridian/rules.yaml")  # the retirement is committed with the work
    result = run_git(hooked, "commit", "-q", "-m", "w")
    assert result.code == 1  # the hollow test is still refused
    assert "[hollow_test]" in result.err and "[stub_code]" not in result.err
    assert cli("rules", "retire", "staged-files-checked", "--reason", "too slow here").code == 0
    git(hooked, "add", ".meridian/rules.yaml")
    assert run_git(hooked, "commit", "-q", "-m", "w").code == 0
    assert "staged-files-checked" in git(hooked, "show", "HEAD:.meridian/rules.yaml")


def test_retiring_the_locked_gate_rule_lets_the_file_through(hooked: Path,
                                                              cli: Callable[..., Proc]) -> None:
    write(hooked, "api/app.py", CLEAN_MODULE)
    git(hooked, "add", "api/app.py")
    assert run_git(hooked, "commit", "-q", "-m", "api").code == 1
    cli("rules", "retire", "locked-gates-stay-untouched", "--reason", "graph being restructured")
    # Retired in the work tree only: the commit would not carry the retirement.
    refused = run_git(hooked, "commit", "-q", "-m", "api")
    assert refused.code == 1 and "- .meridian/rules.yaml: the work tree differs" in refused.err
    git(hooked, "add", ".meridian/rules.yaml")
    assert run_git(hooked, "commit", "-q", "-m", "api").code == 0


def test_an_unstaged_config_edit_cannot_switch_enforcement_off(hooked: Path) -> None:
    """Dropping a gate's glob (or moving the gate graph aside) in the work tree only, then
    committing the locked gate's file, and restoring the file: no trace would be left."""
    write(hooked, "api/app.py", CLEAN_MODULE)
    git(hooked, "add", "api/app.py")
    graph = hooked / ".meridian" / "gates.yaml"
    original = graph.read_text()
    graph.write_text(original.replace('    artifacts: ["api/**"]\n', ""))
    result = run_git(hooked, "commit", "-q", "-m", "api")
    assert result.code == 1
    assert result.err.splitlines() == [
        "meridian pre-commit: commit refused (1 problem)",
        ("- .meridian/gates.yaml: the work tree differs from what this commit carries (unstaged "
         "changes, or the file was removed), so the commit cannot be checked by the "
         "configuration it contains"),
        ("  next: commit the change with it (git add -- .meridian/gates.yaml) or set it aside "
         "(git stash push -- .meridian/gates.yaml), then commit again"),
    ]
    graph.unlink()
    assert "- .meridian/gates.yaml: the work tree differs" in \
        run_git(hooked, "commit", "-q", "-m", "api").err
    config = hooked / ".meridian" / "config.yaml"
    graph.write_text(original)
    config.rename(hooked / "config.yaml.aside")
    assert "- .meridian/config.yaml: the work tree differs" in \
        run_git(hooked, "commit", "-q", "-m", "api").err
    (hooked / "config.yaml.aside").rename(config)
    assert len(blocked_events(hooked, "pre-commit")) == 3
    # Committed with the work, the loosened graph is judged as it is, and stays in history.
    graph.write_text(original.replace('    artifacts: ["api/**"]\n', ""))
    assert run_git(hooked, "commit", "-q", "-a", "-m", "api").code == 0
    assert 'artifacts: ["api/**"]' not in git(hooked, "show", "HEAD:.meridian/gates.yaml")


def test_an_invalid_gate_graph_refuses_naming_file_and_line(hooked: Path) -> None:
    write(hooked, ".meridian/gates.yaml", "version: 1\ngates:\n  - id: a\n    needs: [nope]\n")
    write(hooked, "notes.txt", "x\n")
    result = _commit(hooked, "notes.txt")
    assert result.code == 1
    title, reason, next_step = result.err.splitlines()
    assert title == "meridian pre-commit: commit refused (1 problem)"
    # The location comes from the gate graph loader (`meridian status` prints the same).
    assert reason.startswith("- invalid Meridian configuration: .meridian/gates.yaml:4: gates")
    assert reason.endswith(("needs[0]: unknown gate 'nope' (gates: a)", "needs.0: unknown gate 'nope' (gates: a)"))
    assert next_step == ("  next: fix that file and commit again (`meridian status` reads it the "
                         "same way)")
    [event] = blocked_events(hooked, "pre-commit")  # the config still names the branch
    assert event.data["reason"] == reason[2:]


def _tamper(root: Path) -> None:
    """Rewrite the first event on the state branch, as a hand edit would."""
    ledger = Ledger.open(root)
    path = ledger.shards("events")[0]
    data = ledger.read(path)
    assert data is not None
    changed = data.replace(b'"branch":"meridian/state"', b'"branch":"meridian/other"', 1)
    assert changed != data
    tip = ledger.tip()
    assert tip is not None
    tree = gitio.update_tree(ledger.repo, ledger.tree(), {path: gitio.write_blob(ledger.repo, changed)})
    gitio.create_commit(ledger.repo, ledger.refname, tree, [tip], "hand edit\n", expected=tip)


def test_a_tampered_state_branch_refuses_the_commit(hooked: Path) -> None:
    write(hooked, "notes.txt", "x\n")
    assert _commit(hooked, "notes.txt").code == 0  # verifies and caches the tip
    ledger = Ledger.open(hooked)
    assert cache_path(ledger).read_text().strip() == str(ledger.tip())
    _tamper(hooked)
    write(hooked, "notes.txt", "y\n")
    result = _commit(hooked, "notes.txt")
    assert result.code == 1
    reason = result.err.splitlines()[1]
    assert reason.startswith("- the state branch meridian/state is not intact: commit ")
    assert "changed after it was written" in reason


def test_the_verified_commit_cache_is_the_verifier_s(project: Path) -> None:
    ledger = Ledger.open(project)
    assert project_facts.verified_cache_path(ledger.repo, ledger.branch) == cache_path(ledger)


def test_without_a_state_branch_locked_gates_are_not_guessed(hooked: Path) -> None:
    git(hooked, "branch", "-q", "-D", "meridian/state")
    write(hooked, "api/app.py", CLEAN_MODULE)
    result = _commit(hooked, "api/app.py")
    assert result.code == 0
    assert result.err == (
        "meridian pre-commit: warning: no state branch meridian/state here, so gate states are "
        "unknown and locked gates were not checked; run `meridian init` (it adopts the "
        "remote's branch)\n")


HOT_PATH_PROBE = """\
import sys
from meridian.cli import main
code = main(["hook", "pre-commit"])
heavy = {"pydantic", "anthropic", "rich", "jsonschema", "yaml", "httpx"}
watched = ("meridian.ledger", "meridian.verify", "meridian.records", "meridian.evaluators.models",
           "meridian.evaluators.scan", "meridian.evaluators._js_scan",
           "meridian.evaluators._native_scan")  # the JS and native readers: for their files
print(code, sorted({m.split(".")[0] for m in sys.modules} & heavy),
      sorted(m for m in watched if m in sys.modules))
"""


def _probe(root: Path) -> str:
    """The hook run in a fresh interpreter: exit code, heavy packages and Meridian modules
    it imported."""
    proc = subprocess.run([PYTHON, "-c", HOT_PATH_PROBE], cwd=root, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def _warm(hooked: Path, cli: Callable[..., Proc]) -> None:
    cli("gate", "start", "schema")
    write(hooked, "schema/shapes.py", CLEAN_MODULE)
    assert _commit(hooked, "schema/shapes.py").code == 0  # warms the caches


def test_the_hot_path_imports_no_heavy_module(hooked: Path, cli: Callable[..., Proc]) -> None:
    _warm(hooked, cli)
    write(hooked, "notes.txt", "x\n")
    git(hooked, "add", "notes.txt")
    # Warm caches and no gate file staged: no validation, no ledger read, no scan.
    assert _probe(hooked) == "0 [] []"


def test_a_gate_file_commit_with_warm_caches_imports_no_pydantic(
        hooked: Path, cli: Callable[..., Proc]) -> None:
    _warm(hooked, cli)
    write(hooked, "schema/shapes.py", CLEAN_MODULE + "\n\nUNIT = 1.0\n")
    git(hooked, "add", "schema/shapes.py")
    # The staged gate file is scanned (the scan module ran) with plain findings: neither
    # pydantic nor the evaluator's Issue model is imported.
    assert _probe(hooked) == "0 [] ['meridian.evaluators.scan']"
    # The same scan still refuses a stub in that file.
    write(hooked, "schema/shapes.py", STUB_MODULE)
    git(hooked, "add", "schema/shapes.py")
    assert _probe(hooked).startswith("2 ")


def test_a_new_state_commit_is_verified_without_the_config_models(
        hooked: Path, cli: Callable[..., Proc]) -> None:
    _warm(hooked, cli)
    Ledger.open(hooked).emit("gate.blocked", {"gate": "api", "source": "gate", "reason": "x"})
    write(hooked, "schema/shapes.py", CLEAN_MODULE + "\n\nUNIT = 1.0\n")
    git(hooked, "add", "schema/shapes.py")
    # Verifying the new commit validates its records (pydantic), but the config is cached
    # and the ledger no longer drags meridian.config in. The new gate event is folded into
    # the cached snapshot (the shared-file rule asks whether the file's gate passed), which
    # imports the gate fold and its graph types once per state change, not per commit.
    # (The verdict models are not among them: the fold loads them only where a verdict
    # is built or shown.)
    assert _probe(hooked) == ("0 ['pydantic', 'yaml'] ['meridian.evaluators.scan', "
                              "'meridian.ledger', "
                              "'meridian.records', 'meridian.verify']")
    assert _probe(hooked) == "0 [] ['meridian.evaluators.scan']"  # the next commit: cached


def test_a_commit_after_new_blocks_imports_no_pydantic(hooked: Path, cli: Callable[..., Proc]) -> None:
    """What the hooks themselves append, blocks of gates the snapshot knows, is verified
    (record_check) and folded (the snapshot's catch-up over blocks) without pydantic, yaml
    or the gates package."""
    _warm(hooked, cli)
    ledger = Ledger.open(hooked)
    for n in range(3):
        ledger.emit("gate.blocked", {"gate": "schema", "source": "claude", "reason": f"r{n}",
                                     "files": ["schema/x.py"], "session": "s"})
    ledger.emit("gate.blocked", {"source": "pre-push", "reason": "no gate"})
    write(hooked, "schema/shapes.py", CLEAN_MODULE + "\n\nUNIT = 2.0\n")
    git(hooked, "add", "schema/shapes.py")
    assert _probe(hooked) == ("0 [] ['meridian.evaluators.scan', 'meridian.ledger', "
                              "'meridian.records', 'meridian.verify']")
    # a malformed block still reaches the models, which refuse it
    bad = json.loads(next(line for _, _, line in Ledger.open(hooked).lines("events")
                          if b"gate.blocked" in line))
    bad["data"]["source"] = "nobody"
    from meridian.records import record_id

    bad["id"] = record_id(bad["kind"], bad["ts"], bad["writer"], bad["data"])
    _append_raw_line(hooked, json.dumps(bad).encode())
    assert _probe(hooked).startswith("2 ['pydantic']")


def _append_raw_line(root: Path, line: bytes) -> None:
    ledger = Ledger.open(root)
    repo = ledger.repo
    target = ledger.shards("events")[-1]
    tip = ledger.tip()
    assert tip is not None
    blob = gitio.write_blob(repo, (ledger.read(target) or b"") + line + b"\n")
    tree = gitio.update_tree(repo, gitio.commit_tree(repo, tip), {target: blob})
    gitio.set_ref(repo, ledger.refname, gitio.write_commit(repo, tree, [tip], "by hand\n"),
                  expected=tip)


def test_the_ledger_default_branch_is_the_config_s() -> None:
    from meridian import config, ledger

    assert ledger.DEFAULT_BRANCH == config.DEFAULT_BRANCH


def test_no_cache_recomputes_everything(hooked: Path, cli: Callable[..., Proc]) -> None:
    write(hooked, "notes.txt", "x\n")
    git(hooked, "add", "notes.txt")
    assert cli("hook", "pre-commit").code == 0
    (gitio.meridian_dir(gitio.open_repo(hooked)) / "hook-project.json").write_text("{broken")
    assert cli("hook", "pre-commit", "--no-cache").code == 0
    repo = gitio.open_repo(hooked)
    assert project_facts.load_facts(repo, hooked).source == "cache"


def test_a_refusal_that_cannot_be_recorded_is_still_printed(
        hooked: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from meridian.errors import MeridianError
    from meridian.hooks import precommit, report

    def refuse(*args: object, **kwargs: object) -> bool:
        raise MeridianError("state branch locked by another writer")

    monkeypatch.setattr(report, "record_block", refuse)
    monkeypatch.chdir(hooked)
    write(hooked, "api/app.py", CLEAN_MODULE)
    git(hooked, "add", "api/app.py")
    assert precommit.run(".") == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[:2] == [
        "meridian pre-commit: warning: refusal not recorded: state branch locked by another writer",
        "meridian pre-commit: commit refused (1 problem)"]
    assert lines[2].startswith("- 1 staged file(s) belong to gate api, which is locked")


def test_the_first_commit_of_a_repository_is_checked(tmp_path: Path,
                                                     cli: Callable[..., Proc],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """No HEAD yet: every staged file is new, and the way out must work without a HEAD."""
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    monkeypatch.chdir(root)
    assert cli("init").code == 0  # hooks included
    write(root, ".meridian/gates.yaml", GATES)
    write(root, "api/app.py", CLEAN_MODULE)
    git(root, "add", "-A")
    result = run_git(root, "commit", "-q", "-m", "first")
    assert result.code == 1
    next_line = result.err.splitlines()[3]
    assert next_line.endswith("or leave these files out of the commit: git rm -q --cached -- "
                              "api/app.py")
    git(root, *next_line.split(": ")[-1].split()[1:])  # the command it names works
    assert run_git(root, "commit", "-q", "-m", "first").code == 0
    committed = git(root, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert [p for p in committed if not p.startswith(".meridian/schemas/")] == [
        ".meridian/config.yaml", ".meridian/gates.yaml", ".meridian/rules.yaml"]
