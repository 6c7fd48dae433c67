"""A heuristic finding as a plain value: what the scanners produce.

The pre-commit hook scans the staged files of every commit that touches a gate, so
the scanners and this module import nothing beyond the standard library (building a
pydantic model class costs more than the scan). The evaluator turns findings into the
verdict's pydantic ``Issue`` (``meridian.evaluators.heuristic.as_issue``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["high", "medium", "low"]
SEVERITY_ORDER: dict[str, int] = {"high": 0, "medium": 1, "low": 2}


@dataclass(frozen=True, kw_only=True)
class Finding:
    severity: Severity
    message: str
    file: str | None = None
    line: int | None = None  # 1-based
    check: str | None = None  # heuristic check id, e.g. "stub_code"
    # The lines the finding is about (a whole stub function, a whole hollow test): it is
    # part of a change when any of them changed. None: just ``line``.
    end_line: int | None = None
    # First line of the function holding it (its first decorator): where an inline
    # ``meridian: allow`` marker for the whole function goes. None: not in a function.
    scope_line: int | None = None
    # Outside the lines the change touched: reported, not blocking (by default).
    pre_existing: bool = False

    def where(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or "(project)"

    @property
    def blocks(self) -> bool:
        """A high finding in the change: what refuses a commit or fails a gate."""
        return self.severity == "high" and not self.pre_existing
