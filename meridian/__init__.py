"""Meridian: gates, memory, evaluation and observability for AI coding agents, stored in git."""

__version__ = "0.1.0"

# The name on PyPI (`pip install meridian-gates`); the import package and the command are
# `meridian`. (The distribution `meridian` on PyPI is an unrelated project.)
DISTRIBUTION = "meridian-gates"
