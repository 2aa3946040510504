"""An executor's windows in the driver's order, and its memory of their replies.

With overlapping windows (``topology.window.overlap``) the Spark task of window ``w+1`` may
reach an executor before the task of window ``w`` does. Each window request then names the
window the driver sent before it (``"after"``), and the executor serves it only once that one
is done. The wait is bounded: a request whose predecessor never comes (its job failed and
the driver said ``skip``, or the executor was restarted and lost it) must not hang its Spark
task.

The replies of the last :data:`REMEMBERED` windows are kept, so that a retried Spark task of
either window in flight is answered from memory instead of running components twice.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

logger = logging.getLogger(__name__)

Reply = tuple[dict[int, bytes], bytes]
"""A window's reply: packed rows per target gid, and the encoded meta."""

REMEMBERED = 2
"""Windows whose reply an executor keeps: the two a driver has in flight at most."""


class WindowTurns:
    """Orders one executor's window requests and remembers their replies.

    Use it as a lock (``with turns:``) around serving a window; :meth:`wait_turn` waits
    inside it, releasing it meanwhile.

    Args:
        restarted: this process replaces one that died: the first window it gets goes
            first whatever it follows (its predecessor's windows are gone with it).
        bound: seconds a request waits for its predecessor before it is served anyway.
    """

    def __init__(self, restarted: bool = False, bound: float = 30.0) -> None:
        self._condition = threading.Condition()
        self.last_window = -1
        self.skipped = -1
        self.fresh = restarted
        self.bound = bound
        self.waiting = 0
        """Requests waiting for their turn now (the executor's stack dump shows where)."""
        self.watching = 0
        """``served`` requests waiting for their window now."""
        self._replies: OrderedDict[int, Reply] = OrderedDict()

    def __enter__(self) -> WindowTurns:
        self._condition.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self._condition.release()

    def wait_turn(self, window: int, after: int | None) -> bool:
        """Wait (holding the lock) until window ``after`` is done or skipped.

        Called by the thread serving window ``window``'s request, inside ``with self``.

        Returns:
            False when it waited :attr:`bound` seconds in vain (the request goes on anyway,
            out of order, rather than hold a Spark task slot for ever).
        """
        if after is None or self._reached(after):
            return True
        self.waiting += 1
        try:
            reached = self._condition.wait_for(lambda: self._reached(after), self.bound)
        finally:
            self.waiting -= 1
        if reached:
            return True
        logger.warning("window %d waited %.0f s for window %d, which never came; serving it "
                       "out of order", window, self.bound, after)
        return False

    def _reached(self, after: int) -> bool:
        return self.fresh or self.last_window >= after or self.skipped >= after

    def wait_served(self, window: int, seconds: float) -> bool:
        """Wait up to ``seconds`` until window ``window`` was served or skipped.

        Not inside ``with self``: it takes the lock itself, and releases it while it waits.
        A restarted process that has served nothing yet counts as having served it: the
        window is gone with its predecessor, and nothing should wait for it.
        """
        with self._condition:
            self.watching += 1
            try:
                return self._condition.wait_for(lambda: self._reached(window), seconds)
            finally:
                self.watching -= 1

    def remembered(self, window: int) -> Reply | None:
        """The reply of ``window`` if it was served and is still remembered."""
        return self._replies.get(window)

    def served(self, window: int, reply: Reply) -> None:
        """Note that ``window`` was served with ``reply``; wake the request after it."""
        self._replies[window] = reply
        while len(self._replies) > REMEMBERED:
            self._replies.popitem(last=False)
        self.last_window, self.fresh = max(self.last_window, window), False
        self._condition.notify_all()

    def skip(self, window: int) -> None:
        """Window ``window``'s job failed: the request after it need not wait for it."""
        with self._condition:
            self.skipped = max(self.skipped, window)
            self._condition.notify_all()
