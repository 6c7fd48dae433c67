"""``meridian eval`` and ``meridian baseline`` end to end, in real temporary repositories."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from meridian.cli import main
from tests.evals.agents_for_tests import PLANTED_KEY
from tests.evals.runs_support import SCRIPTED, all_git_objects, process_gone, write_suite

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def suite(repo_with_commit: Path) -> Path:
    return write_suite(repo_with_commit / "suite.yaml",
                       [{"id": "a"}, {"id": "b"}, {"id": "c", "behavior": "fail"}])


def run_eval(*args: str) -> int:
    return main(["eval", "run", *args, "--agent", SCRIPTED, "--workers", "2"])


def index_rows(capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict]:
    capsys.readouterr()
    assert main(["eval", "list", "--json", *extra]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_run_list_show_trace(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_eval(str(suite)) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith("run ") and lines[0].endswith("  scripted / scripted@1")
    assert lines[1] == "passed 2/3 (66.7%)  failed 1  infra errors 0  cost $0.0030"
    assert lines[2].startswith("stored meridian/state:runs/")
    assert "[3/3]" in err  # plain progress lines: stderr is not a terminal here
    [row] = index_rows(capsys)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=suite.parent, capture_output=True,
                          text=True, check=True).stdout.strip()
    # The suite file is untracked: untracked files do not make the tree dirty.
    assert (row["suite"], row["passed"], row["failed"]) == ("scripted", 2, 1)
    assert (row["git_commit"], row["dirty"]) == (head, False)
    run_id = row["run_id"]

    assert main(["eval", "show", run_id[:6]]) == 0
    out = capsys.readouterr().out
    assert "\nc     fail    0/1     1      $0.0010  exact_match\n" in out
    assert main(["eval", "show", "latest", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert next(iter(document)) == "version" and document["run_id"] == run_id

    assert main(["eval", "trace", "latest", "c"]) == 0
    out = capsys.readouterr().out
    assert "epoch 0: fail" in out and "  #0 tool lookup" in out
    assert "  FAIL exact_match 0.00  got 'wrong', expected '42'\n" in out
    assert main(["eval", "trace", "latest", "zzz"]) == 2
    assert capsys.readouterr().err == f"meridian: run {run_id} has no task 'zzz' (tasks: a, b, c)\n"


def test_save_is_byte_identical_for_identical_results(suite: Path, repo_with_commit: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert run_eval(str(suite), "--save", "results/one.json") == 0
    assert run_eval(str(suite), "--save", "results/two.json", "--workers", "1") == 0
    one = (repo_with_commit / "results/one.json").read_bytes()
    assert one == (repo_with_commit / "results/two.json").read_bytes()
    assert main(["eval", "export", "latest~1", "exported.json"]) == 0
    assert (repo_with_commit / "exported.json").read_bytes() == one
    # An exported file is itself a run reference.
    capsys.readouterr()
    assert main(["eval", "compare", "results/one.json", "latest", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["regressions"] == []


def test_reference_suite_saves_byte_identical_files(repo_with_commit: Path) -> None:
    suite = str(ROOT / "suites" / "reference.yaml")
    for name in ("first", "second"):
        assert main(["eval", "run", suite, "--agent", "reference-v2", "--offline",
                     "--save", f"{name}.json"]) == 0
    first = (repo_with_commit / "first.json").read_bytes()
    assert first == (repo_with_commit / "second.json").read_bytes()
    assert b'"name": "latency_budget"' in first  # the suite has a wall-clock grader


def test_regression_gate_against_a_baseline(suite: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_eval(str(suite)) == 0
    capsys.readouterr()
    assert main(["baseline", "pin", "main"]) == 0
    assert capsys.readouterr().out.startswith("baseline main -> run ")
    monkeypatch.setenv("SCRIPTED_FAIL", "b")
    assert run_eval(str(suite)) == 0
    capsys.readouterr()

    assert main(["eval", "compare", "latest", "baseline:main", "--fail-on-regression"]) == 1
    out = capsys.readouterr().out
    assert "REGRESSIONS (1)\n  b  pass -> fail\n" in out
    assert main(["eval", "compare", "latest", "main"]) == 0  # a bare baseline name works too
    capsys.readouterr()
    assert main(["eval", "compare", "baseline:main", "latest", "--fail-on-regression"]) == 0
    assert "FIXED (1)\n  b  fail -> pass\n" in capsys.readouterr().out
    assert main(["eval", "compare", "latest", "latest~1", "--format", "markdown"]) == 0
    assert "- b: pass \\-&gt; fail" in capsys.readouterr().out

    assert main(["baseline", "list", "--json"]) == 0
    [row] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (row["name"], row["passed"], row["graded"]) == ("main", 2, 3)
    assert main(["eval", "list"]) == 0
    assert "baseline:main" in capsys.readouterr().out


def test_a_changed_tracked_file_marks_the_run_dirty(suite: Path, repo_with_commit: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (repo_with_commit / "README.md").write_text("changed\n")
    assert run_eval(str(suite)) == 0
    [row] = index_rows(capsys)
    assert row["dirty"] is True


def test_a_planted_key_is_redacted_before_it_is_committed(repo_with_commit: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(repo_with_commit / "suite.yaml", [{"id": "leaky", "behavior": "secret"}])
    assert run_eval(str(suite), "--save", "leaky.json") == 0
    err = capsys.readouterr().err
    assert "redacted " in err and "anthropic-key" in err
    assert PLANTED_KEY not in all_git_objects(repo_with_commit)
    history = subprocess.run(["git", "log", "-p", "--all"], cwd=repo_with_commit,
                             capture_output=True, text=True, check=True).stdout
    assert "[REDACTED:anthropic-key]" in history and PLANTED_KEY not in history
    assert PLANTED_KEY not in (repo_with_commit / "leaky.json").read_text()
    assert main(["eval", "trace", "latest", "leaky"]) == 0
    assert PLANTED_KEY not in capsys.readouterr().out


def reachable_objects(repo: Path) -> bytes:
    """Every object reachable from any ref (branches, the state branch, baseline tags)."""
    listing = subprocess.run(["git", "rev-list", "--all", "--objects"], cwd=repo,
                             capture_output=True, text=True, check=True).stdout
    ids = "".join(line.split()[0] + "\n" for line in listing.splitlines())
    return subprocess.run(["git", "cat-file", "--batch"], cwd=repo, input=ids.encode(),
                          capture_output=True, check=True).stdout


def test_a_key_planted_anywhere_reaches_no_git_object(repo_with_commit: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The key in the suite (name, input, metadata), a step's input, output and error, a
    base64 blob, a Basic header, a URL, the final answer and an exception message."""
    suite = write_suite(repo_with_commit / "suite.yaml", [
        {"id": "leaks", "behavior": "leak", "input": f"use {PLANTED_KEY}", "note": PLANTED_KEY},
        {"id": "raises", "behavior": "leak_raise"},
    ], name=f"suite-{PLANTED_KEY}")
    assert run_eval(str(suite), "--save", "saved.json") == 0
    assert main(["baseline", "pin", "main"]) == 0
    assert main(["eval", "export", "latest", "exported.json"]) == 0
    assert main(["eval", "report", "latest", "--html", "report.html"]) == 0
    assert "redacted " in capsys.readouterr().err
    encoded = base64.b64encode(f"x-api-key: {PLANTED_KEY}".encode())
    basic = base64.b64encode(f"bot:{PLANTED_KEY}".encode())
    needles = [PLANTED_KEY.encode(), PLANTED_KEY[10:34].encode(), encoded, basic[8:40]]
    objects = reachable_objects(repo_with_commit)
    assert b"[REDACTED:anthropic-key]" in objects and b"[REDACTED:base64-secret]" in objects
    assert b"[REDACTED:basic-auth]" in objects and b"[REDACTED:url-credentials]" in objects
    every_object = all_git_objects(repo_with_commit).encode()
    git_files = b"".join(f.read_bytes() for f in (repo_with_commit / ".git").rglob("*")
                         if f.is_file() and "objects" not in f.parts)  # refs, logs, index
    outputs = b"".join((repo_with_commit / name).read_bytes()
                       for name in ("saved.json", "exported.json", "report.html"))
    for needle in needles:
        for where, data in (("reachable objects", objects), ("object store", every_object),
                            (".git files", git_files), ("written files", outputs)):
            assert needle not in data, f"{needle[:12]!r}... found in {where}"


def test_report_and_export_of_an_unredacted_run_file_are_redacted(
        repo_with_commit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from meridian.evals import run as runfile
    from tests.evals.runs_support import make_run

    run = make_run({"a": "pass"})
    entry = run.results[0]
    trajectory = entry.trials[0].trajectory
    assert trajectory is not None
    trial = entry.trials[0].model_copy(update={"trajectory": trajectory.model_copy(
        update={"final_output": f"the key is {PLANTED_KEY}"})})
    leaky = run.model_copy(update={"results": [entry.model_copy(update={"trials": [trial]})]})
    (repo_with_commit / "leaky.json").write_bytes(runfile.dumps(leaky))
    assert main(["eval", "report", "leaky.json", "--html", "page.html"]) == 0
    assert main(["eval", "export", "leaky.json", "clean.json"]) == 0
    for name in ("page.html", "clean.json"):
        text = (repo_with_commit / name).read_text()
        assert PLANTED_KEY not in text and "[REDACTED:anthropic-key]" in text


def test_shards_merge_and_refuse_a_missing_shard(suite: Path, repo_with_commit: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert run_eval(str(suite), "--save", "whole.json") == 0
    assert run_eval(str(suite), "--shard", "2/2") == 0
    assert main(["eval", "merge", "latest"]) == 2
    assert capsys.readouterr().err.endswith("missing shard(s) 1/2\n")
    assert run_eval(str(suite), "--shard", "1/2") == 0
    assert main(["eval", "merge", "latest", "latest~1", "--save", "merged.json"]) == 0
    assert (repo_with_commit / "merged.json").read_bytes() == (repo_with_commit / "whole.json").read_bytes()
    rows = index_rows(capsys)
    assert [r["shard"] for r in rows] == [None, "1/2", "2/2", None]
    assert len(rows[0]["merged_from"]) == 2


def test_an_empty_shard_is_stored_so_every_shard_merges(suite: Path, repo_with_commit: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert run_eval(str(suite), "--save", "whole.json") == 0
    for i in (1, 2, 3, 4):  # 3 tasks in 4 shards: shard 4 is empty
        assert run_eval(str(suite), "--shard", f"{i}/4") == 0
    assert main(["eval", "merge", "latest", "latest~1", "latest~2", "latest~3",
                 "--save", "merged.json"]) == 0
    assert (repo_with_commit / "merged.json").read_bytes() == (repo_with_commit / "whole.json").read_bytes()
    capsys.readouterr()
    assert main(["eval", "show", "latest~1"]) == 0
    assert "passed 0/0 (n/a)" in capsys.readouterr().out


def test_an_empty_selection_is_refused_before_running(suite: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "run", "suite.yaml", "--agent", SCRIPTED, "--limit", "0"]) == 2
    assert capsys.readouterr().err == (
        "meridian: suite.yaml: no task selected (check --tag, --limit and --offline)\n")
    assert main(["eval", "list", "--json"]) == 0
    assert capsys.readouterr().out == ""  # nothing stored


@pytest.mark.parametrize(("args", "message"), [
    (["--shard", "3/2"], "--shard: expected i/n with 1 <= i <= n (e.g. 1/4), got '3/2'"),
    (["--epochs", "0"], "--epochs: expected a number >= 1, got 0"),
    (["--workers", "0"], "--workers: expected a number >= 1, got 0"),
    (["--tag", "nothing-has-this"], "suite.yaml: no task selected (check --tag, --limit and --offline)"),
])
def test_bad_run_arguments(suite: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                           message: str) -> None:
    assert main(["eval", "run", "suite.yaml", "--agent", SCRIPTED, *args]) == 2
    assert capsys.readouterr().err == f"meridian: {message}\n"


def test_bad_references(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "show", "latest"]) == 2
    assert "no evaluation runs on meridian/state yet" in capsys.readouterr().err
    assert run_eval(str(suite)) == 0
    capsys.readouterr()
    assert main(["eval", "show", "nope"]) == 2
    assert capsys.readouterr().err.startswith("meridian: no run matches 'nope'")
    assert main(["eval", "compare", "latest", "baseline:missing"]) == 2
    assert "no baseline named 'missing' (baselines: none;" in capsys.readouterr().err
    assert main(["eval", "list", "-n", "0"]) == 2
    assert capsys.readouterr().err == "meridian: -n: expected a number >= 1, got 0\n"


def test_graders_report_prune(suite: Path, repo_with_commit: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "graders"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert "exact_match" in names and "step_efficiency" in names and names == sorted(names)
    assert main(["eval", "graders", "--json"]) == 0
    first = json.loads(capsys.readouterr().out.splitlines()[0])
    assert set(first) == {"name", "kind", "description", "arguments", "network"}

    assert run_eval(str(suite)) == 0
    assert run_eval(str(suite)) == 0
    capsys.readouterr()
    assert main(["eval", "report", "latest", "--html", "out/report.html"]) == 0
    assert (repo_with_commit / "out/report.html").read_text().startswith("<!DOCTYPE html>")
    capsys.readouterr()
    assert main(["eval", "prune", "--keep", "1", "--json"]) == 0
    pruned = json.loads(capsys.readouterr().out)["pruned"]
    assert len(pruned) == 1
    assert [r["run_id"] for r in index_rows(capsys)] != pruned
    assert len(index_rows(capsys)) == 1
    assert [r["pruned"] for r in index_rows(capsys, "--all")] == [False, True]


def _interrupted_run(repo_with_commit: Path, signum: int, *extra: str) -> dict:
    pid_file = repo_with_commit / "hang.pid"
    write_suite(repo_with_commit / "suite.yaml", [
        {"id": "quick"}, {"id": "stuck", "behavior": "hang", "pid_file": str(pid_file)},
    ], timeout_s=120)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "meridian", "eval", "run", "suite.yaml", "--agent", SCRIPTED,
         "--workers", "2", *extra],
        cwd=repo_with_commit, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    first = proc.stderr.readline()  # the quick task's progress line
    assert first.startswith("[1/2] quick epoch 0: pass"), first
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert pid_file.exists(), "the stuck task never started"
    # The signal handler only sets a flag the scheduling loop checks, so it takes effect at
    # one known point whatever the parent is doing when it lands (no torn pipe message,
    # no half-spawned worker); shutdown joins are bounded, so the exit is prompt under load.
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted: partial run saved as" in err
    assert "INTERRUPTED (partial)" in out
    assert process_gone(int(pid_file.read_text()))
    listing = subprocess.run([sys.executable, "-m", "meridian", "eval", "list", "--json"],
                             cwd=repo_with_commit, env=env, capture_output=True, text=True,
                             check=True)
    [row] = [json.loads(line) for line in listing.stdout.splitlines()]
    assert (row["interrupted"], row["passed"], row["trials"]) == (True, 1, 1)
    return row


def test_ctrl_c_saves_a_partial_run_and_exits_130(repo_with_commit: Path) -> None:
    _interrupted_run(repo_with_commit, signal.SIGINT)


def test_ctrl_c_stops_an_in_process_agent_hanging_on_the_main_thread(repo_with_commit: Path) -> None:
    _interrupted_run(repo_with_commit, signal.SIGINT, "--no-isolation", "--workers", "1")


def test_a_sigterm_interrupted_run_is_saved_and_fails_the_gate(
        repo_with_commit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = _interrupted_run(repo_with_commit, signal.SIGTERM)
    capsys.readouterr()
    assert main(["eval", "compare", row["run_id"], row["run_id"], "--fail-on-regression"]) == 1
    assert "gate: the candidate run was interrupted (partial)" in capsys.readouterr().err
