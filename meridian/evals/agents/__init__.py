"""Agents and how they are named on the command line.

The whole contract between Meridian and an agent is the ``Agent`` protocol:
``name``, ``version`` and ``run(task) -> Trajectory``. ``load_agent`` resolves:

- ``reference-v1`` / ``reference-v2``: the built-in deterministic reference agent;
- ``command:PROGRAM [ARGS]``: any executable, task JSON on stdin, trajectory JSON out;
- ``module:attr`` (``attr`` may be dotted): a class (instantiated with no
  arguments), a factory function (called with none), or an agent instance. The
  repository root (the git work tree holding the current directory, else the
  current directory) is put on ``sys.path`` first, so ``agents.mine:build`` imports
  from the repository without ``PYTHONPATH=.``.

``run`` receives an ``AgentTask`` (id, input, metadata, timeout and only the
fields the suite lists under ``visible:``), never the graders or, unless visible,
the target. ``run`` may be ``async def``: such agents run on an event loop,
``--max-concurrency`` tasks at a time.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Protocol, runtime_checkable

from meridian.errors import MeridianError
from meridian.evals.agents.command import AgentInfraError, CommandAgent
from meridian.evals.agents.reference import ReferenceAgent
from meridian.evals.types import AgentTask, Trajectory

__all__ = ["Agent", "AgentInfraError", "CommandAgent", "ReferenceAgent", "agent_label", "load_agent"]

BUILTINS = ("reference-v1", "reference-v2")
FORMS = "reference-v1, reference-v2, command:PROGRAM or module:attr"


@runtime_checkable
class Agent(Protocol):
    name: str
    version: str

    def run(self, task: AgentTask) -> Trajectory: ...


class _Labelled:
    """An agent object that lacks ``name``/``version``, given them from its spec."""

    def __init__(self, inner: Any, name: str, version: str) -> None:
        self._inner = inner
        self.name = name
        self.version = version

    def run(self, task: AgentTask) -> Any:
        return self._inner.run(task)


def load_agent(spec: str) -> Agent:
    """The agent ``spec`` names; a MeridianError (exit 2) says what is wrong with it."""
    spec = spec.strip()
    if spec in BUILTINS:
        return ReferenceAgent("v1" if spec.endswith("v1") else "v2")
    if spec.startswith("command:"):
        return CommandAgent(spec.removeprefix("command:").strip())
    if ":" not in spec:
        raise MeridianError(f"agent {spec!r}: unknown agent (expected {FORMS})")
    return _import_agent(spec)


def repository_root() -> str:
    """The git work tree holding the current directory, else the current directory."""
    import os
    from pathlib import Path

    here = Path(os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return str(folder)
    return str(here)


def _import_agent(spec: str) -> Agent:
    import sys

    module_name, _, attr_path = spec.partition(":")
    if not module_name or not attr_path:
        raise MeridianError(f"agent {spec!r}: expected module:attr (e.g. mypkg.agent:build)")
    root = repository_root()
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise MeridianError(f"agent {spec!r}: cannot import {module_name!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the user's module is broken (SyntaxError, ...)
        raise MeridianError(f"agent {spec!r}: importing {module_name!r} failed: "
                            f"{type(exc).__name__}: {exc}") from None
    target: Any = module
    for part in attr_path.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise MeridianError(f"agent {spec!r}: {module_name!r} has no attribute {attr_path!r}") from None
    if inspect.isclass(target) or (callable(target) and not _has_run(target)):
        try:
            target = target()
        except Exception as exc:  # noqa: BLE001 - a constructor needing wiring we cannot guess
            raise MeridianError(
                f"agent {spec!r}: calling {attr_path} with no arguments failed: "
                f"{type(exc).__name__}: {exc}"
            ) from None
    if not _has_run(target):
        raise MeridianError(
            f"agent {spec!r}: {type(target).__name__} object has no run(task) method"
        )
    name = getattr(target, "name", None)
    version = getattr(target, "version", None)
    if isinstance(name, str) and isinstance(version, str):
        return target  # type: ignore[no-any-return]
    return _Labelled(target, name if isinstance(name, str) else spec,
                     version if isinstance(version, str) else "unversioned")


def _has_run(candidate: Any) -> bool:
    return callable(getattr(candidate, "run", None)) and not inspect.isclass(candidate)


def agent_label(agent: Agent) -> str:
    """``name@version`` for run files and tables."""
    return f"{agent.name}@{agent.version}"
