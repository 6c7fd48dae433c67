"""Which of a change's findings are new: present after it, absent before it.

The staged scan (``hook:staged_heuristics``) and the pre-push content scan judge a
change by two rules. A finding on a line the change touches blocks (the line rule,
``mark_pre_existing``). A finding on an untouched line blocks too when the version
before the change did not have it: a commit that only deletes lines can remove a stub's
excuse (the subclass that overrides a base stub, a test that exercised it) and leave a
bare stub on lines it never touched.

Findings are matched between the two versions by ``finding_key``: check, file, the
names of the ``def``/``class`` blocks holding the line and the line's own text, never
the line number (a deletion above a finding moves it). A key the after-scan holds more
often than the before-scan is new that many times.

Excuses can live in another file: ``related_paths`` adds the files a touched or deleted
Python file imports (resolved to paths of the new tree by exact lookups: the file's own
directories, the repository root and ``src/``), so deleting ``square.py`` re-judges the
``shapes.py`` it imported. Files that import a touched file are not searched for (that
would read every file of the gate); a stub they excused stays the gate's business at
``gate submit``.

Standard library only: this runs in the pre-commit hook.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from meridian.evaluators.findings import Finding

_BLOCK = re.compile(r"^(\s*)(?:async\s+def|def|class|function|func|fn)\s+([A-Za-z_$][\w$]*)")
_FROM = re.compile(r"^\s*from\s+(\.*)([\w.]*)\s+import\s+\(?([\w\s,.*]*)", re.MULTILINE)
_IMPORT = re.compile(r"^\s*import\s+([\w.]+(?:\s*,\s*[\w.]+)*)", re.MULTILINE)

Key = tuple[str, str, tuple[str, ...], str]


def finding_key(finding: Finding, lines: list[str]) -> Key:
    """What identifies ``finding`` in either version of its file: check, file, the
    enclosing ``def``/``class`` names (outermost first) and the stripped text of its
    line (its message when it has no line)."""
    if finding.line is None or not 0 < finding.line <= len(lines):
        return (finding.check or "", finding.file or "", (), finding.message)
    at = finding.line - 1
    text = lines[at]
    names: list[str] = []
    indent = len(text) - len(text.lstrip())
    match = _BLOCK.match(text)
    if match:
        names.append(match.group(2))
    for index in range(at - 1, -1, -1):
        if indent == 0:
            break
        line = lines[index]
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if depth < indent:
            indent = depth
            match = _BLOCK.match(line)
            if match:
                names.append(match.group(2))
    return (finding.check or "", finding.file or "", tuple(reversed(names)), text.strip())


def unmatched(after: Iterable[Finding], after_texts: Mapping[str, str],
              befores: Iterable[tuple[list[Finding], Mapping[str, str]]]) -> list[Finding]:
    """The findings of ``after`` that no version in ``befores`` (findings, texts) holds:
    new in each of them. A key held n times before and m > n times after: the last
    m - n of them are new (any of them is, which ones is not knowable)."""
    split = {path: text.splitlines() for path, text in after_texts.items()}
    keyed = [(finding_key(f, split.get(f.file or "", [])), f) for f in after]
    total = Counter(key for key, _ in keyed)
    wanted = Counter(total)
    for findings, texts in befores:
        lines = {path: text.splitlines() for path, text in texts.items()}
        held = Counter(finding_key(f, lines.get(f.file or "", [])) for f in findings)
        for key, count in total.items():
            wanted[key] = min(wanted[key], max(0, count - held.get(key, 0)))
    out: list[Finding] = []
    for key, finding in reversed(keyed):
        if wanted.get(key, 0) > 0:
            wanted[key] -= 1
            out.append(finding)
    return list(reversed(out))


def imported_modules(path: str, text: str) -> list[str]:
    """Candidate paths (relative to one of the roots ``related_paths`` tries, or, for a
    relative import, to the repository) of the modules ``text`` imports."""
    out: list[str] = []
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    for dots, module, names in _FROM.findall(text):
        if dots:
            base = folder.split("/") if folder else []
            up = len(dots) - 1
            if up > len(base):
                continue
            base = base[:len(base) - up] if up else base
            parts = [*base, *(module.split(".") if module else [])]
            prefix = "/".join(parts)
            out += [f"/{prefix}"] + [f"/{prefix}/{n.strip()}" if prefix else f"/{n.strip()}"
                                     for n in names.split(",") if n.strip().isidentifier()]
        elif module:
            stem = module.replace(".", "/")
            out += [stem] + [f"{stem}/{n.strip()}" for n in names.split(",")
                             if n.strip().isidentifier()]
    for group in _IMPORT.findall(text):
        out += [m.strip().replace(".", "/") for m in group.split(",") if m.strip()]
    return out


def related_paths(sources: Mapping[str, list[str]],
                  exists: Callable[[str], bool]) -> list[str]:
    """Paths of the new tree the Python files ``sources`` (path -> its texts, before
    and after) import. ``exists(path)``: whether the new tree holds ``path``."""
    found: list[str] = []
    for path, texts in sources.items():
        if not path.endswith((".py", ".pyi")):
            continue
        parts = path.split("/")[:-1]
        roots = {"", "src/"} | {"/".join(parts[:i]) + "/" for i in range(1, len(parts) + 1)}
        for text in texts:
            for stem in dict.fromkeys(imported_modules(path, text)):
                if stem.startswith("/"):
                    options = [stem[1:]]
                else:
                    options = [root + stem for root in sorted(roots)]
                for base in options:
                    for candidate in (f"{base}.py", f"{base}/__init__.py", f"{base}.pyi"):
                        if candidate not in found and candidate not in sources \
                                and exists(candidate):
                            found.append(candidate)
    return found
