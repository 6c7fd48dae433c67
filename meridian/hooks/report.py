"""What a git hook refused, how it is printed, and how it is recorded.

A refusal is printed as its one-line reason, the files or findings under it, and a
``next:`` line saying what to do; it is recorded as a ``gate.blocked`` event whose
``source`` is the hook (``pre-commit``, ``pre-push``), so ``meridian log`` and
``meridian why GATE`` show it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from meridian import gitio
from meridian.errors import MeridianError
from meridian.hooks.project import record_block

MAX_LISTED = 20


@dataclass
class Refusal:
    reason: str  # one line: recorded in the event and printed first
    next_step: str  # what to do about it
    gate: str | None = None
    files: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)  # printed under the reason
    mechanism: str | None = None  # the rule mechanism that refused


@dataclass
class Result:
    refusals: list[Refusal] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.refusals


def listed(items: list[str]) -> list[str]:
    """At most MAX_LISTED items, then how many more there are."""
    shown = items[:MAX_LISTED]
    more = len(items) - len(shown)
    return shown + ([f"... and {more} more"] if more else [])


def render(result: Result, hook: str, action: str) -> list[str]:
    """Lines for stderr: warnings, then each refusal with its details and next step."""
    lines = [f"meridian {hook}: warning: {w}" for w in result.warnings]
    if result.ok:
        return lines
    count = len(result.refusals)
    lines.append(f"meridian {hook}: {action} refused ({count} problem{'s' if count > 1 else ''})")
    for refusal in result.refusals:
        lines.append(f"- {refusal.reason}")
        lines += [f"    {detail}" for detail in refusal.details]
        lines.append(f"  next: {refusal.next_step}")
    return lines


def record(repo: gitio.Repository, branch: str | None, result: Result, source: str) -> None:
    """One ``gate.blocked`` event per refusal (a warning when there is nowhere to write)."""
    if branch is None:
        result.warnings.append("refusal not recorded: the configuration names no state branch")
        return
    for refusal in result.refusals:
        extra = {"rule": refusal.mechanism} if refusal.mechanism else None
        try:
            recorded = record_block(repo, branch, source=source, reason=refusal.reason,
                                    gate=refusal.gate, files=refusal.files or None, extra=extra)
        except MeridianError as exc:
            # The refusal stands, and is still printed, whether or not it could be written.
            result.warnings.append(f"refusal not recorded: {exc}")
            return
        if not recorded:
            result.warnings.append(f"refusal not recorded: no state branch {branch} here "
                                   "(`meridian init` creates or adopts it)")
            return
