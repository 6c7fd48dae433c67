"""Evaluation runs on the state branch, and the names that refer to them.

    runs/<run_id>.json                    the run document (immutable)
    runs/index/<YYYY-MM>/<NNNN>.jsonl     one ``eval.run`` summary record per run
    runs/pruned/<YYYY-MM>/<NNNN>.jsonl    ``eval.pruned`` tombstones
    refs/tags/meridian/baseline/<NAME>    a baseline: the state commit that wrote a run

Saving a run is ONE ledger commit holding the document and its index record, with
``Meridian-Event: eval.run`` and ``Meridian-Run: <id>`` trailers, so listing runs reads
the index (one small stream) and never opens a run document.

Everything is redacted (``meridian.evals.redact``) before a blob is written, and the
final bytes are scanned again: a secret never reaches git history.

Pruning: the branch is append-only (``meridian verify`` proves no document is ever
removed), so ``prune --keep N`` cannot delete a run. It appends an ``eval.pruned``
record naming the runs it retires; listings and ``latest~N`` skip them. The documents
stay readable by id (for an audit) until the branch itself is rewritten, which
Meridian never does. Runs pinned as baselines are never pruned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from meridian import records
from meridian.errors import MeridianError
from meridian.evals import nogc, redact, runview
from meridian.evals import run as runfile
from meridian.ledger import Ledger, Write

RUNS_DIR = "runs"
INDEX_STREAM = "runs/index"
PRUNED_STREAM = "runs/pruned"
BASELINE_PREFIX = "meridian/baseline/"
RUN_TRAILER = "Meridian-Run"
BASELINE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_LATEST = re.compile(r"^latest(?:~(\d+))?$")


class RunFigures(BaseModel):
    """What health sums over runs besides the summary: tokens the agents and the
    model-backed graders used and what the graders cost. Kept in the index record, so
    health never opens a run document (older records lack it: health reads those once)."""

    model_config = ConfigDict(extra="forbid")

    tokens: int = 0  # the run summary's tokens
    agent_in: int = 0
    agent_out: int = 0
    judge_in: int = 0
    judge_out: int = 0
    judge_usd: float = 0.0
    judge_unknown: int = 0  # grader calls whose cost is unknown


def run_figures(run: runfile.Run) -> RunFigures:
    """``RunFigures`` of ``run`` (the sums health used to read from the document)."""
    figures = RunFigures(tokens=run.summary.tokens)
    for entry in run.results:
        for trial in entry.trials:
            trajectory = trial.trajectory
            if trajectory is not None:
                figures.agent_in += trajectory.tokens_in
                figures.agent_out += trajectory.tokens_out
            for score in trial.scores:
                if score.usage is not None:
                    figures.judge_in += score.usage.tokens_in
                    figures.judge_out += score.usage.tokens_out
                    figures.judge_usd += score.usage.cost_usd
    return figures


@records.register("eval.run")
class RunIndexData(BaseModel):
    """The summary line of one run in ``runs/index``."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    path: str
    suite: str
    suite_hash: str
    agent: str
    agent_version: str
    agent_spec: str
    created_at: str | None = None
    git_commit: str | None = None
    dirty: bool = False
    epochs: int = 1
    shard: str | None = None
    merged_from: list[str] = []
    interrupted: bool = False
    tasks: int
    trials: int
    passed: int
    failed: int
    infra_errors: int
    pass_rate: float | None = None
    cost_usd: float = 0.0
    figures: RunFigures | None = None  # absent on runs saved before it was recorded
    # The git blob id of the document as save_run wrote it (informational: compare
    # checks every document it reads whoever wrote it, ``runview``). Absent on runs
    # saved before it was recorded.
    blob: str | None = None


@records.register("eval.pruned")
class PrunedData(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_ids: list[str]
    keep: int


@records.register("baseline.pinned")
class BaselinePinnedData(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    run_id: str
    commit: str
    previous_run_id: str | None = None
    # pinned while a Claude Code session was active: never the baseline (evals.pins)
    agent_session: bool = False


@dataclass(frozen=True)
class IndexEntry:
    ts: str  # when the run was committed
    data: RunIndexData
    pruned: bool

    @property
    def run_id(self) -> str:
        return self.data.run_id


@dataclass(frozen=True)
class SavedRun:
    run: runfile.Run  # as committed (redacted)
    commit: str
    redactions: redact.Redactions


@dataclass(frozen=True)
class Baseline:
    name: str
    run_id: str | None  # None when the tagged commit did not write a run
    commit: str
    # Where the tag meridian/baseline/NAME points when that differs from the latest
    # `baseline.pinned` event (moved or deleted outside Meridian: "" for deleted).
    tag_differs: str | None = None
    # pins made in an agent session after the one this baseline is (evals.pins): never
    # the baseline, reported; with no pin outside one, run_id is None and commit ""
    untrusted: tuple[Any, ...] = ()
    pinned_at: str | None = None  # the time of the event this baseline is


def run_path(run_id: str) -> str:
    return f"{RUNS_DIR}/{run_id}.json"


def redacted(run: runfile.Run, found: redact.Redactions | None = None) -> runfile.Run:
    """``run`` with every secret in it replaced (still a valid run)."""
    clean = redact.redact(run.model_dump(mode="json"), found)
    return runfile.Run.model_validate(clean)


def checked_bytes(run: runfile.Run, *, portable: bool = False) -> bytes:
    """Serialised ``run``; refuses to return bytes in which a secret is still visible.

    The check tests every string and key of the document (the redactor memoises per
    string, so strings the redaction pass already cleaned cost a lookup, not a second
    scan of a 10 MB output); the ``name: value`` heuristic is left out, as JSON's own
    ``"api_key": null`` would trip it.
    """
    document = runfile.document(run.portable() if portable else run)
    return _dump(run.run_id, document, redact_first=False)


def _dump(run_id: str | None, document: dict[str, Any], found: redact.Redactions | None = None,
          *, redact_first: bool = True) -> bytes:
    """``document`` (redacted first unless told not to) serialised as ``runfile.dumps``
    does, once its strings and keys are shown clean."""
    try:
        data = redact.dump_clean(document, runfile.dumps_document, found,
                                 redact_first=redact_first)
    except redact.SecretLeft as exc:
        raise MeridianError(f"run {run_id}: refusing to write it: {', '.join(exc.kinds)} "
                            "still present after redaction") from None
    if len(data) > runfile.MAX_RUN_BYTES:  # no reader would read it back
        raise MeridianError(f"run {run_id}: its document is {len(data):,} bytes; a run file is "
                            f"at most {runfile.MAX_RUN_BYTES:,} (shard the suite: --shard i/n)")
    return data


def blob_id(data: bytes) -> str:
    """The git blob id of ``data`` (what git names the object holding it)."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def index_data(run: runfile.Run, blob: str | None = None) -> dict[str, Any]:
    assert run.run_id is not None
    summary = run.summary
    data = RunIndexData(
        run_id=run.run_id, path=run_path(run.run_id), suite=run.suite.name,
        suite_hash=run.suite.hash, agent=run.agent.name, agent_version=run.agent.version,
        agent_spec=run.agent.spec, created_at=run.created_at,
        git_commit=run.git.commit if run.git else None, dirty=bool(run.git and run.git.dirty),
        epochs=run.settings.epochs,
        shard=run.settings.shard.label() if run.settings.shard else None,
        merged_from=run.merged_from, interrupted=run.interrupted, tasks=summary.tasks,
        trials=summary.trials, passed=summary.passed, failed=summary.failed,
        infra_errors=summary.infra_errors, pass_rate=summary.pass_rate, cost_usd=summary.cost_usd,
        figures=run_figures(run), blob=blob,
    ).model_dump(mode="json")
    if blob is None:
        del data["blob"]
    return data


def save_run(ledger: Ledger, run: runfile.Run) -> SavedRun:
    """Redact ``run`` and commit it with its index record as one commit."""
    with nogc.paused():
        return _save_run(ledger, run)


def _save_run(ledger: Ledger, run: runfile.Run) -> SavedRun:
    if run.run_id is None:
        raise MeridianError("a run needs a run_id before it is saved")
    run_id = run.run_id
    found = redact.Redactions()
    # The document is built once, redacted and checked in one walk, serialised once
    # (and the ledger's write boundary writes those bytes without redacting them
    # again). Only when redaction replaced something is the run rebuilt from the
    # redacted values (still a valid run) and its document made again from it.
    document = _dump(run_id, runfile.document(run), found)
    if found.total:
        found = redact.Redactions()
        clean = redacted(run, found)
        document = _dump(run_id, runfile.document(clean))
    else:
        clean = run
    record = ledger.record("eval.run", index_data(clean, blob_id(document)))
    if redact.find_secrets(record.line(), assignments=False):
        raise MeridianError(f"run {run.run_id}: refusing to write its index record: secret left")
    graded = clean.summary.passed + clean.summary.failed
    summary = (f"eval run {run_id}: {clean.suite.name} {clean.agent.name}@"
               f"{clean.agent.version} {clean.summary.passed}/{graded} passed"
               + (" (interrupted)" if clean.interrupted else ""))
    write = Write(
        summary=redact.redact_text(summary),
        blobs={run_path(run_id): document},
        trailers={"Meridian-Event": "eval.run", RUN_TRAILER: run_id,
                  "Meridian-Record": record.id},
    ).add(INDEX_STREAM, record)
    result = ledger.commit(write)
    assert result.commit is not None
    return SavedRun(run=clean, commit=str(result.commit), redactions=found)


# --- reading ------------------------------------------------------------------------


def index(ledger: Ledger, *, include_pruned: bool = False) -> list[IndexEntry]:
    """Runs in ledger order (oldest first): the order their records were appended to
    the branch, from the index alone, never sorted by a record's own timestamp (a
    record may be stamped up to ``FUTURE_SKEW_SECONDS`` after its commit, and `latest`
    must not go to a run stamped ahead). A merge of two clones' runs orders the merged
    stream by (ts, id) on both sides alike (``meridian.merge``)."""
    pruned: set[str] = set()
    for record in ledger.records(PRUNED_STREAM):
        pruned.update(PrunedData.model_validate(record.data).run_ids)
    entries = [
        IndexEntry(ts=record.ts, data=RunIndexData.model_validate(record.data),
                   pruned=record.data.get("run_id") in pruned)
        for record in ledger.records(INDEX_STREAM)
        if record.kind == "eval.run"
    ]
    return entries if include_pruned else [e for e in entries if not e.pruned]


def load_run(ledger: Ledger, run_id: str) -> runfile.Run:
    path = run_path(run_id)
    data = ledger.read(path)
    if data is None:
        raise MeridianError(f"run {run_id} is indexed but {ledger.branch}:{path} is missing; "
                            "run `meridian verify`")
    return runfile.loads(data, f"{ledger.branch}:{path}")


def load_for_compare(ledger: Ledger, run_id: str,
                     entries: list[IndexEntry] | None = None) -> runfile.Run | runview.RunView:
    """Run ``run_id`` as ``compare`` reads it (``runview.load``: checked as the models
    check it, refused with the full reader's error line). ``entries``: unused, kept
    for callers that pass the index they read."""
    path = run_path(run_id)
    data = read_document(ledger, path)
    if data is None:
        raise MeridianError(f"run {run_id} is indexed but {ledger.branch}:{path} is missing; "
                            "run `meridian verify`")
    return runview.load(data, f"{ledger.branch}:{path}")


def read_document(ledger: Ledger, path: str) -> bytes | None:
    """The bytes of the blob at ``path`` on the state branch, read once from the object
    database (looking the blob up and then asking for its data inflates it twice), or
    None when there is none; one larger than ``runfile.MAX_RUN_BYTES`` is refused
    before it is read."""
    tree = ledger.tree()
    if tree is None:
        return None
    try:
        entry = tree[path]
    except KeyError:
        return None
    if entry.type_str != "blob":
        return None
    odb = ledger.repo.odb
    read_header = getattr(odb, "read_header", None)  # absent from pygit2 1.16
    size = int(read_header(entry.id)[1]) if read_header is not None else 0
    if size <= runfile.MAX_RUN_BYTES:
        data = bytes(odb.read(entry.id)[1])
        size = len(data)
    if size > runfile.MAX_RUN_BYTES:
        raise runfile.too_large(size, f"{ledger.branch}:{path}")
    return data


def resolve(ledger: Ledger, ref: str, entries: list[IndexEntry] | None = None) -> str:
    """The run id ``ref`` names: ``latest``, ``latest~N``, ``baseline:NAME``, a baseline
    name, a full id, or a unique id prefix. ``entries``: the index (with pruned runs),
    when the caller has read it already."""
    every = entries if entries is not None else index(ledger, include_pruned=True)
    if not every:
        raise MeridianError(f"no evaluation runs on {ledger.branch} yet "
                            "(run `meridian eval run SUITE --agent A`)")
    latest = _LATEST.match(ref)
    if latest:
        back = int(latest.group(1) or 0)
        visible = [e for e in every if not e.pruned]
        if back >= len(visible):
            raise MeridianError(f"{ref}: only {len(visible)} run(s) on {ledger.branch}")
        return visible[-1 - back].run_id
    if ref.startswith("baseline:"):
        return _baseline_run(ref.removeprefix("baseline:"), baselines(ledger))
    ids = [e.run_id for e in every]
    if ref in ids:
        return ref
    # A baseline's name means the same with its tag or without it (deleted, not fetched):
    # the names are the events' and the tags' (read once), ahead of any id prefix.
    known = baselines(ledger)
    if any(b.name == ref for b in known):
        return _baseline_run(ref, known)
    matches = [run_id for run_id in ids if run_id.startswith(ref)] if ref else []
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise MeridianError(f"run prefix {ref!r} is ambiguous: {', '.join(matches[:5])}"
                            + (" ..." if len(matches) > 5 else ""))
    raise MeridianError(f"no run matches {ref!r} (use a run id prefix, latest, latest~N, "
                        "baseline:NAME; see `meridian eval list`)")


def commit_of_run(ledger: Ledger, run_id: str) -> str:
    """The state commit that wrote run ``run_id``."""
    for info in ledger.history(grep=f"{RUN_TRAILER}: {run_id}"):
        trailers = info.trailers
        if trailers.get(RUN_TRAILER) == run_id and trailers.get("Meridian-Event") == "eval.run":
            return str(info.oid)
    raise MeridianError(f"no commit on {ledger.branch} wrote run {run_id}")


def _baseline_run(name: str, every: list[Baseline]) -> str:
    """The run of baseline ``name`` among ``every`` (``baselines``, read by the caller)."""
    known = {b.name: b for b in every}
    if name not in known:
        listed = ", ".join(sorted(known)) or "none"
        raise MeridianError(f"no baseline named {name!r} (baselines: {listed}; "
                            "pin one with `meridian baseline pin NAME [RUN]`)")
    baseline = known[name]
    if baseline.run_id is None and baseline.untrusted:
        from meridian.evals.pins import Decision, untrusted_text

        pins = list(baseline.untrusted)
        raise MeridianError(untrusted_text(Decision(name, pins[-1], None, pins, pins)))
    if baseline.run_id is None:
        raise MeridianError(f"baseline {name!r} points at {baseline.commit}, which wrote no run")
    return baseline.run_id


def _run_of_commit(ledger: Ledger, commit: Any) -> str | None:
    from meridian import gitio

    trailers = gitio.commit_info(ledger.repo, commit).trailers
    return trailers.get(RUN_TRAILER) if trailers.get("Meridian-Event") == "eval.run" else None


# --- baselines and pruning ------------------------------------------------------------


def pin_baseline(ledger: Ledger, name: str, run_id: str) -> Baseline:
    """Tag the state commit that wrote ``run_id`` as ``meridian/baseline/<name>``."""
    if not BASELINE_NAME.match(name):
        raise MeridianError(f"baseline name {name!r}: expected letters, digits, '.', '_' or '-' "
                            "(starting with a letter or digit)")
    from meridian import gitio

    commit = commit_of_run(ledger, run_id)
    previous = ledger.tags(BASELINE_PREFIX).get(name)
    previous_run = _run_of_commit(ledger, previous) if previous is not None else None
    ledger.pin_tag(BASELINE_PREFIX + name, gitio.Oid(hex=commit))
    data: dict[str, Any] = {"name": name, "run_id": run_id, "commit": commit}
    if previous_run is not None and previous_run != run_id:
        data["previous_run_id"] = previous_run
    from meridian.harness import agent_session_active

    if agent_session_active():
        data["agent_session"] = True
    ledger.emit("baseline.pinned", data, summary=f"baseline {name} -> run {run_id}",
                trailers={"Meridian-Baseline": name})
    return Baseline(name=name, run_id=run_id, commit=commit)


PINS_VERSION = 2  # 2: each pin with its run id, time and agent-session mark
_PIN_NEEDLE = b'"baseline.pinned"'


def pins_cache_path(ledger: Ledger) -> Path:
    """``.git/meridian/baseline-pins-<branch>.json``: the pins of each event shard."""
    from meridian import gitio

    return gitio.meridian_dir(ledger.repo) / f"baseline-pins-{ledger.branch.replace('/', '__')}.json"


def _shard_pins(ledger: Ledger, path: str, data: bytes) -> list[list[Any]]:
    """``[line number, name, commit, run id, time, agent session]`` of each
    ``baseline.pinned`` event in a shard's bytes (the fields ``pins.Pin`` holds)."""
    out: list[list[Any]] = []
    if _PIN_NEEDLE not in data:
        return out
    for number, line in enumerate(data.splitlines(), start=1):
        if _PIN_NEEDLE not in line:
            continue
        record = ledger._quick_record(line, f"{path}:{number}")
        if record.kind != "baseline.pinned":
            continue
        name, commit, run_id = (record.data.get(k) for k in ("name", "commit", "run_id"))
        if isinstance(name, str) and isinstance(commit, str):
            out.append([number, name, commit, run_id if isinstance(run_id, str) else "",
                        str(record.ts), record.data.get("agent_session") is True])
    return out


def _pins_checksum(tip: str, shards: list[Any]) -> str:
    import hashlib
    import json

    body = json.dumps({"version": PINS_VERSION, "tip": tip, "shards": shards},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


def _read_pins_cache(ledger: Ledger) -> tuple[str, dict[str, tuple[str, list[list[Any]]]]] | None:
    """(tip, path -> (blob id, pins)) of the cache file, or None when it is absent, of
    another version, malformed or not matching its checksum."""
    import json

    try:
        cached = json.loads(pins_cache_path(ledger).read_text(encoding="utf-8"))
        if not isinstance(cached, dict) or cached.get("version") != PINS_VERSION:
            return None
        tip, shards = cached["tip"], cached["shards"]
        if not isinstance(tip, str) or not isinstance(shards, list) \
                or cached.get("checksum") != _pins_checksum(tip, shards):
            return None
        out: dict[str, tuple[str, list[list[Any]]]] = {}
        for path, blob, pins in shards:
            if not (isinstance(path, str) and isinstance(blob, str) and isinstance(pins, list)
                    and all(isinstance(p, list) and len(p) == 6 and type(p[0]) is int
                            and all(isinstance(v, str) for v in p[1:5])
                            and type(p[5]) is bool for p in pins)):
                return None
            out[path] = (blob, pins)
        return tip, out
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_pins_cache(ledger: Ledger, tip: str, shards: list[Any]) -> None:
    import json

    from meridian import viewfile

    path = pins_cache_path(ledger)
    body = {"version": PINS_VERSION, "tip": tip, "shards": shards,
            "checksum": _pins_checksum(tip, shards)}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        viewfile.replace_with(path, json.dumps(body, separators=(",", ":")).encode())
    except OSError:
        pass  # a cache that cannot be written is recomputed next time


def _confirmed(ledger: Ledger, tree: Any, path: str, rows: list[list[Any]]) -> bool:
    """Whether the lines of shard ``path`` at ``tree`` that ``rows`` name are those pins."""
    from meridian import gitio

    obj = gitio.tree_entry(ledger.repo, tree, path)
    lines = (gitio.blob_data(obj) or b"").splitlines() if obj is not None else []
    for row in rows:
        number = row[0]
        if not 0 < number <= len(lines):
            return False
        try:
            found = _shard_pins(ledger, path, lines[number - 1])
        except MeridianError:
            return False
        if found != [[1, *row[1:]]]:
            return False
    return True


def pinned(ledger: Ledger, *, use_cache: bool = True) -> dict[str, str]:
    """``name -> commit`` of each baseline's latest ``baseline.pinned`` event whose commit
    is on the branch (the last in ledger order, the order the events were appended, not
    by timestamp: a pin stamped ahead of its commit must not outlive a later re-pin).

    The events are the record (append-only, verified); the tags are git refs anyone can
    move or delete with `git tag`, so a baseline is read from the events. Only the
    shards that mention the kind are split and parsed.

    Every ``git push`` asks (the pre-push hook), so the pins of each event shard are
    cached in ``pins_cache_path`` (a cache, never trust), keyed by the state tip they
    were read at and by each shard's blob id: a shard whose blob is the one the cache
    read is not read again (closed shards never change; appends change only the open
    one), any other shard (new, appended to, rewritten, after a merge) is read, so the
    answer is the same as reading every shard. A file that does not match its checksum
    or does not parse is ignored, and every pin the answer takes from the cache is
    confirmed on the tip's own shard line (a forged cache cannot point a baseline
    elsewhere; one that fails is dropped and every shard read again). What a checksum
    cannot stop, an agent with the same shell rewriting the file and its checksum to
    leave a pin out, is the power of repointing the verified-tip marker;
    ``use_cache=False`` (``meridian ci``, ``meridian sync``) reads no cache.
    """
    return _latest_pins(ledger, pin_rows(ledger, use_cache=use_cache))


def _latest_pins(ledger: Ledger, rows: list[list[Any]]) -> dict[str, str]:
    """``pinned`` from rows ``pin_rows`` read."""
    from meridian import gitio

    tip = ledger.tip()
    latest: dict[str, str] = {}
    for row in rows:  # ledger order: the last one wins
        latest[row[1]] = row[2]
    out: dict[str, str] = {}
    for name, commit in latest.items():
        try:
            oid = gitio.Oid(hex=commit)
            if tip is None or not gitio.is_ancestor(ledger.repo, oid, tip):
                continue
        except (ValueError, KeyError, gitio.GitError):
            continue  # a hand-written or foreign event: not a pin of this branch
        out[name] = commit
    return out


def pin_rows(ledger: Ledger, *, use_cache: bool = True) -> list[list[Any]]:
    """Every ``baseline.pinned`` event of the branch as a ``_shard_pins`` row, in ledger
    order (shards oldest first, lines in append order), read as ``pinned`` says: from the
    cache of each shard's pins where the shard's blob is the one it read, the rest from
    the branch; every row taken from the cache is confirmed on the tip's own line, and a
    cache that fails is dropped and every shard read."""
    from meridian import gitio
    from meridian.ledger import EVENTS

    tree = ledger.tree()
    tip = ledger.tip()
    if tree is None or tip is None:
        return []
    cached = _read_pins_cache(ledger) if use_cache else None
    known = cached[1] if cached is not None else {}
    shards: list[list[Any]] = []
    from_cache: set[str] = set()
    # the branch's own shard listing gives the order (never the file's), and a shard is
    # taken from the cache only where its blob id is the one the cache read
    for path in ledger.shards(EVENTS):
        try:
            oid = tree[path].id  # the entry's id: the blob itself is not loaded
        except KeyError:
            continue
        blob = str(oid)
        hit = known.get(path)
        if hit is not None and hit[0] == blob:
            shards.append([path, blob, sorted(hit[1], key=lambda row: row[0])])
            from_cache.add(path)
        else:
            data = gitio.blob_data(ledger.repo[oid]) or b""
            shards.append([path, blob, _shard_pins(ledger, path, data)])
    rows = [(path, row) for path, _, pins in shards for row in pins]
    # every pin taken from the cache is confirmed on the tip's own line (only the few
    # shards that hold pins are read): a forged file cannot add, move or re-mark a pin
    if not all(_confirmed(ledger, tree, path, [row for p, row in rows if p == path])
               for path in {p for p, _ in rows if p in from_cache}):
        return pin_rows(ledger, use_cache=False)  # the file lied: read every shard
    if cached is None or cached[0] != str(tip):  # (use_cache=False: the truth replaces any file)
        _write_pins_cache(ledger, str(tip), shards)
    return [row for _, row in rows]


def baselines(ledger: Ledger, *, use_cache: bool = True) -> list[Baseline]:
    """The pinned baselines: from the ``baseline.pinned`` events (see ``pinned``), and a
    tag with no event behind it (pinned before the events existed) as it is."""
    from meridian.evals.pins import decisions

    tags = {name: str(commit) for name, commit in ledger.tags(BASELINE_PREFIX).items()}
    rows = pin_rows(ledger, use_cache=use_cache)
    events = _latest_pins(ledger, rows) if rows else {}  # (the rows read once)
    decided = decisions(ledger, rows) if events else {}
    out = []
    for name in sorted(set(tags) | set(events)):
        commit = events.get(name, tags.get(name, ""))
        differs = None
        if name in events and tags.get(name) != commit:
            differs = tags.get(name, "")
        decision = decided.get(name)
        if decision is not None and decision.untrusted:
            # the latest pin was made in an agent session: the baseline stays the latest
            # one made outside it (none: no baseline to compare with)
            trusted = decision.trusted
            out.append(Baseline(
                name=name, commit=trusted.commit if trusted else "",
                run_id=_run_of_commit(ledger, trusted.commit) if trusted else None,
                tag_differs=differs, untrusted=tuple(decision.untrusted),
                pinned_at=trusted.ts if trusted else None))
            continue
        out.append(Baseline(name=name, run_id=_run_of_commit(ledger, commit), commit=commit,
                            tag_differs=differs,
                            pinned_at=decision.latest.ts if decision is not None else None))
    return out


def prune(ledger: Ledger, keep: int) -> list[str]:
    """Retire all but the ``keep`` newest runs (baselines excepted); the retired ids."""
    if keep < 0:
        raise MeridianError(f"--keep must be 0 or more, got {keep}")
    pinned = {b.run_id for b in baselines(ledger, use_cache=False)}  # never retire a pin
    visible = index(ledger)
    retire = [e.run_id for e in visible[: max(0, len(visible) - keep)] if e.run_id not in pinned]
    if not retire:
        return []
    record = ledger.record("eval.pruned", {"run_ids": retire, "keep": keep})
    ledger.commit(Write(
        summary=f"eval prune: {len(retire)} run(s) retired, {keep} kept",
        trailers={"Meridian-Event": "eval.pruned", "Meridian-Record": record.id},
    ).add(PRUNED_STREAM, record))
    return retire
