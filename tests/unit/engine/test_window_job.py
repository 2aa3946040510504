"""The event that wakes the driver when a window's spout stage is done (no polling).

PySpark's accumulator server adds each finished task's update into the driver's copy of
the accumulator (``acc += update``); the update that completes the stage's count sets the
window's event, and so does the end of the job.
"""

from __future__ import annotations

import pickle
from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

from pyspark.accumulators import Accumulator

from sparkstorm.engine.spark import window_job
from sparkstorm.engine.spark.window_job import first_stage_done, release_on_end, spout_stage_counter

_AIDS = iter(range(10_000_000, 20_000_000))


def _context() -> Any:
    """Enough of a SparkContext for ``spout_stage_counter``: it makes an accumulator."""
    return SimpleNamespace(
        accumulator=lambda value, param: Accumulator(next(_AIDS), value, param))


def test_the_last_task_of_the_spout_stage_sets_the_event() -> None:
    accumulator, event = spout_stage_counter(_context(), 3)
    accumulator += 1  # what the accumulator server does for a finished task
    accumulator += 1
    assert not event.is_set() and not first_stage_done(accumulator, 3)
    accumulator += 1
    assert event.is_set() and first_stage_done(accumulator, 3)
    assert accumulator.accum_param.token not in window_job._WAKE  # forgotten once set


def test_the_end_of_the_job_sets_the_event_however_it_ends() -> None:
    accumulator, event = spout_stage_counter(_context(), 2)
    future: Future[Any] = Future()
    release_on_end(future, accumulator, event)
    assert not event.is_set()
    future.set_exception(RuntimeError("job failed"))
    assert event.is_set()
    assert accumulator.accum_param.token not in window_job._WAKE


def test_a_spark_worker_adds_without_waking_anything() -> None:
    accumulator, event = spout_stage_counter(_context(), 1)
    param = pickle.loads(pickle.dumps(accumulator.accum_param))  # as a worker gets it
    saved = dict(window_job._WAKE)
    window_job._WAKE.clear()  # a worker process registers no event
    try:
        assert param.addInPlace(param.zero(0), 1) == 1
    finally:
        window_job._WAKE.update(saved)
    assert not event.is_set()
