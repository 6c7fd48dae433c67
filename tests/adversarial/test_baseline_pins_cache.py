"""Attack: rewrite the cache of baseline pins the pre-push hook reads (every ``git push``
asks which baselines are pinned; ``store.pinned`` caches the pins of each event shard
under ``.git/meridian``), so that the regressing run is its own baseline or the
baseline is forgotten, and the push goes through.

Layer: state derivation (``meridian.evals.store.pinned``). The cache is keyed by the
state tip and by each shard's blob id; a file that does not match its checksum is
ignored, a shard whose blob differs is read again, and every pin taken from the cache
is confirmed on the tip's own shard line. Each forged file here leaves pre-push
deciding exactly what it decides with no cache at all.

Also: a baseline name means the same with and without its tag (``store.resolve``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from meridian.evals import store
from meridian.hooks import prepush
from meridian.ledger import Ledger
from tests.adversarial.conftest import Proc
from tests.conftest import git
from tests.hooks.conftest import run_git

SUITE = str(Path(__file__).resolve().parents[2] / "suites" / "reference.yaml")


def _eval(cli: Callable[..., Proc], agent: str) -> None:
    result = cli("eval", "run", SUITE, "--agent", agent, "--offline", "--limit", "5",
                 "--no-isolation")
    assert result.code == 0, result


@pytest.fixture
def regressed(project: Path, remote: Path, cli: Callable[..., Proc]) -> Path:
    assert cli("hooks", "install").code == 0
    _eval(cli, "reference-v2")
    assert cli("baseline", "pin", "main").code == 0
    _eval(cli, "reference-v1")  # three tasks pass there and fail now
    refused = run_git(project, "push", "-q", "origin", "main")
    assert refused.code == 1 and "regresses against baseline main" in refused.err, refused.err
    assert store.pins_cache_path(Ledger.open(project)).is_file()  # the push wrote it
    return project


def _decision(project: Path, use_cache: bool) -> list[str]:
    head = git(project, "rev-parse", "HEAD").strip()
    stdin = f"refs/heads/main {head} refs/heads/main {'0' * 40}\n"
    result = prepush.check(str(project), stdin, use_cache=use_cache)
    return sorted(r.reason for r in result.refusals)


def _forge(project: Path, edit: Callable[[dict], None], *, fix_checksum: bool) -> None:
    ledger = Ledger.open(project)
    path = store.pins_cache_path(ledger)
    body = json.loads(path.read_text())
    edit(body)
    if fix_checksum:  # the agent recomputes it (the code is open)
        body["checksum"] = store._pins_checksum(body["tip"], body["shards"])
    path.write_text(json.dumps(body))


def _latest_run_commit(project: Path) -> str:
    ledger = Ledger.open(project)
    return store.commit_of_run(ledger, store.index(ledger)[-1].run_id)


def _pin_entries(body: dict) -> list[list]:
    return [pin for _, _, pins in body["shards"] for pin in pins]


@pytest.mark.parametrize("fix_checksum", [True, False])
def test_a_cache_pointing_the_baseline_at_the_regressing_run_changes_nothing(
        regressed: Path, fix_checksum: bool) -> None:
    expected = _decision(regressed, use_cache=False)
    assert any("regresses against baseline main" in r for r in expected)
    bad = _latest_run_commit(regressed)

    def repoint(body: dict) -> None:
        for pin in _pin_entries(body):
            pin[2] = bad

    _forge(regressed, repoint, fix_checksum=fix_checksum)
    assert _decision(regressed, use_cache=True) == expected
    assert store.pinned(Ledger.open(regressed))["main"] != bad
    push = run_git(regressed, "push", "-q", "origin", "main")
    assert push.code == 1 and "regresses against baseline main" in push.err, push.err


def test_a_cache_moving_the_pin_to_another_line_or_shard_changes_nothing(
        regressed: Path) -> None:
    expected = _decision(regressed, use_cache=False)
    bad = _latest_run_commit(regressed)

    def invent(body: dict) -> None:
        # a later pin of the same name in a shard that does not exist, and one at a line
        # of a real shard that holds no pin
        path, blob, _ = body["shards"][-1]
        body["shards"].append([path.rsplit("/", 1)[0] + "/9999.jsonl", blob, [[1, "main", bad]]])
        body["shards"][0][2].append([1, "main", bad])

    _forge(regressed, invent, fix_checksum=True)
    assert _decision(regressed, use_cache=True) == expected


def test_a_cache_claiming_a_stale_tip_or_a_torn_file_is_read_again(regressed: Path) -> None:
    expected = _decision(regressed, use_cache=False)
    ledger = Ledger.open(regressed)
    path = store.pins_cache_path(ledger)

    def forget(body: dict) -> None:
        for _, _, pins in body["shards"]:
            pins.clear()

    _forge(regressed, forget, fix_checksum=False)  # edited by hand: checksum fails
    assert _decision(regressed, use_cache=True) == expected
    path.write_bytes(path.read_bytes()[:40])  # torn
    assert _decision(regressed, use_cache=True) == expected

    def other_blobs(body: dict) -> None:  # the pins of other shard contents
        body["tip"] = "0" * 40
        for shard in body["shards"]:
            shard[1] = "f" * 40
            shard[2].clear()

    _forge(regressed, other_blobs, fix_checksum=True)
    assert _decision(regressed, use_cache=True) == expected


def test_the_cached_answer_equals_reading_every_shard_as_the_branch_grows(
        project: Path, cli: Callable[..., Proc]) -> None:
    """Appends, a new pin, a re-pin to another run and a second name: after each the
    cached answer (caught up from the shards whose blobs changed) is the full one."""
    ledger = Ledger.open(project)
    assert store.pinned(ledger) == {} == store.pinned(ledger, use_cache=False)
    _eval(cli, "reference-v2")
    steps = [("baseline", "pin", "main"), None, ("baseline", "pin", "other"), None,
             ("baseline", "pin", "main", store.index(ledger)[0].run_id)]
    for step in steps:
        if step is None:
            _eval(cli, "reference-v1")
            for n in range(30):  # enough events to close a shard now and then
                ledger.emit("gate.blocked", {"gate": "spec", "source": "gate",
                                             "reason": f"filler {n} " + "x" * 400})
        else:
            assert cli(*step).code == 0
        ledger = Ledger.open(project)
        cached = store.pinned(ledger)
        assert cached == store.pinned(ledger, use_cache=False)
        assert cached == store.pinned(ledger)  # and at the same tip, from the file
    assert set(cached) == {"main", "other"}


def test_a_baseline_name_means_the_same_with_and_without_its_tag(
        project: Path, cli: Callable[..., Proc]) -> None:
    """A baseline named like a prefix of another run's id: the tag deleted, the name
    still resolves to the baseline's run (the events hold it), never to the prefix."""
    _eval(cli, "reference-v2")
    ledger = Ledger.open(project)
    base_run = store.index(ledger)[-1].run_id
    _eval(cli, "reference-v1")
    ledger = Ledger.open(project)
    other = store.index(ledger)[-1].run_id
    name = next(other[:n] for n in range(1, len(other))
                if not base_run.startswith(other[:n]) and store.BASELINE_NAME.match(other[:n]))
    assert cli("baseline", "pin", name, base_run).code == 0
    ledger = Ledger.open(project)
    assert store.resolve(ledger, name) == base_run
    git(project, "tag", "-d", f"{store.BASELINE_PREFIX}{name}")
    ledger = Ledger.open(project)
    assert store.resolve(ledger, name) == base_run
    assert store.resolve(ledger, f"baseline:{name}") == base_run
    assert store.resolve(ledger, other) == other  # a full id is still the id


def test_a_cache_re_marking_the_agents_pin_as_a_humans_changes_nothing(
        regressed: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's re-pin is never the baseline (``pins.decisions``, from the cached rows
    since the pins cache holds each pin's agent-session mark): a cache that clears the
    mark, or moves the human's pin after the agent's, is refused on the tip's lines."""
    monkeypatch.setenv("CLAUDECODE", "1")
    assert cli("baseline", "pin", "main", "latest").code == 0
    monkeypatch.delenv("CLAUDECODE")
    expected = _decision(regressed, use_cache=False)
    assert any("regresses against baseline main" in r for r in expected), expected
    assert _decision(regressed, use_cache=True) == expected  # the cache holds the mark

    def clear_mark(body: dict) -> None:
        for pin in _pin_entries(body):
            pin[5] = False

    _forge(regressed, clear_mark, fix_checksum=True)
    assert _decision(regressed, use_cache=True) == expected

    def reorder(body: dict) -> None:  # the human's pin listed last: ledger order forged
        body["shards"].reverse()
        for _, _, pins in body["shards"]:
            pins.reverse()

    _forge(regressed, reorder, fix_checksum=True)
    assert _decision(regressed, use_cache=True) == expected
    push = run_git(regressed, "push", "-q", "origin", "main")
    assert push.code == 1 and "re-pinned in an agent session" in push.err, push.err


def test_the_baselines_with_an_agent_pin_read_only_the_shards_holding_pins(
        regressed: Path, cli: Callable[..., Proc], monkeypatch: pytest.MonkeyPatch) -> None:
    """Which pin decides (``pins.decisions``) comes from the same cached rows as
    ``pinned``: every push with a baseline no longer reads every event shard."""
    from meridian import gitio
    from meridian.ledger import EVENTS, Write

    monkeypatch.setenv("CLAUDECODE", "1")
    assert cli("baseline", "pin", "main", "latest").code == 0
    monkeypatch.delenv("CLAUDECODE")
    ledger = Ledger.open(regressed)
    for batch in range(8):  # several shards of other events after the pins
        write = Write(summary="history")
        for n in range(120):
            write.add(EVENTS, ledger.record("gate.blocked",
                                            {"source": "gate", "reason": f"r{batch}.{n}"}))
        ledger.commit(write)
    full = [(b.name, b.run_id, b.untrusted) for b in store.baselines(ledger, use_cache=False)]
    holding = {path for path in ledger.shards("events")
               if b'"baseline.pinned"' in (gitio.blob_data(gitio.tree_entry(
                   ledger.repo, ledger.tree(), path)) or b"")}
    reads: list[object] = []
    real = gitio.blob_data

    def counted(obj: object) -> bytes | None:
        reads.append(obj)
        return real(obj)  # type: ignore[arg-type]

    monkeypatch.setattr(gitio, "blob_data", counted)
    cached = [(b.name, b.run_id, b.untrusted) for b in store.baselines(ledger)]
    assert cached == full and full[0][2], full
    assert len(ledger.shards("events")) > len(holding) + 2, "too few shards to tell"
    assert len(reads) <= len(holding) + 2, (len(reads), len(holding))
