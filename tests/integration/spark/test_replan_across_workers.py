"""``rebalance -e`` in place with executors in two workers (``engine.plan.regroup``), on Spark.

The driver runs the spout and the sinks; an ``ExecutorHostRunner`` in this process (as
another worker would, on another host) runs the relays. The test passes between them what
Nimbus's heartbeat answers pass on a cluster, with the worker's own functions: the driver's
executor counts to the host (``driver_plan``), the host's endpoints, tagged with its plan,
to the driver (``endpoints``). The relay goes from two executors to one and back while
the stream runs: the driver switches between windows and waits; the host follows; the
next window runs once the host's endpoints of the new plan arrived. The spout's and the
sinks' processes go on, every id is acked exactly once and the sinks saw every one.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Topology
from sparkstorm.cluster.worker.executor_host import ExecutorHostRunner
from sparkstorm.cluster.worker.worker import endpoint_tags, remote_endpoints
from sparkstorm.config import load_config
from sparkstorm.engine.driver.loop import TopologyDriver
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.plan.regroup import executor_counts, with_counts
from sparkstorm.errors import EngineError
from sparkstorm.testing.local_cluster import topology_spec_of
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import (
    PacedNumberSpout,
    PassBolt,
    RecordingBolt,
    read_events,
)
from tests.integration.spark.conftest import TEST_CONF

pytestmark = pytest.mark.timeout(300)

COUNT = 900
RATE = 100.0
"""Ids per second: nine seconds of stream, so both rebalances happen mid-stream."""
HEARTBEAT_SECONDS = 0.2
"""How often the stand-in for Nimbus passes plans and endpoints on (a cluster's: 1 s)."""


class RelayTopology(Topology):
    numbers = PacedNumberSpout.spec()
    relay = PassBolt.spec(inputs=[numbers], par=2)
    sink = RecordingBolt.spec(inputs=[relay], par=2)


def _acked(folder: Path) -> Counter[int]:
    return Counter(e["n"] for e in read_events(folder, "numbers") if e["event"] == "ack")


def _ids(plan: ExecutionPlan, relays: bool) -> list[list[int]]:
    """The executor ids of the relays (the host's) or of the rest (the driver's)."""
    return [[min(e.tasks), max(e.tasks)] for e in plan.executors
            if (e.component == "relay") == relays]


class Heartbeats:
    """What Nimbus's heartbeat answers carry between the two workers, every 0.2 s."""

    def __init__(self, driver: TopologyDriver, host: ExecutorHostRunner) -> None:
        self.driver, self.host = driver, host
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(HEARTBEAT_SECONDS):
            counts = executor_counts(self.driver.plan)
            if counts != executor_counts(self.host.plan):  # the driver switched
                new = ExecutionPlan(with_counts(self.host.plan.spec, counts), self.host.conf)
                self.host.follow_driver_plan(counts, _ids(new, relays=True))
            reported = {str(g): w for g, w in self.host.pool.hosted_endpoints().items()}
            self.driver.set_remote_endpoints(remote_endpoints(reported),
                                             endpoint_tags(reported))


def _rebalance(driver: TopologyDriver, host: ExecutorHostRunner, relay: int,
               folder: Path) -> float:
    """``rebalance -e relay=N``; seconds until ids are acked through the new relays."""
    began, replans = time.monotonic(), driver.replans
    new = ExecutionPlan(with_counts(driver.plan.spec, {"relay": relay}), driver.conf)
    driver.replan({"relay": relay}, _ids(new, relays=False))
    wait_for(lambda: driver.replans > replans and not driver.pool.missing(), 60,
             message="the driver switched and the host reported the new plan")
    assert executor_counts(host.plan) == executor_counts(driver.plan)
    before = len(_acked(folder))
    wait_for(lambda: len(_acked(folder)) > before + 20 or len(_acked(folder)) == COUNT, 60,
             message="ids acked through the new relays")
    return time.monotonic() - began


def test_rebalance_e_across_two_workers_keeps_the_staying_executors(
        spark: Any, tmp_path: Path) -> None:
    spec = topology_spec_of(RelayTopology)
    conf = load_config(topology={
        **TEST_CONF, "topology.name": "relay", "test.dir": str(tmp_path), "test.count": COUNT,
        "test.rate": RATE, "topology.message.timeout.secs": 10})
    token = secrets.token_hex(16)
    plan = ExecutionPlan(spec, conf)
    relays = {e.gid for e in plan.executors if e.component == "relay"}
    driver = TopologyDriver("relay", spec, conf, token=token,
                            hosted={e.gid for e in plan.executors} - relays)
    host = ExecutorHostRunner("relay", spec, conf, relays, token)
    beats = Heartbeats(driver, host)
    try:
        host.start()
        beats.thread.start()
        driver.start(spark)
        wait_for(lambda: len(_acked(tmp_path)) >= 100, 120, message="ids acked before")
        staying = driver.pool.pids()  # the spout's and the sinks'
        with pytest.raises(EngineError) as refused:  # which worker runs the new relay?
            driver.replan({"relay": 1})
        assert refused.value.code == "REBALANCE_NOT_IN_PLACE" and not driver.replan_pending

        down = _rebalance(driver, host, 1, tmp_path)
        assert executor_counts(driver.plan) == {"numbers": 1, "relay": 1, "sink": 2}
        assert set(host.pool.sockets) == {e.gid for e in driver.plan.executors
                                          if e.component == "relay"}
        assert sorted(driver.pool.pids().values()) == sorted(staying.values()), \
            "the spout's and the sinks' executors kept their processes"

        up = _rebalance(driver, host, 2, tmp_path)
        assert executor_counts(host.plan) == {"numbers": 1, "relay": 2, "sink": 2}
        assert len(host.pool.sockets) == 2
        assert sorted(driver.pool.pids().values()) == sorted(staying.values())

        wait_for(lambda: len(_acked(tmp_path)) == COUNT, 120, message="every id acked")
    finally:
        beats.stop.set()
        driver.stop(30)
        host.stop()
    acked = _acked(tmp_path)
    assert [n for n, times in acked.items() if times > 1] == [], "ids acked twice"
    assert set(acked) == set(range(COUNT))
    seen = {e["values"][0] for e in read_events(tmp_path, "sink") if e["event"] == "tuple"}
    assert seen >= set(range(COUNT)), "ids the sinks never saw"
    spout_pids = {e["pid"] for e in read_events(tmp_path, "numbers")}
    assert len(spout_pids) == 1 and spout_pids <= set(staying.values()), "one spout process"
    assert driver.failure is None and driver.pool.restarts == 0
    print(f"rebalance -e across two workers, call to acks through the new relays: "
          f"down {down:.2f} s, up {up:.2f} s")
