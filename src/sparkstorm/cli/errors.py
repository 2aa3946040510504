"""Errors of the command line itself: what was asked for cannot be done as asked.

Errors of what a command reaches (Nimbus, a topology file, the configuration) keep their own
classes and codes; these are the command line's own conditions.
"""

from __future__ import annotations

from sparkstorm.errors import SparkstormError

CODES = (
    "ENVIRONMENT_NIMBUS_INVALID",
    "ENVIRONMENT_NIMBUS_UNSET",
    "ENVIRONMENT_WITHOUT_PROJECT",
    "GRAPHVIZ_FAILED",
    "GRAPHVIZ_NOT_INSTALLED",
    "LOGS_NOT_SENT",
    "LOG_PATTERN_INVALID",
    "REMOVE_LOGS_FAILED",
    "REMOVE_LOGS_RELATIVE_DIR",
    "REMOVE_LOGS_REMOTE_HOSTS",
    "SUBMIT_REPLACE_TIMEOUT",
    "TOPOLOGY_NAME_REQUIRED",
    "VISUALIZE_BAD_FORMAT",
)
"""Every code a :class:`CliError` carries; kept sorted and unique (a unit test checks)."""


class CliError(SparkstormError, RuntimeError):
    """A command that cannot do what its arguments ask, with the reason and the fix."""
