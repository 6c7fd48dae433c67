"""``.meridian/config.yaml``: the human-written settings of a project.

A missing file means defaults. A malformed one is a ConfigError naming the file and
line. Sections are strict (unknown keys are refused) so typos do not pass silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from meridian import yamlio
from meridian.plainread import CONFIG_FILE

CONFIG_PATH = Path(CONFIG_FILE)
DEFAULT_BRANCH = "meridian/state"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AnthropicSettings(_Strict):
    model: str = "claude-sonnet-4-6"
    # The Messages API endpoint. Only this committed setting chooses it: an
    # ANTHROPIC_BASE_URL in the environment is refused unless allow_env_base_url is true
    # (the agent being judged controls its environment). None: https://api.anthropic.com.
    base_url: str | None = Field(default=None, pattern=r"^https?://[^\s]+$")
    allow_env_base_url: bool = False
    # Room for the verdict (every issue found) and, where the model thinks, its thinking.
    max_tokens: int = Field(default=16_000, gt=0)
    # The whole evaluation, every request and retry and retry-after wait included.
    timeout_s: float = Field(default=300.0, gt=0)
    max_retries: int = Field(default=2, ge=0, le=10)
    # Characters of evidence per request; a larger bundle is reviewed in several requests.
    max_bundle_chars: int = Field(default=400_000, gt=1000)
    max_requests: int = Field(default=8, ge=1, le=100)
    # auto: think before recording the verdict where the model supports it; off: never.
    thinking: Literal["auto", "off"] = "auto"


class ClaudeCodeSettings(_Strict):
    """The ``claude-code`` evaluator: the ``claude`` CLI in print mode, read-only tools."""

    executable: str = "claude"
    model: str | None = None  # None: the CLI's default model
    max_turns: int = Field(default=30, ge=1, le=500)
    # The whole evaluation: every session of a large bundle included.
    timeout_s: float = Field(default=600.0, gt=0)
    max_bundle_chars: int = Field(default=400_000, gt=1000)
    max_requests: int = Field(default=4, ge=1, le=100)
    # The CLI honours ANTHROPIC_BASE_URL: refused unless this is true.
    allow_env_base_url: bool = False


class EvaluatorSettings(_Strict):
    kind: Literal["auto", "heuristic", "anthropic", "claude-code", "command"] = "auto"
    command: str | None = None
    threshold: float = Field(default=7.0, ge=0, le=10)
    # "model": the offline heuristic alone cannot pass a gate (auto without a key fails).
    require: Literal["model"] | None = None
    # High offline findings in lines the gate did not change block too (a new project).
    block_pre_existing: bool = False
    anthropic: AnthropicSettings = AnthropicSettings()
    claude_code: ClaudeCodeSettings = ClaudeCodeSettings()


class ApprovalSettings(_Strict):
    allow_non_interactive: bool = False


class HookSettings(_Strict):
    block_stale_on_push: bool = True
    # Stops blocked in a row before Meridian lets one through (and records that). Claude
    # Code ends a turn itself after 8 consecutive stop-hook blocks, unrecorded: stay below.
    claude_stop_retry_cap: int = Field(default=3, ge=1, le=7)


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
    if not yamlio.present(path):
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
  # auto: anthropic when ANTHROPIC_API_KEY is set, else claude-code when the `claude`
  # CLI is on PATH, else the offline heuristic evaluator.
  kind: auto
  threshold: 7.0
  # anthropic:
  #   model: claude-sonnet-4-6
  #   base_url: https://api.anthropic.com   # only this setting picks the endpoint
  #   timeout_s: 300                        # the whole evaluation, retries included
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
