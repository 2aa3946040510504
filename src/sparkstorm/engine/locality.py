"""How local a topology's executor calls were: host-local share and bytes across hosts.

Each Spark task of a window reports where its executor call went (``engine.stage``): over
the executor's Unix socket (the task ran on the executor's host) or over TCP, with the bytes
of request and reply. The driver adds them up per window and over the run; the topology
statistics carry them (``topology_stats``), so heartbeats, ``sparkstorm run`` and the REST
API show them.

"Per tuple" means per tuple transferred between executors (every component's
``transferred`` count), the tuples whose batches made those calls.

Example:
    >>> calls = CallLocality()
    >>> calls.add((True, 0)); calls.add((False, 300)); calls.add(None)
    >>> calls.tuples = 100
    >>> calls.summary()
    {'calls': 2, 'host_local_calls': 1, 'host_local_share': 0.5, 'crossed_bytes': 300, \
'tuples': 100, 'crossed_bytes_per_tuple': 3.0}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class CallLocality:
    """Executor calls of some windows: how many, how many host-local, bytes across hosts."""

    calls: int = 0
    host_local_calls: int = 0
    crossed_bytes: int = 0
    tuples: int = 0
    """Tuples transferred between executors in those windows."""

    def add(self, call: Any) -> None:
        """Count one call as a Spark task reported it: ``(host_local, bytes)``.

        None (an executor given up on) is not a call that happened.
        """
        if call is None:
            return
        local, crossed = call
        self.calls += 1
        self.host_local_calls += bool(local)
        self.crossed_bytes += int(crossed)

    def merge(self, other: CallLocality) -> None:
        """Add ``other``'s counts into these."""
        self.calls += other.calls
        self.host_local_calls += other.host_local_calls
        self.crossed_bytes += other.crossed_bytes
        self.tuples += other.tuples

    def summary(self) -> dict[str, Any]:
        """Plain data: counts, the host-local share and bytes per tuple (None: no data)."""
        return {
            "calls": self.calls,
            "host_local_calls": self.host_local_calls,
            "host_local_share": (round(self.host_local_calls / self.calls, 4)
                                 if self.calls else None),
            "crossed_bytes": self.crossed_bytes,
            "tuples": self.tuples,
            "crossed_bytes_per_tuple": (round(self.crossed_bytes / self.tuples, 2)
                                        if self.tuples else None),
        }
