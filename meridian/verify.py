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

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from meridian import gitio, idindex, layout, record_check, records
from meridian.errors import MeridianError
from meridian.idindex import IdSet
from meridian.ledger import EVENTS, FUTURE_SKEW_SECONDS, Ledger


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


def _id_kind_ts(line: bytes) -> tuple[str | None, str, str]:
    try:
        raw = json.loads(line)
        return str(raw["id"]), str(raw.get("kind", "")), str(raw.get("ts", ""))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, "", ""


def _restated_keys(line: bytes) -> list[str]:
    """Top-level keys a line states more than once. JSON keeps the last; readers that
    take a stored line's id from its first bytes (the ledger writes it first, once)
    would read another record than the one the line validates as."""
    seen: set[str] = set()
    again: list[str] = []
    try:
        top = json.loads(line, object_pairs_hook=lambda items: items)
    except ValueError:
        return []
    if not isinstance(top, list):
        return []
    for key, _ in top:
        if key in seen and key not in again:
            again.append(key)
        seen.add(key)
    return again


# stream -> the ids stored in it before the commit being checked (``meridian.idindex``).
KnownIds = Callable[[str], IdSet]


PASSED = "gate.passed"  # meridian.gates.evidence.PASSED, without importing the gates


def _check_lines(commit: str, path: str, data: bytes, first_line: int) -> Iterator[Problem]:
    for offset, line in enumerate(data.splitlines()):
        number = first_line + offset
        if not line.strip():
            yield Problem(commit, path, number, None, "blank line in a shard")
            continue
        if record_check.valid(line):
            continue  # proved valid without the models (the kinds the hooks write)
        try:
            records.parse_line(line)
        except MeridianError as exc:
            yield Problem(commit, path, number, _record_id(line), f"invalid record: {exc}")


def _check_change(ledger: Ledger, commit: str, path: str, old: gitio.Oid | None,
                  new: gitio.Oid | None, known_ids: KnownIds,
                  commit_time: int | None = None,
                  passes: list[tuple[bytes, str]] | None = None) -> Iterator[Problem]:
    repo = ledger.repo
    if not path.endswith(".jsonl"):
        if old is not None and new is None:
            yield Problem(commit, path, None, None, "document removed after it was written")
        elif old is not None:
            yield Problem(commit, path, None, None, "document changed after it was written")
        elif new is not None:
            yield from _check_document(repo, commit, path, new)
        return
    old_data = gitio.read_blob(repo, old) if old is not None else b""
    if new is None:
        first = old_data.splitlines()[:1]
        yield Problem(commit, path, 1, _record_id(first[0]) if first else None,
                      "shard deleted: its records were removed after they were written")
        return
    new_data = gitio.read_blob(repo, new)
    if not new_data.startswith(old_data):
        yield _first_difference(commit, path, old_data, new_data)
        return
    if new_data and not new_data.endswith(b"\n"):
        yield Problem(commit, path, new_data.count(b"\n") + 1, None,
                      "shard does not end with a newline (the next append would corrupt a record)")
    first_line = old_data.count(b"\n") + 1
    appended = new_data[len(old_data):]
    yield from _check_lines(commit, path, appended, first_line)
    # A second copy of a record is refused (the same memory written twice, a gate passed
    # twice, a cost counted twice), looked up in the index of the stream's ids before
    # this commit: what it costs follows the new lines, not the stream. An id the index
    # names is confirmed from git before it is reported (the index is a cache).
    stream, month = layout.split_shard_path(path) or (layout.stream_of(path) or "", "")
    for offset, line in enumerate(appended.splitlines()):
        rid, kind, ts = _id_kind_ts(line)
        if rid is None:
            continue
        # cheap: most lines state their id and kind once (the ones fast readers slice)
        if line.count(b'"id"') + line.count(b'"kind"') + line.count(b"\\u") > 2:
            restated = _restated_keys(line)
            if restated:
                yield Problem(commit, path, first_line + offset, rid,
                              f"the line states {', '.join(restated)} twice (an id read from "
                              "its first bytes would name another record)")
        if ts[:7] != month:
            yield Problem(commit, path, first_line + offset, rid,
                          f"stored under {month or 'no month'} but its time {ts} is not in it")
        if commit_time is not None and _stamped_after(ts, commit_time):
            yield Problem(commit, path, first_line + offset, rid,
                          f"stamped {ts}, more than {FUTURE_SKEW_SECONDS}s after the commit "
                          "that added it (a record from the future)")
        ids = known_ids(stream)
        if rid in ids and ids.confirmed(rid):
            yield Problem(commit, path, first_line + offset, rid,
                          "duplicates a record already in the stream")
        elif passes is not None and kind == PASSED and stream == EVENTS:
            passes.append((line, commit))
        ids.add(rid)


def _stamped_after(ts: str, commit_time: int) -> bool:
    try:
        return records.parse_ts(ts).timestamp() > commit_time + FUTURE_SKEW_SECONDS
    except ValueError:
        return False  # an invalid time is reported by the record's own validation


def _first_difference(commit: str, path: str, old_data: bytes, new_data: bytes) -> Problem:
    old_lines, new_lines = old_data.splitlines(), new_data.splitlines()
    for index, line in enumerate(old_lines):
        if index >= len(new_lines):
            return Problem(commit, path, index + 1, _record_id(line), "removed after it was written")
        if new_lines[index] != line:
            following = old_lines[index + 1] if index + 1 < len(old_lines) else None
            removed = line not in new_lines and new_lines[index] == following
            return Problem(commit, path, index + 1, _record_id(line),
                           "removed after it was written" if removed
                           else "changed after it was written")
    return Problem(commit, path, len(old_lines), None,
                   "a record was extended after it was written (the shard lacked a final newline)")


def _check_document(repo: gitio.Repository, commit: str, path: str,
                    oid: gitio.Oid) -> Iterator[Problem]:
    try:
        json.loads(gitio.read_blob(repo, oid))
    except ValueError as exc:
        yield Problem(commit, path, None, None, f"document is not valid JSON: {exc}")


def _split_tree(repo: gitio.Repository, tree: object) -> tuple[dict[str, list[tuple[str, bytes]]],
                                                              dict[str, gitio.Oid]]:
    """(stream -> [(shard path, line)], document path -> blob) of a tree."""
    streams: dict[str, list[tuple[str, bytes]]] = {}
    documents: dict[str, gitio.Oid] = {}
    for path, oid in gitio.iter_files(repo, tree):  # type: ignore[arg-type]
        if not path.endswith(".jsonl"):
            documents[path] = oid
            continue
        data = gitio.read_blob(repo, oid)
        bucket = streams.setdefault(layout.stream_of(path) or path, [])
        bucket.extend((path, line) for line in data.splitlines())
        if data and not data.endswith(b"\n"):
            bucket.append((path, b""))  # reported as a malformed line
    return streams, documents


def _check_merge(ledger: Ledger, info: gitio.CommitInfo) -> Iterator[Problem]:
    """A merge holds exactly the union of its parents: nothing dropped, changed or added."""
    from meridian.merge import preferred

    repo = ledger.repo
    commit = str(info.oid)
    merged_streams, merged_docs = _split_tree(repo, gitio.commit_tree(repo, info.oid))
    expected: dict[str, dict[str, bytes]] = {}
    parent_docs: dict[str, gitio.Oid] = {}
    for parent in info.parents:
        streams, documents = _split_tree(repo, gitio.commit_tree(repo, parent))
        for stream, lines in streams.items():
            bucket = expected.setdefault(stream, {})
            for _, line in lines:
                rid = _record_id(line)
                if rid is not None:
                    bucket[rid] = preferred(bucket[rid], line) if rid in bucket else line
        for path, oid in documents.items():
            parent_docs.setdefault(path, oid)
            if merged_docs.get(path) != oid:
                yield Problem(commit, path, None, None, "merge dropped or changed a document")
    for path, oid in merged_docs.items():
        if path not in parent_docs:
            yield Problem(commit, path, None, None, "merge added a document no parent had")
    for stream in sorted(set(expected) | set(merged_streams)):
        wanted = expected.get(stream, {})
        seen: set[str] = set()
        for path, line in merged_streams.get(stream, []):
            rid = _record_id(line)
            if rid is None:
                yield Problem(commit, path, None, None, "merge holds a malformed line")
            elif rid in seen:
                yield Problem(commit, path, None, rid, "merge holds a record twice")
            elif rid not in wanted:
                yield Problem(commit, path, None, rid, "merge added a record no parent had")
            elif line != wanted[rid]:
                yield Problem(commit, path, None, rid, "merge changed a record of a parent")
            if rid is not None:
                seen.add(rid)
        for rid in sorted(set(wanted) - seen):
            yield Problem(commit, stream, None, rid, "merge dropped a record of a parent")


def verify(ledger: Ledger, *, full: bool = False) -> Report:
    """Check every commit not yet verified (all of them with ``full``), the branch's
    reflog for tips that are no longer on it, and keep what was found.

    Tampering found once is kept in ``.git/meridian/tamper-<branch>.jsonl`` and reported
    by every later run, ``--full`` included, until a human acknowledges it
    (``acknowledge``), which is itself recorded on the branch.
    """
    report = _verify(ledger, full=full)
    if report.tip is not None:
        report.problems.extend(_rewrites_in_reflog(ledger, gitio.Oid(hex=report.tip)))
    acknowledged = _read_evidence(evidence_path(ledger, acknowledged=True))
    kept = _read_evidence(evidence_path(ledger))
    # A shallow clone is incomplete, not tampered with: fetching the history fixes it.
    fresh = [p for p in report.problems if str(p) not in acknowledged and str(p) not in kept
             and not p.reason.startswith("history incomplete")]
    if fresh:
        _append_evidence(evidence_path(ledger), fresh)
    shown = {str(p) for p in report.problems}
    report.problems.extend(Problem(**{k: v for k, v in item.items()  # type: ignore[arg-type]
                                      if k != "found_at"})
                           for text, item in kept.items() if text not in shown)
    return report


REFLOG_ENTRIES = 200


def _rewrites_in_reflog(ledger: Ledger, tip: gitio.Oid) -> list[Problem]:
    """Earlier tips of the branch (from git's reflog) that are no longer on it: a history
    rewrite, found even when the verified-tip marker was deleted or pointed elsewhere."""
    problems = []
    seen: set[str] = set()
    targets = gitio.reflog_targets(ledger.repo, ledger.refname, REFLOG_ENTRIES, str(tip))
    # An appending branch's reflog names its newest commits: one walk over those answers
    # for most entries; the others are each asked of the commit graph.
    if targets:
        seen.update(gitio.ancestors_among(ledger.repo, tip, set(targets), 2 * REFLOG_ENTRIES))
    for old in targets:
        if old in seen or old == str(tip):
            continue
        seen.add(old)
        try:
            oid = gitio.Oid(hex=old)
            ledger.repo[oid]
        except (ValueError, KeyError):
            continue  # pruned, or an object a full disk never wrote: nothing to compare
        if not gitio.is_ancestor(ledger.repo, oid, tip) and gitio.commit_complete(ledger.repo, oid):
            # (an incomplete one is a write a full disk lost, the branch put back by the
            # write acknowledgement; deleting an object of a rewritten tip hides no more
            # than deleting the commit object itself does)
            problems.append(Problem(old, ledger.branch, None, None,
                                    "history rewritten: this earlier tip of the branch (in "
                                    "git's reflog) is no longer on it"))
    return problems


def rewound(ledger: Ledger) -> Problem | None:
    """A tip the branch held and no longer contains, not acknowledged: the verified-tip
    marker's commit, or an earlier tip in git's reflog (``_rewrites_in_reflog``), when it
    is not an ancestor of the tip now. None when there is none.

    Cheap (no record is read): one ancestry check for the marker, the reflog's newest
    entries and one walk over the tip's newest commits. What `status`, `gate
    start|submit|approve` and `meridian sync` ask before believing (or pushing) the
    branch: a state branch rewound locally (``git update-ref`` to an older commit) hides
    a reopen or a failed submit that the marker and the reflog both remember."""
    tip = ledger.tip()
    if tip is None:
        return None
    acknowledged = _read_evidence(evidence_path(ledger, acknowledged=True))
    cached = read_cache(ledger)
    if cached:
        try:
            kept = gitio.is_ancestor(ledger.repo, gitio.Oid(hex=cached), tip)
        except (ValueError, KeyError, gitio.GitError):
            kept = False  # as `_verify` reads it
        if not kept:
            problem = Problem(cached, ledger.branch, None, None,
                              "history rewritten: this previously verified commit is no "
                              "longer on the branch")
            if str(problem) not in acknowledged:
                return _kept(ledger, problem)
    found = next((p for p in _rewrites_in_reflog(ledger, tip) if str(p) not in acknowledged),
                 None)
    return _kept(ledger, found) if found is not None else None


def _kept(ledger: Ledger, problem: Problem) -> Problem:
    """``problem``, kept as evidence (``verify`` would keep it): every command warns of it
    and a human can acknowledge it."""
    if str(problem) not in _read_evidence(evidence_path(ledger)):
        _append_evidence(evidence_path(ledger), [problem])
    return problem


def rewound_text(ledger: Ledger, problem: Problem, action: str | None) -> str:
    """One line: what was lost, and how to get it back (``action``: what is refused;
    None: a warning)."""
    source = "git's reflog" if "reflog" in problem.reason else "the verified-tip marker"
    tip = ledger.tip()
    now = str(tip)[:12]
    try:
        rewind = tip is not None and gitio.is_ancestor(ledger.repo, tip,
                                                       gitio.Oid(hex=problem.commit))
    except (ValueError, KeyError, gitio.GitError):
        rewind = False
    head = ((f"refusing to {action}: " if action else "")
            + f"the state branch {ledger.branch} was "
            f"{'rewound' if rewind else 'rewritten'} locally: commit {problem.commit[:12]} "
            f"({source} remembers it as a tip) is no longer on it (now at {now}), so what "
            "was recorded there (a reopen, a failed submit) is hidden")
    way = (f"put it back: git update-ref refs/heads/{ledger.branch} {problem.commit}"
           if rewind else "see `meridian verify`; restore the branch from a clone that has "
           "it intact")
    return (f"{head}; {way}, or, if that was meant, a human acknowledges it: meridian verify "
            "--acknowledge REASON")


def evidence_path(ledger: Ledger, *, acknowledged: bool = False) -> Path:
    suffix = ".acknowledged" if acknowledged else ""
    return ledger.local_dir / f"tamper-{ledger.branch.replace('/', '__')}{suffix}.jsonl"


def _read_evidence(path: Path) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            item = json.loads(line)
            problem = Problem(commit=str(item["commit"]), path=str(item["path"]),
                              line=item.get("line"), record=item.get("record"),
                              reason=str(item["reason"]))
        except (ValueError, KeyError, TypeError):
            continue
        out[str(problem)] = item
    return out


def _append_evidence(path: Path, problems: list[Problem]) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        with path.open("a", encoding="utf-8") as handle:
            for p in problems:
                handle.write(json.dumps({"commit": p.commit, "path": p.path, "line": p.line,
                                         "record": p.record, "reason": p.reason,
                                         "found_at": stamp}) + "\n")
    except OSError:
        pass  # the problems are still reported now; keeping them is best effort


def pending_evidence(ledger: Ledger) -> list[str]:
    """Tampering found earlier and not acknowledged yet (for every command to report)."""
    return list(_read_evidence(evidence_path(ledger)))


def acknowledge(ledger: Ledger, reason: str) -> list[str]:
    """A human's recorded acknowledgement of the kept evidence; returns what it covered."""
    kept = _read_evidence(evidence_path(ledger))
    if not kept:
        return []
    ledger.emit("tamper.acknowledged", {"reason": reason, "problems": sorted(kept)},
                summary=f"tamper.acknowledged: {len(kept)} problem(s): {reason}")
    _append_evidence(evidence_path(ledger, acknowledged=True),
                     [Problem(**{k: v for k, v in item.items() if k != "found_at"})  # type: ignore[arg-type]
                      for item in kept.values()])
    evidence_path(ledger).unlink(missing_ok=True)
    return sorted(kept)


def _verify(ledger: Ledger, *, full: bool = False) -> Report:
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
    # Ids already in each stream, carried along the walk: from the index of verified ids
    # (meridian.idindex) once per stream, lazily, then extended line by line.
    ids_at: dict[str, IdSet] = {}
    ids_commit: gitio.Oid | None = None
    passes: list[tuple[bytes, str]] = []  # (gate.passed line, the commit that added it)
    boundary = gitio.shallow_boundary(repo)
    now = time.time()
    for info in gitio.walk(repo, tip, oldest_first=True, hide=hide):
        report.commits += 1
        commit = str(info.oid)
        if commit in boundary:
            report.problems.append(Problem(
                commit, ledger.branch, None, None,
                "history incomplete: this is a shallow clone and the commits before this one "
                "are missing; fetch the whole branch with `meridian sync`"))
            return report
        if len(info.parents) > 1:
            report.problems.extend(_check_merge(ledger, info))
            ids_at, ids_commit = {}, info.oid
            continue
        parent = info.parents[0] if info.parents else None
        if ids_commit != parent:
            ids_at = {}

        def known_ids(stream: str, parent: gitio.Oid | None = parent,
                      cache: dict[str, IdSet] = ids_at) -> IdSet:
            if stream not in cache:
                # --full reads no cache: wherever the walk forks or passes a merge, the
                # ids come from git, never from the index an agent can rewrite.
                cache[stream] = (idindex.exact if full else idindex.load)(ledger, stream, parent)
            return cache[stream]

        new_tree = gitio.commit_tree(repo, info.oid)
        old_tree = gitio.commit_tree(repo, parent) if parent is not None else None
        if info.time > now + FUTURE_SKEW_SECONDS:
            report.problems.append(Problem(commit, ledger.branch, None, None,
                                           "commit dated in the future"))
        for path, old, new in gitio.changed_paths(repo, old_tree, new_tree):
            report.problems.extend(_check_change(ledger, commit, path, old, new, known_ids,
                                                 info.time, passes))
        ids_commit = info.oid
    # A pass is checked against its evidence once, by the walk that meets the commit
    # adding it: that commit and its verdict never change on an append-only branch.
    # --full checks every pass on the branch again (what a newer Meridian's rules say).
    report.problems.extend(check_passes(ledger) if full else _check_new_passes(ledger, passes))
    if report.ok:
        if ids_commit == tip:
            for ids in ids_at.values():
                ids.at = tip
                idindex.save(ledger, ids)
        cache_path(ledger).write_text(str(tip) + "\n")
    return report


def _check_new_passes(ledger: Ledger, passes: list[tuple[bytes, str]]) -> list[Problem]:
    if not passes:
        return []
    from meridian.gates.evidence import check_pass

    problems = []
    for line, commit in passes:
        try:
            record = records.parse_line(line)
        except MeridianError:
            continue  # reported as an invalid record by the walk
        reason = check_pass(ledger, record, commit)
        if reason is not None:
            problems.append(Problem(commit, "events", None, record.id,
                                    f"gate {record.gate}: forged or inconsistent pass: {reason}"))
    return problems


def check_passes(ledger: Ledger) -> list[Problem]:
    """Every ``gate.passed`` on the branch not backed by consistent evidence
    (``meridian.gates.evidence``): a forged or inconsistent pass is tampering too."""
    from meridian.gates.evidence import PASSED, check_pass, gate_history

    try:
        history = gate_history(ledger)
    except MeridianError:
        return []  # a corrupt line: the walk reports it, and no pass can be read past it
    problems = []
    for record in history.events:
        if record.kind != PASSED:
            continue
        commit = history.commit_of.get(record.id)
        reason = check_pass(ledger, record, commit)
        if reason is not None:
            problems.append(Problem(commit or "-" * 12, "events", None, record.id,
                                    f"gate {record.gate}: forged or inconsistent pass: {reason}"))
    return problems
