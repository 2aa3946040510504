"""Errors of a worker's own start, before its topology runs.

Codes:

- ``VIRTUALENV_INSTALL_FAILED``: the topology's virtualenv could not be built on this host
  (``python -m venv`` or ``pip install`` failed or timed out, or another worker's build
  of it did).
- ``VIRTUALENV_NOT_FOUND``: ``topology.virtualenv.install`` is false and the virtualenv
  to run in is not on this host.
- ``VIRTUALENV_UNUSABLE``: that virtualenv's python cannot import sparkstorm's worker.
"""

from __future__ import annotations

from sparkstorm.errors import SparkstormError


class VirtualenvError(SparkstormError, RuntimeError):
    """The topology's virtualenv cannot be had on this host; the worker reports it and exits."""
