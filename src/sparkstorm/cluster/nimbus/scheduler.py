"""Scheduling: which worker slots a topology's executors go to.

:class:`EvenScheduler` takes free slots in JStorm's order: group them by supervisor, sort
each supervisor's ports, sort supervisors by their number of free slots (most first, so load
spreads), then interleave one slot per supervisor in turn.

Example:
    >>> from sparkstorm.cluster.store.records import WorkerSlot
    >>> free = [WorkerSlot("a", 6701), WorkerSlot("b", 6700), WorkerSlot("a", 6700)]
    >>> [(s.node, s.port) for s in sort_slots(free)]
    [('a', 6700), ('b', 6700), ('a', 6701)]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from sparkstorm.cluster.store.records import ExecutorId, WorkerSlot


def sort_slots(free: Iterable[WorkerSlot]) -> list[WorkerSlot]:
    """Free slots in JStorm's order (see the module doc)."""
    by_node: dict[str, list[int]] = {}
    for slot in free:
        by_node.setdefault(slot.node, []).append(slot.port)
    # most free slots first; the node id breaks ties so the order is stable
    nodes = sorted(by_node, key=lambda n: (-len(by_node[n]), n))
    ports = {node: sorted(by_node[node]) for node in nodes}
    order: list[WorkerSlot] = []
    for depth in range(max((len(p) for p in ports.values()), default=0)):
        order += [WorkerSlot(n, ports[n][depth]) for n in nodes if depth < len(ports[n])]
    return order


class Scheduler(ABC):
    """Places executors on slots; Nimbus calls it for each topology that needs slots."""

    @abstractmethod
    def schedule(self, executors: list[ExecutorId], num_workers: int,
                 free: list[WorkerSlot]) -> dict[ExecutorId, WorkerSlot]:
        """Return a slot for every executor, or {} when no slot is free.

        Args:
            executors: the topology's executors.
            num_workers: the workers it asks for (``topology.workers``).
            free: the free slots of live supervisors.
        """


class EvenScheduler(Scheduler):
    """Spreads executors round-robin over the first ``num_workers`` slots in JStorm order."""

    def schedule(self, executors: list[ExecutorId], num_workers: int,
                 free: list[WorkerSlot]) -> dict[ExecutorId, WorkerSlot]:
        """See :meth:`Scheduler.schedule`."""
        slots = sort_slots(free)[:max(1, num_workers)]
        if not slots:
            return {}
        return {e: slots[i % len(slots)] for i, e in enumerate(sorted(executors))}
