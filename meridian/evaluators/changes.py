"""What a change touched, and the exceptions written into the code: stdlib only.

The offline evaluator judges the change, not the whole history of a codebase. A gate's
change is everything between its base commit (``gate start``) and the work tree; a
commit's change is its staged hunks. ``changed_lines`` gives, per file, the new-side
line numbers a change added or rewrote (a pure deletion marks the lines on either side
of the gap, so a test whose assertion was deleted counts as changed). A finding whose
span meets one of them is *in the change*; any other finding is ``pre-existing``.

Exceptions are inline and reasoned: ``# meridian: allow KIND -- reason`` (``//`` in
JS/TS/Go/Rust/Java/Kotlin, ``/* */`` or ``--`` also read) on the finding's line, on the
comment lines right above it or on a comment line of its own inside the lines it spans,
or on (or right above) the line that opens the function holding it. A marker without a reason of substance (two words, ten letters, not `-- x` or `-- todo`)
suppresses nothing: the finding stands and says so.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from meridian.evaluators.findings import Finding

# line ranges (first, last), 1-based and inclusive, on the new side of a change
Ranges = tuple[tuple[int, int], ...]

ALLOW = re.compile(
    r"(?:#|//|/\*|--|;)\s*meridian:\s*allow\s+(?P<kinds>[A-Za-z_][\w-]*(?:\s*,\s*[A-Za-z_][\w-]*)*)"
    r"(?:\s+--\s*(?P<reason>.*?))?\s*(?:\*/)?\s*$")
COMMENT_LINE = re.compile(r"^\s*(?:#|//|/\*|\*|--)")
# A reason of substance: at least two words and ten letters, not a placeholder word
# (`-- x`, `-- ok`, `-- todo` would let an agent silence any finding with no account).
_WORD = re.compile(r"[^\W\d_]{2,}")
_PLACEHOLDER_REASONS = frozenset({
    "todo", "fixme", "tbd", "wip", "xxx", "reason", "why", "because", "ok", "okay", "fine",
    "none", "na", "ignore", "allow", "allowed", "later", "temp", "temporary", "test", "stub",
    "hack", "whatever", "see", "above", "below", "it", "is", "the", "a", "an", "this"})


# A reason admitting the work is not done ("will implement later", "for now"): for a
# stub that is the finding itself, not an exception to it.
UNFINISHED_REASON = re.compile(r"\b(?:todo|fixme|tbd|wip|yet|later|soon|for\s+now|temporar\w*|"
                               r"(?:will|to)\s+(?:be\s+)?(?:implement\w*|finish\w*|"
                               r"fill\w*|written|done|complete\w*)|not\s+(?:yet\s+)?"
                               r"(?:implemented|done|finished|written))\b", re.IGNORECASE)


def changed_lines(old: str | None, new: str) -> Ranges:
    """New-side line ranges that differ from ``old`` (None: the file is new, all of it)."""
    new_lines = new.splitlines()
    if old is None:
        return ((1, len(new_lines)),) if new_lines else ()
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new_lines, autojunk=False)
    ranges: list[tuple[int, int]] = []
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            ranges.append((j1 + 1, j2))
        elif tag == "delete":
            # Nothing was added, yet the code around the gap changed meaning.
            ranges.append((max(1, j1), min(max(len(new_lines), 1), j1 + 1)))
    return tuple(ranges)


RENAME_SIMILARITY = 0.5  # git's default rename threshold


def rename_source(new: str, removed: Mapping[str, str]) -> str | None:
    """The removed file ``new`` most likely is, moved (similarity >= 50%, git's default
    rename threshold), or None. A moved or renamed file is diffed against its old self:
    only the lines the move changed are the change, so renaming a mature module does
    not make its pre-existing findings block, and a stub planted while moving it does."""
    best, best_ratio = None, RENAME_SIMILARITY
    new_lines = new.splitlines()
    for path in sorted(removed):
        matcher = difflib.SequenceMatcher(None, removed[path].splitlines(), new_lines,
                                          autojunk=False)
        if matcher.real_quick_ratio() < best_ratio or matcher.quick_ratio() < best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio >= best_ratio:
            best, best_ratio = path, ratio
    return best


def touches(ranges: Ranges, first: int, last: int) -> bool:
    return any(start <= last and first <= end for start, end in ranges)


def finding_span(finding: Finding) -> tuple[int, int]:
    first = finding.line or 1
    return first, max(first, finding.end_line or first)


def mark_pre_existing(findings: Iterable[Finding],
                      changed: Mapping[str, Ranges] | None) -> list[Finding]:
    """Findings outside the change flagged ``pre_existing`` (``changed`` None: no base,
    everything is judged as part of the change). A finding without a file or line (a
    missing artifact, a failing check) is always part of the change."""
    out = []
    for finding in findings:
        if changed is None or finding.file is None or finding.line is None:
            out.append(finding)
            continue
        ranges = changed.get(finding.file, ())
        if not touches(ranges, *finding_span(finding)):
            finding = replace(finding, pre_existing=True)
        out.append(finding)
    return out


@dataclass(frozen=True)
class Allow:
    line: int
    kinds: frozenset[str]
    reason: str
    text: str


@dataclass(frozen=True, kw_only=True)
class Suppressed:
    """A finding an inline marker allowed, with the marker's reason."""

    file: str
    line: int  # the marker's line
    kind: str
    reason: str
    finding_line: int | None
    message: str
    added: bool = False  # the marker is in the change: the gate's author wrote it

    def where(self) -> str:
        return f"{self.file}:{self.line}"


def substantive(reason: str) -> bool:
    """Whether an allow marker's reason says something a reviewer can check."""
    words = [w.lower() for w in _WORD.findall(reason)]
    meaningful = [w for w in words if w not in _PLACEHOLDER_REASONS]
    return len(words) >= 2 and len(meaningful) >= 1 and sum(map(len, words)) >= 10


def allow_markers(text: str) -> list[Allow]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if "meridian:" not in line:
            continue
        match = ALLOW.search(line)
        if match is None:
            continue
        kinds = frozenset(k.strip() for k in match.group("kinds").split(","))
        found.append(Allow(number, kinds, (match.group("reason") or "").strip(), line.strip()))
    return found


def _comment_block_above(lines: list[str], line: int) -> range:
    """Line numbers of the comment lines right above ``line`` (1-based), nearest last."""
    first = line
    while first > 1 and COMMENT_LINE.match(lines[first - 2]):
        first -= 1
    return range(first, line)


def _applies(allow: Allow, finding: Finding, lines: list[str]) -> bool:
    if finding.check not in allow.kinds or finding.line is None:
        return False
    first, last = finding_span(finding)
    places = {first, *_comment_block_above(lines, first)}
    if last - first <= 1:
        places.add(last)  # `def f():` / `    pass  # meridian: allow ...`
    # A comment line of its own inside the finding's lines (above the `pass` it explains).
    places |= {n for n in range(first + 1, min(last, len(lines)) + 1)
               if COMMENT_LINE.match(lines[n - 1])}
    if finding.scope_line is not None and finding.scope_line <= first:
        # On the function: its first line (a decorator), the lines down to the finding's
        # own first line when that is the def, and the comments right above it.
        places |= {finding.scope_line, *_comment_block_above(lines, finding.scope_line)}
    return allow.line in places


def apply_allows(path: str, text: str, findings: list[Finding],
                 changed: Ranges | None) -> tuple[list[Finding], list[Suppressed]]:
    """Split ``findings`` of one file into those that stand and those a marker allowed.

    ``changed``: this file's changed ranges (None: everything is new), to tell a
    suppression written during the change from one that was already there.
    """
    allows = allow_markers(text)
    if not allows:
        return findings, []
    lines = text.splitlines()
    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    for finding in findings:
        marker = next((a for a in allows if _applies(a, finding, lines)), None)
        if marker is None:
            kept.append(finding)
        elif finding.check == "stub_code" and UNFINISHED_REASON.search(marker.reason):
            kept.append(replace(finding, message=(
                f"{finding.message} (the `meridian: allow stub_code` marker at line "
                f"{marker.line} was ignored: its reason {marker.reason[:60]!r} says the work "
                "is unfinished, which is what the finding reports)")))
        elif not substantive(marker.reason):
            said = "it gives no reason" if not marker.reason else (
                f"its reason {marker.reason[:40]!r} says nothing a reviewer can check")
            kept.append(replace(finding, message=(
                f"{finding.message} (the `meridian: allow {finding.check}` marker at line "
                f"{marker.line} was ignored: {said}; write `-- why`, in words)")))
        else:
            added = changed is None or touches(changed, marker.line, marker.line)
            suppressed.append(Suppressed(
                file=path, line=marker.line, kind=finding.check or "", reason=marker.reason,
                finding_line=finding.line, message=finding.message, added=added))
    return kept, suppressed


def added_allow_notes(files: Mapping[str, str], changed: Mapping[str, Ranges] | None) -> list[str]:
    """Bundle notes for the ``meridian: allow`` markers written during the change: an
    agent silencing a finding is evidence a reviewer should weigh."""
    notes = []
    for path in sorted(files):
        ranges = None if changed is None else changed.get(path, ())
        for allow in allow_markers(files[path]):
            if ranges is None or touches(ranges, allow.line, allow.line):
                notes.append(
                    f"{path}:{allow.line}: an inline exception was added during this gate: "
                    f"`{allow.text[:160]}` (a finding silenced by the work's author: judge "
                    "whether its reason holds)")
    return notes
