"""Cyclic garbage collection paused while a large acyclic structure is built.

Parsing a 10k-task run document, validating it or redacting it allocates about a
million containers; each allocation counts towards the collector's thresholds, so
the collector runs again and again over everything already built (all of it alive,
none of it cyclic). Measured on a 10k-task run: the redaction walk 0.64 s with the
collector, 0.24 s without; the model dump 0.42 s and 0.07 s. Nothing built here
forms reference cycles, so nothing is left for the collector to find later.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic collector off for the block (restored as it was, even on error)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
