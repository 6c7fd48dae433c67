"""The state branch: append (compare-and-swap with retry), read, stream and walk.

This is the only module that writes refs. Writes never touch the working tree, the
index or HEAD: blobs, trees and a commit are built with pygit2 and the branch ref is
moved with a compare-and-swap. Layout (see docs/architecture.md):

    <stream>/<YYYY-MM>/...<NNNN>.jsonl   records, sharded by month and by size
    <path>.json                          immutable documents (runs, verdicts)

A stream is a directory such as ``events`` or ``memory/semantic``. A shard is closed
once it holds SHARD_BYTES and shards fan out into groups (``meridian.layout``, the
one place that knows shard paths), so no blob or tree grows without bound and an
append costs the same at 100 records as at 100,000.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from meridian import gitio, layout, packfile, records
from meridian.errors import LedgerConflict, MeridianError
from meridian.records import Record

if TYPE_CHECKING:
    from meridian.idindex import IdSet

# config.DEFAULT_BRANCH, spelled out: importing meridian.config (its pydantic models and
# yaml) would cost every pre-commit hook that verifies a new state commit.
DEFAULT_BRANCH = "meridian/state"

SHARD_BYTES = layout.SHARD_BYTES  # the ledger's public name for it
EVENTS = "events"
STALE_LOCK_SECONDS = 10.0
T = TypeVar("T")
RECORD_FIELDS = frozenset({"id", "ts", "kind", "writer", "data"})
RETRY_DEADLINE_SECONDS = 60.0
# Packing (see Ledger.pack): appends between two packs of the branch's new objects, packs
# merged into one once a level holds this many.
PACK_EVERY = 16
PACKS_PER_LEVEL = 4
COUNTER_BYTES = 1 << 16  # the append counter is emptied past this size
RETIRE_SECONDS = 2.0  # a pack merged into another is deleted at a pack this much later
RETIRED_PACKS = PACK_EVERY  # ... or sooner, the oldest, beyond this many
MISSING_TRIES = 3
FIRST_PACK_DEPTH = 1000  # a branch never packed by Meridian: pack its newest commits only
# A record may be stamped at most this much after the clock of the commit that stores it
# (refused on write here; flagged by meridian verify; see meridian.gates.evidence).
FUTURE_SKEW_SECONDS = 300


@dataclass
class Write:
    """One logical write: becomes exactly one commit on the state branch."""

    summary: str
    records: list[tuple[str, Record]] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)
    trailers: dict[str, str] = field(default_factory=dict)
    # Skip records whose id is already in their stream (content-addressed kinds).
    dedupe: bool = False

    def add(self, stream: str, record: Record) -> Write:
        self.records.append((stream, record))
        return self

    def message(self) -> str:
        """The commit message, secrets redacted (a summary may quote a blocked command)."""
        from meridian.redact import redact_text

        summary = " ".join(redact_text(self.summary).split()) or "meridian write"
        lines = [f"{'-'.join(key.split())}: {' '.join(redact_text(str(value)).split())}"
                 for key, value in self.trailers.items()]
        return summary + ("\n\n" + "\n".join(lines) if lines else "") + "\n"


@dataclass
class WriteResult:
    commit: gitio.Oid | None  # None when everything was already present
    written: list[Record]
    skipped: list[Record]


class Ledger:
    """The state branch of one repository."""

    def __init__(self, repo: gitio.Repository, branch: str = DEFAULT_BRANCH) -> None:
        self.repo = repo
        self.branch = branch
        self.refname = f"refs/heads/{branch}"
        if not gitio.valid_ref_name(self.refname):
            raise MeridianError(f"state branch {branch!r} is not a valid git branch name "
                                "(see `branch` in .meridian/config.yaml)")
        if gitio.current_branch(repo) == self.refname:
            raise MeridianError(f"state branch {branch!r} is the branch checked out here; "
                                "Meridian needs a branch of its own (see `branch` in "
                                ".meridian/config.yaml)")
        name, email = gitio.identity(repo)
        self.identity = (name, email)
        self.writer = f"{name} <{email}>"
        # stream -> the ids of the stream at a commit, for Write(dedupe=True)
        self._ids_at: dict[str, IdSet] = {}
        self._counter: Path | None = None  # .git/meridian/unpacked-<branch>, once known
        # blob id -> bytes of the shards this ledger's last commit wrote (the next append
        # to the same shard starts from them instead of reading the blob back)
        self._last_shards: dict[bytes, bytes] = {}
        # the trees (raw id -> bytes) and (commit, tree) of this ledger's last commit: the
        # next append edits them without reading them back
        self._last_trees: dict[bytes, gitio.RawTree] = {}
        self._last_commit: tuple[gitio.Oid, gitio.Oid] | None = None
        self._own_appends = 0

    @classmethod
    def open(cls, path: str | os.PathLike[str] = ".") -> Ledger:
        repo = gitio.open_repo(path)
        return cls(repo, configured_branch(repo))

    @property
    def workdir(self) -> Path | None:
        return gitio.workdir(self.repo)

    @property
    def local_dir(self) -> Path:
        """``.git/meridian``: caches and logs that are never committed."""
        return gitio.meridian_dir(self.repo)

    # --- reading ------------------------------------------------------------------

    def tip(self) -> gitio.Oid | None:
        return gitio.ref_target(self.repo, self.refname)

    def exists(self) -> bool:
        return self.tip() is not None

    def tree(self, at: gitio.Oid | None = None) -> Any:
        commit = at if at is not None else self.tip()
        return None if commit is None else gitio.commit_tree(self.repo, commit)

    def read(self, path: str, at: gitio.Oid | None = None) -> bytes | None:
        obj = gitio.tree_entry(self.repo, self.tree(at), path)
        return gitio.blob_data(obj)

    def read_json(self, path: str, at: gitio.Oid | None = None) -> Any:
        data = self.read(path, at)
        return None if data is None else json.loads(data)

    def listdir(self, path: str, at: gitio.Oid | None = None) -> list[str]:
        return [name for name, _ in gitio.tree_names(self.repo, self.tree(at), path)]

    def shards(self, stream: str, at: gitio.Oid | None = None) -> list[str]:
        """Paths of a stream's shards, oldest first."""
        stream_tree = gitio.tree_entry(self.repo, self.tree(at), stream)
        if not isinstance(stream_tree, gitio.Tree):
            return []
        return layout.stream_shards(self.repo, stream_tree, stream)

    def lines(self, stream: str, *, newest_first: bool = False,
              at: gitio.Oid | None = None) -> Iterator[tuple[str, int, bytes]]:
        """(shard path, 1-based line number, raw line) for every stored line."""
        paths = self.shards(stream, at)
        if newest_first:
            paths.reverse()
        tree = self.tree(at)
        for path in paths:
            obj = gitio.tree_entry(self.repo, tree, path)
            if obj is None:
                continue
            raw = (gitio.blob_data(obj) or b"").splitlines()
            numbered = list(enumerate(raw, start=1))
            if newest_first:
                numbered.reverse()
            for number, line in numbered:
                if line.strip():
                    yield path, number, line

    def records(self, stream: str = EVENTS, *, newest_first: bool = False,
                at: gitio.Oid | None = None) -> Iterator[Record]:
        """Stream a stream's records.

        Lines are checked for shape only (a JSON object with the five record fields);
        full validation of data models and ids is ``meridian verify``'s job.
        """
        for path, number, line in self.lines(stream, newest_first=newest_first, at=at):
            yield self._quick_record(line, f"{path}:{number}")

    def _quick_record(self, line: bytes, where: str) -> Record:
        try:
            raw = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise MeridianError(f"{self.branch}:{where}: corrupt record (not JSON: {exc}); "
                                "run `meridian verify`") from None
        if not isinstance(raw, dict) or not RECORD_FIELDS <= raw.keys() \
                or not isinstance(raw.get("data"), dict) or not isinstance(raw.get("kind"), str):
            raise MeridianError(f"{self.branch}:{where}: corrupt record (expected an object "
                                "with id, ts, kind, writer and data); run `meridian verify`")
        return Record.model_construct(**{k: raw[k] for k in RECORD_FIELDS})

    def ids(self, stream: str, at: gitio.Oid | None = None) -> set[str]:
        return {r.id for r in self.records(stream, at=at)}

    def history(self, *, grep: str | None = None) -> Iterator[gitio.CommitInfo]:
        tip = self.tip()
        if tip is None:
            return
        for info in gitio.walk(self.repo, tip):
            if grep is None or grep in info.message:
                yield info

    # --- writing ------------------------------------------------------------------

    def record(self, kind: str, data: dict[str, Any], ts: str | None = None) -> Record:
        return records.make(kind, data, writer=self.writer, ts=ts)

    def emit(self, kind: str, data: dict[str, Any], *, summary: str | None = None,
             trailers: Mapping[str, str] | None = None) -> Record:
        """Append one event as one commit; trailers name the event and its gate."""
        record = self.record(kind, data)
        tags = {"Meridian-Event": kind}
        if record.gate:
            tags["Meridian-Gate"] = record.gate
        tags.update(trailers or {})
        tags["Meridian-Record"] = record.id
        text = summary or (f"{kind} {record.gate}" if record.gate else kind)
        self.commit(Write(summary=text, trailers=tags).add(EVENTS, record))
        return record

    def commit(self, write: Write) -> WriteResult:
        """Apply ``write`` as one commit, retrying on a concurrent writer (CAS)."""
        clean = self._redacted(write)

        def attempt() -> WriteResult:
            for tries in range(MISSING_TRIES):
                try:
                    return self._try_commit(clean, self.tip())
                except KeyError:
                    # an object of the tip not found: a concurrent packer may have merged
                    # and deleted the pack this process knew between its two looks at the
                    # pack directory; the next look finds the merged pack
                    if tries == MISSING_TRIES - 1:
                        raise
            raise AssertionError("unreachable")

        result = self._retrying(attempt)
        if result.commit is not None:
            self._count_append()
            self._own_appends += 1
            if self._own_appends % PACK_EVERY == 0:
                # libgit2 never forgets a pack it once listed (each append adds one, which
                # a pack later merges and deletes): every lookup that misses walks them
                # all, so a long-lived ledger starts afresh now and then (0.1 ms)
                self.repo = gitio.reopen(self.repo)
        return result

    # --- packing ------------------------------------------------------------------------

    def _local_name(self, prefix: str, suffix: str = "") -> Path:
        return self.local_dir / f"{prefix}-{self.branch.replace('/', '__')}{suffix}"

    def _count_append(self) -> None:
        """Count appends since the last pack; the PACK_EVERY-th one packs.

        The count is the size of a file each append adds one byte to (O_APPEND: no
        read, no lock, no increment lost; a few microseconds, where rewriting a counter
        costs a truncation). Packing never fails the write that triggered it: the
        commit is on the branch already.
        """
        if self._counter is None:
            self._counter = self._local_name("unpacked")
        try:
            fd = os.open(self._counter, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, b".")
                count = os.fstat(fd).st_size
            finally:
                os.close(fd)
            # every PACK_EVERY-th append packs (O_APPEND gives each append its own size,
            # so exactly one of concurrent appenders sees each multiple); the file is
            # emptied only now and then (truncating costs more than an append's byte)
            if count % PACK_EVERY == 0:
                self.pack(look_for_loose=False)
        except (OSError, MeridianError, KeyError, ValueError, gitio.GitError):
            # the commit is acknowledged; a packing failure (git missing or too old, a
            # read-only object store, an object a shallow or damaged repository lacks)
            # must not turn it into an error the caller would retry: a later append
            # packs, and `git gc` packs everything anyway
            pass

    def pack(self, *, look_for_loose: bool = True) -> str | None:
        """Merge the packs appends wrote since the last pack into one, then merge packs.

        Each append writes its objects (a shard, the trees on its path, a commit) as one
        small pack of full objects (``gitio.PackedAppend``), some 10 KiB on disk; this
        makes one pack of them (``meridian.packfile.merge``: a shard's versions as deltas
        of its newest, a tree's as deltas of its newest, a few bytes each) in process,
        with no git command. Objects that are loose (a merge's commit, an older version's
        appends) are packed by `git pack-objects` as before, when the walk of the commits
        since the last pack meets one (the pack an append triggers walks only when a
        level fills: ``look_for_loose``). Once a level holds PACKS_PER_LEVEL packs they
        become one pack of the next level, their entries copied as they are (so the
        number of packs grows with the log of the history). Objects are only ever deleted
        when a complete pack holds them: concurrent writers and a killed packer lose
        nothing (a kill leaves a temporary file, or a small pack, for the next run). One
        packer at a time per branch: an OS lock on a file under .git/meridian, which the
        kernel releases when its holder exits or is killed, so a killed packer never
        blocks packing and no packer can take another's live lock for a stale one (a lock
        file's existence or age could do both). Returns the new pack's name, None when
        there was nothing to do or another packer runs.
        """
        fd = os.open(self._local_name("pack", ".lock"), os.O_CREAT | os.O_RDWR, 0o644)
        try:
            if not _try_lock(fd):
                return None  # another packer runs
            counter = self._local_name("unpacked")
            with contextlib.suppress(FileNotFoundError):
                if counter.stat().st_size >= COUNTER_BYTES:
                    os.truncate(counter, 0)
            # A packer leaves this marker only by dying (or failing) between its first
            # write and its state file. It names the pack being merged, which the next
            # packer adopts; and a git pack may hold objects whose loose copies it never
            # deleted, which the next pack skips (they are packed), so the next packer
            # sweeps every packed loose object instead of its own pack's.
            running = self._local_name("pack", ".running")
            died = running.exists()
            adopted = running.read_text().split() if died else []
            running.write_text("")
            name = self._pack_locked(sweep=died, adopted=adopted, running=running,
                                     look_for_loose=look_for_loose)
            running.unlink()
            return name
        finally:
            os.close(fd)  # releases the lock (so does the process's death)

    def _pack_locked(self, *, sweep: bool, adopted: list[str], running: Path,
                     look_for_loose: bool = True) -> str | None:
        tip = self.tip()
        if tip is None:
            return None
        state_path = self._local_name("packed", ".json")
        try:
            state = json.loads(state_path.read_text())
            packed = gitio.Oid(hex=str(state["tip"]))
            levels = [[str(name) for name in level] for level in state["levels"]]
            retired = {str(name): float(when) for name, when in state.get("retired", [])}
            since: gitio.Oid | None = packed if packed in self.repo else None
        except (OSError, ValueError, KeyError, TypeError):
            since, levels, retired = None, [], {}
        if not levels:
            levels.append([])
        # Packs merged into another are deleted at a later pack, not at once: a reader that
        # listed the pack directory just before the merged pack appeared, then looks in a
        # pack deleted meanwhile, finds the object nowhere (libgit2 re-lists once). They
        # go once RETIRE_SECONDS old, and the oldest beyond RETIRED_PACKS sooner (their
        # number counts toward `git gc --auto`'s limit of packs).
        now = time.time()
        oldest = sorted(retired, key=lambda name: retired[name])
        expired = [name for at, name in enumerate(oldest) if now - retired[name] >= RETIRE_SECONDS
                   or len(oldest) - at > RETIRED_PACKS]
        gitio.remove_packs(self.repo, expired)
        for name in expired:
            del retired[name]
        known = {name for level in levels for name in level} | set(retired)
        for name in adopted:  # a merged pack its dead packer never recorded
            if name not in known and gitio.read_pack(self.repo, name) is not None:
                levels[0].append(name)
                known.add(name)

        def announce(name: str) -> None:
            # before the pack exists: a packer killed from here on names it to the next
            with running.open("a") as handle:
                handle.write(name + "\n")

        new: str | None = None
        small = gitio.small_packs(self.repo, exclude=known)
        if small:
            new = gitio.merge_own_packs(self.repo, small, regroup=True, before_visible=announce)
            if new not in known:
                levels[0].append(new)
                known.add(new)
            # every object of these is in the complete pack just made (and announced)
            retired.update((name, now) for name, _ in small if name != new)

        first = since is None
        if since is None:
            since = self._first_parent_ancestor(tip, FIRST_PACK_DEPTH)
        # Appends write no loose object; merges and older versions do: a walk of the
        # commits since the last pack finds them (~1 ms: the pack an append triggers
        # looks only when its level fills, or after a packer died).
        look = look_for_loose or sweep or first or len(levels[0]) >= PACKS_PER_LEVEL
        if since != tip and look and (sweep or gitio.loose_commit_since(self.repo, tip, since)):
            made = gitio.pack_new_objects(self.repo, tip, since)
            if made is not None and made not in known:
                levels[0].append(made)
                known.add(made)
                new = made
            # The loose copies of what the new pack holds go (read from its index: no
            # second git process); after a packer died, when the index cannot be read
            # and once a level fills, `git prune-packed` sweeps every loose object any
            # pack holds (the copies a packer killed before its deletion left).
            packed_ids = gitio.pack_object_ids(self.repo, made) if made is not None else []
            if sweep or packed_ids is None or len(levels[0]) >= PACKS_PER_LEVEL:
                gitio.prune_packed(self.repo)
            else:
                gitio.prune_loose(self.repo, packed_ids)
        elif sweep:
            gitio.prune_packed(self.repo)
        for level in range(len(levels)):
            if len(levels[level]) >= PACKS_PER_LEVEL:
                merged = self._merge_level(levels[level], announce, retired)
                levels[level] = []
                if merged is not None:
                    if level + 1 == len(levels):
                        levels.append([])
                    levels[level + 1].append(merged)
        self._retire_within_pack_limit(retired)
        self._save_pack_state(state_path, tip if look else since or tip, levels, retired,
                              sweep=sweep or first or len(levels[0]) == 0)
        return new

    def _retire_within_pack_limit(self, retired: dict[str, float]) -> None:
        """Delete retired packs (oldest first, whatever their age) while the packs in the
        repository, with the PACK_EVERY small ones appends write before the next pack,
        would reach gc.autoPackLimit: past it every `git commit` (`git gc --auto`)
        repacks the user's whole repository. Every object of a retired pack is in a
        complete pack already; only a reader's wait for the merged pack is given up."""
        limit = gitio.config_int(self.repo, "gc.autoPackLimit", 50)
        if limit <= 0 or not retired:
            return  # automatic repacking by pack count is off
        directory = gitio.pack_dir(self.repo)
        try:
            files = set(os.listdir(directory))
        except OSError:
            return
        names = {name[:-5] for name in files if name.startswith("pack-") and name.endswith(".pack")}
        count = sum(1 for name in names if f"{name}.keep" not in files)
        room = limit - 1 - PACK_EVERY
        doomed = []
        for name in sorted(retired, key=lambda name: retired[name]):
            if count <= room:
                break
            doomed.append(name)
            if name in names:
                count -= 1
        gitio.remove_packs(self.repo, doomed)
        for name in doomed:
            del retired[name]

    def _merge_level(self, names: list[str], announce: Callable[[str], None],
                     retired: dict[str, float]) -> str | None:
        """One pack of ``names``: their bytes copied as one block each
        (``packfile.concatenate``: nothing parsed or inflated, so a level's merge costs
        what copying its bytes does), entries copied one by one where two hold the same
        object, or by `git pack-objects` for a pack this cannot read (past 2 GiB,
        another format)."""
        sources = []
        for name in names:
            loaded = gitio.load_pack(self.repo, name)
            if loaded is None:
                if (gitio.pack_dir(self.repo) / f"{name}.idx").exists():
                    return gitio.merge_packs(self.repo, names)
                continue  # gone (a `git gc` repacked it): nothing to merge
            sources.append(loaded)
        if not sources:
            return None
        if len(sources) == 1:
            return sources[0].name  # nothing to merge it with
        try:
            merged = gitio.concatenate_packs(self.repo, sources, before_visible=announce)
        except ValueError:
            entries = [(source.name, gitio.read_pack(self.repo, source.name))
                       for source in sources]
            if any(read is None for _, read in entries):
                return gitio.merge_packs(self.repo, names)
            try:
                merged = gitio.merge_own_packs(self.repo, entries,  # type: ignore[arg-type]
                                               regroup=False, before_visible=announce)
            except ValueError:  # past the plain index's 2 GiB
                return gitio.merge_packs(self.repo, names)
        now = time.time()
        retired.update((source.name, now) for source in sources if source.name != merged)
        return merged

    def _save_pack_state(self, state_path: Path, tip: gitio.Oid, levels: list[list[str]],
                         retired: dict[str, float], *, sweep: bool) -> None:
        if sweep:
            from meridian.idindex import sweep_temporaries

            sweep_temporaries(state_path)  # what a packer killed here before left
        from meridian.viewfile import replace_with

        replace_with(state_path, (json.dumps({"tip": str(tip), "levels": levels,
                                              "retired": sorted(retired.items())}) + "\n").encode())

    def _first_parent_ancestor(self, tip: gitio.Oid, depth: int) -> gitio.Oid | None:
        commit = tip
        for _ in range(depth):
            parents = gitio.commit_parents(self.repo, commit)
            if not parents:
                return None
            commit = parents[0]
        return commit

    def _retrying(self, attempt: Callable[[], T]) -> T:
        """Run ``attempt`` until it stops raising LedgerConflict, with jittered backoff.

        A lock left by a killed writer is expired; a branch held for longer than the
        deadline is a clear error rather than a hang.
        """
        started = time.monotonic()
        tries = 0
        while True:
            try:
                return attempt()
            except LedgerConflict:
                tries += 1
                elapsed = time.monotonic() - started
                if elapsed > RETRY_DEADLINE_SECONDS:
                    raise MeridianError(
                        f"could not write to {self.branch}: another writer held it for "
                        f"{elapsed:.0f}s (is a stale {self.refname}.lock left behind?)"
                    ) from None
                self._clear_stale_lock()
                time.sleep(random.uniform(0, min(0.05, 0.002 * 2 ** min(tries, 6))))

    def _clear_stale_lock(self) -> None:
        """A writer killed while holding the ref lock leaves it behind: expire it.

        The lock is first renamed to a name of our own, then deleted only if it is still
        the stale file we looked at (same inode *and* modification time: a freed inode
        number is often reused at once by the next writer's fresh lock). A fresh lock
        taken meanwhile is put back with a hard link, which, unlike a rename, never
        replaces a lock yet another writer created in between.
        """
        lock = gitio.ref_lock_path(self.repo, self.refname)
        try:
            seen = lock.stat()
        except FileNotFoundError:
            return
        if time.time() - seen.st_mtime <= STALE_LOCK_SECONDS:
            return
        grabbed = lock.with_name(f"{lock.name}.stale-{os.getpid()}-{random.randrange(1 << 30)}")
        try:
            os.rename(lock, grabbed)
        except FileNotFoundError:
            return
        now = grabbed.stat()
        if (now.st_ino, now.st_mtime_ns) != (seen.st_ino, seen.st_mtime_ns):
            try:
                os.link(grabbed, lock)
            except FileExistsError:
                pass  # a newer lock holds the ref now; the one we took is void either way
        grabbed.unlink()

    def _redacted(self, write: Write) -> Write:
        """``write`` with no secret left in any record, document or message part.

        The write boundary: every route to the state branch passes here, so a caller
        that forgot to redact (or a record built without ``records.make``) cannot leak.
        A record whose data changes is re-made with its own time and writer (a new id).
        """
        from meridian.redact import redact, redact_bytes

        clean_records: list[tuple[str, Record]] = []
        renamed: dict[str, str] = {}
        latest = time.time() + FUTURE_SKEW_SECONDS
        for stream, record in write.records:
            try:
                stamped = records.parse_ts(record.ts).timestamp()
            except ValueError:
                raise MeridianError(f"refusing a {record.kind} record: its time {record.ts!r} "
                                    "is not a UTC timestamp") from None
            if stamped > latest:
                # Folding is by ledger order, but a record from the future would still
                # read as the newest everywhere a time is shown or compared.
                raise MeridianError(
                    f"refusing a {record.kind} record stamped {record.ts}: that is more than "
                    f"{FUTURE_SKEW_SECONDS}s after now; a record's time is when it is written")
            data = redact(record.data)
            if data != record.data:
                remade = records.make(record.kind, data, writer=record.writer, ts=record.ts)
                renamed[record.id] = remade.id
                record = remade
            clean_records.append((stream, record))
        blobs = {path: redact_bytes(data, path) for path, data in write.blobs.items()}
        trailers = {key: renamed.get(value, value) for key, value in write.trailers.items()}
        return Write(summary=write.summary, records=clean_records, blobs=blobs,
                     trailers=trailers, dedupe=write.dedupe)

    def _ids_for_dedupe(self, stream: str, tip: gitio.Oid | None) -> IdSet:
        """Ids of ``stream`` at ``tip``, from the index of its ids (``meridian.idindex``).

        A retry after losing the compare-and-swap, or this ledger's next write, reads the
        lines added since the commit it last read (``new_records``); a fresh ledger loads
        the index kept under ``.git/meridian`` and catches it up the same way, so a
        write costs what was appended since, not the stream. The returned set is this
        ledger's own: the caller must not add to it (the write may still lose).
        """
        from meridian import idindex

        cached = self._ids_at.get(stream)
        if cached is not None and tip is not None and cached.at is not None:
            if cached.at == tip:
                return cached
            added = self.new_records(stream, since=cached.at, at=tip)
            if added is not None:
                cached.update((record.id for record in added), tip)
                return cached
        ids = idindex.load(self, stream, tip)
        self._ids_at[stream] = ids
        return ids

    def _try_commit(self, write: Write, tip: gitio.Oid | None) -> WriteResult:
        repo = self.repo
        updates: dict[str, bytes] = {}  # path -> raw id of the blob written there
        written: list[Record] = []
        skipped: list[Record] = []

        grouped: dict[tuple[str, str], list[Record]] = {}
        stored_ids: dict[str, IdSet] = {}
        pending: dict[str, set[str]] = {}  # ids this write adds, per stream
        for stream, record in write.records:
            if write.dedupe:
                known = stored_ids.get(stream)
                if known is None:
                    known = stored_ids[stream] = self._ids_for_dedupe(stream, tip)
                mine = pending.setdefault(stream, set())
                if record.id in mine or (record.id in known and known.confirmed(record.id)):
                    skipped.append(record)
                    continue
                mine.add(record.id)
            grouped.setdefault((stream, record.month), []).append(record)
            written.append(record)

        # Every object of the write goes into one new pack (``gitio.PackedAppend``): one
        # file and its index, where loose objects cost a file each.
        append = gitio.PackedAppend(repo, self._last_trees)
        root = None if tip is None else self._tree_id(tip)
        shards_written: list[tuple[bytes, bytes]] = []
        for (stream, month), batch in grouped.items():
            month_tree = append.subtree(root, f"{stream}/{month}")
            number, entry = layout.open_shard_entry(append, month_tree)
            payload = "".join(r.line() + "\n" for r in batch).encode()
            existing = b""
            if entry is not None:
                # The shard this ledger wrote last is not read back (nor inflated) again.
                data = self._last_shards.get(entry.raw_id)
                if data is None:
                    data = gitio.blob_data(repo[entry.id]) or b""
                if data and len(data) + len(payload) > layout.SHARD_BYTES:
                    number += 1
                else:
                    existing = data
                    if existing and not existing.endswith(b"\n"):
                        existing += b"\n"
            content = existing + payload
            blob = append.add(packfile.BLOB, content)
            updates[layout.shard_path(stream, month, number)] = blob
            shards_written.append((blob, content))

        for path, data in write.blobs.items():
            current = append.entry(root, path)
            new_oid = packfile.object_id(packfile.BLOB, data)
            if current is not None:
                if current[2] != new_oid:
                    raise MeridianError(f"{self.branch}:{path} already exists with other content; "
                                        "documents on the state branch are immutable")
                continue
            updates[path] = append.add(packfile.BLOB, data)

        if not updates:
            return WriteResult(commit=None, written=[], skipped=skipped)
        tree = gitio.Oid(raw=append.update(root, updates))
        parents = [] if tip is None else [tip]
        message = write.message()
        sig = gitio.signature_now(self.identity)
        made = gitio.Oid(raw=append.add(packfile.COMMIT,
                                        gitio.commit_bytes(tree, parents, sig, message)))
        fsync_pack, fsync_ref = gitio.fsync_settings(repo)
        pack = gitio.write_packed(append, fsync_pack)
        # Only the ref moves (``gitio.swap_ref``: git's lock protocol, its compare-and-swap
        # and reflog line); where libgit2 moves it instead, it finds the commit stored
        # (the same bytes), and a commit it made differently is loose.
        try:
            try:
                oid = gitio.create_commit(repo, self.refname, tree, parents, message,
                                          expected=tip, sig=sig, stored=made,
                                          fsync_ref=fsync_ref)
            except (LedgerConflict, MeridianError):
                # the branch does not name this commit (another writer moved it first, or
                # the ref could not move): nothing references the pack, which goes (a
                # retry writes its own)
                gitio.remove_packs(repo, [pack.name])
                raise
            self._acknowledge(oid, tree, tip, [gitio.Oid(raw=raw) for raw in pack.ids
                                               if raw != made.raw or oid == made], pack)
        finally:
            # kept until now: a `git repack -a -d` that listed it before the ref moved
            # would delete it; from here the branch reaches its objects
            gitio.release_pack(repo, pack.name)
        self._last_trees = append.made
        self._last_commit = (oid, tree)
        self._last_shards = dict(shards_written)
        if stored_ids:
            from meridian import idindex

            for stream, known in stored_ids.items():
                known.update(pending.get(stream, ()), oid)
                idindex.save(self, known)
        return WriteResult(commit=oid, written=written, skipped=skipped)

    def _tree_id(self, commit: gitio.Oid) -> bytes:
        """The raw id of ``commit``'s tree (this ledger's last commit: known, not read)."""
        if self._last_commit is not None and self._last_commit[0] == commit:
            return self._last_commit[1].raw
        return gitio.commit_tree_id(self.repo, commit).raw

    def _acknowledge(self, oid: gitio.Oid, tree: gitio.Oid, tip: gitio.Oid | None,
                     objects: list[gitio.Oid] | None = None,
                     pack: packfile.Written | None = None) -> None:
        """A write counts only once the ref, re-read from disk, names the new commit and
        that commit, its tree and every blob and subtree the write made exist: libgit2
        can return an id for an object whose write failed (a full disk), and "stored"
        must never be said of it."""
        stored = gitio.stored_on_branch(self.repo, self.refname, oid, tree, objects or (), pack)
        if stored:
            return  # on disk, and the branch reaches it (another writer may be on top)
        if stored is None and tip is not None:
            # The ref names a commit that is not on disk: put it back where it was.
            try:
                gitio.set_ref(self.repo, self.refname, tip, expected=oid)
            except MeridianError:
                pass
            else:
                if pack is not None:
                    # what is left of this write's pack is referenced by nothing now, and
                    # a damaged pack would fail every reader that looks into it
                    gitio.remove_packs(self.repo, [pack.name])
        raise MeridianError(
            f"the write to {self.branch} was not stored: after the commit the branch does not "
            f"name commit {str(oid)[:12]} with its tree on disk (is the disk full?); nothing "
            "was recorded")

    # --- remotes ------------------------------------------------------------------

    def remote_refname(self, remote: str) -> str:
        return f"refs/remotes/{remote}/{self.branch}"

    def adopt_remote(self, remote: str) -> bool:
        """Start the local state branch at the remote's, instead of a second history."""
        target = gitio.ref_target(self.repo, self.remote_refname(remote))
        if target is None or self.exists():
            return False
        gitio.set_ref(self.repo, self.refname, target, expected=None)
        return True

    # --- tags (baselines) ---------------------------------------------------------------

    def pin_tag(self, name: str, commit: gitio.Oid) -> gitio.Oid | None:
        """Point tag ``name`` (e.g. ``meridian/baseline/main``) at a state commit.

        Tags are refs, and this module is the only one that writes refs. The commit
        must be on the state branch, so a tag can never pin something the ledger does
        not hold. Returns the commit the tag pointed at before, if any.
        """
        tip = self.tip()
        if tip is None or not gitio.is_ancestor(self.repo, commit, tip):
            raise MeridianError(f"commit {commit} is not on {self.branch}; cannot tag it {name}")
        return gitio.set_tag(self.repo, name, commit)

    def tags(self, prefix: str) -> dict[str, gitio.Oid]:
        """``name -> commit`` of the tags under ``prefix`` (names without the prefix)."""
        return gitio.tag_targets(self.repo, prefix)

    def integrate(self, other: gitio.Oid, *, summary: str) -> tuple[str, int]:
        """Bring ``other`` (e.g. the fetched remote tip) into the local branch.

        Returns (what happened, records added): ``adopted``, ``up-to-date``,
        ``fast-forward`` or ``merged``. A merge is one commit with both parents whose
        tree is the record-id union of the two (see meridian.merge).
        """
        from meridian.merge import merge_trees

        def attempt() -> tuple[str, int]:
            tip = self.tip()
            if tip is None:
                gitio.set_ref(self.repo, self.refname, other, expected=None)
                return "adopted", 0
            if gitio.is_ancestor(self.repo, other, tip):
                return "up-to-date", 0
            if gitio.is_ancestor(self.repo, tip, other):
                gitio.set_ref(self.repo, self.refname, other, expected=tip)
                return "fast-forward", 0
            tree, added = merge_trees(self.repo, self.tree(tip), self.tree(other))
            message = Write(summary=summary, trailers={
                "Meridian-Event": "sync.merged", "Meridian-Merged": str(other)}).message()
            gitio.create_commit(self.repo, self.refname, tree, [tip, other], message,
                                expected=tip)
            return "merged", added

        return self._retrying(attempt)

    def new_records(self, stream: str, since: gitio.Oid,
                    at: gitio.Oid | None = None) -> list[Record] | None:
        """Records appended to ``stream`` between commit ``since`` and ``at`` (the tip).

        Reads only the shards that changed, so a cache keyed by commit can catch up in
        time proportional to what is new. Returns None when the change is not a pure
        append (``since`` is not an ancestor, or a merge re-sharded the stream): the
        caller then recomputes from scratch.
        """
        at = at if at is not None else self.tip()
        if at is None:
            return None
        try:
            if not gitio.is_ancestor(self.repo, since, at):
                return None
            old_tree = gitio.commit_tree(self.repo, since)
        except (KeyError, ValueError):
            return None
        old_stream = gitio.tree_entry(self.repo, old_tree, stream)
        new_stream = gitio.tree_entry(self.repo, self.tree(at), stream)
        if new_stream is None:
            return [] if old_stream is None else None
        out: list[Record] = []
        changes = sorted(gitio.changed_paths(self.repo, old_stream, new_stream))
        for path, old, new in changes:
            if new is None or not path.endswith(".jsonl"):
                return None
            old_data = gitio.read_blob(self.repo, old) if old is not None else b""
            new_data = gitio.read_blob(self.repo, new)
            if not new_data.startswith(old_data):
                return None
            for line in new_data[len(old_data):].splitlines():
                if line.strip():
                    out.append(self._quick_record(line, f"{stream}/{path}"))
        return out


CONFIG_FILE = Path(".meridian") / "config.yaml"  # config.CONFIG_PATH, spelled out
BRANCH_CACHE = "config-branch.json"


def configured_branch(repo: gitio.Repository) -> str:
    """The state branch ``.meridian/config.yaml`` names (``load_config(root).branch``).

    Validating the config means yaml and pydantic, some 60 ms of a command that writes
    one record, so the branch of a config that validated is kept in
    ``.git/meridian/config-branch.json``, keyed by the sha256 of the file's bytes and
    Meridian's version: the same bytes validate the same way, and any other bytes (or
    no cache) are validated again with ``load_config``, whose error is the one a bad
    file gets. Like every file under ``.git/meridian`` it is a cache an agent with the
    shell could rewrite: its branch is taken only when it is the one the bytes name
    plainly (``_literal_branch``), so a rewritten cache can skip a validation but never
    send a command (``verify``, ``sync``, ``memory add``) to another branch.
    """
    from meridian import __version__

    root = gitio.workdir(repo)
    if root is None:
        return DEFAULT_BRANCH
    path = root / CONFIG_FILE
    cache = gitio.common_dir(repo) / "meridian" / BRANCH_CACHE
    key = None
    try:
        from meridian.userfiles import read_bounded

        data = read_bounded(path)
        key = f"{__version__} {_sha256(data)}"
        # The cache is a file an agent can rewrite: it is read without blocking (a FIFO
        # is refused), and the branch it names is taken only when the bytes themselves
        # name that branch plainly (``_literal_branch``). So it can only say "these
        # bytes validated", never pick another branch.
        cached = json.loads(read_bounded(cache, limit=4096))
        if cached.get("key") == key and cached.get("branch") == _literal_branch(data):
            return str(cached["branch"])
    except FileNotFoundError:
        if key is None and not os.path.lexists(path):
            return DEFAULT_BRANCH  # load_config's default for a project without the file
    except (OSError, ValueError, MeridianError, AttributeError):
        pass  # a special or unreadable file, or no usable cache: validate
    from meridian.config import load_config

    branch = load_config(root).branch
    if key is not None:
        from meridian.viewfile import replace_with

        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            replace_with(cache, json.dumps({"key": key, "branch": branch}).encode())
        except OSError:
            pass  # only slower next time
    return branch


_COMMENT_TAIL = r"(?:[ \t]+#.*|[ \t]*)"  # a comment starts after whitespace only
_PLAIN_KEY_LINE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*:(?:[ \t]+[A-Za-z0-9._/-]+)?" + _COMMENT_TAIL)
_BRANCH_LINE = re.compile(
    r"branch:[ \t]+(?:([A-Za-z0-9._/-]+)|\"([A-Za-z0-9._/-]+)\"|'([A-Za-z0-9._/-]+)')"
    + _COMMENT_TAIL)


def _literal_branch(data: bytes) -> str | None:
    """The branch the config's bytes name so plainly that no YAML reading differs, or
    None (then only ``load_config`` can tell): a top-level ``branch: NAME`` line with
    only comments, blank lines and ``key: plain-value`` lines before it and no other
    mention of ``branch`` outside comment lines; or the default when ``branch`` is not
    mentioned at all. No backslash (escapes could spell the key), NUL (UTF-16), CR or
    other line break YAML knows."""
    if b"\\" in data or b"\0" in data or b"\r" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if any(brk in text for brk in ("\x85", "\u2028", "\u2029")):
        return None  # line breaks to YAML, not to str.split("\n")
    found: str | None = None
    before = True
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if before:
            match = _BRANCH_LINE.fullmatch(line)
            if match is not None:
                found = next(group for group in match.groups()[:3] if group)
                before = False
                continue
            if _PLAIN_KEY_LINE.fullmatch(line) is None:
                before = False  # past the plain prelude: only no mention proves anything
        if "branch" in line:
            return None
    return DEFAULT_BRANCH if found is None else found


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _try_lock(fd: int) -> bool:
    """Take an exclusive, non-blocking OS lock on ``fd``: False when another holds it.

    The lock lives as long as the descriptor (closing it or the process's death releases
    it), so it can neither be abandoned nor stolen.
    """
    if os.name == "nt":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
