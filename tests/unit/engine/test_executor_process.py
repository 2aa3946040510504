"""An executor process on its own (no Spark): a retried window is answered from memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkstorm import Topology
from sparkstorm.config import load_config
from sparkstorm.engine.executor.pool import ExecutorPool
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import call_executor
from sparkstorm.engine.wire.frames import pack
from sparkstorm.engine.wire.protocol import WindowRequest
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import NumberSpout, RecordingBolt, read_events


class Pair(Topology):
    numbers = NumberSpout.spec()
    sink = RecordingBolt.spec(inputs=[numbers])


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[ExecutorPool]:
    conf = load_config(topology={"test.dir": str(tmp_path), "test.count": 0,
                                 "topology.name": "pair"})
    plan = ExecutionPlan(Pair.topology_spec, conf)
    workdir = tmp_path / "work"
    workdir.mkdir()
    started = ExecutorPool(plan, "pair", workdir)
    started.start()
    yield started
    started.stop()


def test_a_retried_window_is_answered_from_memory_not_run_twice(pool: ExecutorPool,
                                                                tmp_path: Path) -> None:
    plan = pool.plan
    sink_task = plan.component_tasks["sink"][0]
    spout_task = plan.component_tasks["numbers"][0]
    gid = plan.task_executor[sink_task]
    batch = pack([[sink_task, spout_task, "default", [[1, "k1"], [2, "k2"]], [None, None],
                   [None, None]]])
    request = WindowRequest(5, rows=[batch])

    first = call_executor(pool.endpoints[gid], pool.token, request, 10)
    retried = call_executor(pool.endpoints[gid], pool.token, request, 10)
    assert retried == first
    received = [e["values"] for e in read_events(tmp_path, "sink") if e["event"] == "tuple"]
    assert received == [[1, "k1"], [2, "k2"]], "each tuple processed once"

    call_executor(pool.endpoints[gid], pool.token, WindowRequest(6, rows=[batch]), 10)
    received = [e["values"] for e in read_events(tmp_path, "sink") if e["event"] == "tuple"]
    assert len(received) == 4, "a new window is processed"


def test_a_restarted_executor_starts_with_its_log_control(pool: ExecutorPool) -> None:
    plan = pool.plan
    sink_task = plan.component_tasks["sink"][0]
    spout_task = plan.component_tasks["numbers"][0]
    gid = plan.task_executor[sink_task]
    pool.log_control(gid, {}, 100.0)  # debug sampling of every tuple
    before = pool.pids()[gid]
    pool.kill(gid)
    wait_for(lambda: pool.pids()[gid] != before and Path(pool.sockets[gid]).exists(), 30,
             message="the executor restarted")
    batch = pack([[sink_task, spout_task, "default", [[7, "k0"]], [None], [None]]])
    call_executor(pool.endpoints[gid], pool.token, WindowRequest(1, rows=[batch]),
                  10)
    log = pool.log_path(gid).read_text()
    assert "sampled received tuple on stream default: [7, 'k0']" in log, log[-2000:]
