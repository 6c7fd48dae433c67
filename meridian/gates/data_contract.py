"""``python -m meridian.gates.data_contract DATA_CONTRACT.md``: the ml-research gate check.

An ML project must say, before any experiment, what it will be judged by. The
contract is a Markdown file with four sections, each under its own heading (any
level; the heading only has to contain the name, e.g. ``## 2. Evaluation thresholds``;
a heading naming two sections stands for the one it names first):

    Target metric          the one number that decides success, and how it is computed
    Evaluation thresholds  the value that counts as success (and as failure)
    Baseline               what the approach must beat, with its measured score
    Approach constraints   compute, data, latency or licence limits the approach must respect

A section that is missing, or holds only whitespace, HTML comments or a placeholder
(TODO, TBD, ...), fails the check: exit 1 with one line per problem. Exit 0 when all
four are filled in; exit 2 on a usage error.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

REQUIRED_SECTIONS = ("target metric", "evaluation thresholds", "baseline", "approach constraints")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
PLACEHOLDER = re.compile(r"^\W*(todo|tbd|tbc|fixme|xxx|placeholder|n/?a|\.\.\.|…)?\W*$", re.IGNORECASE)


def _normal(heading: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", heading.lower()).split())


def sections(text: str) -> dict[str, tuple[int, str]]:
    """Heading (normalised) -> (line number, body up to the next heading of the same or
    a higher level)."""
    lines = text.splitlines()
    headings: list[tuple[int, int, str]] = []  # (index, level, title)
    in_fence = False
    for index, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        match = None if in_fence else HEADING.match(line)
        if match:
            headings.append((index, len(match.group(1)), _normal(match.group(2))))
    found: dict[str, tuple[int, str]] = {}
    for position, (index, level, title) in enumerate(headings):
        end = len(lines)
        for later_index, later_level, _ in headings[position + 1:]:
            if later_level <= level:
                end = later_index
                break
        found.setdefault(title, (index + 1, "\n".join(lines[index + 1:end])))
    return found


def _is_empty(body: str) -> bool:
    meaningful = [
        line for line in COMMENT.sub("", body).splitlines()
        if line.strip() and not PLACEHOLDER.match(line.strip())
    ]
    return not meaningful


def _claimed_by(title: str) -> str | None:
    """The required section a heading stands for: the name it mentions first, so
    "Evaluation thresholds vs the baseline" is the thresholds, not the baseline."""
    mentioned = [(title.find(name), name) for name in REQUIRED_SECTIONS if name in title]
    return min(mentioned)[1] if mentioned else None


def problems(path: Path) -> list[str]:
    """One ``path[:line]: problem`` per missing or empty section; [] when the contract holds."""
    if not path.is_file():
        return [f"{path}: not found; the data contract must exist before any experiment"]
    found = sections(path.read_text(encoding="utf-8", errors="replace"))
    out: list[str] = []
    for required in REQUIRED_SECTIONS:
        match = next(((title, where) for title, where in found.items()
                      if _claimed_by(title) == required), None)
        if match is None:
            out.append(f"{path}: missing section '{required}' (add a heading containing it)")
            continue
        _, (line, body) = match
        if _is_empty(body):
            out.append(f"{path}:{line}: section '{required}' is empty; fill it in")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m meridian.gates.data_contract DATA_CONTRACT.md", file=sys.stderr)
        return 2
    path = Path(args[0])
    found = problems(path)
    for line in found:
        print(line)
    if found:
        return 1
    print(f"{path}: all {len(REQUIRED_SECTIONS)} sections present and filled in")
    return 0


if __name__ == "__main__":
    sys.exit(main())
