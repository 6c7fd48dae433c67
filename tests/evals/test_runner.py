"""The runner: isolation, timeouts that kill, retries, ordering, epochs, shards, Ctrl-C."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from meridian.errors import MeridianError
from meridian.evals import run as runfile
from meridian.evals.runner import RunOptions, is_transient, run_suite, select_tasks
from meridian.evals.suite import load_suite
from meridian.evals.types import Task, TaskResult
from tests.evals.runs_support import SCRIPTED, process_gone, write_suite

FAST_RETRY = {"retry_backoff_s": 0.01}


def statuses(run: runfile.Run) -> dict[str, list[str]]:
    return {entry.task_id: [t.status for t in entry.trials] for entry in run.results}


@pytest.mark.parametrize("isolation", [True, False])
def test_a_raising_agent_fails_its_task_and_the_run_goes_on(tmp_path: Path, isolation: bool) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [
        {"id": "first"}, {"id": "broken", "behavior": "raise"}, {"id": "last", "behavior": "fail"},
    ]))
    run = run_suite(suite, SCRIPTED, RunOptions(workers=1, isolation=isolation))
    # The agent's own exception is a verdict on the agent: a failure that can regress.
    assert statuses(run) == {"first": ["pass"], "broken": ["fail"], "last": ["fail"]}
    broken = run.entry("broken")
    assert broken is not None
    assert broken.trials[0].error == "ValueError: agent broke on broken"
    [score] = broken.trials[0].scores
    assert (score.name, score.passed) == ("completed", False)
    assert score.detail == "agent failed: ValueError: agent broke on broken"
    assert (run.summary.passed, run.summary.failed, run.summary.infra_errors) == (1, 2, 0)


def test_a_hanging_task_is_killed_with_its_children(tmp_path: Path) -> None:
    hang_pid = tmp_path / "hang.pid"
    spawn_pid = tmp_path / "spawn.pid"
    suite = load_suite(write_suite(tmp_path / "s.yaml", [
        {"id": "hangs", "behavior": "hang", "pid_file": str(hang_pid), "timeout_s": 0.5},
        {"id": "spawns", "behavior": "spawn_hang", "pid_file": str(spawn_pid), "timeout_s": 0.5},
        {"id": "after"},
    ], timeout_s=5))
    run = run_suite(suite, SCRIPTED, RunOptions(workers=1))
    # A hang is the agent's failure (so it can show up as a regression), not an infra error.
    assert statuses(run) == {"hangs": ["fail"], "spawns": ["fail"], "after": ["pass"]}
    hangs = run.entry("hangs")
    assert hangs is not None and hangs.trials[0].error is None
    assert [(s.name, s.passed, s.detail) for s in hangs.trials[0].scores] == [
        ("completed", False, "timed out after 0.5s")]
    # The run ends soon after the timeouts: the hung workers were not waited for
    # (each sleeps an hour). The bound is loose: it only has to exclude waiting.
    assert run.duration_s is not None and run.duration_s < 30
    worker = int(hang_pid.read_text())
    spawn_worker, grandchild = (int(p) for p in spawn_pid.read_text().split())
    assert worker != spawn_worker  # the killed worker was replaced
    for pid in (worker, spawn_worker, grandchild):
        assert process_gone(pid), f"process {pid} outlived its run"


def test_a_timeout_is_the_same_failure_in_process_and_for_a_command_agent(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [
        {"id": "slow", "behavior": "slow", "seconds": 0.3, "timeout_s": 0.1}, {"id": "after"}]))
    threaded = run_suite(suite, SCRIPTED, RunOptions(workers=1, isolation=False))
    assert statuses(threaded) == {"slow": ["fail"], "after": ["pass"]}
    agent = tmp_path / "hang.py"
    agent.write_text("import sys, time\nsys.stdin.read()\ntime.sleep(60)\n")
    command = f"command:{sys.executable} {agent}"
    hang = load_suite(write_suite(tmp_path / "h.yaml", [{"id": "slow", "timeout_s": 0.5}]))
    for options in (RunOptions(workers=1), RunOptions(workers=1, isolation=False)):
        entry = run_suite(hang, command, options).results[0]
        assert entry.trials[0].status == "fail"
        assert entry.trials[0].scores[0].detail == "timed out after 0.5s"
    slow = threaded.entry("slow")
    assert slow is not None and slow.trials[0].scores[0].detail == "timed out after 0.1s"


def test_a_non_finite_answer_fails_not_a_crash_at_save(tmp_path: Path) -> None:
    """NaN cannot be written to a strict-JSON run file: refused where the agent hands it over
    (a bad return is the agent's failure)."""
    suite = load_suite(write_suite(tmp_path / "s.yaml", [{"id": "nan"}, {"id": "after"}]))
    run = run_suite(suite, "tests.evals.agents_for_tests:NaNAgent", RunOptions(workers=1))
    assert statuses(run) == {"nan": ["fail"], "after": ["pass"]}
    error = run.results[0].trials[0].error
    assert error is not None and "finite number" in error
    assert runfile.loads(runfile.dumps(run), "run") == run


def test_a_dying_worker_is_replaced(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [
        {"id": "dies", "behavior": "exit"}, {"id": "a"}, {"id": "b"},
    ]))
    run = run_suite(suite, SCRIPTED, RunOptions(workers=1))
    assert statuses(run) == {"dies": ["fail"], "a": ["pass"], "b": ["pass"]}
    dies = run.entry("dies")
    assert dies is not None
    assert dies.trials[0].error == "the agent's worker process died (exit code 7)"


def test_transient_errors_are_retried_with_backoff(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [
        {"id": "recovers", "behavior": "transient", "counter": str(tmp_path / "c1"), "failures": 2},
        {"id": "gives_up", "behavior": "transient", "counter": str(tmp_path / "c2"), "failures": 5},
    ]))
    run = run_suite(suite, SCRIPTED, RunOptions(workers=2, max_attempts=3, **FAST_RETRY))
    recovers, gives_up = run.entry("recovers"), run.entry("gives_up")
    assert recovers is not None and gives_up is not None
    assert (recovers.trials[0].status, recovers.trials[0].attempts) == ("pass", 3)
    assert (gives_up.trials[0].status, gives_up.trials[0].attempts) == ("infra_error", 3)
    assert gives_up.trials[0].error == (
        "transient error persisted after 3 attempts: ConnectionError: connection reset by peer")
    assert (tmp_path / "c2").read_text() == "3"


@pytest.mark.parametrize("isolation", [True, False])
def test_retries_wait_an_exponential_backoff(tmp_path: Path, isolation: bool) -> None:
    counter = tmp_path / "c"
    suite = load_suite(write_suite(tmp_path / "s.yaml", [
        {"id": "flaky", "behavior": "transient", "counter": str(counter), "failures": 2}]))
    run = run_suite(suite, SCRIPTED, RunOptions(workers=1, isolation=isolation,
                                                max_attempts=3, retry_backoff_s=0.2))
    assert run.results[0].trials[0].attempts == 3
    starts = [float(line) for line in Path(f"{counter}.times").read_text().split()]
    gaps = [later - earlier for earlier, later in itertools.pairwise(starts)]
    # Lower bounds only: the 2nd try waits >= 0.2s, the 3rd >= 0.4s (doubled).
    assert len(gaps) == 2 and gaps[0] >= 0.2 and gaps[1] >= 0.4


def test_transient_classification() -> None:
    class RateLimitError(Exception):
        pass

    class Marked(Exception):
        transient = True

    assert is_transient(ConnectionResetError())
    assert is_transient(TimeoutError())
    assert is_transient(RateLimitError())
    assert is_transient(Marked())
    assert not is_transient(ValueError())


MIXED = [
    {"id": f"slow{i}", "behavior": "slow", "seconds": 0.02 * ((7 - i) % 5)} for i in range(8)
] + [
    {"id": "fails", "behavior": "fail"}, {"id": "raises", "behavior": "raise"},
    {"id": "quick"}, {"id": "last_slow", "behavior": "slow", "seconds": 0.15},
]


def test_same_results_in_the_same_order_with_1_2_and_8_workers(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", MIXED))
    exports = {}
    for workers in (1, 2, 8):
        run = run_suite(suite, SCRIPTED, RunOptions(workers=workers))
        assert [e.task_id for e in run.results] == [t["id"] for t in MIXED]
        exports[workers] = runfile.export_bytes(run)
    assert exports[1] == exports[2] == exports[8]


def test_in_process_runs_give_the_same_results(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", MIXED))
    isolated = run_suite(suite, SCRIPTED, RunOptions(workers=2))
    threaded = run_suite(suite, SCRIPTED, RunOptions(workers=3, isolation=False))
    serial = run_suite(suite, SCRIPTED, RunOptions(workers=1, isolation=False))
    plain = [runfile.export_bytes(r.model_copy(update={"settings": isolated.settings}))
             for r in (isolated, threaded, serial)]
    assert plain[0] == plain[1] == plain[2]
    assert threaded.settings.isolation is False


def test_epochs_repeat_every_task(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [{"id": "a"}, {"id": "b", "behavior": "fail"}]))
    run = run_suite(suite, SCRIPTED, RunOptions(workers=2, epochs=3))
    assert statuses(run) == {"a": ["pass"] * 3, "b": ["fail"] * 3}
    assert [t.epoch for t in run.results[0].trials] == [0, 1, 2]
    assert run.summary.pass_at_k == {"1": 0.5, "2": 0.5, "3": 0.5}
    assert run.summary.pass_hat_k == {"1": 0.5, "2": 0.5, "3": 0.5}


def test_shards_are_deterministic_round_robin_slices() -> None:
    tasks = [Task(id=f"t{i}", input="q") for i in range(7)]
    picked = [[task.id for _, task in select_tasks(tasks, shard=runfile.ShardInfo(index=i, count=3))]
              for i in (1, 2, 3)]
    assert picked == [["t0", "t3", "t6"], ["t1", "t4"], ["t2", "t5"]]


def test_shards_merged_equal_an_unsharded_run(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", MIXED[7:]))
    whole = run_suite(suite, SCRIPTED, RunOptions(workers=2))
    shards = [run_suite(suite, SCRIPTED, RunOptions(workers=2),
                        shard=runfile.ShardInfo(index=i, count=2)) for i in (1, 2)]
    assert [len(s.results) for s in shards] == [3, 2]
    merged = runfile.merge(shards)
    assert runfile.export_bytes(merged) == runfile.export_bytes(whole)


def test_tag_and_limit_select_in_suite_order(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [
        {"id": "a", "tags": ["x"]}, {"id": "b"}, {"id": "c", "tags": ["x"]}, {"id": "d", "tags": ["x"]},
    ]))
    run = run_suite(suite, SCRIPTED, RunOptions(workers=2), tags=["x"], limit=2)
    assert [(e.task_id, e.index) for e in run.results] == [("a", 0), ("c", 2)]
    assert run.settings.tags == ["x"] and run.settings.limit == 2


class InterruptAfter:
    """A progress sink that presses Ctrl-C once ``n`` trials have finished (and, when
    given, once ``wait_for`` exists, i.e. a hanging task is known to be running)."""

    def __init__(self, n: int, wait_for: Path | None = None) -> None:
        self.n = n
        self.wait_for = wait_for

    def started(self, total: int) -> None:
        self.total = total

    def finished(self, result: TaskResult, done: int, total: int) -> None:
        if done == self.n:
            if self.wait_for is not None:
                deadline = time.monotonic() + 30
                while not self.wait_for.exists() and time.monotonic() < deadline:
                    time.sleep(0.01)
            raise KeyboardInterrupt


def test_ctrl_c_kills_the_workers_and_returns_a_partial_run(tmp_path: Path) -> None:
    pid_file = tmp_path / "hang.pid"
    suite = load_suite(write_suite(tmp_path / "s.yaml", [
        {"id": "stuck", "behavior": "hang", "pid_file": str(pid_file)},
        {"id": "a"}, {"id": "b"}, {"id": "c"},
    ]))
    run = run_suite(suite, SCRIPTED, RunOptions(workers=2),
                    progress=InterruptAfter(2, wait_for=pid_file))
    assert run.interrupted is True
    assert [e.task_id for e in run.results] == ["a", "b"]
    assert run.summary.trials == 2
    assert process_gone(int(pid_file.read_text()))


def test_ctrl_c_in_process_returns_a_partial_run(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [{"id": "a"}, {"id": "b"}, {"id": "c"}]))
    run = run_suite(suite, SCRIPTED, RunOptions(workers=1, isolation=False),
                    progress=InterruptAfter(2))
    assert run.interrupted is True
    assert [e.task_id for e in run.results] == ["a", "b"]


def test_an_agent_that_cannot_load_fails_before_running(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [{"id": "a"}]))
    with pytest.raises(MeridianError, match="cannot import 'no_such_module_xyz'"):
        run_suite(suite, "no_such_module_xyz:Agent", RunOptions(workers=1))


def test_run_header_names_suite_agent_and_settings(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [{"id": "a"}]))
    git = runfile.GitInfo(commit="e" * 40, dirty=True)
    run = run_suite(suite, SCRIPTED, RunOptions(workers=1, offline=True), git=git)
    assert run.suite.hash == suite.hash and run.suite.name == "scripted"
    assert (run.agent.name, run.agent.version, run.agent.spec) == ("scripted", "1", SCRIPTED)
    assert run.settings.offline is True and run.git == git
    assert run.run_id is not None and len(run.run_id) == 12
    assert run.results[0].task.graders[0].name == "exact_match"  # re-gradable


def test_agent_latency_is_filled_in_when_the_agent_does_not_time_itself(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s.yaml", [{"id": "a"}]))
    run = run_suite(suite, "tests.evals.agents_for_tests:InstantAgent", RunOptions(workers=1))
    trajectory: Any = run.results[0].trials[0].trajectory
    assert trajectory.latency_s > 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    pid_file = tmp_path / "hang.pid"
    suite_path = write_suite(tmp_path / "s.yaml", [
        {"id": "stuck", "behavior": "hang", "pid_file": str(pid_file)}], timeout_s=300)
    script = (
        "from meridian.evals.suite import load_suite\n"
        "from meridian.evals.runner import RunOptions, run_suite\n"
        f"run_suite(load_suite({str(suite_path)!r}), {SCRIPTED!r}, RunOptions(workers=1))\n"
    )
    root = Path(__file__).resolve().parents[2]
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path,
                              env={**os.environ, "PYTHONPATH": str(root)})
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    worker = int(pid_file.read_text())
    parent.kill()  # SIGKILL: the parent gets no chance to clean up
    parent.wait()
    while not process_gone(worker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert process_gone(worker), "a worker outlived its killed parent"
