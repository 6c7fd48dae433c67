"""Which ``baseline.pinned`` event decides a baseline: never one made in an agent session.

The rule (docs/security.md, docs/ci.md): *every check compares with the latest pin of a
baseline that was not made in an agent session; a pin made in one is reported, and
fails the CI job, until a human pins the baseline again outside an agent session.*

An agent that regressed can otherwise move the baseline to its own run with one
ordinary command (``meridian baseline pin main latest && meridian sync``) and every
later comparison says "No regressions". ``meridian baseline pin`` marks its event
``agent_session`` when a Claude Code session runs it (``harness.agent_session_active``,
the mark ``harness.changed`` carries), and the Claude Code PreToolUse hook denies the
command to the agent's Bash tool like ``gate approve``. A same-user agent that unsets
the variables or appends the event with git plumbing is the documented residual (as
for a forged ``gate.approved``): branch protection on the state branch and a human
merging are what make a pin binding.

The pins are read by ``store.pin_rows`` (the shards that mention the kind, and the
cache of each shard's pins confirmed on the lines the answer rests on), and a pin whose commit is not a run's commit on this branch (hand-written or foreign) is
left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KIND = "baseline.pinned"


@dataclass(frozen=True)
class Pin:
    """One ``baseline.pinned`` event."""

    name: str
    run_id: str
    commit: str  # the state commit that wrote the run (what the tag points at)
    ts: str  # when it was pinned (the event's time)
    agent_session: bool

    def describe(self) -> str:
        who = "in an agent session" if self.agent_session else "outside an agent session"
        return f"run {self.run_id} pinned {self.ts[:19]}Z {who}"


@dataclass
class Decision:
    """The pins of one baseline: ``trusted`` decides it (None: every pin was made in an
    agent session), ``untrusted`` are the agent-session pins after it, oldest first."""

    name: str
    latest: Pin
    trusted: Pin | None
    untrusted: list[Pin] = field(default_factory=list)
    pins: list[Pin] = field(default_factory=list)  # every pin of the name, oldest first


def history(ledger: Any, rows: list[list[Any]] | None = None) -> dict[str, list[Pin]]:
    """``name -> pins`` in ledger order (the order they were appended, not by time), from
    ``store.pin_rows`` (the rows it read, when the caller has them)."""
    from meridian import gitio

    if rows is None:
        from meridian.evals.store import pin_rows

        rows = pin_rows(ledger)
    found: dict[str, list[Pin]] = {}
    for _, name, commit, run_id, ts, agent in rows:
        found.setdefault(name, []).append(Pin(name=name, run_id=run_id, commit=commit, ts=ts,
                                              agent_session=agent))
    tip = ledger.tip()
    on_branch: dict[str, bool] = {}

    def known(commit: str) -> bool:
        if commit not in on_branch:
            try:
                on_branch[commit] = tip is not None and gitio.is_ancestor(
                    ledger.repo, gitio.Oid(hex=commit), tip)
            except (ValueError, KeyError, gitio.GitError):
                on_branch[commit] = False
        return on_branch[commit]

    return {name: kept for name, pins in found.items()
            if (kept := [p for p in pins if known(p.commit)])}


def decisions(ledger: Any, rows: list[list[Any]] | None = None) -> dict[str, Decision]:
    """``name -> Decision`` for every baseline with at least one pin on the branch."""
    out: dict[str, Decision] = {}
    for name, pins in history(ledger, rows).items():
        trusted = next((p for p in reversed(pins) if not p.agent_session), None)
        after = pins[pins.index(trusted) + 1:] if trusted is not None else pins
        out[name] = Decision(name=name, latest=pins[-1], trusted=trusted,
                             untrusted=[p for p in after if p.agent_session], pins=pins)
    return out


def untrusted_text(decision: Decision) -> str:
    """One sentence: the agent-session pin(s) of a baseline and what is used instead."""
    latest = decision.untrusted[-1]
    count = len(decision.untrusted)
    head = (f"baseline {decision.name} was re-pinned in an agent session ({latest.describe()}"
            + (f"; {count} such pin(s)" if count > 1 else "") + ")")
    used = (f"checks use {decision.trusted.describe()}" if decision.trusted is not None
            else "no pin made outside an agent session remains, so nothing is compared")
    return (f"{head}: a pin made in an agent session is never the baseline; {used}; a human "
            f"pins the run they trust outside an agent session: meridian baseline pin "
            f"{decision.name} RUN && meridian sync (RUN {latest.run_id} accepts the agent's)")
