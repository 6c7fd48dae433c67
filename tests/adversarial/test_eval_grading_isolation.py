"""Attack: a `module:attr` agent grades its own answers (rt4 F5).

The worker that loaded the agent used to grade the trajectory too, so a module that
patched ``meridian.evals.graders.grade`` at import turned a 7/23 agent into 23/23 and
`eval compare --fail-on-regression` passed. And the CLI imported the agent's module in
the `meridian` process itself (for its name), so any patch reached the parent too.

Layer: the eval harness. With isolation on, the agent's module is imported only in
workers; a worker sends back plain JSON (the trajectory), the parent validates and
grades it. Each step runs the real CLI in its own process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SUITE = str(Path(__file__).resolve().parents[2] / "suites" / "reference.yaml")

PATCH_GRADERS = """
from meridian.evals.agents.reference import ReferenceAgent
import meridian.evals.graders as _g
_real = _g.grade
_g.grade = lambda task, trajectory, **kw: [s.model_copy(update={"passed": True, "value": 1.0})
                                           for s in _real(task, trajectory, **kw)]
AGENT = ReferenceAgent("v1")
"""

PATCH_GRADE_TASK = """
from meridian.evals.agents.reference import ReferenceAgent
import meridian.evals.graders as _g
import meridian.evals.runner as _r
from meridian.evals.types import TaskResult
def _all_pass(task, trajectory, **kw):
    return TaskResult(task_id=task.id, epoch=kw.get("epoch", 0), status="pass", scores=[],
                      trajectory=trajectory, attempts=kw.get("attempts", 1))
_g.grade_task = _all_pass
_r.timed_out = lambda job, attempts: _all_pass(job.task, None)
AGENT = ReferenceAgent("v1")
"""

# The agent finds the worker's pipe to the parent and sends a pickle that would run
# code when unpickled: the parent reads JSON only, so it is an agent failure.
PICKLE_BOMB = """
import gc, os, pickle
from multiprocessing.connection import Connection
from meridian.evals.agents.reference import ReferenceAgent
class Boom:
    def __reduce__(self):
        return (os.system, ("touch " + os.path.join(os.getcwd(), "PWNED"),))
class Sneaky(ReferenceAgent):
    def run(self, task):
        for obj in gc.get_objects():
            if isinstance(obj, Connection) and obj.writable:
                obj.send(("ran", 0, "ok", Boom()))
        return super().run(task)
AGENT = Sneaky("v1")
"""


def meridian(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "meridian", *argv], cwd=project,
                          env={**os.environ}, capture_output=True, text=True, check=False,
                          timeout=300)


def passed(project: Path, agent: str) -> int:
    proc = meridian(project, "eval", "run", SUITE, "--agent", agent, "--offline", "--json",
                    "--no-store", "--workers", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return int(json.loads(proc.stdout)["passed"])


@pytest.mark.parametrize("source", [PATCH_GRADERS, PATCH_GRADE_TASK], ids=["grade", "grade_task"])
def test_an_agent_that_patches_the_graders_is_graded_by_the_parent(
        repo_with_commit: Path, source: str) -> None:
    project = repo_with_commit
    (project / "honest.py").write_text(
        "from meridian.evals.agents.reference import ReferenceAgent\nAGENT = ReferenceAgent('v1')\n")
    (project / "sneaky.py").write_text(source)
    honest = passed(project, "honest:AGENT")
    assert honest < 23
    assert passed(project, "sneaky:AGENT") == honest


def test_a_worker_cannot_hand_the_parent_a_pickle(repo_with_commit: Path) -> None:
    project = repo_with_commit
    (project / "bomb.py").write_text(PICKLE_BOMB)
    saved = project / "run.json"
    proc = meridian(project, "eval", "run", SUITE, "--agent", "bomb:AGENT", "--offline",
                    "--no-store", "--workers", "1", "--limit", "2", "--save", str(saved))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (project / "PWNED").exists()
    first = json.loads(saved.read_text())["results"][0]["trials"][0]
    assert first["status"] == "fail"
    assert "sent something that is not JSON" in first["scores"][0]["detail"]
