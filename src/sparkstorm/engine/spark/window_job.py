"""One window's Spark job, run from a thread of its own so that two windows can overlap.

Spark runs jobs submitted from different threads at once; the job group (``setJobGroup``,
which the statistics use to link a window to its job ids) is a property of the submitting
thread, so it is set in the thread that collects.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from pyspark.accumulators import AccumulatorParam

from sparkstorm.engine.wire.protocol import WindowFlags

FIRST_STAGE_POLL_SECONDS = 0.1
"""How often the driver, waiting for a window's first stage, also looks at a stop request.

The end of the stage itself wakes it at once (:class:`SpoutStageTasks`). Waking every 5 ms
to read the accumulator instead cost the driver 90 us of CPU a wake on a loaded machine,
1.7 % of a core whenever a first stage ran: more than its acker and statistics."""

_WAKE: dict[int, threading.Event] = {}
"""In the driver: the event of each window whose spout stage is still running, by token."""
_TOKENS = itertools.count()


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
    flags: WindowFlags
    spout_tasks: Any
    """Counts the spout stage's finished tasks (a PySpark accumulator)."""
    spout_partitions: int
    future: Future[tuple[list[Any], float]] = field(repr=False)
    first_stage: threading.Event = field(default_factory=threading.Event, repr=False)
    """Set when the spout stage's tasks have finished, or the job has ended."""


WINDOW_JOB_TAG = "sparkstorm-window"
"""Every window's Spark job carries this tag: ``cancelJobsWithTag`` ends the windows in
flight and nothing else (not a spark-submitted topology's hosting jobs)."""


def submit_window_job(threads: ThreadPoolExecutor, sc: Any, rdd: Any, group: str,
                      description: str) -> Future[tuple[list[Any], float]]:
    """Collect ``rdd`` in job group ``group``, tagged :data:`WINDOW_JOB_TAG`, from ``threads``."""
    def collect() -> tuple[list[Any], float]:
        sc.setJobGroup(group, description)
        sc.addJobTag(WINDOW_JOB_TAG)  # the thread's jobs keep it (Spark's tags are per thread)
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


class SpoutStageTasks(AccumulatorParam[int]):
    """Counts a window's finished spout-stage tasks; the last one wakes the driver.

    Pickled with its accumulator into Spark's Python workers, where :func:`counting_tasks`
    adds to it and no event is registered; in the driver, PySpark's accumulator server adds
    each finished task's update (``addInPlace``), and the update that completes the count
    sets the window's event.

    Args:
        token: the window's key in the driver's events.
        tasks: the spout stage's tasks.
    """

    def __init__(self, token: int, tasks: int) -> None:
        self.token = token
        self.tasks = tasks

    def zero(self, value: int) -> int:
        """No task finished."""
        return 0

    def addInPlace(self, value1: int, value2: int) -> int:  # noqa: N802 - PySpark's name
        """Add finished tasks; wake the driver once they are all done."""
        total = value1 + value2
        if total >= self.tasks:
            event = _WAKE.pop(self.token, None)
            if event is not None:
                event.set()
        return total


def spout_stage_counter(sc: Any, tasks: int) -> tuple[Any, threading.Event]:
    """A new window's finished-task accumulator, and the event its last task sets.

    Called by the driver once per window, before the window's job is submitted; give the
    event to :meth:`WindowJob` and :func:`release_on_end` with the job's future.
    """
    token = next(_TOKENS)
    event = threading.Event()
    _WAKE[token] = event
    param = SpoutStageTasks(token, tasks)
    if tasks <= 0:
        param.addInPlace(0, 0)
    return sc.accumulator(0, param), event


def release_on_end(future: Future[Any], accumulator: Any, event: threading.Event) -> None:
    """Set ``event`` (and forget it) when the job of ``future`` ends, however it ends."""
    token = accumulator.accum_param.token

    def ended(_: Future[Any]) -> None:
        _WAKE.pop(token, None)
        event.set()
    future.add_done_callback(ended)


def first_stage_done(accumulator: Any, tasks: int) -> bool:
    """Whether ``tasks`` tasks counted by :func:`counting_tasks` have finished."""
    return int(accumulator.value) >= tasks
