"""How long the replay after a rollback waits when rollbacks come back to back.

A failure that comes back on the same input (a bolt failing one record every time, a sink
whose server stays down) rolls the topology back again and again, and each replay ran at
once: the topology spun its cores on replays and logged a rollback for each. Flink backs off
between the restarts of a failing job (its exponential-delay restart strategy, which starts
over once the job has run ``reset-backoff-threshold`` without a failure); sparkstorm does
the same between rollbacks:

- rollbacks are *in a row* while each comes within ``topology.rollback.backoff.reset.secs``
  of the replay before it (the window ids and checkpoints after a rollback are new, so
  "no progress" cannot be told from them: a replay commits a checkpoint of its restored
  state before it reaches the failing input again);
- the first two rollbacks in a row replay at once: a lost executor or host recovers as fast
  as it did (one kill -9 of an executor often rolls back twice: for the window it died in,
  and for the next one, which found it restarting);
- each further one waits twice as long as the one before, from
  ``topology.rollback.backoff.initial.secs`` up to ``topology.rollback.backoff.max.secs``
  (``initial`` 0: never wait).

Example:
    >>> backoff = RollbackBackoff(initial=1.0, maximum=5.0, reset=60.0)
    >>> [backoff.after_rollback(now=t) for t in (0, 1, 2, 10, 20, 30)]
    [0.0, 0.0, 1.0, 2.0, 4.0, 5.0]
    >>> backoff.after_rollback(now=200.0), backoff.in_a_row  # ran 165 s since: at once
    (0.0, 1)
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from sparkstorm.config import conf_float

AT_ONCE = 2
"""Rollbacks in a row that replay at once (measured: one kill -9 of an executor rolled back
twice within a second in three of the checkpoint tests)."""


@dataclass
class RollbackBackoff:
    """The waits of rollbacks in a row (see the module docstring).

    Args:
        initial: the wait of the third rollback in a row (0: never wait).
        maximum: the longest wait.
        reset: seconds a replay must run without a rollback to end the run.
    """

    initial: float
    maximum: float
    reset: float
    in_a_row: int = 0
    """Rollbacks in the current run, the last one included."""
    held: int = 0
    """Rollbacks whose replay waited, over the driver's life."""
    holding: threading.Event = field(default_factory=threading.Event, repr=False)
    """Set while a replay waits (:meth:`hold`): not a stall, for the driver's watchdog."""
    _replayed_at: float | None = field(default=None, repr=False)

    @classmethod
    def from_conf(cls, conf: dict[str, Any]) -> RollbackBackoff:
        """The backoff ``topology.rollback.backoff.*`` sets."""
        return cls(conf_float(conf, "topology.rollback.backoff.initial.secs"),
                   conf_float(conf, "topology.rollback.backoff.max.secs"),
                   conf_float(conf, "topology.rollback.backoff.reset.secs"))

    def after_rollback(self, now: float | None = None) -> float:
        """Seconds the replay of a rollback at ``now`` (monotonic seconds) waits."""
        now = time.monotonic() if now is None else now
        last = self._replayed_at
        self.in_a_row = self.in_a_row + 1 if last is not None and now - last <= self.reset \
            else 1
        wait = 0.0
        if self.in_a_row > AT_ONCE and self.initial > 0:
            wait = float(min(self.maximum, self.initial * 2 ** (self.in_a_row - AT_ONCE - 1)))
        self._replayed_at = now + wait
        return wait

    def hold(self, seconds: float, stop: threading.Event) -> None:
        """Wait ``seconds`` (less when ``stop`` is set), with :attr:`holding` set meanwhile."""
        self.held += 1
        self.holding.set()
        try:
            stop.wait(seconds)
        finally:
            self.holding.clear()


__all__ = ["AT_ONCE", "RollbackBackoff"]
