"""The hosting job: long-running Spark tasks that host a topology's executor processes.

Where no sparkstorm daemon runs beside Spark (YARN, Kubernetes, a standalone cluster someone
else operates), the topology's own Spark application hosts its executor processes, as Spark
Streaming hosts its receivers: the driver submits one Spark job whose task ``i`` runs share
``i`` of the executors for the topology's life (the task function is the caller's; see
``sparkstorm.spark_app``). This module is its Spark side:

- **placed** as windows are: partition ``i`` is a located RDD partition preferring
  ``hosts[i]``, one of Spark's own executor host strings (:func:`live_executor_hosts`);
- **CPUs reserved**: Spark does not know that a hosting task's executor processes use CPUs,
  so on a cluster master the job's stage carries a task resource profile asking ``cpus``
  CPUs per task (stage-level scheduling of task resources, which Spark 3.4+ supports on
  standalone, YARN and Kubernetes with dynamic allocation off): no window's task is
  scheduled on the cores the executor processes use. With dynamic allocation on
  (``dedicated``), the stage carries a full resource profile instead, executors of
  ``cpus`` cores running one ``cpus``-CPU task: Spark requests executors of that size for
  the hosting tasks alone (a profile's executors take no other profile's tasks), and the
  windows' executors scale with their load. A ``local`` master has nothing to reserve
  (one host; Spark refuses resource profiles there): the task takes one slot;
- in a **job group of its own** (``group``), so :meth:`HostingJob.cancel` ends it and
  nothing else: the driver runs one such job per share, so that Spark giving up on one
  share's task (and so aborting its stage, whose running tasks it kills) ends no other.

Spark reruns a hosting task whose Spark executor was lost (``spark.task.maxFailures``
times); the task function starts its share afresh wherever that is. When Spark gives up,
the job ends with its error and the driver decides (it starts the share again in a new job).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from sparkstorm.engine.spark.placement import _scala_list, live_executor_hosts, located_rdd

logger = logging.getLogger(__name__)

HOSTING_JOB_GROUP = "sparkstorm-executor-hosting"
ShareTask = Callable[[int, Iterable[Any]], Iterator[Any]]
"""A hosting task's partition function: ``(share index, its one record) -> results``."""


def executor_cores(sc: Any) -> dict[str, int]:
    """The cores of each live Spark executor host (its smallest executor's), from the JVM."""
    store = sc._jsc.sc().statusStore()
    cores: dict[str, int] = {}
    for summary in _scala_list(store.executorList(True)):
        if summary.id() != "driver" and summary.isActive():
            host = str(summary.hostPort()).rsplit(":", 1)[0]
            total = int(summary.totalCores())
            cores[host] = min(total, cores.get(host, total))
    return cores


def wait_for_hosts(sc: Any, wanted: int, wait: float, timeout: float,
                   stop: threading.Event | None = None) -> list[str]:
    """Spark's live executor hosts, once ``wanted`` registered or ``wait`` passed with one.

    Polls the JVM every 0.1 s. Returns them sorted.

    Raises:
        TimeoutError: no Spark executor registered within ``timeout`` seconds (or the
            wait was stopped).
    """
    started = time.monotonic()
    while True:
        hosts = sorted(live_executor_hosts(sc))
        waited = time.monotonic() - started
        if len(hosts) >= wanted or (hosts and waited >= wait):
            return hosts
        if waited >= timeout or (stop is not None and stop.is_set()):
            msg = f"no Spark executor registered within {timeout:g} s"
            raise TimeoutError(msg)
        time.sleep(0.1)


def local_master(sc: Any) -> bool:
    """Whether ``sc`` runs on a ``local`` master (one host: no placement, no reservation)."""
    return str(sc.master).startswith("local")


def dynamic_allocation(sc: Any) -> bool:
    """Whether Spark's dynamic allocation is on (``spark.dynamicAllocation.enabled``).

    Never on a ``local`` master, where Spark ignores it.
    """
    enabled = str(sc.getConf().get("spark.dynamicAllocation.enabled", "false"))
    return enabled.strip().lower() == "true" and not local_master(sc)


class HostingJob:
    """The hosting job of one topology (see the module docs).

    Args:
        sc: the driver's SparkContext.
        task: the partition function of every hosting task (picklable by reference).
        hosts: the preferred host of each share (None: anywhere); one task per entry.
        cpus: CPUs each task reserves on a cluster master (see the module docs).
        group: the job's Spark job group (:meth:`cancel` cancels it).
        dedicated: run the tasks on executors of their own, ``cpus`` cores each (dynamic
            allocation on; see the module docs).
    """

    def __init__(self, sc: Any, task: ShareTask, hosts: Sequence[str | None],
                 cpus: int, group: str = HOSTING_JOB_GROUP, *,
                 dedicated: bool = False) -> None:
        self.sc = sc
        self.group = group
        self.task = task
        self.hosts = tuple(hosts)
        self.cpus = max(1, cpus)
        self.dedicated = dedicated
        self.error: BaseException | None = None
        """Why the job ended, when it failed (Spark gave up on a task, or a cancel)."""
        self.ended = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"hosting-job-{group}",
                                        daemon=True)

    def rdd(self) -> Any:
        """The job's RDD: one located partition per share, with its CPU profile."""
        rdd = located_rdd(self.sc, list(range(len(self.hosts))), self.hosts)
        rdd = rdd.mapPartitionsWithIndex(self.task)
        if local_master(self.sc):
            return rdd
        from pyspark.resource import (
            ExecutorResourceRequests,
            ResourceProfileBuilder,
            TaskResourceRequests,
        )

        profile = ResourceProfileBuilder().require(TaskResourceRequests().cpus(self.cpus))
        if self.dedicated:
            profile = profile.require(ExecutorResourceRequests().cores(self.cpus))
        return rdd.withResources(profile.build)

    def start(self) -> None:
        """Submit the job from a thread of its own; return at once."""
        self._thread.start()

    def _run(self) -> None:
        self.sc.setJobGroup(self.group, "sparkstorm: executor processes, one task per "
                            "share", True)  # a cancel kills the tasks' Python workers
        try:
            self.rdd().collect()
        except Exception as exc:  # noqa: BLE001 - kept for the driver, which decides
            self.error = exc
        finally:
            self.ended.set()

    def join(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` seconds for the job to end; whether it has."""
        return self.ended.wait(timeout)

    def cancel(self) -> None:
        """End the job now: Spark kills its tasks' Python workers (and so their shares)."""
        self.sc.cancelJobGroup(self.group)

    @staticmethod
    def live_hosts(sc: Any) -> list[str]:
        """The hosts of the application's live Spark executors, sorted."""
        return sorted(live_executor_hosts(sc))

    @staticmethod
    def replace_executors_on(sc: Any, host: str) -> list[str]:
        """Have Spark kill its executors on ``host`` and ask for others; their ids.

        What Spark itself does when an executor misses ``spark.network.timeout`` of
        heartbeats (``killAndReplaceExecutor``), for a host the driver lost earlier by its
        own, shorter, timeout: no task is offered to those executors from now on (a host cut
        off from the network would hold every task sent there until it comes back), and
        the cluster manager starts new ones where it has room.
        """
        store = sc._jsc.sc().statusStore()
        ids = [str(s.id()) for s in _scala_list(store.executorList(True))
               if s.id() != "driver" and s.isActive()
               and str(s.hostPort()).rsplit(":", 1)[0] == host]
        for executor in ids:
            try:
                sc._jsc.sc().killAndReplaceExecutor(executor)
            except Exception as exc:  # noqa: BLE001 - a master that cannot: Spark's own timeout
                logger.warning("Spark executor %s on %s: not killed (%s)", executor, host, exc)
        return ids


__all__ = ["HOSTING_JOB_GROUP", "HostingJob", "executor_cores", "local_master",
           "wait_for_hosts"]
