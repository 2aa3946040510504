"""The driver's watchdog: a topology that stops making progress says so, and heals itself.

A running driver completes several windows a second, even with its spouts deactivated. When
none completes for ``topology.watchdog.stall.secs`` (0: no watchdog; a Spark application's
first window gets :data:`FIRST_WINDOW_SECS` at least), the watchdog tries the known remedies,
one per further such interval while the stall lasts, in this order:

1. ``cancel``: cancel the window jobs in flight (their trees replay, or the topology rolls
   back to its committed checkpoint). Skipped when the Spark application has no executor:
   nothing would run the next window either.
2. ``new-session``: stop the Spark application and start a new one in the same process,
   then roll back to the committed checkpoint. For a Spark master that lost the application
   (a standalone master restarted without recovery: it has the workers kill the executors
   of an application it does not know, and never gives it new ones). Only a driver that
   made its own session (a cluster worker, ``sparkstorm local``) can; under
   ``spark-submit`` the application is spark-submit's.
3. ``exit``: the driver stops with ``TOPOLOGY_STALLED``; its worker exits and the
   supervisor starts it again (a new process, a new Spark application).

Progress (a window completed) ends the stall. Each step is logged and kept in
:attr:`Watchdog.steps`, which the driver's statistics carry to Nimbus (the heartbeat's
``watchdog``), whose UI and REST API show it among the topology's ``troubles``.

Waiting for executors of other workers to report where they answer is not a stall (a
rebalance, a moved worker): that waits on Nimbus and the other workers, not on Spark; nor is
a rollback's replay held back by its backoff (``engine.driver.rollback_backoff``); and the
engine's own remedy for a silent executor (``topology.executor.answer.timeout.secs``) gets
its time first.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)

CANCEL, NEW_SESSION, EXIT = "cancel", "new-session", "exit"
KEPT_STEPS = 10
"""Steps kept for the heartbeat (the newest)."""
FIRST_WINDOW_SECS = 120.0
"""The least bound for a Spark application's first window: it waits for the application's
executors to start (JVMs, Python workers), which took 30 s and more on the loaded test
hosts; a new application (``new-session``) gets as long."""


@dataclass(frozen=True)
class WatchdogStep:
    """One thing the watchdog did: a remedy tried, or the stall ended."""

    action: str
    """``cancel``, ``new-session``, ``exit`` or ``healed``."""
    reason: str
    time_secs: float

    def to_dict(self) -> dict[str, Any]:
        """As plain data (the heartbeat's)."""
        return {"action": self.action, "reason": self.reason, "time_secs": self.time_secs}


@dataclass
class DriverHooks:
    """What the watchdog reads of the driver and the remedies it can ask of it."""

    windows: Callable[[], int]
    """Windows completed so far."""
    executors: Callable[[], int | None]
    """Spark executors the application has now (None: not known, a local master)."""
    waiting: Callable[[], bool]
    """Whether the driver waits for other workers' executors, or holds a rollback's replay
    (``engine.driver.rollback_backoff``): not a stall."""
    cancel: Callable[[str], None]
    """Cancel the window jobs in flight, saying why."""
    renew: Callable[[str], bool] | None
    """Ask for a new Spark application (False or None: this driver cannot)."""
    give_up: Callable[[str], None]
    """Stop the driver with ``TOPOLOGY_STALLED``."""


class Watchdog:
    """Watches a driver's windows; tries the remedies of a stall in order.

    Args:
        stall_secs: how long without a completed window is a stall, and between remedies.
        hooks: the driver's side.
        name: the topology's name (for the log).
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(self, stall_secs: float, hooks: DriverHooks, name: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stall_secs = stall_secs
        self.hooks = hooks
        self.name = name
        self.clock = clock
        self.steps: list[WatchdogStep] = []
        self.remedies = 0
        """Remedies tried over the driver's life."""
        self._lock = threading.Lock()
        self._windows = -1
        self._since = clock()
        """When the last window completed, or the last remedy was tried."""
        self._stalled_at: float | None = None
        self._tried: list[str] = []
        self._fresh = True
        """No window completed since the Spark application started."""
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    # -- the checks --------------------------------------------------------------------
    def check(self) -> str | None:
        """Look once; try the next remedy when due. Returns the remedy tried, if any."""
        now = self.clock()
        windows = self.hooks.windows()
        if windows != self._windows or self.hooks.waiting():
            self._fresh = self._fresh and self._windows in (-1, windows)
            self._windows = windows
            self._since = now
            if self._tried and windows > self._windows_at_stall:
                self._healed(now)
            return None
        bound = max(self.stall_secs, FIRST_WINDOW_SECS) if self._fresh else self.stall_secs
        if now - self._since < bound:
            return None
        if self._stalled_at is None:
            self._stalled_at = self._since
            self._windows_at_stall = windows
        executors = self.hooks.executors()
        remedy = self._next_remedy(executors)
        stuck = now - self._stalled_at
        reason = (f"no window completed for {stuck:.0f} s"
                  + (", and the Spark application has no executor" if executors == 0 else ""))
        self._since = now
        self._tried.append(remedy)
        self.remedies += 1
        self._note(WatchdogStep(remedy, reason, time.time()))
        if remedy == CANCEL:
            logger.warning("topology %s: watchdog: %s; cancelling the window jobs in flight",
                           self.name, reason)
            self.hooks.cancel(f"watchdog: {reason}")
        elif remedy == NEW_SESSION:
            logger.warning("topology %s: watchdog: %s; starting a new Spark application and "
                           "rolling back to the committed checkpoint", self.name, reason)
            assert self.hooks.renew is not None
            self._fresh = True
            self.hooks.renew(reason)
        else:
            logger.error("topology %s: watchdog: %s; the remedies %s did not help: stopping "
                         "the driver (its worker starts again)", self.name, reason,
                         ", ".join(self._tried[:-1]) or "(none)")
            self.hooks.give_up(reason)
        return remedy

    _windows_at_stall = 0

    def _next_remedy(self, executors: int | None) -> str:
        can_renew = self.hooks.renew is not None
        if NEW_SESSION in self._tried or not can_renew:
            ladder = [CANCEL, EXIT] if executors != 0 else [EXIT]
        elif executors == 0:
            ladder = [NEW_SESSION, EXIT]
        else:
            ladder = [CANCEL, NEW_SESSION, EXIT]
        for remedy in ladder:
            if remedy not in self._tried:
                return remedy
        return EXIT

    def _healed(self, now: float) -> None:
        stalled = now - (now if self._stalled_at is None else self._stalled_at)
        reason = (f"windows complete again after {stalled:.0f} s without "
                  f"(remedies: {', '.join(self._tried)})")
        logger.warning("topology %s: watchdog: %s", self.name, reason)
        self._note(WatchdogStep("healed", reason, time.time()))
        self._tried = []
        self._stalled_at = None

    def _note(self, step: WatchdogStep) -> None:
        with self._lock:
            self.steps = [*self.steps, step][-KEPT_STEPS:]

    def summary(self) -> dict[str, Any]:
        """What the heartbeat carries: the remedies tried, the newest steps, stalled or not."""
        with self._lock:
            return {"remedies": self.remedies, "stalled": self._stalled_at is not None,
                    "steps": [s.to_dict() for s in self.steps]}

    # -- the thread --------------------------------------------------------------------
    def start(self) -> None:
        """Check in a daemon thread, a few times per ``stall_secs`` (at most once a second)."""
        interval = min(1.0, self.stall_secs / 5)

        def run() -> None:
            while not self._stop.wait(interval):
                try:
                    self.check()
                except Exception:  # a check must never end the watchdog
                    logger.exception("topology %s: watchdog check failed", self.name)

        self._thread = threading.Thread(target=run, name=f"watchdog-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop checking (the driver stops)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)
