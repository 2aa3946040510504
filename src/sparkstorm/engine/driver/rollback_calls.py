"""The driver's calls of a rollback: cancel the window in flight, restore each executor.

A rollback is due once an executor's state is gone (it restarted, here or in another
worker, or its host was taken away and Nimbus moved its worker). Two things used to stall it
across hosts (``tests/integration/hosts/test_host_loss.py``, checkpoints case):

- The window in flight still calls the executor at its old address: its Spark task retries
  the dead endpoint for ``topology.executor.start.timeout.secs``, and Spark retries the task
  (four attempts on a standalone cluster), so the window's job held the driver for minutes
  although its result would be thrown away by the rollback anyway. :func:`await_window`
  cancels that job as soon as the rollback is due. (Without checkpoints nothing is thrown
  away: the window's tasks find the executor's new address themselves, connection refresh
  in ``engine.spark.stage``.)
- The ``restore`` request of a moved executor went to the address it had when the call began,
  and kept retrying it until the start timeout. :func:`restore_executor` looks the address
  up again every :data:`RESTORE_ATTEMPT_SECONDS`, so it follows the executor to its new host
  as soon as its worker reports it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from sparkstorm.engine.spark.stage import call_executor
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.protocol import RestoreRequest

logger = logging.getLogger(__name__)

RESULT_POLL_SECONDS = 0.2
"""How often the driver, waiting for a window's job, looks whether the job is doomed."""
RESTORE_ATTEMPT_SECONDS = 2.0
"""How long one ``restore`` attempt tries an address before the address is looked up again."""

T = TypeVar("T")


def await_window(future: Future[T], doomed: Callable[[], bool],
                 cancel: Callable[[], None]) -> T:
    """The result of a window's job; the job is cancelled once it is doomed.

    Called by the driver's loop thread for every window.

    Args:
        future: the job's result (``engine.spark.window_job``).
        doomed: whether the job cannot end well (a rollback is due), polled every
            :data:`RESULT_POLL_SECONDS`.
        cancel: cancels the job (its Spark job group); called at most once.

    Raises:
        Exception: whatever the job raised; a cancelled job raises Spark's error.
    """
    cancelled = False
    while True:
        try:
            return future.result(RESULT_POLL_SECONDS)
        except FutureTimeout:
            if not cancelled and doomed():
                cancelled = True
                cancel()


def restore_executor(endpoint_of: Callable[[], Endpoint], token: str, window: int | None,
                     timeout: float, clock: Callable[[], float] = time.monotonic,
                     resume: int = 0, parts: list[str] | None = None) -> Any:
    """Ask one executor to restore checkpoint ``window`` (None: from scratch).

    It refuses windows before ``resume`` afterwards: a cancelled window's request may still
    reach it after the restore, and must not apply its input on top of the checkpoint.
    ``parts`` names the checkpoint's parts that hold its tasks when they were taken by
    other executors (a replan regrouped them, ``engine.plan.regroup``); None: its own part.

    Tried at the executor's current address, looked up again (``endpoint_of``) after each
    attempt that could not connect, until ``timeout`` seconds have passed. Once connected,
    the executor may take as long as it needs while it answers pings within ``timeout``.

    Raises:
        ConnectionError: no address answered within ``timeout``.
        EngineError: the executor answered that it could not restore.
    """
    deadline = clock() + timeout
    request = RestoreRequest(window, resume, parts)
    while True:
        endpoint = endpoint_of()
        attempt = max(0.0, min(RESTORE_ATTEMPT_SECONDS, deadline - clock()))
        try:
            return call_executor(endpoint, token, request, attempt, answer_timeout=timeout)[0]
        except ConnectionError as exc:
            if clock() >= deadline:
                msg = f"no answer to restore checkpoint {window} within {timeout:g} s: {exc}"
                raise ConnectionError(msg) from exc
            logger.info("restore of checkpoint %s: %s did not answer; looking up its address "
                        "again", window, endpoint)
