"""The worker's window loop: one Spark job per streaming window over the whole DAG.

Window ``w`` is one job: the spout stage (one partition per spout executor, its input the
acker's verdicts from window ``w-1``), then one stage per DAG level (one partition per bolt
executor), each fed through Spark's shuffle with an identity partitioner on the target
executor. The job's result (acker traffic, statistics, deliveries on edges that close a
cycle) is collected here and feeds window ``w+1``.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
from collections import deque
from functools import partial
from pathlib import Path
from typing import Any

from sparkstorm.engine.acking import Acker, Verdicts
from sparkstorm.engine.plan import ExecutionPlan
from sparkstorm.engine.pool import ExecutorPool
from sparkstorm.engine.session import get_spark
from sparkstorm.engine.stacks import executor_stacks, own_stacks
from sparkstorm.engine.stage import DRIVER, StageInfo, run_stage
from sparkstorm.engine.stats import ComponentCounters
from sparkstorm.engine.ticks import TickSchedule
from sparkstorm.engine.topology_stats import ExecutorRange, TopologyStats, WindowRecord
from sparkstorm.engine.wire import unpack
from sparkstorm.errors import shorten_error
from sparkstorm.topology.spec import TopologySpec

logger = logging.getLogger(__name__)


WORKDIR_PREFIX = "sparkstorm-"
"""Runner folders (executor sockets, plan) are ``<tmp>/sparkstorm-<pid>-<random>``: short,
because Unix socket paths are limited to about 100 bytes."""


def remove_stale_workdirs() -> None:
    """Remove runner folders whose process is gone (a SIGKILLed worker cannot clean up)."""
    for path in Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*-*"):
        pid = path.name[len(WORKDIR_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _run_spout_stage(stage: StageInfo, window: int, index: int, payloads: Any) -> Any:
    return run_stage(stage, window, index, (rec for payload in payloads for rec in payload))


class TopologyRunner:
    """Runs one topology: executor processes, the window loop and its statistics."""

    def __init__(self, name: str, spec: TopologySpec, conf: dict[str, Any]) -> None:
        self.name = name
        self.conf = conf
        self.plan = ExecutionPlan(spec, conf)
        remove_stale_workdirs()
        self.workdir = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-"))
        self.pool = ExecutorPool(self.plan, name, self.workdir)
        self.pool.on_startup_error = self._startup_error
        self.acker = Acker(self.plan.acker_tasks,
                           float(conf.get("topology.message.timeout.secs") or 30))
        self.ticks = TickSchedule(self.plan)
        self.window = 0
        self.active = True
        self.window_seconds = int(conf.get("topology.window.ms") or 500) / 1000.0
        self.stats = TopologyStats(
            int(conf.get("topology.stats.window.count") or 120),
            {e.gid: ExecutorRange(e.component, min(e.tasks), max(e.tasks))
             for e in self.plan.executors},
            self.window_seconds)
        self.stop_requested = threading.Event()
        self.stopped = threading.Event()
        self.failure: BaseException | None = None
        self._verdicts = Verdicts()
        self._fail_all = False
        self._deliveries: dict[int, list[bytes]] = {}
        self._thread: threading.Thread | None = None
        self._spark: Any = None
        self._owns_spark = False
        self._stages = self._stage_infos()
        self.reported_errors: deque[dict[str, Any]] = deque(maxlen=1000)
        """Errors not yet taken by a reporter, oldest first (bounded: a component that
        fails every tuple must not grow it without end)."""

    def _startup_error(self, error: dict[str, Any]) -> None:
        """An executor failed in ``initialize``: report it now, not when a window ends (the
        window waits for that executor to come back)."""
        logger.error("topology %s component %s failed to start:\n%s", self.name,
                     error["component"], error["error"])
        self._error(error)

    def _error(self, error: dict[str, Any]) -> None:
        """Keep ``error`` as its component's last and queue it for whoever reports errors
        (the cluster worker sends them to Nimbus)."""
        error = shorten_error(error)  # a megabyte message must not ride every heartbeat
        self.stats.last_errors[error["component"]] = error
        self.reported_errors.append(error)

    def stack_traces(self) -> str:
        """The worker's threads and every executor's, as text (Apex's stack trace request)."""
        parts = [f"=== worker (pid {os.getpid()}) ===\n{own_stacks()}"]
        pids = self.pool.pids()
        for gid, text in sorted(executor_stacks(pids, self.pool.sockets).items()):
            component = self.plan.executors[gid].component
            parts.append(f"=== executor {gid} ({component}, pid {pids[gid]}) ===\n{text}")
        return "\n".join(parts)

    @property
    def spark_ui_url(self) -> str | None:
        """The Spark UI of this topology's Spark application (None when disabled)."""
        if self._spark is None:
            return None
        return self._spark.sparkContext.uiWebUrl  # type: ignore[no-any-return]

    def _stage_infos(self) -> list[StageInfo]:
        levels = {e.gid: e.level for e in self.plan.executors}
        timeout = float(self.conf.get("topology.executor.start.timeout.secs") or 60)
        return [StageInfo(level, tuple(gids), levels, self.pool.sockets, timeout)
                for level, gids in enumerate(self.plan.stages)]

    # -- life cycle -------------------------------------------------------------------
    def start(self, spark: Any = None) -> None:
        """Start the executors and the window loop in a background thread."""
        if spark is None:
            spark, self._owns_spark = get_spark(self.conf, f"sparkstorm-{self.name}")
        self._spark = spark
        try:
            self.pool.start()
        except BaseException:
            self._close()  # the pool stopped its executors; the folder and Spark go too
            raise
        self._thread = threading.Thread(target=self._loop, name=f"worker-{self.name}",
                                        daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        try:
            while not self.stop_requested.is_set():
                started = time.monotonic()
                self.run_window()
                self.stop_requested.wait(self.window_seconds - (time.monotonic() - started))
            self._drain()
        except BaseException as exc:  # noqa: BLE001 - kept for whoever waits on us
            self.failure = exc
            logger.exception("topology %s: window loop stopped", self.name)
        finally:
            self._close()

    def _drain(self) -> None:
        """Clean shutdown: deactivate spouts, let in-flight trees finish up to a bound."""
        self.active = False
        deadline = time.monotonic() + float(self.conf.get("topology.shutdown.timeout.secs") or 10)
        self.run_window()
        while self._in_flight() and time.monotonic() < deadline:
            self.run_window()

    def _in_flight(self) -> bool:
        """Whether trees are open or verdicts and deliveries still wait for a window."""
        verdicts = self._verdicts
        return bool(self.acker.open_trees or self._deliveries or verdicts.ack or verdicts.fail
                    or verdicts.reset)

    def _close(self) -> None:
        self.pool.stop()
        if self._owns_spark and self._spark is not None:
            self._spark.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)
        self.stopped.set()

    def stop(self, timeout: float | None = None) -> None:
        """Shut down cleanly and wait until every process is gone."""
        self.stop_requested.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def set_active(self, active: bool) -> None:
        """Activate or deactivate the spouts from the next window on."""
        self.active = active

    # -- one window -------------------------------------------------------------------
    def run_window(self) -> None:
        """Run window ``self.window`` as one Spark job and absorb its result."""
        window, started = self.window, time.time()
        sc = self._spark.sparkContext
        sc.setJobGroup(f"{self.name}-{window}", f"sparkstorm {self.name} window {window}")
        first = self._stages[0]
        rdd = sc.parallelize(self._spout_payloads(first), len(first.gids))
        rdd = rdd.mapPartitionsWithIndex(partial(_run_spout_stage, first, window))
        for stage in self._stages[1:]:
            rdd = rdd.partitionBy(len(stage.gids), stage.partition_of)
            rdd = rdd.mapPartitionsWithIndex(partial(run_stage, stage, window))
        try:
            results = rdd.collect()
        except Exception as exc:  # noqa: BLE001 - a failed job fails its trees, we go on
            self._job_failed(window, exc)
            results = []
        self.window += 1
        self._absorb(window, started, results)

    def _spout_payloads(self, stage: StageInfo) -> list[list[tuple[int, Any]]]:
        payloads: list[list[tuple[int, Any]]] = [[] for _ in stage.gids]
        verdicts, self._verdicts = self._verdicts, Verdicts()
        for index, gid in enumerate(stage.gids):
            tasks = self.plan.executors[gid].tasks
            failed = [r for t in tasks for r in verdicts.fail.get(t, ())]
            control = {"ack": [r for t in tasks for r in verdicts.ack.get(t, ())],
                       "fail": failed,
                       "fail_reasons": {r: verdicts.reasons[r] for r in failed
                                        if r in verdicts.reasons},
                       "reset": [r for t in tasks for r in verdicts.reset.get(t, ())],
                       "active": self.active, "fail_all": self._fail_all}
            payloads[index].append((gid, control))
        self._fail_all = False
        injected = list(self._deliveries.items()) + list(self.ticks.due(time.monotonic()))
        self._deliveries = {}
        for n, (gid, blobs) in enumerate(injected):
            for blob in blobs if isinstance(blobs, list) else [blobs]:
                payloads[n % len(payloads)].append((gid, blob))
        return payloads

    def _job_failed(self, window: int, exc: BaseException) -> None:
        logger.error("topology %s: window %d failed for good; failing its open tuple trees: %s",
                     self.name, window, exc)
        self.acker.forget_all()
        self._fail_all = True
        self._deliveries = {}

    def _absorb(self, window: int, started: float, results: list[Any]) -> None:
        metas = []
        for key, (_, meta_blob, deliveries) in results:
            if key != DRIVER:
                continue
            metas.append(unpack(meta_blob))
            for gid, blob in deliveries.items():
                self._deliveries.setdefault(gid, []).append(blob)
        self._verdicts = self.acker.process_window(metas)
        components, executors = self._counters(metas)
        self.stats.record(WindowRecord(window, started, time.time() - started, components,
                                       executors))
        self.stats.restarts = self.pool.restarts

    def _counters(self, metas: list[dict[str, Any]]
                  ) -> tuple[dict[str, ComponentCounters], dict[int, ComponentCounters]]:
        """This window's counters per component and per executor."""
        counters: dict[str, ComponentCounters] = {}
        executors: dict[int, ComponentCounters] = {}
        for meta in metas:
            component, stats = meta["component"], meta["stats"]
            one = _meta_counters(stats, len(meta["errors"]))
            executors.setdefault(int(meta["gid"]), ComponentCounters()).add(one)
            counters.setdefault(component, ComponentCounters()).add(one)
            for error in meta["errors"]:
                self._error({**error, "component": component})
                logger.error("topology %s component %s task %s failed:\n%s", self.name,
                             component, error["task"], error["error"])
        if self.acker.tasks:
            executed = sum(t.executed for t in self.acker.tasks)
            counters["__acker"] = ComponentCounters(executed={"*": executed})
            for task in self.acker.tasks:
                task.executed = 0
        return counters, executors


def _meta_counters(stats: dict[str, Any], errors: int) -> ComponentCounters:
    complete = stats.get("complete_ms") or {}
    acked, failed = stats.get("acked", {}), stats.get("failed", {})
    return ComponentCounters(
        emitted=dict(stats.get("emitted", {})), transferred=dict(stats.get("transferred", {})),
        executed=dict(stats.get("executed", {})),
        acked=acked if isinstance(acked, dict) else {"default": acked},
        failed=failed if isinstance(failed, dict) else {"default": failed},
        busy_ms=float(stats.get("busy_ms", 0.0)),
        complete_count=int(complete.get("count", 0)),
        complete_total_ms=float(complete.get("total", 0.0)),
        complete_values=list(complete.get("values", [])),
        timed_out=int(stats.get("timed_out", 0)), errors=errors,
        fail_causes={(str(cause), str(reason)): int(n)
                     for cause, reason, n in stats.get("fail_causes", ())},
        execute_ms=dict(stats.get("execute_ms", {})),
        process_ms=dict(stats.get("process_ms", {})),
        complete_ms=dict(stats.get("complete_ms_by_stream", {})),
    )
