"""The few exception types that cross module boundaries.

Library code raises these; the CLI edge (``meridian.cli``) turns them into one line
on stderr and an exit code. Anything else that escapes is an internal error (exit 3).
"""

from __future__ import annotations


class MeridianError(Exception):
    """A problem the user can act on: bad input, bad config, a refused action.

    ``str(err)`` is the single line shown to the user. ``exit_code`` follows
    DESIGN.md: 2 for usage/config errors and refusals.
    """

    exit_code = 2


class ConfigError(MeridianError):
    """A config or input file is malformed; the message names file, line and field."""


class Blocked(MeridianError):
    """A gate or hook refused an action (exit 2)."""


class Failed(MeridianError):
    """A check failed or a regression was found (exit 1)."""

    exit_code = 1


class NotARepository(MeridianError):
    """The command needs a git repository and there is none."""


class LedgerConflict(Exception):
    """Another writer moved the state branch; the caller retries (internal)."""
