"""Errors of deploying a topology as a Spark application (``sparkstorm spark-submit``)."""

from __future__ import annotations

from sparkstorm.errors import SparkstormError


class SparkAppError(SparkstormError, RuntimeError):
    """Deploying with spark-submit cannot go on as asked: the reason and the fix."""
