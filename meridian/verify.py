"""Prove the state branch is append-only and every record on it is valid.

Rules, checked commit by commit from the oldest unverified one:

- a JSONL shard may only grow: its old bytes must be a prefix of its new bytes;
- every added line parses, validates against its kind's model and matches its id;
- documents (anything not ``.jsonl``) are never changed or removed;
- a merge commit holds every record and document of every parent.

The last verified commit is cached in ``.git/meridian/``; the next run checks only
commits after it. If that commit is no longer an ancestor of the tip, the history was
rewritten, which is itself tampering.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from meridian import gitio, records
from meridian.errors import MeridianError
from meridian.ledger import Ledger

# Modules that register data models for record kinds (imported when present).
MODEL_MODULES = ("meridian.memory.schemas", "meridian.evals.store", "meridian.gates.events",
                 "meridian.features")


@dataclass(frozen=True)
class Problem:
    commit: str
    path: str
    line: int | None
    record: str | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        rec = f" record {self.record}" if self.record else ""
        return f"commit {self.commit[:12]}: {where}:{rec} {self.reason}".replace(":  ", ": ")


@dataclass
class Report:
    tip: str | None
    commits: int = 0
    incremental: bool = False
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def load_models() -> None:
    for name in MODEL_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not name.startswith(exc.name):
                raise


def cache_path(ledger: Ledger) -> Path:
    return ledger.local_dir / f"verified-{ledger.branch.replace('/', '__')}"


def read_cache(ledger: Ledger) -> str | None:
    try:
        value = cache_path(ledger).read_text().strip()
    except FileNotFoundError:
        return None
    return value or None


def _record_id(line: bytes) -> str | None:
    try:
        value = json.loads(line).get("id")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def _check_lines(commit: str, path: str, data: bytes, first_line: int) -> Iterator[Problem]:
    for offset, line in enumerate(data.splitlines()):
        number = first_line + offset
        if not line.strip():
            yield Problem(commit, path, number, None, "blank line in a shard")
            continue
        try:
            records.parse_line(line)
        except MeridianError as exc:
            yield Problem(commit, path, number, _record_id(line), f"invalid record: {exc}")


def _check_change(ledger: Ledger, commit: str, path: str,
                  old: gitio.Oid | None, new: gitio.Oid | None) -> Iterator[Problem]:
    repo = ledger.repo
    if not path.endswith(".jsonl"):
        if old is not None and new is None:
            yield Problem(commit, path, None, None, "document removed after it was written")
        elif old is not None:
            yield Problem(commit, path, None, None, "document changed after it was written")
        elif new is not None:
            try:
                json.loads(gitio.read_blob(repo, new))
            except ValueError as exc:
                yield Problem(commit, path, None, None, f"document is not valid JSON: {exc}")
        return
    old_data = gitio.read_blob(repo, old) if old is not None else b""
    if new is None:
        first = old_data.splitlines()[:1]
        yield Problem(commit, path, 1, _record_id(first[0]) if first else None,
                      "shard deleted: its records were removed after they were written")
        return
    new_data = gitio.read_blob(repo, new)
    if not new_data.startswith(old_data):
        old_lines, new_lines = old_data.splitlines(), new_data.splitlines()
        for index, line in enumerate(old_lines):
            if index >= len(new_lines):
                yield Problem(commit, path, index + 1, _record_id(line),
                              "removed after it was written")
                return
            if new_lines[index] != line:
                following = old_lines[index + 1] if index + 1 < len(old_lines) else None
                removed = line not in new_lines and new_lines[index] == following
                yield Problem(commit, path, index + 1, _record_id(line),
                              "removed after it was written" if removed
                              else "changed after it was written")
                return
        yield Problem(commit, path, None, None, "shard rewritten")
        return
    first_line = old_data.count(b"\n") + 1
    yield from _check_lines(commit, path, new_data[len(old_data):], first_line)


def _shard_lines(ledger: Ledger, tree: object) -> dict[str, dict[str, bytes]]:
    """stream -> {record id: line} for every JSONL shard in ``tree``."""
    out: dict[str, dict[str, bytes]] = {}
    for path, oid in gitio.iter_files(ledger.repo, tree):  # type: ignore[arg-type]
        if not path.endswith(".jsonl"):
            continue
        stream = path.rsplit("/", 2)[0]
        bucket = out.setdefault(stream, {})
        for line in gitio.read_blob(ledger.repo, oid).splitlines():
            rid = _record_id(line)
            if rid:
                bucket[rid] = line
    return out


def _check_merge(ledger: Ledger, info: gitio.CommitInfo) -> Iterator[Problem]:
    repo = ledger.repo
    commit = str(info.oid)
    merged_tree = gitio.commit_tree(repo, info.oid)
    merged = _shard_lines(ledger, merged_tree)
    merged_docs = {p: o for p, o in gitio.iter_files(repo, merged_tree) if not p.endswith(".jsonl")}
    known: set[bytes] = set()
    for parent in info.parents:
        parent_tree = gitio.commit_tree(repo, parent)
        for stream, lines in _shard_lines(ledger, parent_tree).items():
            for rid, line in lines.items():
                known.add(line)
                if merged.get(stream, {}).get(rid) != line:
                    yield Problem(commit, stream, None, rid,
                                  "merge dropped or changed a record of a parent")
        for path, oid in gitio.iter_files(repo, parent_tree):
            if not path.endswith(".jsonl") and merged_docs.get(path) != oid:
                yield Problem(commit, path, None, None, "merge dropped or changed a document")
    for stream, lines in merged.items():
        for rid, line in lines.items():
            if line in known:
                continue
            try:
                records.parse_line(line)
            except MeridianError as exc:
                yield Problem(commit, stream, None, rid, f"invalid record: {exc}")


def verify(ledger: Ledger, *, full: bool = False) -> Report:
    """Check every commit not yet verified (all of them with ``full``)."""
    load_models()
    tip = ledger.tip()
    report = Report(tip=str(tip) if tip else None)
    if tip is None:
        return report
    repo = ledger.repo
    hide: list[gitio.Oid] = []
    cached = None if full else read_cache(ledger)
    if cached:
        try:
            cached_oid = gitio.Oid(hex=cached)
            rewritten = not gitio.is_ancestor(repo, cached_oid, tip)
        except (ValueError, KeyError):
            rewritten = True
        if rewritten:
            report.problems.append(Problem(
                cached, ledger.branch, None, None,
                "history rewritten: this previously verified commit is no longer on the branch"))
            return report
        hide.append(cached_oid)
        report.incremental = True
    for info in gitio.walk(repo, tip, oldest_first=True, hide=hide):
        report.commits += 1
        commit = str(info.oid)
        if len(info.parents) > 1:
            report.problems.extend(_check_merge(ledger, info))
            continue
        new_tree = gitio.commit_tree(repo, info.oid)
        old_tree = gitio.commit_tree(repo, info.parents[0]) if info.parents else None
        for path, old, new in gitio.changed_paths(repo, old_tree, new_tree):
            report.problems.extend(_check_change(ledger, commit, path, old, new))
    if report.ok:
        cache_path(ledger).write_text(str(tip) + "\n")
    return report
