"""Shared parts of the benchmarks: interleaved timing and histories built with plumbing.

Timing: every contender runs one operation at a time, round by round, in an order
that alternates between rounds, so drift on a busy machine hits them alike. Each
operation is timed on its own (never a block divided by its length, which snaps to
the scheduler tick under load) in CPU time (this process plus the children it waited
for: a ``git commit`` counts git and its hooks) and wall time. Reports print the
median with the min-max (and the CPU mean, which counts work done once in a while,
like packing, that a median hides), and ratios of medians taken in the same run, with
the range of the per-round ratios.

Histories: ``write_history`` builds a state branch of any size as one commit, with
the ledger's own shard layout (``merge.shard_lines``), so 100,000 records take
seconds instead of the minutes 100,000 appends would.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pygit2

from meridian import gitio, records
from meridian.merge import shard_lines


def cpu_seconds() -> float:
    """CPU time of this process and of every child (and grandchild) it has waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@dataclass
class Timings:
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    # per round: (first index, end index) into cpu/wall
    rounds: list[tuple[int, int]] = field(default_factory=list)

    def add(self, cpu: float, wall: float) -> None:
        self.cpu.append(cpu)
        self.wall.append(wall)


@dataclass
class Contender:
    """``run`` is timed; ``setup`` (untimed) runs before each operation."""

    run: Callable[[], Any]
    setup: Callable[[], Any] | None = None


def time_one(contender: Contender) -> tuple[float, float]:
    if contender.setup is not None:
        contender.setup()
    cpu, wall = cpu_seconds(), time.perf_counter()
    contender.run()
    return cpu_seconds() - cpu, time.perf_counter() - wall


def interleave(contenders: dict[str, Contender], *, rounds: int, per_round: int,
               warmup: int = 2, rotate: bool = False) -> dict[str, Timings]:
    """Per-operation CPU and wall times, rounds interleaved (order reversed every other
    round; with ``rotate``, shifted by one each round instead: reversing runs the first
    and the last contender twice in a row, warm, which favours them where caches count)."""
    for contender in contenders.values():
        for _ in range(warmup):
            time_one(contender)
    out = {name: Timings() for name in contenders}
    names = list(contenders)
    for number in range(rounds):
        if rotate:
            shift = number % len(names)
            order = names[shift:] + names[:shift]
        else:
            order = names if number % 2 == 0 else names[::-1]
        for name in order:
            timings = out[name]
            start = len(timings.cpu)
            for _ in range(per_round):
                timings.add(*time_one(contenders[name]))
            timings.rounds.append((start, len(timings.cpu)))
    return out


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}" if seconds < 0.01 else f"{seconds * 1e3:.1f}"


def spread(values: list[float]) -> str:
    """``median [min-max]`` in milliseconds."""
    return f"{ms(statistics.median(values))} [{ms(min(values))}-{ms(max(values))}]"


def ratio(timings: Timings, reference: Timings, metric: str = "cpu") -> tuple[float, float, float]:
    """(ratio of medians, min and max of the per-round ratios), same run."""
    mine, theirs = getattr(timings, metric), getattr(reference, metric)
    overall = statistics.median(mine) / statistics.median(theirs)
    per_round = [statistics.median(mine[a:b]) / statistics.median(theirs[c:d])
                 for (a, b), (c, d) in zip(timings.rounds, reference.rounds, strict=False)
                 if b > a and d > c]
    return overall, min(per_round, default=overall), max(per_round, default=overall)


def mean_ratio(timings: Timings, reference: Timings, metric: str = "cpu") -> float:
    """Ratio of the means: the amortized cost, counting work done once in a while (packing
    every PACK_EVERY appends) that a ratio of medians leaves out."""
    return statistics.mean(getattr(timings, metric)) / statistics.mean(getattr(reference, metric))


def round_means(timings: Timings, metric: str = "cpu") -> list[float]:
    values = getattr(timings, metric)
    return [statistics.mean(values[a:b]) for a, b in timings.rounds if b > a]


def mean_spread(timings: Timings, metric: str = "cpu") -> str:
    """``mean [min-max of the per-round means]`` in milliseconds."""
    means = round_means(timings, metric) or [statistics.mean(getattr(timings, metric))]
    return (f"{ms(statistics.mean(getattr(timings, metric)))} "
            f"[{ms(min(means))}-{ms(max(means))}]")


def mean_ratio_text(timings: Timings, reference: Timings, metric: str = "cpu") -> str:
    """Ratio of the means, with the min-max of the per-round ratios of means."""
    overall = mean_ratio(timings, reference, metric)
    per_round = [a / b for a, b in zip(round_means(timings, metric),
                                       round_means(reference, metric), strict=False) if b]
    return (f"{overall:.2f}x [{min(per_round, default=overall):.2f}-"
            f"{max(per_round, default=overall):.2f}]")


def ratio_text(timings: Timings, reference: Timings, metric: str = "cpu") -> str:
    overall, low, high = ratio(timings, reference, metric)
    return f"{overall:.2f}x [{low:.2f}-{high:.2f}]"


def table(title: str, timings: dict[str, Timings], reference: str | None = None) -> None:
    """One line per contender: CPU ms (median [min-max], mean [min-max of the per-round
    means]), wall ms, and ratios of medians and of means to ``reference``."""
    print(title)
    width = max(len(name) for name in timings)
    head = (f"  {'':<{width}}  {'CPU ms median [min-max]':>28}  {'CPU mean [rounds]':>26}"
            f"  {'wall ms median [min-max]':>28}")
    if reference:
        head += (f"  {'CPU vs ' + reference:>22}  {'CPU mean vs it':>20}"
                 f"  {'wall vs it':>20}")
    print(head)
    for name, values in timings.items():
        line = (f"  {name:<{width}}  {spread(values.cpu):>28}  {mean_spread(values):>26}"
                f"  {spread(values.wall):>28}")
        if reference and name != reference:
            line += (f"  {ratio_text(values, timings[reference]):>22}"
                     f"  {mean_ratio_text(values, timings[reference]):>20}"
                     f"  {ratio_text(values, timings[reference], 'wall'):>20}")
        print(line)


def verdict(label: str, value: float, budget: float) -> bool:
    ok = value <= budget
    print(f"{'PASS' if ok else 'FAIL'}  {label}: {value:.2f} (target <= {budget})")
    return ok


class OtherCode:
    """Another version's ``meridian`` package (``folder/meridian``, e.g. main's code from
    `git archive`), loaded beside this one in the same process for a same-run A/B.

    Each side keeps its own modules; ``use`` puts one side's modules in ``sys.modules``
    (untimed, in a contender's setup), so the lazy imports inside that side's functions
    find that side's modules, never the other's.
    """

    def __init__(self, folder: Path, modules: Sequence[str]) -> None:
        import importlib

        self.sides: dict[str, dict[str, Any]] = {"this": self._take()}
        sys.path.insert(0, str(folder))
        try:
            importlib.invalidate_caches()
            for name in modules:
                importlib.import_module(name)
            other = self._take()
        finally:
            sys.path.remove(str(folder))
        if not str(getattr(other.get("meridian"), "__file__", "")).startswith(str(folder)):
            raise SystemExit(f"--baseline {folder}: no meridian package there")
        self.sides["baseline"] = other
        self.active = "this"
        sys.modules.update(self.sides["this"])

    @staticmethod
    def _take() -> dict[str, Any]:
        taken = {name: module for name, module in sys.modules.items()
                 if name == "meridian" or name.startswith("meridian.")}
        for name in taken:
            del sys.modules[name]
        return taken

    def __getitem__(self, name: str) -> Any:
        return self.sides["baseline"][name]

    def use(self, side: str) -> None:
        """Put ``side``'s modules ("this" or "baseline") in ``sys.modules``."""
        if side == self.active:
            return
        self.sides[self.active].update(self._take())
        sys.modules.update(self.sides[side])
        self.active = side


# --- repositories and histories -------------------------------------------------------


def fresh_repo(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.name", "bench"], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.email", "bench@localhost"], check=True)
    return path


WRITER = "bench <bench@localhost>"
_validated_kinds: set[str] = set()


def line(kind: str, data: dict[str, Any], ts: str, writer: str = WRITER) -> bytes:
    """One stored record line, exactly as the ledger writes it (id from its content).

    The data of the first record of each kind is validated against its model, and must
    come out unchanged, so every line of a history passes ``meridian verify``.
    """
    if kind not in _validated_kinds:
        clean = records.validate_data(kind, data)
        if clean != data:
            raise SystemExit(f"benchmark data for {kind} is not in normal form: {data} != {clean}")
        _validated_kinds.add(kind)
    rid = records.record_id(kind, ts, writer, data)
    return json.dumps({"id": rid, "ts": ts, "kind": kind, "writer": writer, "data": data},
                      separators=(",", ":"), ensure_ascii=False).encode()


def stamps_this_month(count: int) -> list[str]:
    """``count`` increasing timestamps from the start of this month to now (UTC).

    The worst case for the append path: the whole history in the month being written.
    """
    now = datetime.now(UTC)
    start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    step = (now - start) / max(count, 1)
    return [(start + step * n).strftime("%Y-%m-%dT%H:%M:%S.%fZ") for n in range(count)]


def write_history(path: Path, streams: dict[str, Iterable[bytes]],
                  documents: dict[str, bytes] | None = None,
                  branch: str = "meridian/state") -> pygit2.Oid:
    """Write ``streams`` (lines in time order) and ``documents`` as one commit on ``branch``.

    The commit extends the branch when it exists (one more commit), else starts it.
    """
    repo = pygit2.Repository(str(path))
    refname = f"refs/heads/{branch}"
    tip = gitio.ref_target(repo, refname)
    base = None if tip is None else gitio.commit_tree(repo, tip)
    updates: dict[str, pygit2.Oid] = {}
    for stream, lines in streams.items():
        existing = [] if base is None else _stream_lines(repo, base, stream)
        for shard, content in shard_lines(stream, [*existing, *lines]).items():
            updates[shard] = repo.create_blob(content)
    for doc, content in (documents or {}).items():
        updates[doc] = repo.create_blob(content)
    tree = gitio.update_tree(repo, base, updates)
    sig = pygit2.Signature("bench", "bench@localhost")
    oid = repo.create_commit(refname, sig, sig, "benchmark history\n", tree,
                             [] if tip is None else [tip])
    return oid


def _stream_lines(repo: pygit2.Repository, tree: pygit2.Tree, stream: str) -> list[bytes]:
    out: list[bytes] = []
    for path, oid in sorted(gitio.iter_files(repo, tree)):
        if path.startswith(stream + "/") and path.endswith(".jsonl"):
            out.extend(repo[oid].data.splitlines())
    out.sort(key=lambda raw: json.loads(raw)["ts"])
    return out


def disk_bytes(directory: Path) -> int:
    """Bytes the files under ``directory`` occupy on disk (allocated blocks)."""
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


def loose_objects(git_dir: Path) -> int:
    objects = git_dir / "objects"
    return sum(len(os.listdir(objects / d)) for d in os.listdir(objects)
               if len(d) == 2 and (objects / d).is_dir())


# --- a project with gates and a long history -------------------------------------------

GATES = """\
version: 1
gates:
  - id: core
    artifacts: ["src/**"]
  - id: docs
    needs: [core]
    artifacts: ["docs/**"]
"""
MODULE = '''\
def total(values: list[float]) -> float:
    """Sum of the values."""
    result = 0.0
    for value in values:
        result += value
    return result
'''


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def quiet_meridian(cwd: Path, *args: str) -> None:
    """Run a meridian command in process, in ``cwd``, its output discarded."""
    import contextlib
    import io

    from meridian.cli import main as meridian

    saved = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            code = meridian(list(args))
    finally:
        os.chdir(saved)
    if code != 0:
        raise SystemExit(f"meridian {' '.join(args)} exited {code}: {err.getvalue().strip()}")


def gate_events(count: int) -> list[bytes]:
    """``count`` gate events this month (blocks and reopens over 40 gates)."""
    out = []
    for n, ts in enumerate(stamps_this_month(count)):
        if n % 5 == 0:
            out.append(line("gate.reopened", {"gate": f"g{n % 40}", "reason": "benchmark"}, ts))
        else:
            out.append(line("gate.blocked", {"gate": f"g{n % 40}", "source": "gate",
                                             "reason": f"benchmark block {n}"}, ts))
    return out


def make_project(path: Path, events: int, *, claude: bool = False) -> Path:
    """A repository with Meridian initialised, two gates (docs needs core, core in
    progress), src/module.py committed, and ``events`` more events on the state branch."""
    path.mkdir(parents=True)
    fresh_repo(path)
    (path / "README.md").write_text("benchmark\n")
    quiet_meridian(path, "init", "--no-hooks", *(["--claude"] if claude else []))
    (path / ".meridian" / "gates.yaml").write_text(GATES)
    (path / "src").mkdir()
    (path / "src" / "module.py").write_text(MODULE)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "setup")
    if events:
        write_history(path, {"events": gate_events(events)})
    quiet_meridian(path, "gate", "start", "core")
    return path
