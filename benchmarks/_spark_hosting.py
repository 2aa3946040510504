"""Executors hosted by the topology's Spark application itself: a benchmark-only prototype.

Issue 10 asks to choose, with a measurement, between executors hosted by supervisor-launched
worker processes (built: ``cluster/worker/``) and executors hosted by the topology's Spark
application as long-running Spark tasks, the way Spark Streaming hosts its receivers. This
is the second way, far enough to measure it (``hosting.py``); it is not part of the package.

- The driver runs one long-running **hosting job** in a job group of its own: one task per
  share of the executors, each task's partition preferring one live Spark executor's host
  (``placement.located_rdd``, Spark's own host strings).
- Each hosting task runs, inside its Spark Python worker, an
  :class:`~sparkstorm.cluster.worker.executor_host.ExecutorHostRunner` for its share (the
  executor processes are its children and watch it), then connects to the driver's
  **report listener** and sends its endpoints with the topology's token. It keeps that
  connection open and stops its executors when the driver closes it (or goes away).
- A retried hosting task (its Spark executor was lost) starts its share afresh wherever Spark
  runs it and reports again: the driver passes every report to ``set_remote_endpoints``, so
  the next window calls the moved executors at their new addresses.

Not done (what keeping it would need): a conf key (``topology.executor.hosting``), a Spark
task slot per share reserved on every host that may receive a moved share (a hosting task
holds its slot for the topology's life: a worker needs ``shares it may host + 1`` cores),
executor restarts reported from a task (the runner restarts them; the driver learns the new
pid only from a new report), rebalance, and the tests.

The product grew from this prototype (issue 29): ``sparkstorm.spark_app`` (the application
``spark-submit`` runs, its hosting job and the hosting link with heartbeats) and
``engine/spark/hosting_job.py`` (CPU reservation by a task resource profile); this file
stays as it was measured.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.frames import recv_frame, send_frame

logger = logging.getLogger(__name__)

JOB_GROUP = "sparkstorm-executor-hosting"
Reported = dict[int, tuple[Endpoint, int]]


def local_address() -> str:
    """This host's address as Spark names it (``SPARK_LOCAL_IP`` when the host sets it)."""
    return os.environ.get("SPARK_LOCAL_IP") or socket.gethostbyname(socket.gethostname())


def host_share(topology: str, name: str, conf: dict[str, Any], token: str,
               report_to: tuple[str, int], shares: int, index: int,
               records: Iterator[Any]) -> Iterator[int]:
    """The hosting task of share ``index``: run its executors until the driver lets go.

    Runs in a Spark Python worker, once per (re)try of the share's task. Picklable by
    reference (module-level; ``benchmarks`` is on the Spark executors' ``PYTHONPATH``).
    """
    from sparkstorm.cluster.worker.executor_host import ExecutorHostRunner
    from sparkstorm.engine.plan.execution import ExecutionPlan
    from sparkstorm.testing.spread import load_spec, share_of

    for _ in records:  # drained, or PySpark discards the Python worker after the task
        pass
    spec = load_spec(topology)
    conf = {**conf, "storm.local.hostname": local_address()}
    hosted = share_of(ExecutionPlan(spec, conf), index, shares)
    runner = ExecutorHostRunner(name, spec, conf, hosted, token)
    runner.start()
    try:
        pids = runner.pool.pids()
        endpoints = {gid: [e.path, e.host, e.port, pids.get(gid, 0)]
                     for gid, e in runner.pool.endpoints.items() if gid in hosted}
        with socket.create_connection(report_to, timeout=30) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            send_frame(sock, json.dumps({"token": token, "share": index,
                                         "host": local_address(),
                                         "endpoints": endpoints}).encode())
            sock.settimeout(None)
            while sock.recv(1):  # the driver never writes: EOF is its "stop"
                pass
    finally:
        runner.stop()
    yield index


class SparkHosting:
    """The driver's side: the hosting job and the report listener (see the module docs).

    Args:
        spark: the topology's SparkSession (the driver's).
        topology: ``module:Class`` of the topology, importable on the Spark executors.
        name: the topology's name.
        conf: the topology's conf (pickled into every hosting task).
        token: the topology's token.
        on_report: called (from the listener's thread) with each share's endpoints.
    """

    def __init__(self, spark: Any, topology: str, name: str, conf: dict[str, Any], token: str,
                 on_report: Callable[[Reported], None]) -> None:
        self.sc = spark.sparkContext
        self.topology, self.name, self.conf, self.token = topology, name, conf, token
        self.on_report = on_report
        self.reports: list[tuple[float, int, str]] = []
        """(time, share, host) of every report, first ones and re-reports after a move."""
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server((str(self.sc.getConf().get(
            "spark.driver.host", "127.0.0.1")), 0))
        self._threads: list[threading.Thread] = []
        self.job_error: BaseException | None = None

    def start(self, hosts: list[str]) -> None:
        """Submit the hosting job: share ``i`` prefers ``hosts[i]``; return at once."""
        from sparkstorm.engine.spark.placement import located_rdd

        report_to = self._listener.getsockname()[:2]
        shares = len(hosts)
        rdd = located_rdd(self.sc, list(range(shares)), tuple(hosts)).mapPartitionsWithIndex(
            partial(host_share, self.topology, self.name, self.conf, self.token, report_to,
                    shares))
        self._threads = [threading.Thread(target=self._accept, daemon=True,
                                          name="hosting-reports"),
                         threading.Thread(target=self._run_job, args=(rdd,), daemon=True,
                                          name="hosting-job")]
        for thread in self._threads:
            thread.start()

    def _run_job(self, rdd: Any) -> None:
        self.sc.setJobGroup(JOB_GROUP, "executors hosted as long-running tasks", True)
        try:
            rdd.collect()
        except Exception as exc:  # noqa: BLE001 - kept for the caller, the job is over
            self.job_error = exc

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed by stop()
            threading.Thread(target=self._read_report, args=(conn,), daemon=True).start()

    def _read_report(self, conn: socket.socket) -> None:
        try:
            report = json.loads(recv_frame(conn))
        except (OSError, ConnectionError, ValueError):
            conn.close()
            return
        if report.get("token") != self.token:
            logger.warning("hosting report without the topology's token: dropped")
            conn.close()
            return
        reported = {int(gid): (Endpoint(path, host, int(port)), int(pid))
                    for gid, (path, host, port, pid) in report["endpoints"].items()}
        with self._lock:
            self._connections.append(conn)
            self.reports.append((time.time(), int(report["share"]), str(report["host"])))
        logger.info("share %s hosted on %s: executors %s", report["share"], report["host"],
                    sorted(reported))
        self.on_report(reported)

    def reported_shares(self) -> set[int]:
        """The shares that reported at least once."""
        with self._lock:
            return {share for _, share, _ in self.reports}

    def stop(self, timeout: float = 30.0) -> None:
        """Let the hosting tasks go (they stop their executors), then end the job."""
        self._listener.close()
        with self._lock:
            for conn in self._connections:
                conn.close()
        job = self._threads[1] if len(self._threads) > 1 else None
        if job is not None:
            job.join(timeout)
            if job.is_alive():  # a task that did not finish: Spark kills its Python worker
                self.sc.cancelJobGroup(JOB_GROUP)
                job.join(timeout)
