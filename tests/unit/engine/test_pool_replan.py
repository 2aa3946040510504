"""A pool takes new executor counts in place (no Spark): ``ExecutorPool.replan``.

Real executor processes: the unchanged components' executors keep their processes under
their new gids and hear the new plan, the rebalanced component's old executors are closed
and its new ones start and answer, and a staying executor that dies afterwards is restarted
from the new plan under its new gid.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from sparkstorm import Topology
from sparkstorm.config import load_config
from sparkstorm.engine.executor.pool import ExecutorPool
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.plan.regroup import executor_counts, regroup, with_counts
from sparkstorm.engine.spark.stage import ping
from sparkstorm.testing.polling import wait_for
from tests.integration.spark.components import NumberSpout, PassBolt, RecordingBolt


class Relay(Topology):
    numbers = NumberSpout.spec()
    relay = PassBolt.spec(inputs=[numbers], par=2)
    sink = RecordingBolt.spec(inputs=[relay], par=2)


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[ExecutorPool]:
    conf = load_config(topology={"test.dir": str(tmp_path), "test.count": 0,
                                 "topology.name": "relay"})
    workdir = tmp_path / "work"
    workdir.mkdir()
    started = ExecutorPool(ExecutionPlan(Relay.topology_spec, conf), "relay", workdir)
    started.start()
    yield started
    started.stop()


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_staying_executors_keep_their_processes_under_new_gids(pool: ExecutorPool) -> None:
    old = pool.plan
    new = ExecutionPlan(with_counts(old.spec, {"relay": 1}), old.conf)
    regrouping = regroup(old, new)
    pids = pool.pids()

    pool.replan(new, regrouping.staying, regrouping.leaving, regrouping.arriving)

    assert pool.plan is new and executor_counts(new)["relay"] == 1
    assert set(pool.sockets) == {e.gid for e in new.executors} and pool.missing() == []
    assert {n: pool.pids()[n] for n in regrouping.staying.values()} == {
        n: pids[o] for o, n in regrouping.staying.items()}, "the staying ones kept theirs"
    assert all(_gone(pids[g]) for g in regrouping.leaving), "the old relays were closed"
    (arrived,) = regrouping.arriving
    assert ping(pool.endpoints[arrived], pool.token, 5.0), "the new relay answers"
    assert json.loads(pool.plan_file.read_text())["spec"] == new.spec.to_dict()
    for gid in regrouping.staying.values():  # its log took its new gid's name
        log = pool.log_path(gid).read_text()
        assert f"is executor {gid} of the new plan" in log, "it heard the new plan"
    for gid in regrouping.leaving:
        assert "of the new plan" not in (pool.log_dir / f"executor-{gid}.r1.log").read_text()
    assert pool.restarts == 0

    # a staying executor that dies now restarts as its new gid, from the new plan
    sink = max(regrouping.staying.values())
    os.kill(pool.pids()[sink], signal.SIGKILL)
    wait_for(lambda: pool.restarts == 1 and ping(pool.endpoints[sink], pool.token, 1.0), 30,
             message="the sink restarted")
    assert "--gid" in pool.processes[sink].args
    assert pool.processes[sink].args[pool.processes[sink].args.index("--gid") + 1] == str(sink)
