"""The newest run of each baselined suite against its baseline: what the pre-push
check reports (and refuses on).

    from meridian.evals.baselines import check_baselines
    for check in check_baselines(ledger):
        check.failures    # why the gate fails (regressions, missing tasks, infra errors...)
        check.uncovered   # candidate tasks the baseline no longer covers (changed, added)

The candidate for a baseline is the newest stored FULL run of the same suite NAME
(not the same suite hash: editing a suite must not make the check stop applying).
A run that is partial against the baseline (interrupted, a shard, or missing tasks
the baseline ran, as a quick ``--limit 1`` try is) is a trial run: it is passed over
and named in ``partial``, so it neither blocks a push nor hides the full run before
it; ``eval compare --fail-on-regression`` still fails on it, and CI runs the full
suite. When the candidate is the baseline itself
there is nothing to check. A suite edited since the baseline is still checked on its
unchanged tasks, and the tasks the baseline cannot judge are listed instead of
silently skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from meridian.errors import MeridianError
from meridian.evals import compare, store


@dataclass
class BaselineCheck:
    """``failures`` without a ``comparison``: a run that could not be read or compared
    (the check fails: it is never passed over)."""

    baseline: str  # its name
    baseline_run: str
    suite: str
    latest_run: str
    failures: list[str] = field(default_factory=list)
    uncovered: list[str] = field(default_factory=list)
    regressions: list[str] = field(default_factory=list)
    comparison: compare.Comparison | None = None
    partial: list[str] = field(default_factory=list)  # newer partial runs passed over

    @property
    def ok(self) -> bool:
        return not self.failures


def check_baselines(ledger: Any, policy: compare.GatePolicy | None = None, *,
                    known: list[store.Baseline] | None = None) -> list[BaselineCheck]:
    """One BaselineCheck per pinned baseline that has a newer run of its suite.

    The baselines are those of the ``baseline.pinned`` events (``store.baselines``; a
    tag moved or deleted with git alone moves nothing), or ``known`` when the caller
    read them already."""
    # The pre-push check warns on changed or removed tasks (`uncovered`) rather than
    # refusing them; CI's `eval compare --fail-on-regression` refuses them (rt4 F6).
    policy = policy or compare.GatePolicy(accept_changed_tasks=True)
    every = store.index(ledger, include_pruned=True)
    visible = [e for e in every if not e.pruned]
    checks: list[BaselineCheck] = []
    for baseline in (known if known is not None else store.baselines(ledger)):
        if baseline.run_id is None:
            continue
        base_entry = next((e for e in every if e.run_id == baseline.run_id), None)
        if base_entry is None:
            continue
        same_suite = [e for e in visible if e.data.suite == base_entry.data.suite]
        partial: list[str] = []
        chosen: compare.Comparison | None = None
        base_run = None
        unreadable: str | None = None
        latest = base_entry.run_id
        for entry in reversed(same_suite):
            if entry.run_id == base_entry.run_id:
                break
            latest = entry.run_id
            # read as `eval compare` reads them (runview: the models' checks, no models);
            # a run that cannot be read or compared fails the check (never skipped: a
            # forged newer run would otherwise hide the one that regressed)
            try:
                base_run = base_run or store.load_for_compare(ledger, base_entry.run_id, every)
            except MeridianError as exc:
                unreadable = f"baseline run {base_entry.run_id} cannot be read: {exc}"
                break
            try:
                candidate = store.load_for_compare(ledger, entry.run_id, every)
            except MeridianError as exc:
                unreadable = f"run {entry.run_id} cannot be read: {exc}"
                break
            try:
                result = compare.compare(candidate, base_run, a_ref=entry.run_id,
                                         b_ref=f"baseline:{baseline.name}")
            except MeridianError as exc:
                unreadable = f"run {entry.run_id} cannot be compared with the baseline: {exc}"
                break
            if result.missing or "A" in result.interrupted or result.a_partial:
                partial.append(entry.run_id)
                continue
            chosen = result
            break
        if unreadable is not None:
            checks.append(BaselineCheck(
                baseline=baseline.name, baseline_run=base_entry.run_id,
                suite=base_entry.data.suite, latest_run=latest, failures=[unreadable],
                partial=partial))
            continue
        if chosen is None:
            if partial:
                checks.append(BaselineCheck(
                    baseline=baseline.name, baseline_run=base_entry.run_id,
                    suite=base_entry.data.suite, latest_run=partial[0], partial=partial))
            continue
        checks.append(BaselineCheck(
            baseline=baseline.name, baseline_run=base_entry.run_id, suite=base_entry.data.suite,
            latest_run=chosen.a_ref, failures=compare.gate_failures(chosen, policy),
            uncovered=chosen.uncovered, regressions=[c.task_id for c in chosen.regressions],
            comparison=chosen, partial=partial))
    return checks


