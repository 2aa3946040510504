"""How local a topology's executor calls were: host-local share and bytes across hosts.

Each Spark task of a window reports where its executor call went (``engine.spark.stage``): over
the executor's Unix socket (the task ran on the executor's host) or over TCP, with the bytes
of request and reply. The driver adds them up per window and over the run; the topology
statistics carry them (``topology_stats``), so heartbeats, ``sparkstorm run`` and the REST
API show them.

"Per tuple" means per tuple transferred between executors (every component's
``transferred`` count), the tuples whose batches made those calls.

A call that had to follow its executor to a new address (``engine.driver.endpoint_lookup``) counts
in ``refreshed_calls``; ``replaced_calls`` of those found a new process there.

Example:
    >>> calls = CallLocality()
    >>> calls.add((True, 0)); calls.add((False, 300)); calls.add(None)
    >>> calls.add((False, 0, ["replaced 10.0.0.2:4001"]))
    >>> calls.tuples = 100
    >>> calls.summary()
    {'calls': 3, 'host_local_calls': 1, 'host_local_share': 0.3333, 'crossed_bytes': 300, \
'tuples': 100, 'crossed_bytes_per_tuple': 3.0, 'refreshed_calls': 1, 'replaced_calls': 1}
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
    refreshed_calls: int = 0
    """Calls retried at an executor's new address, learnt mid-window."""
    replaced_calls: int = 0
    """Refreshed calls that found a new process (its earlier state gone)."""

    def add(self, call: Any) -> None:
        """Count one call as a Spark task reported it: ``(host_local, bytes[, refreshed])``.

        None (an executor given up on) is not a call that happened. ``refreshed`` lists the
        address refreshes the call went through (``engine.spark.stage.call_refreshing``).
        """
        if call is None:
            return
        local, crossed, *more = call
        self.calls += 1
        self.host_local_calls += bool(local)
        self.crossed_bytes += int(crossed)
        refreshed = more[0] if more else None
        if refreshed:
            self.refreshed_calls += 1
            self.replaced_calls += any(str(r).startswith("replaced") for r in refreshed)

    def merge(self, other: CallLocality) -> None:
        """Add ``other``'s counts into these."""
        self.calls += other.calls
        self.host_local_calls += other.host_local_calls
        self.crossed_bytes += other.crossed_bytes
        self.tuples += other.tuples
        self.refreshed_calls += other.refreshed_calls
        self.replaced_calls += other.replaced_calls

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
            "refreshed_calls": self.refreshed_calls,
            "replaced_calls": self.replaced_calls,
        }
