"""When a chained spout stage has handed its window over, before its Spark tasks end.

With overlapping windows (``engine.driver.scheduling``) window ``w+1`` starts once window
``w``'s spout stage is done: its spout executors are free to hand the next window over while
the later stages of ``w`` still run. When bolts are chained to the spouts
(``engine.plan.chaining``) the spout stage's Spark tasks call those bolts too, so the tasks,
and the accumulator that counts them (``engine.spark.window_job``), end with the whole chain:
windows never overlapped, and a Kafka pass-through paid its spout's hand-over, its bolt's work
and the gap between jobs one after another for every window (benchmarks/RESULTS.md, issue 33).

So for such a stage the driver asks the root executors themselves: a ``served`` request
(``engine.wire.protocol``) to each answers once that executor has served window ``w``. When
all have, the window's ``first_stage`` event is set, as the last spout-stage task would have
set it. Anything else (an executor restarted or unreachable, a window not served within the
bound) leaves the event to the job's end, as before: a late start, never a wrong one, since
every executor serves its windows in order (``engine.executor.window_turns``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from sparkstorm.engine.wire.protocol import OK, ServedRequest

logger = logging.getLogger(__name__)

SLICE_SECONDS = 0.25
"""Each ``served`` request waits at most this long; the watcher asks again while the job
runs. So a watcher ends within a slice of its job, and never holds one of the window
threads (which the jobs share with it) for long after."""

CALL_MARGIN_SECONDS = 5.0
"""How much longer than its wait a ``served`` call may take (connecting, a busy process)."""

Call = Callable[[int, Any, float], Any]
"""``ExecutorPool.call``: (gid, request, timeout) -> the reply's payload."""


def watch_hand_over(threads: ThreadPoolExecutor, call: Call, roots: Sequence[int],
                    window: int, done: threading.Event, bound: float,
                    job: Future[Any]) -> None:
    """Set ``done`` once every executor of ``roots`` has served ``window``.

    Runs in ``threads``; gives up (leaving ``done`` to the job's end) when ``job`` ends
    first, when a root has not served it within ``bound`` seconds, or cannot be called.
    """
    def wait_all() -> None:
        deadline = time.monotonic() + bound
        for gid in roots:
            reply = None
            while reply != OK:
                if job.done() or time.monotonic() > deadline:
                    return
                try:
                    reply = call(gid, ServedRequest(window, SLICE_SECONDS),
                                 SLICE_SECONDS + CALL_MARGIN_SECONDS)
                except Exception as exc:  # noqa: BLE001 - the job's end sets the event instead
                    logger.debug("window %d: executor %d's hand-over not heard: %s",
                                 window, gid, exc)
                    return
        done.set()

    threads.submit(wait_all)


__all__ = ["SLICE_SECONDS", "watch_hand_over"]
