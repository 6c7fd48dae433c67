"""Tiny agents for the runner, store and CLI tests, named as ``tests.evals.agents_for_tests:NAME``.

``ScriptedAgent`` does what the task's ``metadata.behavior`` says, so one suite can
hold a passing task, a failing one, a raising one and a hanging one:

    pass        answer ``metadata.answer`` (default "42"; agents never see ``expected``)
    fail        answer something else
    raise       raise ValueError
    hang        write the worker's pid to ``metadata.pid_file`` and sleep for an hour
    spawn_hang  start ``sleep 3600``, write its pid to ``metadata.pid_file``, sleep
    exit        os._exit(7) (the worker process dies)
    transient   raise ConnectionError the first ``metadata.failures`` times (counted in
                the file ``metadata.counter``, since retries may land in another worker;
                each attempt's start time is appended to ``<counter>.times``)
    secret      answer ``metadata.answer`` with an API key in a tool step's input and output
    leak        put the API key everywhere an agent can: a failed step's error, a
                step output (plain and base64-encoded), a Basic auth header, a URL
                and the final answer
    leak_raise  raise an exception whose message carries the API key
    slow        sleep ``metadata.seconds`` then pass

A task whose id is listed in the environment variable SCRIPTED_FAIL (comma-separated)
fails whatever its behaviour: a second "version" of the agent for regression tests.
"""

from __future__ import annotations

import base64
import os
import subprocess
import time
from pathlib import Path

from meridian.evals.recorder import TrajectoryRecorder
from meridian.evals.types import Task, Trajectory

PLANTED_KEY = "sk-ant-api03-PLANTEDplantedPLANTED0123456789abcdefXYZ"


class ScriptedAgent:
    name = "scripted"
    version = "1"

    def run(self, task: Task) -> Trajectory:
        behavior = str(task.metadata.get("behavior", "pass"))
        if task.id in os.environ.get("SCRIPTED_FAIL", "").split(","):
            behavior = "fail"
        rec = TrajectoryRecorder(task.id)
        if behavior == "raise":
            raise ValueError(f"agent broke on {task.id}")
        if behavior == "leak_raise":
            raise PermissionError(f"401 for key {PLANTED_KEY}")
        if behavior == "leak":
            return self._leak(rec)
        if behavior == "exit":
            os._exit(7)
        if behavior == "hang":
            Path(str(task.metadata["pid_file"])).write_text(str(os.getpid()))
            time.sleep(3600)
        if behavior == "spawn_hang":
            child = subprocess.Popen(["sleep", "3600"])
            Path(str(task.metadata["pid_file"])).write_text(f"{os.getpid()} {child.pid}")
            time.sleep(3600)
        if behavior == "transient":
            counter = Path(str(task.metadata["counter"]))
            seen = int(counter.read_text()) if counter.exists() else 0
            counter.write_text(str(seen + 1))
            with Path(f"{counter}.times").open("a") as times:  # when each attempt started
                times.write(f"{time.time()}\n")
            if seen < int(str(task.metadata.get("failures", 1))):
                raise ConnectionError("connection reset by peer")
        if behavior == "slow":
            time.sleep(float(str(task.metadata["seconds"])))
        answer = task.metadata.get("answer", "42") if behavior != "fail" else "wrong"
        with rec.step("tool", "lookup", input={"q": task.input}) as step:
            if behavior == "secret":
                step.input = {"headers": {"x-api-key": PLANTED_KEY}, "note": f"key={PLANTED_KEY}"}
                step.output = f"used {PLANTED_KEY} and Bearer {PLANTED_KEY}"
            else:
                step.output = answer
            step.cost_usd = 0.001
        return rec.finish(final_output=answer)

    @staticmethod
    def _leak(rec: TrajectoryRecorder) -> Trajectory:
        encoded = base64.b64encode(f"x-api-key: {PLANTED_KEY}".encode()).decode()
        basic = base64.b64encode(f"bot:{PLANTED_KEY}".encode()).decode()
        try:
            with rec.step("tool", "http", input={"auth": f"Basic {basic}",
                                                 "url": f"https://bot:{PLANTED_KEY}@example.com"}):
                raise PermissionError(f"rejected {PLANTED_KEY}")
        except PermissionError:
            pass
        with rec.step("tool", "http", input={"retry": True}) as step:
            step.output = {"echo": encoded}
        return rec.finish(final_output=f"done with {PLANTED_KEY}")


class InstantAgent:
    """Answers with the expected value at once and records nothing: pure harness cost."""

    name = "instant"
    version = "1"

    def run(self, task: Task) -> Trajectory:
        return Trajectory(task_id=task.id, final_output=task.metadata.get("answer", "42"),
                          completed=True)


class NaNAgent:
    """Answers NaN for the task ``nan`` (a float no strict-JSON run file can hold)."""

    name = "nan"
    version = "1"

    def run(self, task: Task) -> dict[str, object]:
        answer = float("nan") if task.id == "nan" else task.metadata.get("answer", "42")
        return {"task_id": task.id, "final_output": answer, "completed": True}


class RaisingAgent:
    """Raises on every task: a broken candidate."""

    name = "raising"
    version = "1"

    def run(self, task: Task) -> Trajectory:
        raise RuntimeError(f"crashed on {task.id}")


class BadReturnAgent:
    """Returns something that is not a trajectory."""

    name = "bad-return"
    version = "1"

    def run(self, task: Task) -> object:
        return "the answer is 42"


class LyingLatencyAgent:
    """Sleeps ``metadata.seconds`` and then claims to have taken a millisecond."""

    name = "liar"
    version = "1"

    def run(self, task: Task) -> Trajectory:
        time.sleep(float(str(task.metadata.get("seconds", 0.3))))
        return Trajectory(task_id=task.id, final_output=task.metadata.get("answer", "42"),
                          completed=True, latency_s=0.001)


class AsyncSleepAgent:
    """``async def run``: awaits ``metadata.seconds`` (an API call stand-in), then answers."""

    name = "async-sleeper"
    version = "1"

    async def run(self, task: Task) -> Trajectory:
        import asyncio

        await asyncio.sleep(float(str(task.metadata.get("seconds", 0.2))))
        if task.metadata.get("behavior") == "raise":
            raise ValueError("async agent broke")
        return Trajectory(task_id=task.id, final_output=task.metadata.get("answer", "42"),
                          completed=True)


class SnoopingAgent:
    """Looks through the interpreter (gc, the caller's frames) for the full Task and
    answers with its ``expected``: the agent a worker must not be able to help."""

    name = "snoop"
    version = "1"

    def run(self, task: Task) -> Trajectory:
        import gc
        import sys

        from meridian.evals.types import Task as FullTask

        found = [obj.expected for obj in gc.get_objects()
                 if isinstance(obj, FullTask) and obj.id == task.id]
        frame = sys._getframe(1)
        while frame is not None:
            found += [v.expected for v in frame.f_locals.values()
                      if isinstance(v, FullTask) and v.id == task.id]
            frame = frame.f_back
        return Trajectory(task_id=task.id, final_output=found[0] if found else "nothing found",
                          completed=True)
