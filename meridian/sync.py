"""``meridian sync``: share one state branch between clones.

fetch -> integrate (adopt, fast-forward, or merge by record id) -> push with a lease.
If someone pushed in between, the push is refused and the loop runs again on the new
remote tip, so nothing is lost. Baseline tags travel with the branch: after the merge,
each ``meridian/baseline/NAME`` tag is set from the latest ``baseline.pinned`` event,
so every clone ends up with the same pins whichever order they pinned and synced in.

Nothing of the remote is adopted before its history is verified (``check_remote``): a
remote whose branch was rewound or rewritten since this clone last fetched it, or whose
new commits edit or drop a record, add an invalid one, or carry a forged pass (the
checks of ``meridian verify``), is refused with the commit named, and neither clone's
branch moves. Nor is a local branch pushed that was rewound here (``refuse_rewound``:
a tip the verified-tip marker or git's reflog remembers is no longer on it).
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

    Returns how many tags moved. Reads the events (sync is not a hot path); an event
    whose commit is not a run's commit on this branch (hand-written or foreign) moves
    no tag (``store.pinned`` leaves it out).
    """
    from meridian.evals import store

    current = ledger.tags(BASELINE_TAG_PREFIX)
    moved = 0
    for name, commit in sorted(store.pinned(ledger, use_cache=False).items()):
        if str(current.get(name)) != commit:
            ledger.pin_tag(BASELINE_TAG_PREFIX + name, gitio.Oid(hex=commit))
            moved += 1
    return moved


CHECK_PREFIX = "meridian-sync-check/"


def check_remote(ledger: Ledger, remote: str, remote_tip: gitio.Oid,
                 seen: gitio.Oid | None) -> None:
    """Refuse (MeridianError) a remote history that rewinds, rewrites or tampers."""
    repo = ledger.repo
    if seen is not None and seen != remote_tip:
        try:
            kept = gitio.is_ancestor(repo, seen, remote_tip)
        except (ValueError, KeyError):
            kept = False
        if not kept:
            raise MeridianError(
                f"refusing {remote}/{ledger.branch}: its history was rewound or rewritten "
                f"(commit {str(seen)[:12]}, which this clone fetched before, is no longer on "
                f"it; the remote is now at {str(remote_tip)[:12]}); nothing was adopted")
    from meridian.verify import verify

    name = f"{CHECK_PREFIX}{ledger.branch}"
    check = Ledger(repo, name)
    gitio.set_ref(repo, check.refname, remote_tip, expected=gitio.ref_target(repo, check.refname))
    try:
        report = verify(check, full=True)
    finally:
        gitio.delete_ref(repo, check.refname)
        for leftover in ledger.local_dir.glob(f"*{name.replace('/', '__')}*"):
            leftover.unlink(missing_ok=True)
    if not report.ok:
        first = report.problems[0]
        raise MeridianError(
            f"refusing {remote}/{ledger.branch}: its history does not verify: {first} "
            f"({len(report.problems)} problem(s)); nothing was adopted (see `git log "
            f"{str(remote_tip)[:12]}`)")


def refuse_rewound(ledger: Ledger, remote: str) -> None:
    """Never push a branch rewound locally (MeridianError): the remote would take the
    older history as a fast-forward and what the lost tip recorded (a human's reopen)
    would be gone for every clone and for CI. Asked after the merge, so a tip the remote
    still has comes back by itself."""
    from meridian.verify import rewound, rewound_text

    problem = rewound(ledger)
    if problem is not None:
        raise MeridianError(rewound_text(ledger, problem, f"push {ledger.branch} to {remote}")
                            + "; nothing was pushed")


def sync(ledger: Ledger, remote: str) -> SyncResult:
    for attempt in range(1, MAX_ATTEMPTS + 1):
        seen = gitio.ref_target(ledger.repo, ledger.remote_refname(remote))
        remote_tip = fetch_state(ledger, remote)
        if remote_tip is not None:
            try:
                check_remote(ledger, remote, remote_tip, seen)
            except MeridianError:
                if seen is not None:  # the tracking ref stays at what was verified before
                    gitio.set_ref(ledger.repo, ledger.remote_refname(remote), seen,
                                  expected=remote_tip)
                raise
        action, added = "nothing", 0
        if remote_tip is not None:
            action, added = ledger.integrate(
                remote_tip, summary=f"sync: merge {ledger.branch} from {remote}")
        tip = ledger.tip()
        if tip is None:
            return SyncResult(remote, "nothing", 0, False, attempt, None)
        refuse_rewound(ledger, remote)
        reconcile_baselines(ledger)
        try:
            gitio.push_branch(ledger.repo, remote, ledger.branch, expected_remote=remote_tip,
                              tag_prefix=BASELINE_TAG_PREFIX)
        except gitio.PushRejected:
            continue
        return SyncResult(remote, action, added, tip != remote_tip, attempt, str(tip))
    raise MeridianError(f"sync with {remote} gave up after {MAX_ATTEMPTS} attempts: "
                        "the remote state branch kept moving; try again")
