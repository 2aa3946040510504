"""One window's Spark job, run from a thread of its own so that two windows can overlap.

Spark runs jobs submitted from different threads at once; the job group (``setJobGroup``,
which the statistics use to link a window to its job ids) is a property of the submitting
thread, so it is set in the thread that collects.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

FIRST_STAGE_POLL_SECONDS = 0.005
"""How often the driver looks whether a window's first stage is done.

A look reads a PySpark accumulator, which lives in the driver's Python process: polling
Spark's status tracker over py4j this often slowed the JVM so much that windows took seconds.
"""


@dataclass
class WindowJob:
    """A window whose Spark job was submitted and whose result is not absorbed yet.

    Attributes:
        window: its number.
        started: wall-clock time it was submitted (the chart's time of the window).
        began: the same on the monotonic clock (minimum window length).
        group: its Spark job group.
        flags: what its executors' requests carried (``checkpoint``, ``committed``, ``after``).
        spout_partitions: how many tasks its spout stage has.
        future: its collected records and the wall-clock time the job ended.
    """

    window: int
    started: float
    began: float
    group: str
    flags: dict[str, Any]
    spout_tasks: Any
    """Counts the spout stage's finished tasks (a PySpark accumulator)."""
    spout_partitions: int
    future: Future[tuple[list[Any], float]] = field(repr=False)


def submit_window_job(threads: ThreadPoolExecutor, sc: Any, rdd: Any, group: str,
                      description: str) -> Future[tuple[list[Any], float]]:
    """Collect ``rdd`` in job group ``group`` from one of ``threads``."""
    def collect() -> tuple[list[Any], float]:
        sc.setJobGroup(group, description)
        return rdd.collect(), time.time()
    return threads.submit(collect)


def wait_for_job(job: WindowJob, seconds: float) -> None:
    """Wait up to ``seconds`` for ``job``'s Spark job to end (no wait when 0)."""
    if seconds > 0:
        wait([job.future], timeout=seconds)


def counting_tasks(accumulator: Any, function: Callable[[int, Iterable[Any]], Iterator[Any]],
                   index: int, records: Iterable[Any]) -> Iterator[Any]:
    """``function``'s partition output; then one more finished task in ``accumulator``.

    Wraps the spout stage's partition function (with ``functools.partial``, picklable), so
    the driver learns from :func:`first_stage_done` when that stage's tasks are done.
    """
    yield from function(index, records)
    accumulator.add(1)


def first_stage_done(accumulator: Any, tasks: int) -> bool:
    """Whether ``tasks`` tasks counted by :func:`counting_tasks` have finished."""
    return int(accumulator.value) >= tasks
