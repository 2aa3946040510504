"""Worker heartbeats kept under a size bound, whatever the components do.

A heartbeat's statistics are stored as one node of the cluster state, and ZooKeeper refuses
a node over ``jute.maxbuffer`` (about 1 MB): one heartbeat too large and the worker looks
silent, so Nimbus reassigns it. :func:`bound_stats` shortens error texts, then drops the
optional parts of the statistics, in this order, until the JSON fits
``worker.heartbeat.max.bytes``:

1. ``recent_windows`` (the charts' latest points; they come back with the next windows);
2. ``last_errors`` (the errors also travel one by one through the umbilical, shortened);
3. ``windowed`` (the rolling windows; the all-time ``components`` totals stay);
4. everything but the window count, as a last resort.

Both the worker (before sending) and Nimbus (before storing, trusting no worker) apply it;
the trimmed parts are named in ``stats["trimmed"]`` and in a log line.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from sparkstorm.errors import shorten_error

logger = logging.getLogger(__name__)

OPTIONAL_PARTS: tuple[tuple[str, Any], ...] = (
    ("recent_windows", []), ("last_errors", {}), ("windowed", {}))
"""Parts dropped, in order, while the statistics are too large (and what replaces them)."""

KEPT_LAST = ("windows", "started")
"""What is left when even the required parts are too large."""


def json_size(data: Any) -> int:
    """Bytes of ``data`` as compact JSON, before compression (as it travels and is stored)."""
    return len(json.dumps(data, separators=(",", ":"), default=str).encode())


def bound_stats(stats: dict[str, Any], max_bytes: int) -> tuple[dict[str, Any], list[str]]:
    """``stats`` within ``max_bytes`` of JSON, and what was trimmed to get there.

    Example:
        >>> stats = {"windows": 3, "recent_windows": [{"x": "y" * 100}] * 100}
        >>> bounded, trimmed = bound_stats(stats, 1000)
        >>> bounded["recent_windows"], trimmed
        ([], ['recent_windows'])
    """
    bounded = dict(stats)
    trimmed: list[str] = []
    errors = bounded.get("last_errors")
    if isinstance(errors, dict):
        short = {k: shorten_error(v) if isinstance(v, dict) else v for k, v in errors.items()}
        if short != errors:
            trimmed.append("error texts shortened")
        bounded["last_errors"] = short
    for part, empty in OPTIONAL_PARTS:
        if json_size(bounded) <= max_bytes:
            break
        if bounded.get(part):
            bounded[part] = empty
            trimmed.append(part)
    if json_size(bounded) > max_bytes:
        bounded = {key: bounded[key] for key in KEPT_LAST if key in bounded}
        trimmed.append("all statistics")
    if trimmed:
        bounded["trimmed"] = trimmed
    return bounded, trimmed


class TrimLog:
    """Logs a worker's trimmed heartbeats once per change (not once a second)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self._last: dict[str, list[str]] = {}

    def note(self, worker_id: str, max_bytes: int, trimmed: list[str]) -> None:
        """Record what was trimmed from ``worker_id``'s heartbeat."""
        if self._last.get(worker_id, []) == trimmed:
            return
        self._last[worker_id] = trimmed
        if trimmed:
            logger.warning("%s: heartbeat statistics of worker %s were over "
                           "worker.heartbeat.max.bytes=%d or held oversize error texts; "
                           "trimmed: %s", self.where, worker_id, max_bytes, ", ".join(trimmed))
