"""Harness changes as events: every change of the gate graph, rules, config or features.

Layer: local guardrails and state derivation. The harness is what enforces the work:
a program that drops a gate's needs, retires a rule or sets a rubber-stamp evaluator
weakens every later check, so each such commit is recorded as ``harness.changed`` with
what changed in words::

    gate impl: needs [spec] removed; checks removed
    rule no-stub-code retired
    evaluator: heuristic -> command

The harness files: the config, the gates, rules and features files at the paths the
config gives (each described as what it is, whatever its name), and the tracked files
an evaluator command names (``meridian.gates.programs``: ``python3 tools/judge.py``).

Recorded by the pre-commit hook (from the staged files, before the commit exists; its
fast path looks only at commits staging a ``.meridian/`` or YAML file, so a commit that
changes only an evaluator program is recorded by the catch-up) and caught up by the
gate commands (``gate start|submit|approve|reopen``) for any commit of
``HEAD`` whose harness change is not on record (a ``--no-verify`` commit, a clone
without hooks). A change is matched to its record by the blob ids before and after, so
the hook's record and the catch-up never double count. A weakening change made while a
Claude Code session is active (``CLAUDECODE`` in the environment, as Claude Code sets
for the commands it runs) is marked ``agent_session``. ``meridian ci`` lists the
changes of the pushed range from the commits themselves, recorded or not: it is the
authority, as a program can skip both routes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from meridian import gitio, records

KIND = "harness.changed"
DEFAULT_FILES = (".meridian/config.yaml", ".meridian/gates.yaml", ".meridian/rules.yaml",
                 ".meridian/features.yaml")
CATCH_UP_LIMIT = 200  # newest harness commits of HEAD looked at per catch-up


class FileChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    before: str | None = None  # blob id, None when the file was added
    after: str | None = None  # blob id, None when the file was removed


@records.register(KIND)
class HarnessChanged(BaseModel):
    model_config = ConfigDict(extra="forbid")

    files: list[FileChange] = Field(min_length=1)
    changes: list[str] = Field(default_factory=list)
    weakening: bool = False
    commit: str | None = None  # the code commit, when known (None: recorded at pre-commit)
    source: str = "pre-commit"  # pre-commit or catch-up
    agent_session: bool = False


@dataclass
class Description:
    changes: list[str] = field(default_factory=list)
    weakening: bool = False

    def add(self, text: str, *, weakens: bool = False) -> None:
        self.changes.append(text)
        self.weakening = self.weakening or weakens


def _load(data: bytes | None) -> Any:
    if data is None:
        return None
    import yaml

    try:
        return yaml.safe_load(data.decode("utf-8", errors="replace"))
    except yaml.YAMLError:
        return "<unparsable>"


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else ([] if value is None else [value])


def _check_text(check: Any) -> str:
    return str(check.get("run")) if isinstance(check, dict) else str(check)


def _describe_gates(before: Any, after: Any, out: Description) -> None:
    def by_id(doc: Any) -> dict[str, dict[str, Any]]:
        gates = doc.get("gates") if isinstance(doc, dict) else None
        return {str(g.get("id")): g for g in _as_list(gates) if isinstance(g, dict)}

    old, new = by_id(before), by_id(after)
    # Gates that were there before: a new or widened glob overlapping theirs can unlock
    # their files (a first gates file, or gates added together, unlock nothing).
    existing = {g: spec for g, spec in new.items() if g in old}
    for gate in old.keys() - new.keys():
        out.add(f"gate {gate} removed", weakens=True)
    for gate in new.keys() - old.keys():
        shared = _shares_with(gate, _as_list(new[gate].get("artifacts")), existing)
        out.add(f"gate {gate} added" + _shared_text(shared), weakens=bool(shared))
    for gate in sorted(old.keys() & new.keys()):
        a, b = old[gate], new[gate]
        parts: list[str] = []
        weak = False
        lost_needs = [n for n in _as_list(a.get("needs")) if n not in _as_list(b.get("needs"))]
        got_needs = [n for n in _as_list(b.get("needs")) if n not in _as_list(a.get("needs"))]
        if lost_needs:
            parts.append(f"needs [{', '.join(map(str, lost_needs))}] removed")
            weak = True
        if got_needs:
            parts.append(f"needs [{', '.join(map(str, got_needs))}] added")
        old_checks = [_check_text(c) for c in _as_list(a.get("checks"))]
        new_checks = [_check_text(c) for c in _as_list(b.get("checks"))]
        if old_checks and not new_checks:
            parts.append("checks removed")
            weak = True
        elif old_checks != new_checks:
            dropped = [c for c in old_checks if c not in new_checks]
            parts.append(f"checks changed ({len(dropped)} removed, "
                         f"{len([c for c in new_checks if c not in old_checks])} added)")
            weak = weak or bool(dropped)
        lost_globs = [g for g in _as_list(a.get("artifacts")) if g not in _as_list(b.get("artifacts"))]
        got_globs = [g for g in _as_list(b.get("artifacts")) if g not in _as_list(a.get("artifacts"))]
        shared = _shares_with(gate, got_globs, existing)
        if lost_globs:
            parts.append(f"artifacts [{', '.join(map(str, lost_globs))}] removed")
            weak = True
        elif _as_list(a.get("artifacts")) != _as_list(b.get("artifacts")):
            parts.append("artifacts changed")
        if shared:
            parts.append(_shared_text(shared).removeprefix("; "))
            weak = True
        ea: dict[str, Any] = a["evaluate"] if isinstance(a.get("evaluate"), dict) else {}
        eb: dict[str, Any] = b["evaluate"] if isinstance(b.get("evaluate"), dict) else {}
        for key in ("threshold", "evaluator", "command"):
            if ea.get(key) != eb.get(key):
                parts.append(f"evaluate.{key}: {ea.get(key)} -> {eb.get(key)}")
                weak = weak or key != "threshold" or _lower(ea.get(key), eb.get(key))
        for key in ("require", "block_pre_existing"):
            if ea.get(key) != eb.get(key):  # a stricter judge dropped weakens
                parts.append(f"evaluate.{key}: {ea.get(key)} -> {eb.get(key)}")
                weak = weak or bool(ea.get(key))
        got_excludes = [g for g in _as_list(b.get("exclude")) if g not in _as_list(a.get("exclude"))]
        if got_excludes:  # files taken out of the offline scan
            parts.append(f"exclude [{', '.join(map(str, got_excludes))}] added")
            weak = True
        elif _as_list(a.get("exclude")) != _as_list(b.get("exclude")):
            parts.append("exclude changed")
        if a.get("mutation") != b.get("mutation"):
            parts.append(f"mutation: {a.get('mutation')} -> {b.get('mutation')}")
            weak = weak or _mutation_weaker(a.get("mutation"), b.get("mutation"))
        if a.get("approval") and not b.get("approval"):
            parts.append("approval removed")
            weak = True
        elif a.get("approval") != b.get("approval"):
            parts.append("approval changed")
        if a.get("features") != b.get("features"):
            parts.append("required features changed")
            weak = weak or bool(a.get("features"))
        for key in ("acceptance", "description", "estimate_hours"):
            if a.get(key) != b.get(key):
                parts.append(f"{key} changed")
        if parts:
            out.add(f"gate {gate}: " + "; ".join(parts), weakens=weak)


def _mutation_weaker(before: Any, after: Any) -> bool:
    """The mutation smoke check switched off or given a smaller budget."""
    def settings(value: Any) -> tuple[bool, float, float]:
        if value is False or (isinstance(value, dict) and value.get("enabled") is False):
            return False, 0.0, 0.0
        value = value if isinstance(value, dict) else {}
        try:
            return True, float(value.get("max_functions", 20)), float(value.get("timeout_s", 300))
        except (TypeError, ValueError):
            return True, 0.0, 0.0
    old, new = settings(before), settings(after)
    return (old[0] and not new[0]) or (new[0] and (new[1] < old[1] or new[2] < old[2]))


def _shares_with(gate: str, added: list[Any], gates: dict[str, dict[str, Any]]) -> list[str]:
    """Other gates whose artifacts ``added`` globs of ``gate`` may overlap. A file with
    several owners is writable while any of them is not locked (``gate_view``), so a new
    owner can unlock a locked gate's files: that is a weakening change. Judged on the
    globs alone (conservative: two globs overlap unless one cannot match the other's
    files by their fixed prefixes)."""
    return [other for other, spec in gates.items() if other != gate and any(
        _globs_overlap(str(a), str(b)) for a in added for b in _as_list(spec.get("artifacts")))]


def _globs_overlap(a: str, b: str) -> bool:
    from meridian.gates import globs

    a, b = a.removeprefix("./"), b.removeprefix("./")
    fixed_a, fixed_b = _fixed(a), _fixed(b)
    if fixed_a == a or fixed_b == b:  # a literal path: does the other glob match it?
        literal, pattern = (a, b) if fixed_a == a else (b, a)
        return literal == pattern or globs.matches(pattern, literal)
    return fixed_a.startswith(fixed_b) or fixed_b.startswith(fixed_a)


def _fixed(pattern: str) -> str:
    """The part of a glob before its first wildcard (all of it for a literal path)."""
    found = re.search(r"[*?\[]", pattern)
    return pattern if found is None else pattern[:found.start()]


def _shared_text(shared: list[str]) -> str:
    if not shared:
        return ""
    return (f"; shares files with gate {', '.join(shared)} (a shared file is writable "
            "while any owner is unlocked)")


def _lower(before: Any, after: Any) -> bool:
    try:
        return after is None or float(after) < float(before)
    except (TypeError, ValueError):
        return True


def _describe_rules(before: Any, after: Any, out: Description) -> None:
    def by_id(doc: Any) -> dict[str, dict[str, Any]]:
        rules = doc.get("rules") if isinstance(doc, dict) else None
        return {str(r.get("id")): r for r in _as_list(rules) if isinstance(r, dict)}

    old, new = by_id(before), by_id(after)
    for rule in sorted(old.keys() - new.keys()):
        out.add(f"rule {rule} removed", weakens=True)
    for rule in sorted(new.keys() - old.keys()):
        out.add(f"rule {rule} added")
    for rule in sorted(old.keys() & new.keys()):
        a, b = old[rule].get("status", "active"), new[rule].get("status", "active")
        if a != b:
            out.add(f"rule {rule} {'retired' if b == 'retired' else 'activated'}",
                    weakens=b == "retired")
        elif old[rule].get("mechanism") != new[rule].get("mechanism"):
            out.add(f"rule {rule}: mechanism {old[rule].get('mechanism')} -> "
                    f"{new[rule].get('mechanism')}", weakens=True)


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): value}


# Config keys whose change weakens enforcement (any other change is recorded, unmarked).
_WEAKENING_CONFIG = ("evaluator.kind", "evaluator.command", "approval.allow_non_interactive",
                     "hooks.block_stale_on_push", "paths.gates", "paths.rules",
                     "paths.features", "branch", "evaluator.anthropic.base_url",
                     "evaluator.claude_code.executable")
# Config keys that make the judgement stricter when set: changing or dropping a value
# that was set weakens (``evaluator.require: model``, ``block_pre_existing: true``, the
# environment's base URL refused).
_STRICTER_WHEN_SET = ("evaluator.require", "evaluator.block_pre_existing")
_LOOSER_WHEN_SET = ("evaluator.anthropic.allow_env_base_url",
                    "evaluator.claude_code.allow_env_base_url")


def _config_weakens(key: str, old: Any, new: Any) -> bool:
    if key in _WEAKENING_CONFIG:
        return True
    if key == "evaluator.threshold":
        return _lower(old, new)
    if key in _STRICTER_WHEN_SET:
        return bool(old)
    if key in _LOOSER_WHEN_SET:
        return bool(new)
    if key == "hooks.claude_stop_retry_cap":  # fewer blocked stops before one goes through
        return _lower(old if old is not None else 3, new if new is not None else 3)
    return False


def _describe_config(before: Any, after: Any, out: Description) -> None:
    old, new = _flatten(before or {}), _flatten(after or {})
    for key in sorted(old.keys() | new.keys()):
        if old.get(key) == new.get(key):
            continue
        label = "evaluator" if key == "evaluator.kind" else key
        weak = _config_weakens(key, old.get(key), new.get(key))
        out.add(f"{label}: {old.get(key, '(default)')} -> {new.get(key, '(default)')}",
                weakens=weak)


def _describe_features(before: Any, after: Any, out: Description) -> None:
    def by_id(doc: Any) -> dict[str, Any]:
        items = doc.get("features") if isinstance(doc, dict) else None
        if isinstance(items, dict):
            return {str(k): v for k, v in items.items()}
        return {str(f.get("id")): f for f in _as_list(items) if isinstance(f, dict)}

    old, new = by_id(before), by_id(after)
    for feature in sorted(old.keys() - new.keys()):
        out.add(f"feature {feature} removed", weakens=True)
    for feature in sorted(new.keys() - old.keys()):
        out.add(f"feature {feature} added")
    for feature in sorted(old.keys() & new.keys()):
        if old[feature] != new[feature]:
            out.add(f"feature {feature}: tests changed", weakens=True)


# What each harness file is, by the path the project configures for it (``roles``):
# the defaults when the caller knows no configuration.
DEFAULT_ROLES = {".meridian/config.yaml": "config", ".meridian/gates.yaml": "gates",
                 ".meridian/rules.yaml": "rules", ".meridian/features.yaml": "features"}
_DESCRIBERS = {"gates": _describe_gates, "rules": _describe_rules, "config": _describe_config,
               "features": _describe_features}


def describe(path: str, before: bytes | None, after: bytes | None,
             roles: dict[str, str] | None = None) -> Description:
    """What changed in one harness file, in words, and whether it weakens enforcement.

    ``roles``: path -> what the file is (``config``, ``gates``, ``rules``, ``features``,
    or ``program``: a file a command evaluator runs), as ``harness_paths`` gives them for
    the project's configured paths; the describer is chosen by that, never by the file's
    name (a gates file moved to ``.meridian/graph.yaml`` is still described as one)."""
    out = Description()
    role = (DEFAULT_ROLES if roles is None else roles).get(path)
    if role == "program":
        if before is None:
            out.add(f"evaluator program {path} added")
        elif after is None:
            out.add(f"evaluator program {path} removed", weakens=True)
        else:  # the judge itself edited: it may now print 10s
            out.add(f"evaluator program {path} changed", weakens=True)
        return out
    old, new = _load(before), _load(after)
    if before is not None and after is None:
        out.add(f"{path} removed", weakens=True)
        return out
    if before is None:
        out.add(f"{path} added")
        return out
    if "<unparsable>" in (old, new):
        out.add(f"{path}: changed (not parsable as YAML)", weakens=True)
        return out
    describer = _DESCRIBERS.get(role or "")
    if describer is None:
        out.add(f"{path} changed")
    else:
        describer(old, new, out)
    if not out.changes:
        out.add(f"{path}: reformatted (no change in meaning)")
    return out


def agent_session_active() -> bool:
    """A Claude Code session runs this (it sets CLAUDECODE for the commands it runs)."""
    return bool(os.environ.get("CLAUDECODE") or os.environ.get("CLAUDE_CODE_ENTRYPOINT"))


def _recorded_pairs(ledger: Any) -> set[tuple[tuple[str, str | None, str | None], ...]]:
    from meridian.ledger import EVENTS

    out: set[Any] = set()
    for record in ledger.records(EVENTS):
        if record.kind != KIND:
            continue
        files = record.data.get("files") or []
        out.add(tuple(sorted((f.get("path"), f.get("before"), f.get("after"))
                             for f in files if isinstance(f, dict))))
    return out


def _event(ledger: Any, files: list[tuple[str, str | None, str | None]],
           texts: dict[str, tuple[bytes | None, bytes | None]], *, commit: str | None,
           source: str, note: str | None = None,
           roles: dict[str, str] | None = None) -> dict[str, Any]:
    description = Description()
    for path, _, _ in files:
        before, after = texts[path]
        part = describe(path, before, after, roles)
        description.changes += part.changes
        description.weakening = description.weakening or part.weakening
    if note is not None:
        description.changes.append(note)
    data = {"files": [{"path": p, "before": b, "after": a} for p, b, a in files],
            "changes": description.changes, "weakening": description.weakening,
            "commit": commit, "source": source,
            "agent_session": agent_session_active() and description.weakening}
    summary = f"harness.changed: {'; '.join(description.changes)}"[:200]
    ledger.emit(KIND, data, summary=summary,
                trailers={"Meridian-Weakening": "yes" if description.weakening else "no"})
    return data


def _blob(repo: gitio.Repository, tree: Any, path: str) -> tuple[str | None, bytes | None]:
    obj = gitio.tree_entry(repo, tree, path) if tree is not None else None
    data = gitio.blob_data(obj)
    return (str(obj.id) if obj is not None and data is not None else None), data


def record_staged(repo: gitio.Repository, ledger: Any, paths: tuple[str, ...],
                  staged: dict[str, Any]) -> dict[str, Any] | None:
    """The pre-commit hook's record of the harness files this commit changes."""
    touched = sorted(p for p in paths if p in staged)
    if not touched or not ledger.exists():
        return None
    head = gitio.head_commit(repo)
    head_tree = gitio.commit_tree(repo, gitio.Oid(hex=head)) if head else None
    files, texts = [], {}
    for path in touched:
        before_id, before = _blob(repo, head_tree, path)
        after_oid = staged[path]
        after = gitio.read_blob(repo, after_oid) if after_oid is not None else None
        after_id = str(after_oid) if after_oid is not None else None
        if before_id == after_id:
            continue
        files.append((path, before_id, after_id))
        texts[path] = (before, after)
    if not files or tuple(sorted(files)) in _recorded_pairs(ledger):
        return None
    return _event(ledger, files, texts, commit=None, source="pre-commit",
                  roles=roles_of(paths))


def catch_up(repo: gitio.Repository, ledger: Any, paths: tuple[str, ...]) -> list[dict[str, Any]]:
    """Record every harness change of HEAD's recent history that is not on record yet."""
    head = gitio.head_commit(repo)
    if head is None or not ledger.exists():
        return []
    marker = ledger.local_dir / f"harness-checked-{ledger.branch.replace('/', '__')}"
    tip = str(ledger.tip())
    key = f"{head} {tip}"
    try:
        if marker.read_text().strip() == key:
            return []  # a cache of "nothing new": HEAD and the branch are as last checked
    except OSError:
        pass
    listed = gitio.git(["rev-list", f"--max-count={CATCH_UP_LIMIT + 1}", head, "--", *paths],
                       gitio.workdir(repo) or repo.path, check=False).stdout
    commits = [c for c in listed.split() if c][::-1]
    # More harness commits than the catch-up looks at: said, with the way to the rest,
    # in the first change it records (the one next to the cut) and on stderr.
    cut = cut_note(paths) if len(commits) > CATCH_UP_LIMIT else None
    commits = commits[-CATCH_UP_LIMIT:]
    if cut is not None:
        import sys

        print(f"meridian: warning: {cut}", file=sys.stderr)
    recorded = _recorded_pairs(ledger) if commits else set()
    written: list[dict[str, Any]] = []
    for commit in commits:
        info = gitio.commit_info(repo, gitio.Oid(hex=commit))
        tree = gitio.commit_tree(repo, info.oid)
        parent = gitio.commit_tree(repo, info.parents[0]) if info.parents else None
        files, texts = [], {}
        for path in paths:
            before_id, before = _blob(repo, parent, path)
            after_id, after = _blob(repo, tree, path)
            if before_id != after_id:
                files.append((path, before_id, after_id))
                texts[path] = (before, after)
        if not files or tuple(sorted(files)) in recorded:
            continue
        written.append(_event(ledger, files, texts, commit=commit, source="catch-up",
                              note=None if written else cut, roles=roles_of(paths)))
        recorded.add(tuple(sorted(files)))
    try:
        marker.write_text(f"{head} {ledger.tip()}\n")
    except OSError:
        pass
    return written


def cut_note(paths: tuple[str, ...]) -> str:
    """What the capped catch-up says when HEAD has more harness commits than it reads."""
    return (f"catch-up cut: only the newest {CATCH_UP_LIMIT} harness commits of HEAD were "
            "read, older ones are not recorded; `meridian ci --base REV` lists every one of "
            f"a range, `git log -p -- {' '.join(paths)}` all of them")


def recent(ledger: Any, limit: int = 3) -> list[Any]:
    """The latest ``harness.changed`` records, newest first."""
    from meridian.ledger import EVENTS

    out = []
    for record in ledger.records(EVENTS, newest_first=True):
        if record.kind == KIND:
            out.append(record)
            if len(out) >= limit:
                break
    return out


def line(record: Any) -> str:
    data = record.data
    marks = []
    if data.get("weakening"):
        marks.append("WEAKENS enforcement")
    if data.get("agent_session"):
        marks.append("during an agent session")
    where = f"commit {str(data['commit'])[:10]}" if data.get("commit") else "staged"
    return (f"{record.ts[:19]}  {where}  {'; '.join(data.get('changes') or [])}"
            + (f"  [{', '.join(marks)}]" if marks else ""))


class HarnessPaths(tuple[str, ...]):
    """The harness files (a tuple of paths, as git names them) with what each one is
    (``roles``: path -> ``config``/``gates``/``rules``/``features``/``program``)."""

    roles: dict[str, str]

    def __new__(cls, roles: dict[str, str]) -> Self:
        made = super().__new__(cls, tuple(roles))
        made.roles = dict(roles)
        return made


def roles_of(paths: tuple[str, ...]) -> dict[str, str] | None:
    """The roles ``harness_paths`` gave ``paths`` (None: plain paths, the default roles)."""
    return paths.roles if isinstance(paths, HarnessPaths) else None


def _norm(path: str) -> str:
    return os.path.normpath(path).replace(os.sep, "/")


def _programs(root: Any, config: Any, gates_path: str) -> list[str]:
    """The tracked files the configured and per-gate evaluator commands name."""
    from pathlib import Path

    from meridian import yamlio
    from meridian.gates.programs import command_files

    base = Path(root)
    commands = [config.evaluator.command]
    try:
        data = yamlio.load(base / gates_path).data
    except Exception:  # noqa: BLE001 - an unreadable gates file names no program
        data = None
    gates = data.get("gates") if isinstance(data, dict) else None
    for gate in gates if isinstance(gates, list) else []:
        evaluate = gate.get("evaluate") if isinstance(gate, dict) else None
        if isinstance(evaluate, dict) and isinstance(evaluate.get("command"), str):
            commands.append(evaluate["command"])
    found: list[str] = []
    for command in commands:
        found += command_files(base, command if isinstance(command, str) else None)
    return found


def harness_paths(root: Any) -> HarnessPaths:
    """The harness files of the project at ``root``, as git names them: the config, and
    the gates, rules and features files at the paths it configures, and the tracked
    files an evaluator command names (``meridian.gates.programs``)."""
    try:
        from meridian.config import load_config

        config = load_config(root)
        roles = {_norm(".meridian/config.yaml"): "config"}
        for role, path in (("gates", config.paths.gates), ("rules", config.paths.rules),
                           ("features", config.paths.features)):
            roles.setdefault(_norm(str(path)), role)
        for program in _programs(root, config, str(config.paths.gates)):
            roles.setdefault(program, "program")
    except Exception:  # noqa: BLE001 - an unreadable config still has the default files
        roles = {_norm(p): DEFAULT_ROLES[p] for p in DEFAULT_FILES}
    return HarnessPaths(roles)
