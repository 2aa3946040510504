"""The driver's side of its watchdog (``engine.driver.watchdog``): what it reads, its remedies.

:func:`watchdog_for` wires a :class:`TopologyDriver` to a :class:`Watchdog`; the remedies
that touch the window loop's state only ask for it (``request_new_session``,
``give_up``), and the loop applies them between windows (:func:`renew_session`), as it does
rollbacks and rebalances: the jobs in flight are cancelled first (the loop waits for them).
"""

from __future__ import annotations

import logging
from typing import Any

from sparkstorm.config import conf_float
from sparkstorm.engine.driver.watchdog import DriverHooks, Watchdog
from sparkstorm.engine.spark.session import cache_jvm_lookups, get_spark

logger = logging.getLogger(__name__)

ANSWER_MARGIN_SECS = 5.0
"""The watchdog waits this much longer than ``topology.executor.answer.timeout.secs``: a
silent executor is the engine's own to kill and restart first."""


def stall_bound(conf: dict[str, Any]) -> float:
    """Seconds without a completed window that make a stall (0: no watchdog).

    Example:
        >>> stall_bound({"topology.watchdog.stall.secs": 10,
        ...              "topology.executor.answer.timeout.secs": 30})
        35.0
        >>> stall_bound({"topology.watchdog.stall.secs": 0})
        0.0
    """
    stall = conf_float(conf, "topology.watchdog.stall.secs")
    if stall <= 0:
        return 0.0
    return max(stall, conf_float(conf, "topology.executor.answer.timeout.secs")
               + ANSWER_MARGIN_SECS)


def watchdog_for(driver: Any) -> Watchdog | None:
    """A watchdog over ``driver``'s windows (not started), or None when turned off."""
    stall = stall_bound(driver.conf)
    if stall <= 0:
        return None
    owns_spark = bool(driver._owns_spark)
    hooks = DriverHooks(
        windows=lambda: int(driver.completed_windows),
        executors=lambda: spark_executors(driver._spark),
        waiting=lambda: bool(driver.pool.missing()) or driver.rollback_backoff.holding.is_set(),
        cancel=driver.cancel_windows_in_flight,
        renew=driver.request_new_session if owns_spark else None,
        give_up=driver.give_up)
    return Watchdog(stall, hooks, driver.name)


def spark_executors(spark: Any) -> int | None:
    """The executors the Spark application has now; None for a local master, or unknown."""
    if spark is None:
        return None
    sc = spark.sparkContext
    if str(sc.master).startswith("local"):
        return None  # the driver's JVM runs the tasks
    try:  # the block managers the driver knows, its own included
        return int(sc._jsc.sc().getExecutorMemoryStatus().size()) - 1
    except Exception:  # noqa: BLE001 - a stopping context: not known
        return None


def renew_session(driver: Any, reason: str) -> None:
    """Stop ``driver``'s Spark application and start a new one; roll back (or fail trees).

    Called by the window loop between windows, with the jobs in flight cancelled. The
    executor processes are the driver's, not Spark's: they keep running, and restore the
    committed checkpoint with everything else (without checkpoints, the open trees fail
    and their spouts replay them).
    """
    driver.scheduler.finish_in_flight(driver)
    old = driver._spark
    old_id = old.sparkContext.applicationId
    try:
        old.stop()
    except Exception:  # a master gone may refuse the goodbye: go on
        logger.warning("topology %s: the old Spark application did not stop cleanly",
                       driver.name, exc_info=True)
    spark, driver._owns_spark = get_spark(driver.conf, f"sparkstorm-{driver.name}")
    driver._spark = spark
    cache_jvm_lookups()
    driver.placement = driver.new_placement(str(spark.sparkContext.master))
    driver._choose_scheduler()
    if not driver.checkpointing.request_rollback("the watchdog started a new Spark application"):
        driver.acker.forget_all()
        driver._fail_all = True
        driver._deliveries = {}
    logger.warning("topology %s: watchdog: new Spark application %s in place of %s (%s)",
                   driver.name, spark.sparkContext.applicationId, old_id, reason)
