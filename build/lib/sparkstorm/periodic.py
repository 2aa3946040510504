"""One small timer for every periodic background job (heartbeats, monitors, sync loops).

Example:
    >>> import threading
    >>> ran = threading.Event()
    >>> timer = PeriodicThread("doc-example", 0.01, ran.set)
    >>> timer.start()
    >>> ran.wait(5)
    True
    >>> timer.stop()
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

logger = logging.getLogger(__name__)


class PeriodicThread:
    """Calls ``action`` every ``interval`` seconds in a daemon thread until :meth:`stop`.

    The first call comes at once, or after one ``interval`` with ``first_now=False`` (for
    jobs whose caller already ran a round, or whose first round must wait a full period). An
    exception in ``action`` is logged and the next round still runs: one bad round must not
    stop a heartbeat or a monitor for good. :meth:`wake` runs the next round now (a watch
    fired, a queue got work); a wake during a round runs another round right after it.
    """

    def __init__(self, name: str, interval: float, action: Callable[[], object], *,
                 first_now: bool = True) -> None:
        self.name = name
        self.interval = interval
        self.action = action
        self.first_now = first_now
        self.stopping = threading.Event()
        self._woken = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        """Start the thread (the first round runs at once)."""
        self._thread.start()

    def wake(self) -> None:
        """Run the next round now instead of at the end of the interval."""
        self._woken.set()

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the current round; wait up to ``timeout`` seconds for the thread."""
        self.stopping.set()
        self._woken.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        """Whether the thread still runs."""
        return self._thread.is_alive()

    def _loop(self) -> None:
        if not self.first_now:
            self._pause()
        while not self.stopping.is_set():
            try:
                self.action()
            except Exception:  # logged; the next round runs anyway
                logger.exception("periodic job %s failed; running it again in %.1f s",
                                 self.name, self.interval)
            self._pause()

    def _pause(self) -> None:
        self._woken.wait(self.interval)
        self._woken.clear()
