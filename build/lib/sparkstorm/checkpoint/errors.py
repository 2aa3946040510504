"""Errors of checkpoints (codes in UPPER_SNAKE, matched by tests and tools)."""

from __future__ import annotations

from sparkstorm.errors import SparkstormError


class CheckpointError(SparkstormError, RuntimeError):
    """A task cannot be snapshotted, or a checkpoint cannot be written or read."""
