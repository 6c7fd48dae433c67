"""The heuristic checks that read file contents, with no dependency beyond the stdlib.

``scan_findings(files, disabled)`` is what the pre-commit hook runs over staged blobs
on every commit that touches a gate; ``meridian.evaluators.heuristic`` runs the same
scan over a gate's bundle and turns the findings into pydantic ``Issue`` models. The
check ids and what each one finds are documented in ``heuristic``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Protocol

from meridian.errors import ConfigError
from meridian.evaluators._js_scan import is_js, scan_js
from meridian.evaluators._python_scan import MARKER, scan_python
from meridian.evaluators.findings import SEVERITY_ORDER, Finding

CHECK_IDS: tuple[str, ...] = (
    "missing_artifact", "failing_check", "stub_code", "hollow_test", "skipped_test",
    "empty_file", "syntax_error",
)

# Empty by convention, not by neglect.
EMPTY_IS_FINE = frozenset({"__init__.py", "__init__.pyi", "py.typed", ".gitkeep", ".keep"})


class Located(Protocol):
    """A finding or an ``Issue``: both are ordered the same way."""

    @property
    def severity(self) -> str: ...
    @property
    def file(self) -> str | None: ...
    @property
    def line(self) -> int | None: ...
    @property
    def check(self) -> str | None: ...
    @property
    def message(self) -> str: ...


def order_key(item: Located) -> tuple[str, int, str, int, str]:
    """File, line, check, severity, message: the order findings are reported in."""
    return (item.file or "", item.line or 0, item.check or "", SEVERITY_ORDER[item.severity],
            item.message)


def check_disabled(disabled: Iterable[str]) -> frozenset[str]:
    """The disabled check ids, refused with the known ones when one is unknown."""
    disabled = frozenset(disabled)
    unknown = sorted(disabled - set(CHECK_IDS))
    if unknown:
        raise ConfigError(
            f"unknown heuristic check id {', '.join(map(repr, unknown))} "
            f"(known: {', '.join(CHECK_IDS)})")
    return disabled


def is_python_test_file(path: str) -> bool:
    name = PurePosixPath(path).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")
                                     or name == "tests.py")


def scan_file(path: str, content: str, *, truncated: bool = False) -> list[Finding]:
    """Every check's findings in one file (``truncated``: only the start of it was read)."""
    if not content.strip():
        if truncated or PurePosixPath(path).name in EMPTY_IS_FINE:
            return []
        return [Finding(severity="medium", file=path, line=1, check="empty_file",
                        message="file is empty or only whitespace")]
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in (".py", ".pyi"):
        return scan_python(path, content, is_test_file=is_python_test_file(path),
                           truncated=truncated)
    if is_js(path):
        return scan_js(path, content)
    # Any other text (docs, config, other languages): only unfinished-work markers.
    return [
        Finding(severity="low", file=path, line=number, check="stub_code",
                message=f"{match.group(1)} marker left in the file: {line.strip()[:120]}")
        for number, line in enumerate(content.splitlines(), 1)
        if (match := MARKER.search(line))
    ]


def scan_findings(files: Mapping[str, str],
                  disabled: frozenset[str] = frozenset()) -> list[Finding]:
    """Findings in file contents (path -> text), e.g. the files staged for a commit,
    in ``order_key`` order; a disabled check is left out."""
    disabled = check_disabled(disabled)
    found = [finding for path in sorted(files) for finding in scan_file(path, files[path])]
    return sorted((f for f in found if f.check not in disabled), key=order_key)
