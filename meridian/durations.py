"""Hours as a person reads them: ``40 s``, ``12 min``, ``1.5 h``, ``26 h``.

Every place that shows a duration to a person (the SessionStart context, `meridian
calibration`, `meridian health`, `gate start`) goes through ``human_hours`` so the same
figure never reads ``0.0006713141666666667h`` in one place and ``2 s`` in another.
Stored records keep the exact value; only the display is rounded.
"""

from __future__ import annotations

import math


def human_hours(hours: float | None, *, none: str = "-") -> str:
    """``hours`` rounded to what matters at its size (seconds under a minute, whole
    minutes under an hour, one decimal under ten hours, whole hours above)."""
    if hours is None or not isinstance(hours, int | float) or not math.isfinite(hours):
        return none
    if hours < 0:
        return "-" + human_hours(-hours)
    seconds = hours * 3600
    if seconds == 0:
        return "0 s"
    if seconds < 0.5:
        return "<1 s"
    if seconds < 59.5:
        return f"{round(seconds)} s"
    if seconds < 3600 - 30:
        return f"{round(seconds / 60)} min"
    if hours < 9.95:
        return f"{round(hours, 1):g} h"
    return f"{round(hours)} h"


def human_ratio(ratio: float | None, *, none: str = "-") -> str:
    """A ratio to two significant digits (``0.75``, ``1.3``, ``0.0047``, ``2000``), never
    in scientific notation (``2e+03``)."""
    if ratio is None or not isinstance(ratio, int | float) or not math.isfinite(ratio):
        return none
    if ratio == 0:
        return "0"
    digits = 1 - math.floor(math.log10(abs(ratio)))  # decimals that keep two significant
    text = f"{round(ratio, digits):.{max(digits, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
