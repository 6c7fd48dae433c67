"""The gate questions hooks ask, answered from the cached snapshot.

Both answers start from ``meridian.gates.snapshot`` (events folded once, caught up
incrementally) and fall back on the gates package's own ``derive_states`` and
``artifacts.snapshot`` only for the gates that matter, so a hook agrees with
``meridian status`` without paying for every gate on every call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from meridian import gitio
from meridian.hooks.project import ProjectFacts


def locked_gates(repo: gitio.Repository, facts: ProjectFacts, gates: list[str], *,
                 use_cache: bool = True) -> dict[str, list[tuple[str, str]]]:
    """Of ``gates``, those locked now -> their unmet needs as (need, state), in order."""
    needy = {g.id for g in facts.gates if g.needs}
    # A gate without needs is never locked: its files need no gate state at all.
    if not any(g in needy for g in gates):
        return {}
    from meridian.gates.snapshot import load_snapshot

    snapshot = load_snapshot(repo, facts.branch, use_cache=use_cache)
    # Only a gate never started can be locked: a started gate's files are its own work.
    candidates = [g for g in gates if g in needy and snapshot.phase(g) == "open"]
    if not candidates:
        return {}
    from meridian.gates.graph import load_graph
    from meridian.gates.state import derive_states
    from meridian.ledger import Ledger

    statuses = derive_states(Ledger(repo, facts.branch), load_graph(facts.root),
                             folds=snapshot.gate_folds())
    return {gate: [(need, statuses[need].state) for need in statuses[gate].unmet_needs]
            for gate in candidates if statuses[gate].state == "locked"}


@dataclass
class UnfinishedWork:
    gate: str
    summary: str  # one line, for the event
    instructions: str  # what the agent must do, for Claude
    files: list[str] = field(default_factory=list)


def issue_lines(document: Any) -> list[str]:
    """A stored verdict's issues, one line each, in the order it keeps them
    (``evaluators.models.ordered_issues``: highest severity first, then file and line)."""
    issues = document.get("issues") if isinstance(document, dict) else None
    if not isinstance(issues, list):
        return []
    lines = []
    for issue in (i for i in issues if isinstance(i, dict)):
        where = issue.get("file") or "(project)"
        if issue.get("file") and issue.get("line"):
            where = f"{issue['file']}:{issue['line']}"
        lines.append(f"- {issue.get('severity')} {where}: {issue.get('message')}")
    return lines


def _matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    from meridian.gates import globs

    return lambda path: globs.matches_any(patterns, path)


def _shown(files: list[str]) -> str:
    return ", ".join(files[:8]) + (f" and {len(files) - 8} more" if len(files) > 8 else "")


def unfinished_work(repo: gitio.Repository, facts: ProjectFacts) -> UnfinishedWork | None:
    """The first gate (dependency order) an agent must not walk away from, or None.

    A failed gate whose artifacts still hash to the failed verdict's subject: its
    blocking issues still stand. A failed or in-progress gate whose artifacts changed
    (since the verdict, or since the gate was started) without a submission: the
    change was never judged.
    """
    from meridian.gates.snapshot import load_snapshot

    snapshot = load_snapshot(repo, facts.branch)
    candidates = [g.id for g in facts.gates if snapshot.phase(g.id) in ("failed", "in_progress")]
    if not candidates:
        return None
    from meridian.gates import artifacts, globs
    from meridian.gates.graph import load_graph
    from meridian.ledger import Ledger

    graph = load_graph(facts.root)
    listing = globs.worktree_files(repo, facts.root)
    for gate in candidates:
        spec = graph.gate(gate)
        fold = snapshot.folds[gate]
        current = artifacts.snapshot(repo, facts.root, spec.artifacts, listing).subject
        if snapshot.phase(gate) == "failed":
            if current == fold.get("subject"):
                document = Ledger(repo, facts.branch).read_json(fold["verdict"]) \
                    if fold.get("verdict") else None
                issues = issue_lines(document)
                return UnfinishedWork(
                    gate=gate,
                    summary=(f"gate {gate} failed its last verdict (overall {fold.get('overall')}) "
                             "and its artifacts are unchanged since"),
                    instructions="\n".join([
                        (f"Meridian: do not stop yet. Gate {gate} failed its last verdict "
                        f"(overall {fold.get('overall')}, threshold {fold.get('threshold')}) and "
                        "its artifacts have not changed since, so its blocking issues still stand:"),
                        *issues[:10],
                        *([f"- ... and {len(issues) - 10} more"] if len(issues) > 10 else []),
                        (f"Fix them, then run `meridian gate submit {gate}` and continue until it "
                        f"passes (`meridian why {gate}` shows the whole verdict)."),
                    ]))
            changed = gitio.tree_changed_files(repo, str(fold.get("subject")), current) or []
            return UnfinishedWork(
                gate=gate, files=changed,
                summary=f"gate {gate} changed since its failed verdict and was not submitted",
                instructions=(
                    f"Meridian: do not stop yet. You changed gate {gate}'s artifacts since its "
                    f"failed verdict ({_shown(changed) or 'its files'}) but did not submit them. "
                    f"Run `meridian gate submit {gate}`; if it fails, fix the issues it lists "
                    "and submit again."))
        base = fold.get("base_commit")
        before = gitio.files_at_commit(repo, base, _matcher(tuple(spec.artifacts))) \
            if base else {}
        started_from = gitio.tree_of_files(repo, before)
        if current == started_from:
            continue  # nothing done on it yet: stopping loses no unjudged work
        changed = gitio.tree_changed_files(repo, started_from, current) or []
        return UnfinishedWork(
            gate=gate, files=changed,
            summary=f"gate {gate} is in progress with changed artifacts that were never submitted",
            instructions=(
                f"Meridian: do not stop yet. Gate {gate} is in progress and its artifacts "
                f"changed ({_shown(changed) or 'its files'}) but were never submitted. Run "
                f"`meridian gate submit {gate}` so an independent evaluator judges them; if it "
                "fails, fix what it lists and submit again."))
    return None
