"""The gate questions hooks ask, answered from the cached snapshot.

Both answers start from ``meridian.gates.snapshot`` (events folded once, caught up
incrementally) and fall back on the gates package's own ``derive_states`` and
``artifacts.snapshot`` only for the gates that matter, so a hook agrees with
``meridian status`` without paying for every gate on every call.
"""

from __future__ import annotations

from meridian.hooks.project import ProjectFacts

TYPE_CHECKING = False  # no `typing` on the Claude hook's allow path (meridian.lean)
if TYPE_CHECKING:  # imported where used: the PreToolUse view decides without pygit2
    from collections.abc import Callable
    from typing import Any

    from meridian import gitio


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
    # A passed gate is locked again when a gate it needs was reopened or failed since
    # (state stale, "needs X reopened"): what came after must wait for it.
    candidates = [g for g in gates if g in needy and snapshot.phase(g) in ("open", "passed")]
    if not candidates:
        return {}
    from meridian.gates.graph import load_graph
    from meridian.gates.state import derive_states
    from meridian.ledger import Ledger

    statuses = derive_states(Ledger(repo, facts.branch), load_graph(facts.root),
                             folds=snapshot.gate_folds())
    return {gate: [(need, statuses[need].state) for need in statuses[gate].unmet_needs]
            for gate in candidates if waits_for_needs(statuses[gate])}


def waits_for_needs(status: Any) -> bool:
    """Whether a derived gate status counts as locked for its files: never started with
    needs unmet, or passed with a need taken back since (stale, "needs X reopened")."""
    return status.state == "locked" or bool(status.stale_needs and status.unmet_needs)


def owner_states(statuses: dict[str, Any]) -> tuple[dict[str, str], dict[str, list[tuple[str, str]]]]:
    """From fully derived statuses: each gate's state as the shared-file rule sees it
    (``locked`` for a gate ``waits_for_needs``) and the locked gates' unmet needs; what
    ``meridian owners`` decides with, so it answers as the hooks do."""
    unmet = {gate: [(need, statuses[need].state) for need in status.unmet_needs]
             for gate, status in statuses.items() if waits_for_needs(status)}
    return ({gate: "locked" if gate in unmet else status.state
             for gate, status in statuses.items()}, unmet)


# --- the shared-file rule ------------------------------------------------------------
#
# A path may be owned by several gates (their artifact globs overlap). A commit or a
# write of it is refused only when EVERY gate that owns it is locked: while any owner is
# open, in progress, submitted, failed or passed, the file is somebody's work. A passed
# owner (its verdict bound to the file) is not a reason to refuse, but the change makes
# it stale, and the hook says so by name.

PASSED_PHASES = ("passed", "stale")  # a verdict bound to the file would go stale


# Plain classes, not dataclasses (``dataclasses`` imports ``inspect``): the PreToolUse
# view (``claude_view``) decides a deny with this rule before every tool call.


class PathDecision:
    """What committing (or writing) one path does, by the rule above."""

    def __init__(self, path: str, owners: list[tuple[str, str]], allowed: bool,
                 unmet: dict[str, list[tuple[str, str]]] | None = None,
                 goes_stale: list[str] | None = None) -> None:
        self.path = path
        self.owners = owners  # (gate, state), dependency order; [] for no gate
        self.allowed = allowed
        self.unmet = {} if unmet is None else unmet  # refused: gate -> unmet needs
        self.goes_stale = [] if goes_stale is None else goes_stale  # passed owners made stale

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PathDecision) and vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PathDecision({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"

    @property
    def effect(self) -> str:
        """One line: what a commit of this path does."""
        if not self.owners:
            return "allowed: owned by no gate"
        if not self.allowed:
            names = ", ".join(self.unmet)
            return (f"refused: every gate that owns it is locked ({names}); "
                    + "; ".join(f"{g} needs {_unmet_text(u)}" for g, u in self.unmet.items()))
        working = [g for g, s in self.owners if s not in ("locked", *PASSED_PHASES)]
        text = "allowed" + (f": work of {', '.join(working)}" if working else "")
        if self.goes_stale:
            text += (f"; makes passed gate {', '.join(self.goes_stale)} stale until submitted "
                     "again")
        return text

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "owners": [{"gate": g, "state": s} for g, s in self.owners],
                "allowed": self.allowed, "goes_stale": self.goes_stale,
                "locked": {g: [{"need": n, "state": s} for n, s in u]
                           for g, u in self.unmet.items()},
                "effect": self.effect}


def need_step(gate: str, state: str) -> str:
    """The command that moves an unmet need forward, by its state."""
    step = {
        "open": f"start {gate} first: meridian gate start {gate}",
        "in_progress": f"finish {gate} first: meridian gate submit {gate}",
        "failed": f"fix {gate} first (meridian why {gate}), then: meridian gate submit {gate}",
        "stale": f"{gate} changed since it passed: meridian gate submit {gate}",
        "submitted": f"{gate} awaits its verdict or a human's approval (meridian why {gate})",
        "locked": f"{gate} is itself locked: `meridian status` shows what comes first",
    }
    return step.get(state, f"pass {gate} first (meridian status)")


def _unmet_text(unmet: list[tuple[str, str]]) -> str:
    return ", ".join(f"{need} ({state})" for need, state in unmet)


def decide_path(path: str, owners: list[tuple[str, str]],
                unmet: dict[str, list[tuple[str, str]]]) -> PathDecision:
    """The rule, on plain values: ``owners`` as (gate, state), ``unmet`` the locked ones' needs."""
    if not owners:
        return PathDecision(path=path, owners=[], allowed=True)
    allowed = any(state != "locked" for _, state in owners)
    return PathDecision(
        path=path, owners=owners, allowed=allowed,
        unmet={} if allowed else {g: unmet.get(g, []) for g, _ in owners},
        goes_stale=[g for g, state in owners if state in PASSED_PHASES])


def path_decisions(repo: gitio.Repository, facts: ProjectFacts, paths: list[str], *,
                   use_cache: bool = True) -> list[PathDecision]:
    """The rule for each of ``paths``, from the cached snapshot (the hooks' hot path).

    Only gates that can be locked (never started, with needs) cost a state derivation;
    a passed owner is known from its events (``passed`` here also covers a passed gate
    that is already stale or awaits its approval).
    """
    read: list[Any] = []  # the snapshot, read once and only when a phase is asked

    def phase(gate: str) -> str:
        if not read:
            from meridian.gates.snapshot import load_snapshot

            read.append(load_snapshot(repo, facts.branch, use_cache=use_cache))
        return str(read[0].phase(gate))

    return decisions_from(facts, paths,
                          lambda gates: locked_gates(repo, facts, gates, use_cache=use_cache),
                          phase)


def decisions_from(facts: ProjectFacts, paths: list[str],
                   locked_of: Callable[[list[str]], dict[str, list[tuple[str, str]]]],
                   phase_of: Callable[[str], str]) -> list[PathDecision]:
    """The rule for each of ``paths`` given where gate states come from: ``locked_of``
    (of some gates, the locked ones -> their unmet needs, as ``locked_gates``) and
    ``phase_of`` (a gate's phase from its events). ``path_decisions`` reads them from
    the snapshot; the PreToolUse view from its cached phases."""
    owned = {path: facts.gates_for_path(path) for path in paths}
    gates = [g.id for g in facts.gates if any(g.id in o for o in owned.values())]
    if not gates:
        return [PathDecision(path=p, owners=[], allowed=True) for p in paths]
    locked = locked_of(gates)
    state = {g: "locked" if g in locked else phase_of(g) for g in gates}
    return [decide_path(p, [(g, state[g]) for g in owned[p]], locked) for p in paths]


class UnfinishedWork:
    def __init__(self, gate: str, summary: str, instructions: str,
                 files: list[str] | None = None) -> None:
        self.gate = gate
        self.summary = summary  # one line, for the event
        self.instructions = instructions  # what the agent must do, for Claude
        self.files = [] if files is None else files

    def __repr__(self) -> str:
        return f"UnfinishedWork(gate={self.gate!r}, summary={self.summary!r})"


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
    from meridian import gitio
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
