"""The error class of the file connectors."""

from __future__ import annotations

from sparkstorm.errors import SparkstormError


class FileConnectorError(SparkstormError, RuntimeError):
    """A file problem the connector reports and survives.

    A write that failed, a tuple without the fields to write, a file that cannot be parsed:
    it is reported as the component's error (the UI shows it) and the component goes on.
    """
