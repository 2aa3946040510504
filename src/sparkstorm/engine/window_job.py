"""One window's Spark job, run from a thread of its own so that two windows can overlap.

Spark runs jobs submitted from different threads at once; the job group (``setJobGroup``,
which the statistics use to link a window to its job ids) is a property of the submitting
thread, so it is set in the thread that collects.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

FIRST_STAGE_POLL_SECONDS = 0.01
"""How often the driver looks whether a window's first stage is done (a cheap status call)."""


@dataclass
class WindowJob:
    """A window whose Spark job was submitted and whose result is not absorbed yet.

    Attributes:
        window: its number.
        started: wall-clock time it was submitted (the chart's time of the window).
        began: the same on the monotonic clock (minimum window length).
        group: its Spark job group.
        flags: what its executors' requests carried (``checkpoint``, ``committed``, ``after``).
        future: its collected records and the wall-clock time the job ended.
    """

    window: int
    started: float
    began: float
    group: str
    flags: dict[str, Any]
    future: Future[tuple[list[Any], float]] = field(repr=False)


def submit_window_job(threads: ThreadPoolExecutor, sc: Any, rdd: Any, group: str,
                      description: str) -> Future[tuple[list[Any], float]]:
    """Collect ``rdd`` in job group ``group`` from one of ``threads``."""
    def collect() -> tuple[list[Any], float]:
        sc.setJobGroup(group, description)
        return rdd.collect(), time.time()
    return threads.submit(collect)


def first_stage_done(sc: Any, group: str) -> bool:
    """Whether the first stage (the spout stage) of job group ``group``'s job has finished.

    Spark numbers a job's stages parents first, so the spout stage has the lowest id.
    """
    tracker = sc.statusTracker()
    ids = tracker.getJobIdsForGroup(group)
    if not ids:
        return False
    job = tracker.getJobInfo(min(ids))
    if job is None or not job.stageIds:
        return False
    stage = tracker.getStageInfo(min(job.stageIds))
    return stage is not None and stage.numCompletedTasks >= stage.numTasks > 0
