"""What a hook needs to know about the project, checked once per file content.

A hook must refuse a commit when ``.meridian/config.yaml``, the gate graph or the
rules file is invalid, so it validates them. Validation builds pydantic models, and
importing and building those costs more than the whole commit should. So the result
of a successful check (the branch, the hook settings, the gates' needs and artifact
globs, the switched-off mechanisms) is cached in ``.git/meridian/hook-project.json``,
keyed by the sha256 of each file's bytes and Meridian's version. When any byte
changes, or ``use_cache=False``, everything is validated again with the same loaders
the commands use, so a hook and ``meridian status`` never disagree about a file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from meridian import __version__
from meridian.lean import NamedTuple
from meridian.viewfile import sha256

TYPE_CHECKING = False  # no `typing` on the Claude hook's allow path (meridian.lean)
if TYPE_CHECKING:  # imported where used: the Claude hook's cached view reads facts without pygit2
    from typing import Any

    from meridian import gitio

CACHE_NAME = "hook-project.json"
CONFIG_FILE = Path(".meridian") / "config.yaml"


# Plain classes, not dataclasses: ``dataclasses`` imports ``inspect`` (some 10 ms) and the
# Claude hook's allow path (``claude_view``) reads these before every tool call.


class GateFacts(NamedTuple):
    id: str
    needs: tuple[str, ...]
    artifacts: tuple[str, ...]
    exclude: tuple[str, ...] = ()  # artifact globs the offline scan does not judge
    # offline findings outside the change block too (evaluator.block_pre_existing)
    block_pre_existing: bool = False


DEFAULT_FILES = (CONFIG_FILE.as_posix(), ".meridian/gates.yaml", ".meridian/rules.yaml")


class ProjectFacts:
    def __init__(self, root: Path, branch: str, block_stale_on_push: bool,
                 claude_stop_retry_cap: int, has_graph: bool,
                 gates: list[GateFacts] | None = None, disabled: frozenset[str] = frozenset(),
                 rule_ids: dict[str, str] | None = None,
                 files: tuple[str, ...] = DEFAULT_FILES, source: str = "checked") -> None:
        self.root = root
        self.branch = branch
        self.block_stale_on_push = block_stale_on_push
        self.claude_stop_retry_cap = claude_stop_retry_cap
        self.has_graph = has_graph
        self.gates: list[GateFacts] = gates if gates is not None else []  # dependency order
        self.disabled = disabled  # mechanisms whose rule is retired
        self.rule_ids: dict[str, str] = rule_ids if rule_ids is not None else {}  # mechanism -> rule id
        # config, gate graph and rules file ('/'-separated, repository-relative): what these
        # facts were read from, so a commit can be held to the versions it carries
        self.files = files
        self.source = source  # "checked" (validated now) or "cache"

    def __repr__(self) -> str:
        return (f"ProjectFacts(root={self.root!r}, branch={self.branch!r}, "
                f"gates={[g.id for g in self.gates]!r}, source={self.source!r})")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProjectFacts) and vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]

    def is_active(self, mechanism: str) -> bool:
        """``rules.is_active`` for this content of the rules file."""
        return mechanism not in self.disabled

    def heuristic_disabled(self) -> frozenset[str]:
        prefix = "heuristic:"
        return frozenset(m[len(prefix):] for m in self.disabled if m.startswith(prefix))

    def scan_excluded(self, path: str, gates: list[str]) -> bool:
        """Every one of ``gates`` keeps ``path`` out of its offline scan (``exclude:``)."""
        from meridian.gates import globs

        excludes = {g.id: g.exclude for g in self.gates}
        return bool(gates) and all(globs.matches_any(excludes.get(g, ()), path) for g in gates)

    def gates_for_path(self, path: str) -> list[str]:
        """Ids of the gates whose artifact globs cover ``path``, in dependency order."""
        from meridian.gates import globs

        return [g.id for g in self.gates if globs.matches_any(g.artifacts, path)]

    def blocks_pre_existing(self, gate: str) -> bool:
        """Whether ``gate``'s offline findings outside the change block too."""
        return any(g.block_pre_existing for g in self.gates if g.id == gate)

    @property
    def rules_file(self) -> str:
        return self.files[2]

    def rule_hint(self, mechanism: str) -> str:
        rule = self.rule_ids.get(mechanism)
        return f"rule {rule} ({mechanism})" if rule else f"mechanism {mechanism}"


def _digest(path: Path) -> str | None:
    """sha256 of the file's bytes; None when absent; ConfigError for a FIFO, a device or
    an oversized file (so a hook refuses instead of hanging on it)."""
    from meridian.userfiles import read_bounded

    try:
        return sha256(read_bounded(path)).hexdigest()
    except FileNotFoundError:
        if os.path.lexists(path):
            from meridian.userfiles import present

            present(path)  # raises: a dangling symlink is not "no file"
        return None


def _fingerprint(root: Path, gates_path: str, rules_path: str) -> dict[str, str | int | None]:
    return {
        "version": __version__,
        "format": 2,  # 2: gates carry block_pre_existing
        "config": _digest(root / CONFIG_FILE),
        "gates_path": gates_path,
        "gates": _digest(root / gates_path),
        "rules_path": rules_path,
        "rules": _digest(root / rules_path),
    }


def _to_json(facts: ProjectFacts) -> dict[str, Any]:
    return {
        "branch": facts.branch,
        "block_stale_on_push": facts.block_stale_on_push,
        "claude_stop_retry_cap": facts.claude_stop_retry_cap,
        "has_graph": facts.has_graph,
        "gates": [{"id": g.id, "needs": list(g.needs), "artifacts": list(g.artifacts),
                   "exclude": list(g.exclude), "block_pre_existing": g.block_pre_existing}
                  for g in facts.gates],
        "disabled": sorted(facts.disabled),
        "rule_ids": facts.rule_ids,
        "files": list(facts.files),
    }


def _from_json(root: Path, data: dict[str, Any]) -> ProjectFacts:
    return ProjectFacts(
        root=root, branch=data["branch"],
        block_stale_on_push=bool(data["block_stale_on_push"]),
        claude_stop_retry_cap=int(data["claude_stop_retry_cap"]),
        has_graph=bool(data["has_graph"]),
        gates=[GateFacts(g["id"], tuple(g["needs"]), tuple(g["artifacts"]),
                         tuple(g.get("exclude", ())), bool(g.get("block_pre_existing")))
               for g in data["gates"]],
        disabled=frozenset(data["disabled"]), rule_ids=dict(data["rule_ids"]),
        files=tuple(data["files"]), source="cache",
    )


def _cached(repo: gitio.Repository, root: Path) -> ProjectFacts | None:
    from meridian import gitio

    try:
        cached = json.loads((gitio.meridian_dir(repo) / CACHE_NAME).read_text(encoding="utf-8"))
        key = cached["key"]
        if _fingerprint(root, key["gates_path"], key["rules_path"]) != key:
            return None
        return _from_json(root, cached["facts"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def check_project(root: Path) -> tuple[ProjectFacts, str, str]:
    """Validate config, gate graph and rules now; ConfigError names the file and line."""
    from meridian.config import load_config
    from meridian.rules import disabled_mechanisms, load_rules
    from meridian.userfiles import present

    config = load_config(root)
    facts = ProjectFacts(
        root=root, branch=config.branch,
        block_stale_on_push=config.hooks.block_stale_on_push,
        claude_stop_retry_cap=config.hooks.claude_stop_retry_cap,
        has_graph=present(root / config.paths.gates),
    )
    if facts.has_graph:
        from meridian.gates.definition import evaluator_settings
        from meridian.gates.graph import load_graph

        graph = load_graph(root, config)
        facts.gates = [GateFacts(s.id, tuple(s.needs), tuple(s.artifacts), tuple(s.exclude),
                                 evaluator_settings(config, s).block_pre_existing)
                       for s in graph.ordered()]
    facts.disabled = disabled_mechanisms(root)
    facts.rule_ids = {rule.mechanism: rule.id for rule in load_rules(root) if rule.active}
    # as git names them; a path outside the repository is in no index, so never compared
    named = (CONFIG_FILE, config.paths.gates, config.paths.rules)
    facts.files = tuple(Path(os.path.normpath(path)).as_posix() for path in named)
    return facts, config.paths.gates, config.paths.rules


def load_facts(repo: gitio.Repository, root: Path, *, use_cache: bool = True) -> ProjectFacts:
    """The project's checked settings: from the cache when no file changed, else validated."""
    if use_cache:
        cached = _cached(repo, root)
        if cached is not None:
            return cached
    from meridian import gitio

    facts, gates_path, rules_path = check_project(root)
    document = {"key": _fingerprint(root, gates_path, rules_path), "facts": _to_json(facts)}
    target = gitio.meridian_dir(repo) / CACHE_NAME
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(document, sort_keys=True), encoding="utf-8")
    os.replace(temporary, target)
    return facts


def verified_cache_path(repo: gitio.Repository, branch: str) -> Path:
    """Where ``meridian.verify`` keeps the last verified commit (``verify.cache_path``)."""
    from meridian import gitio

    return gitio.meridian_dir(repo) / f"verified-{branch.replace('/', '__')}"


def state_tip(repo: gitio.Repository, branch: str) -> str | None:
    from meridian import gitio

    tip = gitio.ref_target(repo, f"refs/heads/{branch}")
    return None if tip is None else str(tip)


def ledger_problems(repo: gitio.Repository, branch: str, *, use_cache: bool = True) -> list[str]:
    """Problems on the state branch since the last verified commit ([] when intact).

    When the tip is the commit ``meridian verify`` last proved, nothing is read (and
    the verifier, with every record model, is not even imported). Otherwise only the
    new commits are checked; every memory, gate and run line is validated against its
    model on the way. ``use_cache=False`` walks the whole history.
    """
    tip = state_tip(repo, branch)
    if tip is None:
        return []
    if use_cache:
        try:
            if verified_cache_path(repo, branch).read_text().strip() == tip:
                return []
        except FileNotFoundError:
            pass
    from meridian.ledger import Ledger
    from meridian.verify import verify

    report = verify(Ledger(repo, branch), full=not use_cache)
    return [str(problem) for problem in report.problems]


def record_block(repo: gitio.Repository, branch: str, *, source: str, reason: str,
                 gate: str | None = None, files: list[str] | None = None,
                 extra: dict[str, Any] | None = None, ts: str | None = None,
                 dedupe: bool = False) -> bool:
    """Append a ``gate.blocked`` event; False when there is no state branch to write to.

    A missing branch is not created here: in a fresh clone that would start a second
    history beside the remote's (``meridian init`` adopts the remote's instead).
    ``ts``: when the block happened (a block recorded after the answer, from
    ``block_spool``), and ``dedupe`` to skip it when that very record is stored already.
    """
    return block_commit(repo, branch, source=source, reason=reason, gate=gate, files=files,
                        extra=extra, ts=ts, dedupe=dedupe) is not False


def block_commit(repo: gitio.Repository, branch: str, *, source: str, reason: str,
                 gate: str | None = None, files: list[str] | None = None,
                 extra: dict[str, Any] | None = None, ts: str | None = None,
                 dedupe: bool = False) -> Any:
    """``record_block``, returning the commit written (None when ``dedupe`` found the
    record stored already), or False when there is no state branch."""
    if state_tip(repo, branch) is None:
        return False
    from meridian.gates import events  # registers the gate.blocked model: writes are validated
    from meridian.ledger import EVENTS, Ledger, Write

    data: dict[str, Any] = {"source": source, "reason": reason}
    if gate:
        data["gate"] = gate
    if files:
        data["files"] = files
    data.update(extra or {})
    summary = f"gate.blocked {gate or '(no gate)'} by {source}: {reason}"
    ledger = Ledger(repo, branch)
    # what Ledger.emit writes, with the block's own time
    record = ledger.record(events.BLOCKED, data, ts=ts)
    tags = {"Meridian-Event": events.BLOCKED}
    if record.gate:
        tags["Meridian-Gate"] = record.gate
    tags["Meridian-Source"] = source
    tags["Meridian-Record"] = record.id
    write = Write(summary=summary[:200], trailers=tags, dedupe=dedupe).add(EVENTS, record)
    return ledger.commit(write).commit
