"""A window caught calling an executor that moved is resent to its new address.

One executor runs in another worker (an ``ExecutorHostRunner`` in this process, as on another
host), the rest in the driver's pool. The worker goes away and a new one hosts the executor
at a new address: a window already running would keep calling the old one until
``topology.executor.start.timeout.secs`` (set far beyond the test's bound here); instead its
task asks the driver's endpoint lookup once the driver learns the new endpoints, and resends
the request there (connection refresh). ``test_connection_refresh`` kills the host with -9
in a subprocess; here the worker stops cleanly, in this process.
"""

from __future__ import annotations

import secrets
import time
from collections import Counter
from pathlib import Path
from typing import Any

from sparkstorm import Topology
from sparkstorm.cluster.worker.executor_host import ExecutorHostRunner
from sparkstorm.config import load_config
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.testing.local_cluster import topology_spec_of
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import (
    PacedNumberSpout,
    PassBolt,
    RecordingBolt,
    read_events,
)
from tests.integration.spark.conftest import TEST_CONF

STUCK_CALL_SECONDS = 300
"""How long a task keeps calling a vanished executor (far beyond the test's bound)."""


class MovingTopology(Topology):
    numbers = PacedNumberSpout.spec()
    passing = PassBolt.spec(inputs=[numbers])
    sink = RecordingBolt.spec(inputs=[passing])


def _endpoints(runner: ExecutorHostRunner) -> dict[int, tuple[Endpoint, int]]:
    pids = runner.pool.pids()
    return {gid: (endpoint, pids[gid]) for gid, endpoint in runner.pool.endpoints.items()
            if gid in runner.pool.sockets}


def _acked(tmp_path: Path) -> Counter[int]:
    return Counter(e["n"] for e in read_events(tmp_path, "numbers") if e["event"] == "ack")


def test_window_calling_a_moved_executor_is_resent_to_its_new_address(
    spark: Any, tmp_path: Path
) -> None:
    count = 300
    spec = topology_spec_of(MovingTopology)
    conf = load_config(topology={
        **TEST_CONF, "topology.name": "moving", "test.dir": str(tmp_path), "test.count": count,
        "test.rate": 100, "topology.executor.start.timeout.secs": STUCK_CALL_SECONDS})
    token = secrets.token_hex(16)
    executors = ExecutionPlan(spec, conf).executors
    moved = {e.gid for e in executors if e.component == "passing"}
    driver = TopologyDriver("moving", spec, conf, hosted={e.gid for e in executors} - moved,
                            token=token)
    workers = [ExecutorHostRunner("moving", spec, conf, moved, token)]
    try:
        workers[0].start()
        driver.set_remote_endpoints(_endpoints(workers[0]))
        driver.start(spark)
        wait_for(lambda: len(_acked(tmp_path)) >= count // 4, timeout=60,
                 message="a quarter acked before the move")
        workers[0].stop()  # the worker's host is gone; windows now call a vanished address
        workers.append(ExecutorHostRunner("moving", spec, conf, moved, token))
        workers[1].start()
        wait_for(lambda: driver.window > 0 and driver.failed_jobs == 0, timeout=5,
                 message="a window in flight")
        moved_at = time.monotonic()
        driver.set_remote_endpoints(_endpoints(workers[1]))
        wait_for(lambda: len(_acked(tmp_path)) == count, timeout=60,
                 message="every id acked after the move")
        recovered = time.monotonic() - moved_at
    finally:
        driver.stop(30)
        for worker in workers:
            worker.stop()
    assert recovered < STUCK_CALL_SECONDS / 5
    assert driver.failed_jobs == 0, "no window failed: its calls were resent"
    locality = driver.stats.summary()["locality"]
    assert locality["replaced_calls"] >= 1, f"a call resent to the new process: {locality}"
    assert all(n == 1 for n in _acked(tmp_path).values())
    assert driver.failure is None
