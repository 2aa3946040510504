"""Helpers of the Nimbus unit tests.

The spec they submit, a registered supervisor, a submitted topology, its worker, a worker that sent
one heartbeat, and the in-process API.

Fixtures built on them live in ``conftest.py``; HTTP upload helpers in ``http_helpers.py``.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from typing import Any

from fastapi.testclient import TestClient

from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import SupervisorInfo
from sparkstorm.engine.driver.topology_stats import ExecutorRange, TopologyStats, WindowRecord
from sparkstorm.engine.spark.locality import CallLocality
from sparkstorm.engine.wire.stats import ComponentCounters
from tests.unit.cluster.nimbus.http_helpers import LOOPBACK

SPEC = {"components": [{"name": "word", "kind": "spout", "component": "t:S",
                        "outputs": [{"fields": ["w"], "name": "default", "direct": False}],
                        "inputs": [], "par": 1, "num_tasks": 1}]}
"""One spout with one task (the ``two_components`` fixture adds :data:`BOLT`)."""

BOLT = {"name": "split", "kind": "bolt", "component": "t:B",
        "outputs": [{"fields": ["w"], "name": "default", "direct": False}],
        "inputs": [{"source": "word", "stream": "default", "grouping": {"type": "SHUFFLE"}}],
        "par": 1, "num_tasks": 4}


def register(state: ClusterState, sid: str, *ports: int) -> None:
    """Register supervisor ``sid`` (host ``host-<sid>``) with the given slots."""
    state.register_supervisor(SupervisorInfo(sid, "host-" + sid, ports))


def submit(nimbus: Nimbus, name: str = "t", conf: dict[str, Any] | None = None) -> str:
    """Upload a one-file code zip and submit :data:`SPEC` as ``name``; return its id."""
    upload_id = nimbus.inbox.begin()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("t.py", "")
    nimbus.inbox.chunk(upload_id, buffer.getvalue())
    nimbus.inbox.finish(upload_id, hashlib.sha256(buffer.getvalue()).hexdigest())
    return nimbus.submit(name, upload_id, SPEC, {"storm.cluster.token": "secret",
                                                 **(conf or {})})


def only_worker(state: ClusterState, topology_id: str) -> str:
    """The id of the topology's one assigned worker."""
    assignment = state.get_assignment(topology_id)
    assert assignment is not None
    (worker_id,) = assignment.worker_ids.values()
    return worker_id


def heartbeat_stats(now: float) -> dict[str, Any]:
    """What a worker's heartbeat carries, made by the engine's own TopologyStats.

    One window in which the spout ``word`` (task 5) emitted 10 and had 9 acked and 1 failed
    explicitly, and the bolt ``split`` (tasks 1-4, one executor) executed 10 and emitted 30.
    """
    stats = TopologyStats(10, {0: ExecutorRange("split", 1, 4), 1: ExecutorRange("word", 5, 5)})
    stats.started = now - 60
    spout = ComponentCounters(emitted={"default": 10}, transferred={"default": 10},
                              acked={"default": 9}, failed={"default": 1},
                              complete_count=9, complete_total_ms=22.5,
                              complete_values=[2.5] * 9, complete_ms={"default": 22.5},
                              fail_causes={("explicit", "split: bad word"): 1},
                              metrics={"5": {"kafkaOffset": {"t/partition_0": {"spoutLag": 3}}}})
    bolt = ComponentCounters(emitted={"default": 30}, transferred={"default": 30},
                             executed={"word:default": 10}, acked={"word:default": 10},
                             busy_ms=2.5, execute_ms={"word:default": 2.0},
                             process_ms={"word:default": 5.0})
    # two executor calls, one over TCP from another host with 400 bytes
    calls = CallLocality(tuples=40)
    calls.add((True, 0))
    calls.add((False, 400))
    stats.record(WindowRecord(0, now - 2, 1.0, {"word": spout, "split": bolt},
                              {0: bolt, 1: spout}, locality=calls))
    return stats.summary(now)


def api_client(nimbus: Nimbus) -> TestClient:
    """Nimbus's REST API in process, with the token ``secret``."""
    return TestClient(create_app(nimbus, "secret"), base_url=LOOPBACK)


def running(nimbus: Nimbus, state: ClusterState) -> tuple[str, str]:
    """A submitted topology whose worker sent one heartbeat: (topology id, worker id)."""
    register(state, "s1", 6700)
    topology_id = submit(nimbus)
    worker_id = only_worker(state, topology_id)
    nimbus.umbilical.heartbeat(worker_id, {
        "topology_id": topology_id, "uptime_secs": 65,
        "stats": heartbeat_stats(nimbus.clock())})
    return topology_id, worker_id
