"""``.meridian/config.yaml``: the human-written settings of a project.

A missing file means defaults. A malformed one is a ConfigError naming the file and
line. Sections are strict (unknown keys are refused) so typos do not pass silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from meridian import yamlio

CONFIG_PATH = Path(".meridian") / "config.yaml"
DEFAULT_BRANCH = "meridian/state"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AnthropicSettings(_Strict):
    model: str = "claude-sonnet-4-6"
    max_tokens: int = Field(default=4096, gt=0)
    timeout_s: float = Field(default=120.0, gt=0)
    max_bundle_chars: int = Field(default=400_000, gt=1000)


class EvaluatorSettings(_Strict):
    kind: Literal["auto", "heuristic", "anthropic", "command"] = "auto"
    command: str | None = None
    threshold: float = Field(default=7.0, ge=0, le=10)
    anthropic: AnthropicSettings = AnthropicSettings()


class ApprovalSettings(_Strict):
    allow_non_interactive: bool = False


class HookSettings(_Strict):
    block_stale_on_push: bool = True
    claude_stop_retry_cap: int = Field(default=3, ge=1)


class CalibrationSettings(_Strict):
    # A gap between two moments of activity longer than this ends an interval of
    # active time (``meridian.memory.calibration``).
    idle_cut_minutes: float = Field(default=30.0, gt=0, le=24 * 60)


class PathSettings(_Strict):
    gates: str = ".meridian/gates.yaml"
    rules: str = ".meridian/rules.yaml"
    features: str = ".meridian/features.yaml"
    suites: str = "suites"


class Config(_Strict):
    version: int = 1
    branch: str = Field(default=DEFAULT_BRANCH, pattern=r"^[A-Za-z0-9._/-]+$")
    remote: str = "origin"
    evaluator: EvaluatorSettings = EvaluatorSettings()
    approval: ApprovalSettings = ApprovalSettings()
    hooks: HookSettings = HookSettings()
    paths: PathSettings = PathSettings()
    calibration: CalibrationSettings = CalibrationSettings()


def load_config(root: Path | None) -> Config:
    """The project's config (defaults when ``root`` is None or the file is absent)."""
    if root is None:
        return Config()
    path = root / CONFIG_PATH
    if not path.is_file():
        return Config()
    located = yamlio.load(path)
    if located.data is None:
        return Config()
    if not isinstance(located.data, dict):
        raise located.error((), "expected a mapping of settings")
    return yamlio.validate(Config, located)


DEFAULT_CONFIG_TEXT = """\
# Meridian settings. Every key is optional; these are the defaults.
version: 1
# The branch that holds gate state, memory, verdicts and evaluation runs.
branch: meridian/state
remote: origin
evaluator:
  # auto: anthropic when ANTHROPIC_API_KEY is set, else the offline heuristic evaluator.
  kind: auto
  threshold: 7.0
approval:
  # Let `meridian gate approve` run without a terminal (lets an agent approve: not advised).
  allow_non_interactive: false
hooks:
  block_stale_on_push: true
calibration:
  # Actual hours are active time: a gap longer than this between two moments of work
  # (Claude session activity, commits of the gate's files) ends an interval.
  idle_cut_minutes: 30
paths:
  gates: .meridian/gates.yaml
  rules: .meridian/rules.yaml
  features: .meridian/features.yaml
  suites: suites
"""
