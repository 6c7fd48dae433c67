"""TrajectoryRecorder: numbering, timing, exception capture, finish and fail."""

from __future__ import annotations

import pytest

from meridian.evals.recorder import TrajectoryRecorder


def test_steps_are_numbered_and_carry_what_the_agent_set() -> None:
    rec = TrajectoryRecorder("t1")
    with rec.step("llm", "plan", input="question") as step:
        step.output = "use calculator"
        step.tokens_in, step.tokens_out, step.cost_usd = 100, 20, 0.001
    with rec.step("tool", "calculator", input={"expression": "6*7"}) as step:
        step.output = 42
        step.cost_usd = 0.0005
    traj = rec.finish(final_output="42")
    assert [(s.index, s.kind, s.name) for s in traj.steps] == [(0, "llm", "plan"), (1, "tool", "calculator")]
    assert traj.steps[1].input == {"expression": "6*7"} and traj.steps[1].output == 42
    assert (traj.tokens_in, traj.tokens_out) == (100, 20)
    assert traj.cost_usd == pytest.approx(0.0015)
    assert traj.completed and traj.error is None and traj.final_output == "42"
    assert traj.steps[1].started_at >= traj.steps[0].started_at + traj.steps[0].latency_s
    assert traj.latency_s >= sum(s.latency_s for s in traj.steps)


def test_an_exception_is_recorded_in_the_step_and_re_raised() -> None:
    rec = TrajectoryRecorder("t1")
    with pytest.raises(ZeroDivisionError), rec.step("tool", "calculator", input="1/0") as step:
        step.tokens_in = 7
        1 / 0  # noqa: B018
    [recorded] = rec.steps
    assert recorded.error == "ZeroDivisionError: division by zero"
    assert recorded.tokens_in == 7 and recorded.output is None


def test_an_exception_without_message_records_its_type() -> None:
    rec = TrajectoryRecorder("t1")
    with pytest.raises(KeyboardInterrupt), rec.step("tool", "slow"):
        raise KeyboardInterrupt
    assert rec.steps[0].error == "KeyboardInterrupt"


def test_fail_marks_the_trajectory_incomplete_and_keeps_the_steps() -> None:
    rec = TrajectoryRecorder("t1")
    try:
        with rec.step("tool", "lookup"):
            raise TimeoutError("upstream timed out")
    except TimeoutError as exc:
        traj = rec.fail(exc)
    assert not traj.completed
    assert traj.error == "TimeoutError: upstream timed out"
    assert traj.steps[0].error == "TimeoutError: upstream timed out"
    assert rec.fail("gave up").error == "gave up"


def test_no_steps_after_finish() -> None:
    rec = TrajectoryRecorder("t1")
    rec.finish(final_output=None)
    with pytest.raises(RuntimeError, match="already finished"), rec.step("tool", "late"):
        pass
