"""The rich console every table is printed through."""

from __future__ import annotations

import os

from rich.console import Console


def make_console() -> Console:
    """A console for tables: a pipe or file has no width, and rich's 80-column default
    would fold wide tables mid-word (``submissio/ns``), so it gets 120."""
    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(width=120)
    return console
