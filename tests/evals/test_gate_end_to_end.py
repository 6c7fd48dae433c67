"""The CI gate end to end: real runs in a real repository, through ``meridian`` itself.

A broken candidate (it raises, prints invalid JSON, exits 3) regresses and exits 1; a
partial candidate fails the gate; a lying latency fails its budget; async agents run
concurrently; a grandchild in its own session dies with a timed-out agent; model-graded
tasks are refused before any agent runs without an API key; bundled suites run by name.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from meridian.cli import main
from meridian.evals.runner import RunOptions, run_suite
from meridian.evals.suite import load_suite
from tests.evals.runs_support import process_gone, write_suite

GOOD = """
import json, sys
task = json.load(sys.stdin)
print(json.dumps({"steps": [{"index": 0, "kind": "tool", "name": "think"}],
                  "final_output": task["metadata"]["answer"]}))
"""


def command(tmp: Path, name: str, body: str) -> str:
    path = tmp / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return f"command:{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


@pytest.fixture
def suite(repo_with_commit: Path) -> Path:
    return write_suite(repo_with_commit / "suite.yaml", [{"id": "a"}, {"id": "b"}, {"id": "c"}])


def run(*args: str) -> int:
    return main(["eval", "run", *args, "--workers", "2"])


@pytest.mark.parametrize("broken", [
    "raise RuntimeError('boom')",
    "print('this is not json')",
    "import sys; sys.exit(3)",
    "module:tests.evals.agents_for_tests:RaisingAgent",
    "module:tests.evals.agents_for_tests:BadReturnAgent",
])
def test_a_crashing_candidate_regresses_and_the_gate_exits_1(
        suite: Path, repo_with_commit: Path, broken: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(suite), "--agent", command(repo_with_commit, "good", GOOD)) == 0
    assert main(["baseline", "pin", "main"]) == 0
    agent = (broken.removeprefix("module:") if broken.startswith("module:")
             else command(repo_with_commit, "broken", broken))
    assert run(str(suite), "--agent", agent) == 0
    capsys.readouterr()
    assert main(["eval", "compare", "latest", "baseline:main", "--fail-on-regression"]) == 1
    out, err = capsys.readouterr()
    assert "REGRESSIONS (3)" in out and "INFRA ERRORS (0)" in out
    assert "gate: 3 task(s) regressed: a, b, c" in err
    assert main(["eval", "compare", "latest", "baseline:main", "--format", "markdown"]) == 0
    assert "**3 regression(s)**" in capsys.readouterr().out


def test_exit_75_is_an_infra_error_retried_and_counted_by_the_gate(
        suite: Path, repo_with_commit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(suite), "--agent", command(repo_with_commit, "good", GOOD)) == 0
    assert main(["baseline", "pin", "main"]) == 0
    flaky_net = command(repo_with_commit, "tempfail", "import sys; sys.exit(75)")
    assert main(["eval", "run", str(suite), "--agent", flaky_net, "--workers", "3"]) == 0
    capsys.readouterr()
    assert main(["eval", "compare", "latest", "baseline:main", "--fail-on-regression"]) == 1
    out, err = capsys.readouterr()
    assert "REGRESSIONS (0)" in out and "INFRA ERRORS (3)" in out
    assert "transient error persisted after 3 attempts" in out
    assert "gate: 3 infra error(s) in the candidate run (at most 0 allowed" in err
    assert main(["eval", "compare", "latest", "baseline:main", "--fail-on-regression",
                 "--max-infra-errors", "3"]) == 0


def test_a_partial_candidate_fails_the_gate(suite: Path, repo_with_commit: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(suite), "--agent", command(repo_with_commit, "good", GOOD)) == 0
    assert main(["baseline", "pin", "main"]) == 0
    assert run(str(suite), "--agent", command(repo_with_commit, "good", GOOD), "--limit", "1") == 0
    capsys.readouterr()
    assert main(["eval", "compare", "latest", "baseline:main", "--fail-on-regression"]) == 1
    err = capsys.readouterr().err
    assert "gate: 2 task(s) of the suite missing from the candidate run: b, c" in err
    assert main(["eval", "compare", "latest", "baseline:main", "--fail-on-regression",
                 "--min-pass-rate", "1.0"]) == 1


def test_an_edited_suite_compares_the_unchanged_tasks(suite: Path, repo_with_commit: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(suite), "--agent", command(repo_with_commit, "good", GOOD)) == 0
    assert main(["baseline", "pin", "main"]) == 0
    document = yaml.safe_load(suite.read_text())
    document["tasks"][1]["expected"] = "43"  # b edited
    document["tasks"].append({"id": "d", "input": "q", "expected": "42",
                              "metadata": {"answer": "42"}})
    suite.write_text(yaml.safe_dump(document, sort_keys=False))
    assert run(str(suite), "--agent", command(repo_with_commit, "good", GOOD)) == 0
    capsys.readouterr()
    # b's definition changed: not compared, which fails the gate until a human accepts it
    assert main(["eval", "compare", "latest", "baseline:main", "--fail-on-regression"]) == 1
    assert "gate: 1 of the baseline run's 3 task(s) not compared" in capsys.readouterr().err
    assert main(["eval", "compare", "latest", "baseline:main", "--fail-on-regression",
                 "--accept-changed-tasks"]) == 0
    out = capsys.readouterr().out
    assert "CHANGED (1)  definition differs: not compared\n  b  changed (not compared)" in out
    assert "ADDED (1)  new in A's suite: not in the baseline\n  d  only in A" in out


def test_a_lying_latency_fails_its_budget(repo_with_commit: Path) -> None:
    path = repo_with_commit / "s.yaml"
    path.write_text(yaml.safe_dump({"suite": "latency", "tasks": [
        {"id": "slow", "input": "q", "latency_budget_s": 0.2, "grader": "latency_budget",
         "metadata": {"seconds": 0.4}}]}))
    result = run_suite(load_suite(path), "tests.evals.agents_for_tests:LyingLatencyAgent",
                       RunOptions(workers=1))
    [trial] = result.results[0].trials
    [score] = trial.scores
    assert trial.status == "fail" and not score.passed
    assert trial.trajectory is not None and trial.trajectory.latency_s >= 0.4
    assert trial.trajectory.reported_latency_s == 0.001
    assert "(measured; the agent reported 0.001s)" in score.detail


def test_an_async_agent_runs_50_tasks_10_at_a_time(tmp_path: Path) -> None:
    tasks = [{"id": f"t{i}", "seconds": 0.3} for i in range(50)] + [
        {"id": "broken", "behavior": "raise", "seconds": 0.0}]
    suite = load_suite(write_suite(tmp_path / "s.yaml", tasks))
    started = time.monotonic()
    result = run_suite(suite, "tests.evals.agents_for_tests:AsyncSleepAgent",
                       RunOptions(workers=1, max_concurrency=10, isolation=False))
    elapsed = time.monotonic() - started
    assert result.summary.passed == 50 and result.summary.failed == 1
    # Five rounds of 0.3 s; one task at a time would take 15 s.
    assert elapsed < 6.0, elapsed
    assert [e.task_id for e in result.results][:3] == ["t0", "t1", "t2"]  # suite order


def test_an_async_agent_that_overruns_is_cancelled_and_fails(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [
        {"id": "slow", "seconds": 30, "timeout_s": 0.3}, {"id": "quick", "seconds": 0.0}]))
    result = run_suite(suite, "tests.evals.agents_for_tests:AsyncSleepAgent", RunOptions())
    assert [e.status for e in result.results] == ["fail", "pass"]
    assert result.results[0].trials[0].scores[0].detail == "timed out after 0.3s"


DAEMON = """
import json, subprocess, sys, time
task = json.load(sys.stdin)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                         start_new_session=True)
open(task["metadata"]["pid_file"], "w").write(str(child.pid))
time.sleep(600)
"""


@pytest.mark.parametrize("isolation", [True, False])
def test_a_grandchild_in_its_own_session_dies_with_a_timed_out_agent(
        tmp_path: Path, isolation: bool) -> None:
    pid_file = tmp_path / "grandchild.pid"
    suite = load_suite(write_suite(tmp_path / "s.yaml", [
        {"id": "hangs", "pid_file": str(pid_file), "timeout_s": 1.5}]))
    result = run_suite(suite, command(tmp_path, "daemon", DAEMON),
                       RunOptions(workers=1, isolation=isolation))
    assert result.results[0].status == "fail"
    assert "timed out" in result.results[0].trials[0].scores[0].detail
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while not process_gone(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process_gone(grandchild)


def test_model_graded_tasks_are_refused_before_any_agent_runs_without_a_key(
        repo_with_commit: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    marker = repo_with_commit / "agent-ran"
    agent = command(repo_with_commit, "marker", f"open({str(marker)!r}, 'w').write('x')\n" + GOOD)
    path = repo_with_commit / "s.yaml"
    path.write_text(yaml.safe_dump({"suite": "judged", "tasks": [
        {"id": "plain", "input": "q", "expected": "42", "grader": "exact_match",
         "metadata": {"answer": "42"}},
        {"id": "judged", "input": "q", "expected": "42", "grader": "llm_judge",
         "metadata": {"answer": "42"}}]}))
    assert run(str(path), "--agent", agent) == 2
    assert capsys.readouterr().err == (
        "meridian: 1 selected task(s) are graded by a model (llm_judge: judged) and "
        "ANTHROPIC_API_KEY is not set: set it, or pass --offline to skip them\n")
    assert not marker.exists()
    assert run(str(path), "--agent", agent, "--offline") == 0
    assert marker.exists()


def test_bundled_suites_by_name_schema_and_suites(repo_with_commit: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "run", "reference", "--agent", "reference-v2", "--offline",
                 "--no-isolation"]) == 0
    out = capsys.readouterr().out
    assert "reference / reference@v2" in out
    assert main(["eval", "suites"]) == 0
    assert capsys.readouterr().out.startswith("reference")
    assert main(["eval", "run", "referense", "--agent", "reference-v2"]) == 2
    assert "no bundled suite of that name (bundled: reference" in capsys.readouterr().err
    assert main(["eval", "schema"]) == 0
    schemas = json.loads(capsys.readouterr().out)
    assert schemas["protocol"] == "meridian.agent/1"
    assert "expected" not in schemas["input"]["required"]
    assert "final_output" in schemas["output"]["properties"]


def test_no_store_regrade_tasks_from_and_several_agents(repo_with_commit: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (repo_with_commit / "data").mkdir()
    (repo_with_commit / "data" / "qa.jsonl").write_text(
        json.dumps({"qid": "one", "question": "What is 6 * 7?", "answer": 42}) + "\n"
        + json.dumps({"qid": "two", "question": "What is 2 ^ 10?", "answer": 1024}) + "\n")
    (repo_with_commit / "data" / "qa.csv").write_text(
        "qid,question,answer\nthree,What is 1 / 3?,0.333333\n")
    (repo_with_commit / "qa.yaml").write_text(yaml.safe_dump({
        "suite": "qa", "defaults": {"grader": {"numeric_tolerance": {"rel": 0.001}}},
        "tasks_from": {"path": "data/qa.jsonl",
                       "fields": {"id": "qid", "input": "question", "expected": "answer"}}}))
    (repo_with_commit / "qa_csv.yaml").write_text(yaml.safe_dump({
        "suite": "qa-csv", "defaults": {"grader": "numeric_tolerance"},
        "tasks_from": {"path": "data/qa.csv",
                       "fields": {"id": "qid", "input": "question", "expected": "answer"}}}))
    assert [t.id for t in load_suite(repo_with_commit / "qa_csv.yaml").tasks] == ["three"]
    assert main(["eval", "run", "qa.yaml", "--agent", "reference-v2", "--no-store"]) == 0
    out = capsys.readouterr().out
    assert "passed 2/2" in out and "not stored (--no-store)" in out
    assert main(["eval", "list", "--json"]) == 0
    assert capsys.readouterr().out == ""  # nothing was committed
    assert main(["eval", "run", "qa.yaml", "--agent", "reference-v1", "--agent", "reference-v2"]) == 0
    out = capsys.readouterr().out
    assert out.count("stored meridian/state:runs/") == 2 and "SUITE: qa" in out
    assert main(["eval", "regrade", "latest", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["suite"] == "qa" and row["passed"] == 2
    assert main(["eval", "show", "latest", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["regraded_from"] is not None and document["run_id"] != document["regraded_from"]


def test_a_snooping_module_agent_finds_no_target_in_its_worker(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [{"id": "a", "expected": "secret-42",
                                                          "answer": "x"}]))
    result = run_suite(suite, "tests.evals.agents_for_tests:SnoopingAgent", RunOptions(workers=1))
    [trial] = result.results[0].trials
    assert trial.trajectory is not None and trial.trajectory.final_output == "nothing found"
    assert trial.status == "fail"


def test_a_module_agent_imports_from_the_repository_root_without_pythonpath(
        repo_with_commit: Path) -> None:
    import subprocess

    (repo_with_commit / "myagents").mkdir()
    (repo_with_commit / "myagents" / "bot.py").write_text(textwrap.dedent("""
        from meridian.evals.types import Trajectory

        class Bot:
            name, version = "bot", "1"

            def run(self, task):
                return Trajectory(task_id=task.id, final_output=task.metadata["answer"],
                                  completed=True)
    """))
    write_suite(repo_with_commit / "suite.yaml", [{"id": "a"}])
    (repo_with_commit / "deeper").mkdir()
    meridian = Path(sys.executable).parent / "meridian"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([str(meridian), "eval", "run", "../suite.yaml", "--agent",
                           "myagents.bot:Bot", "--no-store"], check=False,
                          cwd=repo_with_commit / "deeper", env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "passed 1/1" in proc.stdout
