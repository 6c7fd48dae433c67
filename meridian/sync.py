"""``meridian sync``: share one state branch between clones.

fetch -> integrate (adopt, fast-forward, or merge by record id) -> push with a lease.
If someone pushed in between, the push is refused and the loop runs again on the new
remote tip, so nothing is lost. Baseline tags travel with the branch: after the merge,
each ``meridian/baseline/NAME`` tag is set from the latest ``baseline.pinned`` event,
so every clone ends up with the same pins whichever order they pinned and synced in.
"""

from __future__ import annotations

from dataclasses import dataclass

from meridian import gitio
from meridian.errors import MeridianError
from meridian.ledger import Ledger

BASELINE_TAG_PREFIX = "meridian/baseline/"
MAX_ATTEMPTS = 10


@dataclass
class SyncResult:
    remote: str
    action: str  # adopted | up-to-date | fast-forward | merged | pushed | nothing
    added: int
    pushed: bool
    attempts: int
    tip: str | None


def fetch_state(ledger: Ledger, remote: str) -> gitio.Oid | None:
    if not gitio.has_remote(ledger.repo, remote):
        raise MeridianError(f"no git remote named {remote!r} (see `git remote -v`)")
    return gitio.fetch_branch(ledger.repo, remote, ledger.branch)


def reconcile_baselines(ledger: Ledger) -> int:
    """Point every baseline tag where its latest ``baseline.pinned`` event says.

    Returns how many tags moved. Reads the events (sync is not a hot path).
    """
    latest: dict[str, tuple[tuple[str, str], str]] = {}
    for record in ledger.records():
        if record.kind != "baseline.pinned":
            continue
        name, commit = record.data.get("name"), record.data.get("commit")
        if not isinstance(name, str) or not isinstance(commit, str):
            continue
        key = (record.ts, record.id)
        if name not in latest or key > latest[name][0]:
            latest[name] = (key, commit)
    current = ledger.tags(BASELINE_TAG_PREFIX)
    moved = 0
    for name, (_, commit) in sorted(latest.items()):
        if str(current.get(name)) != commit:
            try:
                ledger.pin_tag(BASELINE_TAG_PREFIX + name, gitio.Oid(hex=commit))
            except (ValueError, KeyError, gitio.GitError, MeridianError):
                # Not a commit of this branch (a hand-written or foreign event): the tag
                # stays where it is rather than every sync failing on it for good.
                continue
            moved += 1
    return moved


def sync(ledger: Ledger, remote: str) -> SyncResult:
    for attempt in range(1, MAX_ATTEMPTS + 1):
        remote_tip = fetch_state(ledger, remote)
        action, added = "nothing", 0
        if remote_tip is not None:
            action, added = ledger.integrate(
                remote_tip, summary=f"sync: merge {ledger.branch} from {remote}")
        tip = ledger.tip()
        if tip is None:
            return SyncResult(remote, "nothing", 0, False, attempt, None)
        reconcile_baselines(ledger)
        try:
            gitio.push_branch(ledger.repo, remote, ledger.branch, expected_remote=remote_tip,
                              tag_prefix=BASELINE_TAG_PREFIX)
        except gitio.PushRejected:
            continue
        return SyncResult(remote, action, added, tip != remote_tip, attempt, str(tip))
    raise MeridianError(f"sync with {remote} gave up after {MAX_ATTEMPTS} attempts: "
                        "the remote state branch kept moving; try again")
