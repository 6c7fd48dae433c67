"""TrajectoryRecorder: how an agent reports what it did, one step at a time.

    rec = TrajectoryRecorder(task.id)
    with rec.step("tool", "search", input=query) as step:
        step.output = search(query)
    return rec.finish(final_output=answer)

``step`` times the block, numbers the step, and records an exception in
``step.error`` before re-raising it, so an agent that dies mid-tool still leaves an
accurate record of the tool that killed it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pydantic import JsonValue

from meridian.evals.types import Step, Trajectory

# Latencies are rounded so run files do not carry clock noise below a microsecond.
_LATENCY_DIGITS = 6


@dataclass
class StepHandle:
    """The mutable step an agent fills in inside ``with rec.step(...)``."""

    kind: str
    name: str
    input: JsonValue = None
    output: JsonValue = None
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0


def describe_exception(exc: BaseException) -> str:
    """``TypeName: message`` (or just the type name when the message is empty)."""
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


class TrajectoryRecorder:
    """Collects steps for one task and produces the final ``Trajectory``."""

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self._steps: list[Step] = []
        self._started = time.perf_counter()
        self._finished = False

    @property
    def steps(self) -> list[Step]:
        return list(self._steps)

    @contextmanager
    def step(self, kind: str, name: str, input: JsonValue = None) -> Iterator[StepHandle]:
        """Record one step; the yielded handle takes output, tokens and cost."""
        if self._finished:
            raise RuntimeError(f"trajectory of task {self.task_id!r} is already finished")
        handle = StepHandle(kind=kind, name=name, input=input)
        begin = time.perf_counter()
        try:
            yield handle
        except BaseException as exc:
            handle.error = describe_exception(exc)
            raise
        finally:
            end = time.perf_counter()
            self._steps.append(
                Step(
                    index=len(self._steps),
                    kind=handle.kind,
                    name=handle.name,
                    input=handle.input,
                    output=handle.output,
                    error=handle.error,
                    started_at=round(begin - self._started, _LATENCY_DIGITS),
                    latency_s=round(end - begin, _LATENCY_DIGITS),
                    tokens_in=handle.tokens_in,
                    tokens_out=handle.tokens_out,
                    cost_usd=handle.cost_usd,
                )
            )

    def finish(self, final_output: JsonValue) -> Trajectory:
        """The agent terminated normally with ``final_output``."""
        return self._build(final_output=final_output, completed=True, error=None)

    def fail(self, error: BaseException | str, final_output: JsonValue = None) -> Trajectory:
        """The agent gave up: the trajectory is incomplete and says why."""
        message = error if isinstance(error, str) else describe_exception(error)
        return self._build(final_output=final_output, completed=False, error=message)

    def _build(self, *, final_output: JsonValue, completed: bool, error: str | None) -> Trajectory:
        self._finished = True
        steps = list(self._steps)
        return Trajectory(
            task_id=self.task_id,
            steps=steps,
            final_output=final_output,
            completed=completed,
            error=error,
            latency_s=round(time.perf_counter() - self._started, _LATENCY_DIGITS),
            cost_usd=round(sum(s.cost_usd for s in steps), 10),
            tokens_in=sum(s.tokens_in for s in steps),
            tokens_out=sum(s.tokens_out for s in steps),
        )
