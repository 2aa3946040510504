"""Bookkeeping shared by the backends' persistent watches."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Literal

logger = logging.getLogger(__name__)

WatchKind = Literal["children", "data"]
ChildrenValue = tuple[str, ...]
DataValue = tuple[bytes | None, int]
_UNSET = object()


class WatchEntry:
    """One persistent watch: its path, its callback and the last value delivered.

    :meth:`deliver` runs the callback one call at a time and only when the value differs from
    the last one delivered, so both backends suppress duplicates the same way.

    Args:
        kind: ``"children"`` (value: sorted child names) or ``"data"`` (value: data, version).
        path: the watched store path (without the chroot).
        callback: the user callback, already adapted to take the value tuple.
    """

    def __init__(self, kind: WatchKind, path: str, callback: Callable[[object], object]) -> None:
        self.kind = kind
        self.path = path
        self._callback = callback
        self._last: object = _UNSET
        self._lock = threading.RLock()
        self.cancelled = False
        self.seen_counter: int = -1  # embedded backend: change counter at the last read

    def deliver(self, value: object) -> None:
        """Call the callback with ``value`` unless it equals the last delivered value.

        A callback that raises is logged and the watch stays armed: a bug in one consumer
        must not silence the watch for good.
        """
        with self._lock:
            if self.cancelled or value == self._last:
                return
            self._last = value
            try:
                self._callback(value)
            except Exception:
                logger.exception("state store %s watch callback on %r failed", self.kind,
                                 self.path)

    def cancel(self) -> None:
        """Stop delivering; waits for a callback in progress to return."""
        with self._lock:
            self.cancelled = True
