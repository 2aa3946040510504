"""A rebalance's new placement that keeps what stays (Storm's rebalance reassigns).

``rebalance -n`` changes how many workers a topology's executors are spread over. As in
Storm, the workers that stay keep running: each keeps its slot, its worker id and as many of
its executors as its share of the new count allows, so their processes (a spout's buffer and
pending tuples, a bolt's memory) go on. Only the executors that must move, or are new, go to
the staying workers' spare room or to new slots, where they start fresh.

The driver's worker (the slot of the lowest executor) always stays when it is live, and keeps
the lowest executor, so that the topology's Spark application and window loop go on.

``rebalance -e`` changes executor counts: every worker stays, and so does each executor
that stays (same component, same tasks: the same executor id) in its slot; the new ones go
to the workers with the fewest executors, the new lowest one to the driver's
(:func:`keep_in_place`). The workers then regroup their executors in step with the driver
(``engine.plan.regroup``).

Example: five executors on one worker, rebalanced to two workers, keep the lowest three in
place and move two:

    >>> from sparkstorm.cluster.store.records import Assignment, WorkerSlot
    >>> a, b = WorkerSlot("s1", 6700), WorkerSlot("s2", 6700)
    >>> old = Assignment("t", {(n, n): a for n in range(1, 6)}, {}, {a: "w1"})
    >>> kept = keep_staying(old, [(n, n) for n in range(1, 6)], 2, [a, b], set())
    >>> sorted(e for e, s in kept.placed.items() if s == a), kept.workers
    ([(1, 1), (2, 2), (3, 3)], {WorkerSlot(node='s1', port=6700): 'w1'})
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from sparkstorm.cluster.store.records import Assignment, ExecutorId, WorkerSlot


@dataclass
class Kept:
    """What stays of an assignment, and where the rest goes.

    Attributes:
        placed: every executor's slot (the staying workers' and new slots).
        workers: the worker ids of the staying slots (new slots get new ids).
        started: the start times of the executors that stay where they were.
    """

    placed: dict[ExecutorId, WorkerSlot]
    workers: dict[WorkerSlot, str]
    started: dict[ExecutorId, int]


def keep_staying(old: Assignment, executors: list[ExecutorId], num_workers: int,
                 free: list[WorkerSlot], dead: Collection[WorkerSlot], *,
                 schedule: Callable[[list[ExecutorId], int, list[WorkerSlot]],
                                    dict[ExecutorId, WorkerSlot]] | None = None
                 ) -> Kept | None:
    """Place ``executors`` on ``num_workers`` workers, keeping the live ones of ``old``.

    Args:
        old: the current assignment.
        executors: the topology's executors after the rebalance.
        num_workers: the workers it asks for now.
        free: slots it may use (its own and the free ones of live supervisors).
        dead: ``old``'s slots whose worker must move anyway (they do not stay).
        schedule: places the executors that go to new slots (the scheduler's
            ``schedule``); None: round-robin over ``free`` in its order.

    Returns:
        The placement, or None when nothing can stay: the driver's worker is dead or gone
        from ``free`` (its successor starts everything afresh).
    """
    driver = old.driver_slot()
    usable = set(free)
    if driver is None or driver in dead or driver not in usable or not executors:
        return None
    wanted = max(1, min(num_workers, len(executors)))
    staying = _staying_slots(old, driver, dead, usable)[:wanted]
    shares = _shares(len(executors), wanted)
    lowest = min(executors)
    remaining = set(executors)
    placed: dict[ExecutorId, WorkerSlot] = {}
    for slot, share in zip(staying, shares, strict=False):
        mine = [e for e in old.executors_in(slot) if e in remaining and e != lowest]
        if slot == driver:  # the window loop and its Spark application stay here
            mine = [lowest, *mine]
        for executor in mine[:share]:
            placed[executor] = slot
            remaining.discard(executor)
    spare = [slot for slot, share in zip(staying, shares, strict=False)
             for _ in range(share - sum(1 for s in placed.values() if s == slot))]
    moving = sorted(remaining)
    placed |= dict(zip(moving, spare, strict=False))
    placed |= _new_slots(moving[len(spare):], wanted - len(staying),
                         [s for s in free if s not in staying], staying, schedule)
    started = {e: old.executor_start_time_secs.get(e, 0) for e, s in placed.items()
               if old.executor_slots.get(e) == s}
    return Kept(placed, {s: old.worker_ids[s] for s in staying}, started)


def keep_in_place(old: Assignment, executors: list[ExecutorId], free: list[WorkerSlot],
                  dead: Collection[WorkerSlot]) -> Kept | None:
    """Place new executor counts on ``old``'s workers, each staying executor where it is.

    Args:
        old: the current assignment.
        executors: the topology's executors under the new counts.
        free: slots the topology may use (its own among them).
        dead: ``old``'s slots whose worker is gone.

    Returns:
        The placement (every worker keeps its slot and id); None when it cannot be taken
        in place: a worker is dead or its slot gone (the topology is placed afresh).

    Example: the relays ``(3, 3)`` and ``(4, 4)`` become one ``(3, 4)``:

        >>> from sparkstorm.cluster.store.records import Assignment, WorkerSlot
        >>> a, b = WorkerSlot("s1", 6700), WorkerSlot("s2", 6700)
        >>> slots = {(2, 2): a, (4, 4): a, (6, 6): a, (3, 3): b, (5, 5): b}
        >>> old = Assignment("t", slots, dict.fromkeys(slots, 100), {a: "w1", b: "w2"})
        >>> kept = keep_in_place(old, [(2, 2), (3, 4), (5, 5), (6, 6)], [a, b], set())
        >>> kept.placed[(3, 4)] == b, kept.workers == old.worker_ids
        (True, True)
    """
    driver = old.driver_slot()
    usable = set(free)
    if driver is None or not executors or any(
            s in dead or s not in usable for s in old.worker_ids):
        return None
    placed = {e: old.executor_slots[e] for e in executors if e in old.executor_slots}
    lowest = min(executors)
    placed.setdefault(lowest, driver)  # a new lowest executor: the driver stays its worker
    order = [driver, *sorted((s for s in old.worker_ids if s != driver),
                             key=lambda s: (s.node, s.port))]
    load = {slot: sum(1 for s in placed.values() if s == slot) for slot in order}
    for executor in sorted(e for e in executors if e not in placed):
        slot = min(order, key=load.__getitem__)  # the first of the least loaded
        placed[executor] = slot
        load[slot] += 1
    started = {e: old.executor_start_time_secs.get(e, 0) for e in executors
               if old.executor_slots.get(e) == placed[e]}
    return Kept(placed, dict(old.worker_ids), started)


def _staying_slots(old: Assignment, driver: WorkerSlot, dead: Collection[WorkerSlot],
                   usable: set[WorkerSlot]) -> list[WorkerSlot]:
    """``old``'s live slots, the driver's first, then those holding most executors."""
    live = [s for s in old.worker_ids if s not in dead and s in usable and s != driver]
    live.sort(key=lambda s: (-len(old.executors_in(s)), s.node, s.port))
    return [driver, *live]


def _shares(count: int, workers: int) -> list[int]:
    """How many of ``count`` executors each of ``workers`` holds (largest first)."""
    size, extra = divmod(count, workers)
    return [size + (1 if n < extra else 0) for n in range(workers)]


def _new_slots(moving: list[ExecutorId], workers: int, free: list[WorkerSlot],
               staying: list[WorkerSlot],
               schedule: Callable[[list[ExecutorId], int, list[WorkerSlot]],
                                  dict[ExecutorId, WorkerSlot]] | None
               ) -> dict[ExecutorId, WorkerSlot]:
    """Slots for the executors the staying workers have no room for.

    New workers when free slots allow; else the staying ones take them (fewer workers than
    asked, as Storm runs with the slots it has).
    """
    if not moving:
        return {}
    found: dict[ExecutorId, WorkerSlot] = {}
    if workers > 0 and free:
        found = (schedule(moving, workers, free) if schedule is not None
                 else {e: free[n % min(workers, len(free))] for n, e in enumerate(moving)})
    left = [e for e in moving if e not in found]
    return found | {e: staying[n % len(staying)] for n, e in enumerate(left)}
