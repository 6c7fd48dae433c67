"""``meridian sync``: share one state branch between clones.

fetch -> integrate (adopt, fast-forward, or merge by record id) -> push with a lease.
If someone pushed in between, the push is refused and the loop runs again on the new
remote tip, so nothing is lost. Baseline tags travel with the branch.
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


def sync(ledger: Ledger, remote: str) -> SyncResult:
    for attempt in range(1, MAX_ATTEMPTS + 1):
        remote_tip = fetch_state(ledger, remote)
        gitio.fetch_tags(ledger.repo, remote, BASELINE_TAG_PREFIX)
        action, added = "nothing", 0
        if remote_tip is not None:
            action, added = ledger.integrate(
                remote_tip, summary=f"sync: merge {ledger.branch} from {remote}")
        tip = ledger.tip()
        if tip is None:
            return SyncResult(remote, "nothing", 0, False, attempt, None)
        if tip == remote_tip:
            gitio.push_branch(ledger.repo, remote, ledger.branch, expected_remote=remote_tip,
                              tag_prefix=BASELINE_TAG_PREFIX)
            return SyncResult(remote, action, added, False, attempt, str(tip))
        try:
            gitio.push_branch(ledger.repo, remote, ledger.branch, expected_remote=remote_tip,
                              tag_prefix=BASELINE_TAG_PREFIX)
        except gitio.PushRejected:
            continue
        return SyncResult(remote, action, added, True, attempt, str(tip))
    raise MeridianError(f"sync with {remote} gave up after {MAX_ATTEMPTS} attempts: "
                        "the remote state branch kept moving; try again")
