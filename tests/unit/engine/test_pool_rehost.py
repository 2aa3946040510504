"""A pool follows a rebalance in place (no Spark): executors arrive and leave, others stay.

Real executor processes: the one that stays keeps its process, the one that arrives starts
and answers, the one that leaves is closed, its files removed and its endpoint forgotten
(the driver waits for its new worker's report), and the monitor does not bring it back.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from sparkstorm import Topology
from sparkstorm.config import load_config
from sparkstorm.engine.executor.pool import MONITOR_INTERVAL, ExecutorPool
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import ping
from tests.integration.spark.components import NumberSpout, RecordingBolt


class Pair(Topology):
    numbers = NumberSpout.spec()
    sink = RecordingBolt.spec(inputs=[numbers])


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[ExecutorPool]:
    conf = load_config(topology={"test.dir": str(tmp_path), "test.count": 0,
                                 "topology.name": "pair"})
    plan = ExecutionPlan(Pair.topology_spec, conf)
    spout = plan.task_executor[plan.component_tasks["numbers"][0]]
    workdir = tmp_path / "work"
    workdir.mkdir()
    started = ExecutorPool(plan, "pair", workdir, hosted={spout})
    started.start()
    yield started
    started.stop()


def test_executors_arrive_and_leave_while_the_staying_one_runs_on(pool: ExecutorPool) -> None:
    (spout,) = pool.sockets
    (sink,) = pool.missing()
    spout_pid = pool.pids()[spout]

    pool.rehost({spout, sink})
    assert set(pool.sockets) == {spout, sink} and pool.missing() == []
    assert pool.pids()[spout] == spout_pid, "the staying executor was not restarted"
    assert ping(pool.endpoints[sink], pool.token, 5.0), "the arrived executor answers"
    sink_process = psutil.Process(pool.pids()[sink])
    version = pool.endpoints_version

    pool.rehost({spout})
    assert not sink_process.is_running() or sink_process.status() == psutil.STATUS_ZOMBIE
    assert pool.missing() == [sink], "its new worker must report where it answers"
    assert pool.endpoints_version > version
    assert not os.path.exists(pool.workdir / f"e{sink}.sock")
    assert sink not in pool.hosted_endpoints(), "no longer in this worker's heartbeat"
    # an absence: give the monitor (which restarts dead executors) ten rounds to err
    pool.stopping.wait(MONITOR_INTERVAL * 10)
    assert set(pool.processes) == {spout} and pool.pids()[spout] == spout_pid
    assert pool.restarts == 0
