"""The health report: everything on the state branch, summarised for a person.

``build_report(ledger, root)`` computes a ``HealthReport`` (``meridian health --json``
prints it); ``render_terminal.render`` prints it as rich tables and
``render_html.render`` returns one self-contained HTML page with inline SVG charts.
"""

from meridian.health.aggregate import build_report
from meridian.health.models import HealthReport

__all__ = ["HealthReport", "build_report"]
