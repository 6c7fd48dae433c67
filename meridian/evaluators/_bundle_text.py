"""The bundle as one text for a model, trimmed to a character budget.

Artifacts are shown with numbered lines so a reviewer can cite ``file:line``. When
the bundle does not fit, the largest documents (artifact files and the diff) are cut
first: every document keeps at most the same number of characters, the largest cap
that fits (water-filling), so small files stay whole. Check output keeps its tail,
where failures are reported. Every cut is listed in a note inside the text.
"""

from __future__ import annotations

from dataclasses import dataclass

from meridian.evaluators.models import Bundle

CHECK_OUTPUT_CHARS = 4000
NOTE_RESERVE_PER_DOCUMENT = 200  # room for the note saying what was cut from a document


@dataclass
class _Document:
    label: str  # how the note names it
    open_tag: str
    close_tag: str
    lines: list[str]

    @property
    def size(self) -> int:
        return sum(len(line) + 1 for line in self.lines)


def _numbered(content: str) -> list[str]:
    return [f"{number:>5}| {line}" for number, line in enumerate(content.splitlines(), 1)]


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _largest_cap(sizes: list[int], budget: int) -> int:
    """Largest per-document cap such that the capped sizes sum to at most ``budget``."""
    low, high = 0, max(sizes, default=0)
    while low < high:
        middle = (low + high + 1) // 2
        if sum(min(size, middle) for size in sizes) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def _cut(document: _Document, cap: int) -> str | None:
    """Keep whole lines up to ``cap`` characters; return the note, or None if uncut."""
    if document.size <= cap:
        return None
    kept, used = 0, 0
    while kept < len(document.lines) and used + len(document.lines[kept]) + 1 <= cap:
        used += len(document.lines[kept]) + 1
        kept += 1
    total = len(document.lines)
    omitted = document.size - used
    document.lines = document.lines[:kept]
    if kept == 0:
        return f"{document.label}: left out entirely ({total} lines, {omitted} characters)"
    return (f"{document.label}: showed lines 1-{kept} of {total}; lines {kept + 1}-{total} "
            f"left out ({omitted} characters)")


def _head(bundle: Bundle, notes: list[str]) -> str:
    parts = [f"Evidence bundle for gate `{bundle.gate}`.", ""]
    parts += ["<description>", bundle.description.strip() or "(none given)", "</description>",
              "<acceptance_criteria>", bundle.acceptance.strip() or "(none given)",
              "</acceptance_criteria>", "<declared_artifacts>"]
    unmatched = set(bundle.unmatched_globs)
    parts += [f"- {glob}" + ("   (matched no file)" if glob in unmatched else "")
              for glob in bundle.artifact_globs]
    parts += [f"- {glob}   (matched no file)" for glob in bundle.unmatched_globs
              if glob not in bundle.artifact_globs]
    parts += ["</declared_artifacts>", "<checks>"]
    if not bundle.checks:
        parts.append("(the gate declares no checks)")
    for check in bundle.checks:
        output = check.output
        if len(output) > CHECK_OUTPUT_CHARS:
            notes.append(f"output of check `{check.command}`: first "
                         f"{len(output) - CHECK_OUTPUT_CHARS} characters left out "
                         f"(kept the last {CHECK_OUTPUT_CHARS})")
            output = output[-CHECK_OUTPUT_CHARS:]
        status = "passed" if check.passed else "FAILED"
        opening = (f'<check command="{_attr(check.command)}" exit_code="{check.exit_code}" '
                   f'timed_out="{str(check.timed_out).lower()}" '
                   f'duration_s="{check.duration_s:g}" status="{status}">')
        parts += [opening, output.rstrip(), "</check>"]
    parts.append("</checks>")
    return "\n".join(parts) + "\n"


def render_bundle(bundle: Bundle, max_chars: int) -> tuple[str, list[str]]:
    """The text to send and the notes on what was left out (also inside the text)."""
    trim_notes: list[str] = []
    head = _head(bundle, trim_notes)
    documents: list[_Document] = []
    if bundle.diff.strip():
        documents.append(_Document("diff since the gate started", "<diff>", "</diff>",
                                   bundle.diff.splitlines()))
    for artifact in sorted(bundle.artifacts, key=lambda a: a.path):
        lines = _numbered(artifact.content)
        documents.append(_Document(
            artifact.path, f'<file path="{_attr(artifact.path)}" lines="{len(lines)}">',
            "</file>", lines))
        if artifact.truncated:
            trim_notes.append(f"{artifact.path}: content was already truncated when collected")

    fixed = len(head) + sum(len(d.open_tag) + len(d.close_tag) + 2 for d in documents) \
        + sum(len(n) + 3 for n in bundle.notes) + 200
    budget = max_chars - fixed - NOTE_RESERVE_PER_DOCUMENT * (len(documents) + len(trim_notes))
    if sum(d.size for d in documents) > budget:
        cap = _largest_cap([d.size for d in documents], max(budget, 0))
        for document in documents:
            note = _cut(document, cap)
            if note is not None:
                trim_notes.append(note)

    all_notes = [*bundle.notes, *trim_notes]
    parts = [head, "<notes>"]
    parts += [f"- {note}" for note in all_notes] or ["(none)"]
    parts.append("</notes>")
    for document in documents:
        parts += [document.open_tag, *document.lines, document.close_tag]
    text = "\n".join(parts) + "\n"
    if len(text) > max_chars:
        # Only an enormous description or acceptance text gets here.
        note = f"bundle text cut at {max_chars} characters (left out {len(text) - max_chars})"
        trim_notes.append(note)
        text = text[:max_chars - len(note) - 10] + f"\n[{note}]\n"
    return text, trim_notes
