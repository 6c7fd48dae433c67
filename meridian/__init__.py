"""Meridian: gates, memory, evaluation and observability for AI coding agents, stored in git."""

__version__ = "0.1.0"
