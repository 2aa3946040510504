"""A worker that hosts executors of a topology whose driver runs in another worker.

With ``topology.workers`` above 1, Nimbus spreads a topology's executors over that many
worker processes, on several hosts when supervisors run there (Storm's workers). The worker
that hosts the lowest executor also runs the topology's driver (its Spark driver: window
loop, acker); every other one runs this: its share of the executor processes, listening on
their Unix sockets and on TCP with the topology's token, restarted when they die. Its
heartbeats carry where each of its executors answers and its process id; Nimbus passes them
to the driver in its heartbeat answers, so that a moved or restarted executor is called at
its new address from the next window on. A rebalance that keeps this worker changes its
executors in place (:meth:`ExecutorHostRunner.rehost`), and new executor counts regroup them
in step with the driver (:meth:`ExecutorHostRunner.follow_driver_plan`, ``engine.plan.regroup``).
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections import deque
from typing import Any

from sparkstorm.config import conf_int
from sparkstorm.engine import (
    ComponentError,
    ExecutionPlan,
    ExecutorPool,
    ExecutorRange,
    TopologyStats,
    executor_stacks,
    follow_driver_plan,
    new_workdir,
)
from sparkstorm.errors import shorten_error
from sparkstorm.periodic import PeriodicThread
from sparkstorm.topology.spec import TopologySpec

logger = logging.getLogger(__name__)


class ExecutorHostRunner:
    """Runs some executors of a topology for a driver elsewhere (see the module docstring).

    Args:
        name: the topology's name.
        spec: its spec.
        conf: its conf.
        hosted: the executors (gids) to run here.
        token: the topology's token (TCP callers send it first).
        checkpoint_id: where executors write checkpoint parts (None: checkpoints off).
    """

    def __init__(self, name: str, spec: TopologySpec, conf: dict[str, Any], hosted: set[int],
                 token: str, checkpoint_id: str | None = None) -> None:
        self.name = name
        self.conf = conf
        self.plan = ExecutionPlan(spec, conf)
        self.workdir = new_workdir()
        self.pool = ExecutorPool(self.plan, name, self.workdir, checkpoint_id, hosted=hosted,
                                 token=token)
        self.pool.on_startup_error = self._startup_error
        self.stats = TopologyStats(conf_int(conf, "topology.stats.window.count"),
                                   self._ranges())
        self.spark_ui_url: str | None = None
        self.reported_errors: deque[dict[str, Any]] = deque(maxlen=1000)
        self.stopped = threading.Event()
        self.failure: BaseException | None = None
        self._restarts = PeriodicThread(f"{name}-restarts", 0.5, self._count_restarts)

    def _startup_error(self, error: ComponentError) -> None:
        logger.error("topology %s component %s failed to start:\n%s", self.name,
                     error.component, error.error)
        reported = shorten_error(error.to_wire())
        self.stats.last_errors[error.component] = reported
        self.reported_errors.append(reported)

    def _count_restarts(self) -> None:
        self.stats.restarts = self.pool.restarts

    def start(self) -> None:
        """Start the executors; return once all of them accept connections."""
        try:
            self.pool.start()
        except BaseException:
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise
        self._restarts.start()
        logger.info("topology %s: hosting executors %s", self.name, sorted(self.pool.sockets))

    def _ranges(self) -> dict[int, ExecutorRange]:
        return {e.gid: ExecutorRange(e.component, min(e.tasks), max(e.tasks))
                for e in self.plan.executors if e.gid in self.pool.sockets}

    def rehost(self, hosted: set[int]) -> None:
        """Follow a rebalance: start the executors that arrived, stop the ones that left.

        The others keep running. Called from the worker's heartbeat thread; a window that
        was calling an executor that left fails its trees, which replay.
        """
        self.pool.rehost(hosted)
        self.stats.executor_ranges = self._ranges()

    def follow_driver_plan(self, counts: dict[str, Any], executors: Any) -> bool:
        """Regroup the executors hosted here as the driver did (``rebalance -e``).

        Called from the worker's heartbeat thread when the driver's plan (relayed by Nimbus)
        has other executor counts than this runner's: the driver has switched between
        windows and waits for this worker's endpoints under the new plan. ``executors`` is
        the assignment's list for this worker; out of step with ``counts``, nothing happens
        and the next heartbeat answer tries again.

        Returns:
            Whether the executors were regrouped.
        """
        if not follow_driver_plan(self, counts, executors):
            return False
        self.stats.executor_ranges = self._ranges()
        return True

    def set_active(self, active: bool) -> None:
        """Spouts are activated by the driver's window requests: nothing to do here."""

    def stack_traces(self) -> str:
        """The executors' threads, as text."""
        pids = self.pool.pids()
        parts = []
        for gid, text in sorted(executor_stacks(pids, self.pool.sockets).items()):
            component = self.plan.executors[gid].component
            parts.append(f"=== executor {gid} ({component}, pid {pids[gid]}) ===\n{text}")
        return "\n".join(parts)

    def stop(self, timeout: float | None = None) -> None:
        """Stop every executor process and remove the folder."""
        self._restarts.stop(1)
        self.pool.stop(timeout if timeout is not None else 5.0)
        shutil.rmtree(self.workdir, ignore_errors=True)
        self.stopped.set()
