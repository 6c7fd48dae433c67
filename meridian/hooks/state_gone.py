"""A deleted state branch is tamper evidence, not "nothing recorded yet".

Layer: local guardrails. Without a state branch every gate state is unknown, and the
hooks used to skip the lock checks (a fresh project has none yet). ``git branch -D
meridian/state`` or ``git update-ref -d`` then unlocked every gate's files. The hooks
now tell the two apart: when the branch is missing but this clone holds evidence that
it existed (the verified-tip marker, the gate snapshot or the event-order cache under
``.git/meridian``, or a remote-tracking copy of the branch), the pre-commit and
pre-push hooks refuse and the Claude Code PreToolUse hook denies writes to gate files,
each with one line saying how to restore the branch.

Hot path: the pre-commit and Claude Code hooks call ``missing_state`` only when the
branch ref is absent; it reads a few file names and refs, imports nothing beyond
``meridian.gitio``, and never touches the network. Deleting ``.git/meridian`` as well
leaves no local evidence (a same-user agent can); CI (``meridian ci``) and the remote's
copy of the branch are the authority then (docs/security.md).
"""

from __future__ import annotations

from pathlib import Path

from meridian import gitio


def missing_state(repo: gitio.Repository, branch: str) -> tuple[str, str] | None:
    """(what is wrong, how to restore it) when ``branch`` is gone but evidence says it
    existed; None when the branch is there, or nothing shows it ever was (a project with
    no record yet)."""
    if gitio.ref_target(repo, f"refs/heads/{branch}") is not None:
        return None
    key = branch.replace("/", "__")
    local = gitio.meridian_dir(repo)
    marker = local / f"verified-{key}"
    seen = [name for name in (f"verified-{key}", f"gate-snapshot-{key}.json",
                              f"gate-history-{key}.json") if (local / name).exists()]
    copies = [name for name in gitio.list_refs(repo, "refs/remotes/")
              if name.endswith(f"/{branch}")]
    if not seen and not copies:
        return None
    last = _verified_tip(marker)
    if copies:
        remote = copies[0].removeprefix("refs/remotes/").removesuffix(f"/{branch}")
        how = f"`meridian sync` (or `git branch {branch} {remote}/{branch}`)"
    elif last is not None:
        how = f"`git update-ref refs/heads/{branch} {last}` (its last verified tip)"
    else:
        how = f"`meridian sync`, or fetch {branch} from a clone that has it"
    evidence = ", ".join([f".git/meridian/{name}" for name in seen] + copies[:1])
    reason = (f"the state branch {branch} is missing although {evidence} shows it existed: "
              "gate states cannot be derived, and a deleted branch unlocks nothing")
    return reason, f"restore it with {how}"


def _verified_tip(marker: Path) -> str | None:
    try:
        text = marker.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if len(text) == 40 and all(c in "0123456789abcdef" for c in text) else None
