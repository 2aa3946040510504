"""A whole window in one Spark task: every stage's executors called in turn, no shuffle.

With a ``local`` master every executor and every Spark task share one host, and a Spark
shuffle between two levels only copies the blobs through the JVM and back. Yet each stage
costs the JVM its scheduling (about 30 ms of CPU), each task another ~12 ms and a Python
worker's round trip, and each stage boundary a share of the window's fixed time
(``benchmarks/RESULTS.md``, "one Spark task per window"). So on one host a window's job is
one task (``topology.window.fuse``): it calls the spout stage's executors, hands each
level's output to the next level's executors, and returns what the driver collects, as the
job of one stage per level would: the same requests in the same order per executor, the
executors of a level called at once (one thread each: the calls wait on other processes),
chained executors after the one that feeds them (``engine.plan.chaining``).

On a cluster the job keeps one stage per level, whose tasks Spark places on their
executors' hosts (``engine.spark.placement``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sparkstorm.engine.spark.stage import DRIVER, StageInfo, call_stage
from sparkstorm.engine.wire.protocol import WindowFlags

_CALLERS: list[tuple[int, ThreadPoolExecutor]] = []
"""The Python worker's threads that call a level's executors: made in the worker on first
use, kept for its next tasks, replaced by a larger pool for a wider level."""

Payload = tuple[list[Any], list[tuple[int, Any]]]
"""A spout executor's control and the records injected this window (``run_spout_stage``)."""

MIN_CALLERS = 4


def _callers(count: int) -> ThreadPoolExecutor:
    """A pool of at least ``count`` threads."""
    width = max(count, MIN_CALLERS)
    if not _CALLERS or _CALLERS[0][0] < width:
        if _CALLERS:
            _CALLERS[0][1].shutdown(wait=False)  # idle now: its level's calls returned
        _CALLERS[:] = [(width, ThreadPoolExecutor(max_workers=width,
                                                  thread_name_prefix="sparkstorm-level"))]
    return _CALLERS[0][1]


def run_fused_window(stages: Sequence[StageInfo], window: int, flags: WindowFlags,
                     payloads: Sequence[Payload], index: int, partition: Iterable[Any]
                     ) -> Iterator[tuple[int, Any]]:
    """The one partition function of a fused window's job (see the module docs).

    ``payloads`` hold each spout partition's control and injected records, as the spout
    stage of a job of one stage per level gets them. Yields the driver's records only.
    """
    for _ in partition:  # drained: else PySpark discards its Python worker after the task
        pass
    owners = _owners(stages)
    inputs: list[dict[int, list[tuple[int, Any]]]] = [defaultdict(list) for _ in stages]
    collected: list[tuple[int, Any]] = []

    def route(records: Iterable[tuple[int, Any]]) -> None:
        for key, value in records:
            if key == DRIVER:
                collected.append((key, value))
            else:
                level = owners[key]
                inputs[level][stages[level].partition_of(key)].append((key, value))

    for _, injected in payloads:
        route(injected)
    for level, stage in enumerate(stages):
        controls = [control for control, _ in payloads] if level == 0 else None
        count = len(stage.gids)
        calls = [_callers(count).submit(_partition_output, stage, window, flags, part,
                                        inputs[level].pop(part, []),
                                        None if controls is None else controls[part])
                 for part in range(count)]
        for call in calls:
            route(call.result())
    yield from collected


def _partition_output(stage: StageInfo, window: int, flags: WindowFlags, part: int,
                      records: list[tuple[int, Any]], control: list[Any] | None
                      ) -> list[tuple[int, Any]]:
    return list(call_stage(stage, window, flags, part, records, control))


def _owners(stages: Sequence[StageInfo]) -> dict[int, int]:
    """The level whose partition calls each executor (a chained one: its root's)."""
    owners = {}
    for level, stage in enumerate(stages):
        for gid in (*stage.gids, *stage.roots):
            owners[gid] = level
    return owners
