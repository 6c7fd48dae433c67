"""The runner: every selected task (times ``epochs``) through the agent, graded, in order.

Isolation (the default): tasks run in worker processes started with the ``spawn``
context (a clean interpreter, the parent's current directory and environment; no
forked locks or sockets). Each worker loads the agent once, then takes one task at a
time over a pipe, runs it, grades the trajectory and sends back the result. A task
that overruns its ``timeout_s`` is *stopped*: its worker (and the worker's whole
process group, so an agent's own subprocesses too) is killed with SIGKILL and a fresh
worker takes its place. A hung agent therefore cannot outlive its run.

Failures (what counts against the agent, and what does not):
- the agent's own failure FAILS the task and can regress: it raises, returns
  something that is not a trajectory, (``command:``) prints invalid output or exits
  non-zero, its worker process dies, or it overruns ``timeout_s``. The failing score
  is ``completed`` with a detail saying which;
- a transient error is an INFRA ERROR, never a verdict: ``InfraError`` (alias
  ``TransientError``) raised by the agent or its adapter, ``ConnectionError``,
  ``TimeoutError``, an exception with ``transient = True``, an SDK's rate-limit /
  connection / overload error, a ``command:`` agent exiting 75 (EX_TEMPFAIL). It is
  retried with exponential backoff, up to ``max_attempts`` tries, each with a full
  timeout; one that persists is listed as an infra error;
- a grader whose model API is down, or grading that hangs: an infra error.

Latency is the harness's own wall clock around the agent call; what the agent
reported is kept beside it (``Trajectory.reported_latency_s``).

A timed-out worker is killed with its whole process tree (``proctree.kill_tree``):
workers are child subreapers on Linux, so even a grandchild that started its own
session is found and killed.

``async def run`` agents run on one event loop in this process, at most
``max_concurrency`` tasks at a time (independent of ``workers``); a task that
overruns its timeout is cancelled and fails.

Results are collected by (task, epoch) and emitted in suite order whatever order they
completed in. Ctrl-C (or SIGTERM, as the CLI maps it) sets a flag the scheduling loop
checks; the workers are killed and the partial run is returned marked
``interrupted``. The signal never unwinds the middle of a pipe transfer.

``isolation=False`` runs tasks on threads in this process: no spawn cost (useful to
measure an agent or debug it), but a timeout cannot be enforced there. A trial that
overran fails as timed out when it returns; one that never returns hangs the run.
"""

from __future__ import annotations

import inspect
import json
import multiprocessing
import os
import signal
import sys
import time
import uuid
from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_connections
from typing import Any, Protocol

from meridian.errors import MeridianError
from meridian.evals import run as runfile
from meridian.evals.recorder import describe_exception
from meridian.evals.types import AgentTask, Score, Task, TaskResult, Trajectory

# Exception class names (anywhere in the MRO) of SDK errors worth a retry, matched by
# name so the runner imports no SDK.
TRANSIENT_NAMES = frozenset({
    "RateLimitError", "APIConnectionError", "APITimeoutError", "InternalServerError",
    "OverloadedError", "ServiceUnavailableError", "ConnectTimeout", "ReadTimeout",
})
WORKER_STARTUP_TIMEOUT_S = 120.0
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


class InfraError(Exception):
    """Raise from an agent or adapter for a transient failure that is not the agent's
    fault (rate limit, dropped connection): retried with backoff, then an infra error."""


TransientError = InfraError


class AgentFailure(Exception):
    """The agent failed on its own (bad output, non-zero exit): the task fails."""


class TaskTimeout(Exception):
    """Raise from an agent that enforces the task's timeout itself and ran out of it."""


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, ConnectionError | TimeoutError | InfraError):
        return True
    if getattr(exc, "transient", False) is True:
        return True
    return any(cls.__name__ in TRANSIENT_NAMES for cls in type(exc).__mro__)


@dataclass(frozen=True)
class RunOptions:
    workers: int = 4
    epochs: int = 1
    offline: bool = False
    isolation: bool = True
    max_attempts: int = 3
    retry_backoff_s: float = 1.0  # wait before the 2nd try; doubles for each further try
    grading_timeout_s: float = 600.0  # graders may call a model API (llm_judge)
    max_concurrency: int = 10  # async agents: tasks in flight on the event loop


class Progress(Protocol):
    def started(self, total: int) -> None: ...

    def finished(self, result: TaskResult, done: int, total: int) -> None: ...


@dataclass(frozen=True)
class Job:
    number: int  # position in the job list
    index: int  # the task's position in the suite
    task: Task
    epoch: int


def select_tasks(
    tasks: Sequence[Task],
    *,
    shard: runfile.ShardInfo | None = None,
) -> list[tuple[int, Task]]:
    """(position in ``tasks``, task) for the shard's slice, in order.

    Shards take every n-th task (round robin on suite order), so each shard gets a mix
    of the suite rather than one contiguous stretch of similar tasks, and the slice
    depends only on the task list: shard i of n is the same on every machine.
    """
    numbered = list(enumerate(tasks))
    if shard is None:
        return numbered
    return [(i, task) for i, task in numbered if i % shard.count == shard.index - 1]


# --- the worker process -------------------------------------------------------------


def _measured(produced: Any, elapsed: float) -> Trajectory:
    """The agent's return value as a trajectory timed by the harness's clock."""
    trajectory = produced if isinstance(produced, Trajectory) else Trajectory.model_validate(produced)
    reported = trajectory.latency_s if trajectory.latency_s > 0 else None
    return trajectory.model_copy(update={"latency_s": round(elapsed, 6),
                                         "reported_latency_s": reported})


def _failure_kind(exc: BaseException) -> str:
    return "transient" if is_transient(exc) else "failed"


def _run_agent(agent: Any, task: Task | AgentTask) -> tuple[str, Any, float]:
    """("ok", trajectory, seconds) | ("transient" | "failed" | "timeout", message, seconds).

    The agent is handed ``task.for_agent()``: never the target, graders or references.
    """
    shown = task.for_agent() if isinstance(task, Task) else task
    started = time.perf_counter()
    try:
        produced = agent.run(shown)
        if inspect.isawaitable(produced):
            produced = _await(produced)
        elapsed = time.perf_counter() - started
        trajectory = _measured(produced, elapsed)
    except TaskTimeout as exc:
        return "timeout", describe_exception(exc), time.perf_counter() - started
    except Exception as exc:  # noqa: BLE001 - any agent failure is data, not a crash
        return _failure_kind(exc), _failure_message(exc), time.perf_counter() - started
    return "ok", trajectory, elapsed


def _await(awaitable: Any) -> Any:
    import asyncio

    async def wrapped() -> Any:
        return await awaitable

    return asyncio.run(wrapped())


def _failure_message(exc: BaseException) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        from meridian import yamlio

        return f"agent returned something that is not a trajectory: {yamlio.first_error(exc)}"
    return describe_exception(exc)


def _die_with_parent(parent_pid: int) -> None:
    """On Linux, have the kernel SIGKILL this worker when its parent dies, even if the
    parent itself was SIGKILLed and never got to clean up."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


def _send(conn: Connection, *message: Any) -> None:
    """Worker -> parent: JSON bytes only. The parent never unpickles what a process that
    ran the agent sends (unpickling runs code), and it grades what it reads itself."""
    conn.send_bytes(json.dumps(message, separators=(",", ":")).encode())


def _worker_main(conn: Connection, agent_spec: str, parent_pid: int) -> None:
    # A process group of its own: killing the group takes the agent's subprocesses
    # with it, and a Ctrl-C at the terminal reaches only the parent, which decides.
    os.setpgrp()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent_pid)
    from meridian.evals import proctree

    proctree.become_subreaper()  # an agent's orphans stay in this tree, killable
    from meridian.evals.agents import load_agent

    try:
        agent = load_agent(agent_spec)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        _send(conn, "load_error", describe_exception(exc))
        return
    _send(conn, "ready", str(agent.name), str(agent.version))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if message is None:
            return
        if message[0] == "run":
            # Only the AgentTask is ever in this process: the target and the graders
            # stay in the parent, which grades the trajectory this worker sends back.
            _, number, shown = message
            kind, payload, _ = _run_agent(agent, shown)
            _reap_orphans()
            if kind == "ok":
                payload = payload.model_dump(mode="json")
            _send(conn, "ran", number, kind, payload)


def _reap_orphans() -> None:
    """Collect exited orphans re-parented to this (subreaper) worker, so none linger as
    zombies. Called between tasks only: mid-task, a reap could steal the exit status a
    ``subprocess`` call of the agent is waiting for."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# --- the parent side ----------------------------------------------------------------


@dataclass
class _Worker:
    process: Any  # multiprocessing SpawnProcess
    conn: Connection
    ready: bool = False
    job: Job | None = None
    attempt: int = 0
    deadline: float = 0.0

    @property
    def pid(self) -> int:
        return int(self.process.pid)


@dataclass
class _Grading:
    """One trajectory being graded in the parent, on a daemon thread of its own (a
    grader that hangs on a model API is abandoned at its deadline, never joined)."""

    job: Job
    attempt: int
    trajectory: Trajectory
    deadline: float
    result: TaskResult | None = None
    error: str | None = None
    done: bool = False


class _BadMessage(Exception):
    """A worker sent something that is not the protocol's plain data."""


@dataclass
class _Pending:
    job: Job
    attempt: int = 1
    not_before: float = 0.0


def kill_process_group(pid: int) -> None:
    """SIGKILL a worker, its process group and every descendant (new sessions too)."""
    from meridian.evals import proctree

    proctree.kill_tree(pid)


class _StopFlag:
    """Set by SIGINT/SIGTERM during a run; the scheduling loops check it.

    The handler only sets the flag and writes a byte to a pipe the process pool
    waits on, so an interrupt is handled at one known point of the loop, never in
    the middle of a pipe transfer or a worker spawn (where a KeyboardInterrupt
    could leave a worker unaccounted for and the run hanging).
    """

    def __init__(self) -> None:
        self.set = False
        self.raise_now = False
        self.wakeup: int | None = None
        self._write: int | None = None
        self._previous: dict[int, Any] = {}

    def _handler(self, signum: int, frame: Any) -> None:
        self.set = True
        if self._write is not None:
            try:
                os.write(self._write, b"!")
            except OSError:
                pass
        if self.raise_now:
            # The agent runs on this very thread (in-process, one at a time): only an
            # exception can stop it, and nothing of the harness is mid-transfer here.
            raise KeyboardInterrupt

    def install(self, *, raise_now: bool = False) -> None:
        import threading

        self.raise_now = raise_now
        if threading.current_thread() is not threading.main_thread():
            return  # signals reach the main thread only; KeyboardInterrupt still works
        self.wakeup, self._write = os.pipe()
        os.set_blocking(self._write, False)
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._handler)

    def restore(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        for fd in (self.wakeup, self._write):
            if fd is not None:
                os.close(fd)
        self.wakeup = self._write = None


@dataclass
class _Collector:
    total: int
    progress: Progress | None
    results: dict[int, TaskResult] = field(default_factory=dict)

    def add(self, job: Job, result: TaskResult) -> None:
        self.results[job.number] = result
        if self.progress is not None:
            self.progress.finished(result, len(self.results), self.total)


class _ProcessPool:
    """Worker processes that can each be killed and replaced on their own."""

    def __init__(self, agent_spec: str, options: RunOptions, collector: _Collector,
                 stop: _StopFlag | None = None) -> None:
        self.stop = stop or _StopFlag()
        self.agent_spec = agent_spec
        self.options = options
        self.collector = collector
        self.context = multiprocessing.get_context("spawn")
        self.workers: list[_Worker] = []
        self.pending: deque[_Pending] = deque()  # ready to go, in job order
        self.delayed: list[_Pending] = []  # retries waiting out their backoff
        self.grading: list[_Grading] = []  # trajectories graded here, in the parent
        self.agent_name: str | None = None  # as the first worker reported it
        self.agent_version: str | None = None
        self._graded_r, self._graded_w = os.pipe()  # a grading thread finished
        os.set_blocking(self._graded_r, False)

    def _spawn(self) -> _Worker:
        parent_end, child_end = self.context.Pipe()
        process = self.context.Process(
            target=_worker_main,
            args=(child_end, self.agent_spec, os.getpid()),
            daemon=True, name="meridian-eval-worker",
        )
        process.start()
        child_end.close()
        worker = _Worker(process=process, conn=parent_end,
                         deadline=time.monotonic() + WORKER_STARTUP_TIMEOUT_S)
        self.workers.append(worker)
        return worker

    def _retire(self, worker: _Worker) -> None:
        if worker.process.is_alive():
            kill_process_group(worker.pid)
        else:
            # Exited and reaped: its pid may already be another process's, so only the
            # group it led (its agent's leftovers) is killed, never "the tree of pid".
            from meridian.evals import proctree

            proctree.kill_tree(worker.pid, leader_exited=True)
        worker.process.join(10.0)  # SIGKILLed: bounded so shutdown can never hang
        worker.conn.close()
        self.workers.remove(worker)

    def run(self, jobs: Sequence[Job]) -> None:
        self.pending.extend(_Pending(job) for job in jobs)
        try:
            self._loop()
        finally:
            self.shutdown()
            os.close(self._graded_r)
            os.close(self._graded_w)

    def shutdown(self) -> None:
        for worker in self.workers:
            if worker.job is None:
                try:
                    worker.conn.send(None)
                except OSError:
                    pass
        deadline = time.monotonic() + 2.0
        for worker in list(self.workers):
            if worker.job is None:
                worker.process.join(max(0.0, deadline - time.monotonic()))
            self._retire(worker)

    def _wanted_workers(self) -> int:
        busy = sum(1 for w in self.workers if w.job is not None)
        return min(self.options.workers, busy + len(self.pending) + len(self.delayed))

    def _loop(self) -> None:
        while (self.pending or self.delayed or self.grading
               or any(w.job is not None for w in self.workers)):
            if self.stop.set:
                raise KeyboardInterrupt
            while len(self.workers) < self._wanted_workers():
                self._spawn()
            now = time.monotonic()
            due = [p for p in self.delayed if p.not_before <= now]
            self.delayed = [p for p in self.delayed if p.not_before > now]
            self.pending.extendleft(reversed(due))  # retries go before fresh jobs
            self._dispatch()
            waits = [w.deadline for w in self.workers if w.job is not None or not w.ready]
            waits += [p.not_before for p in self.delayed]
            waits += [g.deadline for g in self.grading]
            timeout = max(0.0, min(waits) - now) if waits else None
            handles: list[Any] = [w.conn for w in self.workers]
            handles += [w.process.sentinel for w in self.workers]
            handles.append(self._graded_r)
            if self.stop.wakeup is not None:
                handles.append(self.stop.wakeup)
            wait_connections(handles, timeout)
            for worker in list(self.workers):
                self._service(worker)
            self._collect_grades()

    def _dispatch(self) -> None:
        idle = [w for w in self.workers if w.ready and w.job is None]
        for worker in idle:
            if not self.pending:
                return
            item = self.pending.popleft()
            worker.job, worker.attempt = item.job, item.attempt
            worker.deadline = time.monotonic() + item.job.task.effective_timeout_s()
            worker.conn.send(("run", item.job.number, item.job.task.for_agent()))

    def _service(self, worker: _Worker) -> None:
        try:
            while worker.conn.poll():
                self._handle(worker, _decode(worker.conn.recv_bytes()))
                if worker not in self.workers:
                    return
        except (EOFError, OSError):
            pass
        except _BadMessage as exc:
            self._misbehaved(worker, str(exc))
            return
        if worker not in self.workers:
            return
        if not worker.process.is_alive():
            self._worker_died(worker)
        elif time.monotonic() >= worker.deadline and (worker.job is not None or not worker.ready):
            self._overran(worker)

    def _handle(self, worker: _Worker, message: list[Any]) -> None:
        tag = message[0] if message else None
        if tag == "ready" and len(message) == 3 and all(isinstance(m, str) for m in message[1:]):
            worker.ready = True
            if self.agent_name is None:
                self.agent_name, self.agent_version = message[1], message[2]
            return
        if tag == "load_error" and len(message) == 2:
            raise MeridianError(f"agent {self.agent_spec!r} failed to load in a worker: {message[1]}")
        job, attempt = worker.job, worker.attempt
        if (tag != "ran" or len(message) != 4 or job is None or message[1] != job.number
                or message[2] not in {"ok", "timeout", "transient", "failed"}):
            raise _BadMessage("the agent's worker sent a message outside the protocol")
        kind, payload = message[2], message[3]
        if kind == "ok":
            self._free(worker)
            self._start_grading(job, attempt, payload)
            return
        if kind == "timeout":
            self._finish(worker, timed_out(job, attempt))
            return
        if kind == "transient" and attempt < self.options.max_attempts:
            delay = self.options.retry_backoff_s * 2 ** (attempt - 1)
            self.delayed.append(_Pending(job, attempt + 1, time.monotonic() + delay))
            self._free(worker)
            return
        if kind == "transient":
            self._finish(worker, _infra(
                job, f"transient error persisted after {attempt} attempts: {payload}", attempt))
        else:
            self._finish(worker, agent_failed(job, str(payload), attempt))

    def _start_grading(self, job: Job, attempt: int, payload: Any) -> None:
        """Validate the returned trajectory (plain data) and grade it on a thread here,
        with graders the agent's process never touched."""
        from pydantic import ValidationError

        try:
            trajectory = Trajectory.model_validate(payload)
        except ValidationError as exc:
            from meridian import yamlio

            self.collector.add(job, agent_failed(
                job, f"agent returned something that is not a trajectory: "
                     f"{yamlio.first_error(exc)}", attempt))
            return
        grading = _Grading(job, attempt, trajectory,
                           time.monotonic() + self.options.grading_timeout_s)
        self.grading.append(grading)
        import threading

        threading.Thread(target=self._grade, args=(grading,), daemon=True,
                         name="meridian-grade").start()

    def _grade(self, grading: _Grading) -> None:
        from meridian.evals.graders import grade_task

        try:
            grading.result = grade_task(grading.job.task, grading.trajectory,
                                        offline=self.options.offline, epoch=grading.job.epoch,
                                        attempts=grading.attempt)
        except Exception as exc:  # noqa: BLE001 - a grader's failure is an infra error
            grading.error = describe_exception(exc)
        finally:
            grading.done = True
            try:
                os.write(self._graded_w, b"g")
            except OSError:
                pass  # the run is over (pipe closed): the result is dropped

    def _collect_grades(self) -> None:
        try:
            while os.read(self._graded_r, 4096):
                pass
        except BlockingIOError:
            pass
        now = time.monotonic()
        still: list[_Grading] = []
        for grading in self.grading:
            job, attempt = grading.job, grading.attempt
            if grading.done and grading.result is not None:
                self.collector.add(job, grading.result)
            elif grading.done:
                self.collector.add(job, _infra(job, f"grading failed: {grading.error}", attempt,
                                               grading.trajectory))
            elif now >= grading.deadline:
                # The agent answered; a grader (a model API) hung: not the agent's failure.
                error = f"grading timed out after {self.options.grading_timeout_s:g}s"
                self.collector.add(job, _infra(job, error, attempt, grading.trajectory))
                grading.done = True  # abandoned: its thread's late result is ignored
            else:
                still.append(grading)
        self.grading = still

    def _free(self, worker: _Worker) -> None:
        worker.job = None

    def _finish(self, worker: _Worker, result: TaskResult) -> None:
        assert worker.job is not None
        job = worker.job
        self._free(worker)
        self.collector.add(job, result)

    def _misbehaved(self, worker: _Worker, message: str) -> None:
        job, attempt = worker.job, worker.attempt
        self._retire(worker)
        if job is None:
            raise MeridianError(f"agent {self.agent_spec!r}: {message}")
        self.collector.add(job, agent_failed(job, message, attempt))

    def _worker_died(self, worker: _Worker) -> None:
        job, attempt, code = worker.job, worker.attempt, worker.process.exitcode
        self._retire(worker)
        if job is None:
            if not worker.ready:
                raise MeridianError(f"agent {self.agent_spec!r}: a worker exited with code "
                                    f"{code} while loading it")
            return
        # The agent took its own process down (os._exit, a crash in native code).
        self.collector.add(job, agent_failed(
            job, f"the agent's worker process died (exit code {code})", attempt))

    def _overran(self, worker: _Worker) -> None:
        job, attempt = worker.job, worker.attempt
        self._retire(worker)
        if job is None:
            raise MeridianError(f"agent {self.agent_spec!r} did not load in a worker within "
                                f"{WORKER_STARTUP_TIMEOUT_S:.0f}s")
        self.collector.add(job, timed_out(job, attempt))


def _decode(data: bytes) -> list[Any]:
    try:
        message = json.loads(data)
    except ValueError:
        raise _BadMessage("the agent's worker sent something that is not JSON") from None
    if not isinstance(message, list):
        raise _BadMessage("the agent's worker sent a message outside the protocol")
    return message


def _infra(job: Job, error: str, attempts: int, trajectory: Trajectory | None = None) -> TaskResult:
    return TaskResult(task_id=job.task.id, epoch=job.epoch, status="infra_error", scores=[],
                      trajectory=trajectory, error=error, attempts=attempts)


def agent_failed(job: Job, message: str, attempts: int) -> TaskResult:
    """A trial whose agent failed on its own: a FAILED task (it can regress), with a
    failing ``completed`` score saying why."""
    score = Score(name="completed", value=0.0, passed=False, detail=f"agent failed: {message}",
                  metadata={"agent_failure": True})
    return TaskResult(task_id=job.task.id, epoch=job.epoch, status="fail", scores=[score],
                      error=message, attempts=attempts)


def timed_out(job: Job, attempts: int) -> TaskResult:
    """A trial whose agent overran ``timeout_s``: a failure of the agent, not of the harness.

    The one score is a failing ``completed`` (the agent did not terminate normally);
    there is no trajectory, since what a killed agent had done is lost. The detail is
    the same whichever side noticed the timeout, so the run file stays deterministic.
    """
    detail = f"timed out after {job.task.effective_timeout_s():g}s"
    score = Score(name="completed", value=0.0, passed=False, detail=detail,
                  metadata={"agent_failure": True, "timed_out": True})
    return TaskResult(task_id=job.task.id, epoch=job.epoch, status="fail", scores=[score],
                      attempts=attempts)


# --- in-process execution (no isolation) ----------------------------------------------


def _run_in_process(agent: Any, jobs: Sequence[Job], options: RunOptions,
                    collector: _Collector, stop: _StopFlag) -> None:
    from meridian.evals.graders import grade_task

    def attempt_job(job: Job) -> TaskResult:
        attempt = 1
        while True:
            kind, payload, elapsed = _run_agent(agent, job.task)
            if kind == "timeout" or (kind == "ok" and elapsed > job.task.effective_timeout_s()):
                return timed_out(job, attempt)
            if kind == "ok":
                return grade_task(job.task, payload, offline=options.offline, epoch=job.epoch,
                                  attempts=attempt)
            if kind == "transient" and attempt < options.max_attempts:
                time.sleep(options.retry_backoff_s * 2 ** (attempt - 1))
                attempt += 1
                continue
            if kind == "transient":
                return _infra(job, f"transient error persisted after {attempt} attempts: {payload}",
                              attempt)
            return agent_failed(job, str(payload), attempt)

    if options.workers <= 1:
        for job in jobs:
            if stop.set:
                raise KeyboardInterrupt
            collector.add(job, attempt_job(job))
        return
    executor = ThreadPoolExecutor(max_workers=options.workers, thread_name_prefix="meridian-eval")
    try:
        futures: dict[Future[TaskResult], Job] = {executor.submit(attempt_job, j): j for j in jobs}
        remaining = set(futures)
        while remaining:
            if stop.set:
                raise KeyboardInterrupt
            done, remaining = wait_futures(remaining, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in done:
                collector.add(futures[future], future.result())
    finally:
        executor.shutdown(wait=False, cancel_futures=True)


# --- async agents on one event loop --------------------------------------------------


def is_async_agent(agent: Any) -> bool:
    """Whether ``agent.run`` is ``async def`` (an API-bound agent)."""
    run = getattr(agent, "run", None)
    inner = getattr(agent, "_inner", None)  # a _Labelled wrapper
    if inner is not None:
        run = getattr(inner, "run", run)
    return inspect.iscoroutinefunction(run)


def _run_async(agent: Any, jobs: Sequence[Job], options: RunOptions, collector: _Collector,
               stop: _StopFlag) -> None:
    import asyncio

    from meridian.evals.graders import grade_task

    if options.max_concurrency < 1:
        raise MeridianError(f"--max-concurrency must be at least 1, got {options.max_concurrency}")
    inner = getattr(agent, "_inner", agent)

    async def attempt_job(job: Job, gate: asyncio.Semaphore) -> TaskResult:
        attempt = 1
        while True:
            async with gate:
                started = time.perf_counter()
                call = asyncio.ensure_future(inner.run(job.task.for_agent()))
                done, _ = await asyncio.wait({call}, timeout=job.task.effective_timeout_s())
                elapsed = time.perf_counter() - started
                if not done:
                    call.cancel()
                    return timed_out(job, attempt)
                try:
                    trajectory = _measured(call.result(), elapsed)
                except TaskTimeout:
                    return timed_out(job, attempt)
                except Exception as exc:  # noqa: BLE001 - the agent's failure is data
                    kind, message = _failure_kind(exc), _failure_message(exc)
                else:
                    kind, message = "ok", ""
            if kind == "ok":
                return await asyncio.to_thread(grade_task, job.task, trajectory,
                                               offline=options.offline, epoch=job.epoch,
                                               attempts=attempt)
            if kind == "transient" and attempt < options.max_attempts:
                await asyncio.sleep(options.retry_backoff_s * 2 ** (attempt - 1))
                attempt += 1
                continue
            if kind == "transient":
                return _infra(job, f"transient error persisted after {attempt} attempts: {message}",
                              attempt)
            return agent_failed(job, message, attempt)

    async def main() -> None:
        gate = asyncio.Semaphore(options.max_concurrency)
        pending = {asyncio.ensure_future(attempt_job(job, gate)): job for job in jobs}
        try:
            while pending:
                if stop.set:
                    raise _Stopped
                done, _ = await asyncio.wait(set(pending), timeout=0.1,
                                             return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    collector.add(pending.pop(future), future.result())
        finally:
            for future in pending:
                future.cancel()
            if pending:
                await asyncio.wait(set(pending), timeout=1.0)

    try:
        asyncio.run(main())
    except _Stopped:
        raise KeyboardInterrupt from None


class _Stopped(Exception):
    """The async loop saw the stop flag (turned into KeyboardInterrupt outside it)."""


# --- the run ------------------------------------------------------------------------


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_tasks(
    tasks: Sequence[Task],
    agent_spec: str,
    options: RunOptions,
    *,
    progress: Progress | None = None,
    shard: runfile.ShardInfo | None = None,
    agent: Any = None,
    reported: dict[str, str] | None = None,
) -> tuple[list[runfile.TaskEntry], bool]:
    """Run ``tasks`` (already filtered, in suite order); (entries in order, interrupted).

    ``agent`` is the loaded agent for in-process runs (loaded from ``agent_spec`` when
    omitted); workers always load their own from ``agent_spec``, and then ``reported``
    receives the ``name`` and ``version`` the first worker's agent has.
    """
    if options.epochs < 1:
        raise MeridianError(f"--epochs must be at least 1, got {options.epochs}")
    if options.workers < 1:
        raise MeridianError(f"--workers must be at least 1, got {options.workers}")
    selected = select_tasks(tasks, shard=shard)
    # Epoch-major order: an interrupted run has covered as many tasks as possible.
    jobs = [Job(number=n, index=index, task=task, epoch=epoch)
            for n, (epoch, (index, task)) in enumerate(
                (epoch, item) for epoch in range(options.epochs) for item in selected)]
    collector = _Collector(total=len(jobs), progress=progress)
    if progress is not None:
        progress.started(len(jobs))
    interrupted = False
    stop = _StopFlag()
    in_this_thread = (not options.isolation and options.workers <= 1
                      and not (agent is not None and is_async_agent(agent)))
    stop.install(raise_now=in_this_thread)
    try:
        if agent is not None and is_async_agent(agent):
            _run_async(agent, jobs, options, collector, stop)
        elif options.isolation:
            pool = _ProcessPool(agent_spec, options, collector, stop)
            try:
                pool.run(jobs)
            finally:
                if reported is not None and pool.agent_name is not None:
                    reported.update(name=pool.agent_name, version=str(pool.agent_version))
        else:
            if agent is None:
                from meridian.evals.agents import load_agent

                agent = load_agent(agent_spec)
            _run_in_process(agent, jobs, options, collector, stop)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        stop.restore()
    interrupted = interrupted or stop.set
    return _entries(selected, jobs, collector.results), interrupted


def _entries(selected: Iterable[tuple[int, Task]], jobs: Sequence[Job],
             results: dict[int, TaskResult]) -> list[runfile.TaskEntry]:
    trials: dict[int, list[TaskResult]] = {}
    for job in jobs:
        if job.number in results:
            trials.setdefault(job.index, []).append(results[job.number])
    return [
        runfile.TaskEntry(index=index, task=task,
                          trials=sorted(trials[index], key=lambda t: t.epoch))
        for index, task in selected if index in trials
    ]


def refuse_without_model_key(tasks: Sequence[Task], *, offline: bool) -> None:
    """Refuse, before any agent runs, tasks graded by a model when no API key is set.

    Otherwise the agent would be run (and billed) for every such task and its
    verdict then dropped as an infra error. ``--offline`` skips those tasks instead.
    """
    if offline or os.environ.get("ANTHROPIC_API_KEY"):
        return
    from meridian.evals.suite import needs_network

    needy = [task.id for task in tasks if needs_network(task)]
    if needy:
        shown = ", ".join(needy[:5]) + (" ..." if len(needy) > 5 else "")
        raise MeridianError(
            f"{len(needy)} selected task(s) are graded by a model (llm_judge: {shown}) and "
            "ANTHROPIC_API_KEY is not set: set it, or pass --offline to skip them")


def run_suite(
    suite: Any,
    agent_spec: str,
    options: RunOptions,
    *,
    tags: Sequence[str] = (),
    limit: int | None = None,
    shard: runfile.ShardInfo | None = None,
    progress: Progress | None = None,
    git: runfile.GitInfo | None = None,
) -> runfile.Run:
    """Run a loaded suite (``meridian.evals.suite.Suite``) and build its Run.

    Selection: ``tags`` (any of), tasks needing the network dropped when offline, the
    first ``limit``, then the shard's slice. ``suite.hash`` covers the whole suite, so
    runs of different selections of one suite still compare task by task.
    """
    from meridian.evals.agents import load_agent

    tasks = suite.select(tags=tags, limit=limit, offline=options.offline)
    refuse_without_model_key(tasks, offline=options.offline)
    # With isolation on, the agent's code is loaded only in workers, never here: this
    # process grades, and an agent imported here could patch the graders (or anything).
    agent = None if options.isolation else load_agent(agent_spec)
    reported: dict[str, str] = {}
    started_at, started = utc_now(), time.monotonic()
    entries, interrupted = run_tasks(tasks, agent_spec, options, progress=progress, shard=shard,
                                     agent=agent, reported=reported)
    if agent is None and not reported:
        agent = load_agent(agent_spec)  # no task ran (nothing selected): only its label
    name = reported.get("name", str(getattr(agent, "name", agent_spec)))
    version = reported.get("version", str(getattr(agent, "version", "")))
    # Positions in the selection become positions in the suite, so shards merge back
    # into suite order and runs of different selections line up.
    position = {task.id: i for i, task in enumerate(suite.tasks)}
    entries = [entry.model_copy(update={"index": position[entry.task_id]}) for entry in entries]
    return runfile.Run(
        run_id=new_run_id(),
        created_at=started_at,
        duration_s=round(time.monotonic() - started, 3),
        git=git,
        suite=runfile.SuiteInfo(name=suite.name, hash=suite.hash, path=str(suite.path),
                                tasks=suite.task_hashes()),
        agent=runfile.AgentInfo(name=name, version=version, spec=agent_spec),
        settings=runfile.Settings(epochs=options.epochs, offline=options.offline,
                                  isolation=options.isolation, tags=sorted(tags), limit=limit,
                                  shard=shard),
        interrupted=interrupted,
        summary=runfile.summarize(entries, options.epochs),
        results=entries,
    )
