"""How long a supervisor waits before it starts a topology's worker again.

A worker that dies after it ran windows is restarted at once, as in Storm. A worker that
dies (or hangs) before it ran a single window failed to start, and starting it again at
once would repeat a full Spark start every few seconds for nothing (a component whose class
is missing on this host fails the same way each time). So consecutive failed starts of a
topology's workers wait ``supervisor.worker.restart.backoff.secs`` (5), doubling each time,
up to ``supervisor.worker.restart.backoff.max.secs`` (300); a start that runs windows resets
the count. Keyed by topology: Nimbus may give the restarted worker a new id or slot.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class RestartBackoff:
    """Consecutive failed starts and the earliest next start, per topology.

    Args:
        first_secs: the wait after the first failed start.
        max_secs: the longest wait.
        clock: monotonic seconds; tests pass a fake one.
    """

    def __init__(self, first_secs: float, max_secs: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.first_secs = first_secs
        self.max_secs = max_secs
        self.clock = clock
        self.failures: dict[str, int] = {}
        self._not_before: dict[str, float] = {}

    def died(self, topology_id: str, ran: bool) -> float:
        """Record a worker's end; return the wait before the next start.

        ``ran`` says whether it ran windows (then it restarts at once).

        Example:
            >>> backoff = RestartBackoff(5, 30, clock=lambda: 0.0)
            >>> [backoff.died("t", ran=False) for _ in range(5)]
            [5.0, 10.0, 20.0, 30.0, 30.0]
            >>> backoff.died("t", ran=True)
            0.0
        """
        if ran:
            self.failures.pop(topology_id, None)
            self._not_before.pop(topology_id, None)
            return 0.0
        failures = self.failures.get(topology_id, 0) + 1
        self.failures[topology_id] = failures
        wait = float(min(self.first_secs * 2 ** (failures - 1), self.max_secs))
        self._not_before[topology_id] = self.clock() + wait
        return wait

    def ready(self, topology_id: str) -> bool:
        """Whether a worker of ``topology_id`` may start now."""
        return self.clock() >= self._not_before.get(topology_id, 0.0)

    def forget(self, keep: set[str]) -> None:
        """Drop the topologies not in ``keep`` (no longer assigned here)."""
        for topology_id in set(self.failures) - keep:
            self.failures.pop(topology_id, None)
            self._not_before.pop(topology_id, None)
