"""How the health report's figures read, in the terminal and in the HTML page alike."""

from __future__ import annotations

NONE = "-"


def number(value: float | None, digits: int = 2) -> str:
    if value is None:
        return NONE
    # A tiny non-zero value (a ratio of a gate done in seconds) must not read as 0.00.
    return f"{value:.1e}" if 0 < abs(value) < 0.5 * 10 ** -digits else f"{value:.{digits}f}"


def percent(rate: float | None) -> str:
    return NONE if rate is None else f"{100 * rate:.1f}%"


def dollars(value: float, unknown: int = 0) -> str:
    """``value`` in dollars; with ``unknown`` records of no known price, "unknown" (nothing
    priced) or "$x + unknown" (a lower bound): an unknown cost is never shown as $0."""
    shown = f"${value:.4f}" if value < 1 else f"${value:,.2f}"
    if unknown:
        return "unknown" if not value else f"{shown} + unknown"
    return shown


def duration(hours: float | None) -> str:
    """Hours in the unit a person reads: 40 s, 12 min, 1.5 h (``durations.human_hours``)."""
    from meridian.durations import human_hours

    return human_hours(hours, none=NONE)
