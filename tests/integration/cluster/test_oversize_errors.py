"""A component raising with a ~1.5 MB message on a ZooKeeper store.

Error texts are shortened before they travel, heartbeats stay under
``worker.heartbeat.max.bytes`` whatever the components put in them, so the heartbeat is
stored (ZooKeeper refuses nodes over about 1 MB) and the REST API shows the shortened error.

Nimbus runs in-process over real HTTP on a real ZooKeeper; the worker is the real
:class:`ClusterWorker` with a stand-in for its Spark runner (its statistics object is the
engine's own), so no JVM starts.
"""

from __future__ import annotations

import base64
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from sparkstorm.cluster.nimbus.client import NimbusClient
from sparkstorm.cluster.nimbus.server import build_server
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store import open_store
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import SupervisorInfo
from sparkstorm.cluster.worker.worker import ClusterWorker
from sparkstorm.config import load_config
from sparkstorm.engine.driver.topology_stats import ExecutorRange, TopologyStats
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.errors import ERROR_TEXT_MAX_CHARS
from sparkstorm.testing.polling import wait_for
from sparkstorm.topology.spec import TopologySpec
from tests.integration.zookeeper.zkserver import ZooKeeperServer
from tests.unit.cluster.nimbus.helpers import SPEC
from tests.unit.cluster.nimbus.http_helpers import code_zip, sha256

TOKEN = "secret"


def _incompressible(size: int) -> str:
    """Text that zlib cannot shrink much (the store compresses heartbeats)."""
    return base64.b64encode(os.urandom(size * 3 // 4)).decode()


@pytest.fixture
def zk_nimbus(zk_server: ZooKeeperServer, tmp_path: Path) -> Iterator[tuple[Nimbus, str]]:
    """An in-process Nimbus serving HTTP on a ZooKeeper store (its own root)."""
    conf = load_config(env={}, cli={
        "storm.local.dir": str(tmp_path / "local"), "nimbus.port": 0,
        "storm.cluster.token": TOKEN, "storm.state.store": "zookeeper",
        "storm.zookeeper.servers": ["127.0.0.1"], "storm.zookeeper.port": zk_server.port,
        "storm.zookeeper.root": f"/oversize-{uuid.uuid4().hex[:12]}",
        "storm.tls.enabled": False})  # size limits, not TLS (test_nimbus_tls.py covers it)
    store = open_store(conf)
    nimbus, server = build_server(conf, ClusterState(store))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started, 10, message="nimbus serving")
        host, port = server.servers[0].sockets[0].getsockname()[:2]
        yield nimbus, f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        nimbus.cleaner.stop()
        nimbus.assigner.stop()
        store.close()


def _submit(nimbus: Nimbus) -> tuple[str, str]:
    nimbus.state.register_supervisor(SupervisorInfo("s1", "host-s1", (6700,)))
    data = code_zip()
    upload = nimbus.inbox.begin()
    nimbus.inbox.chunk(upload, data)
    nimbus.inbox.finish(upload, sha256(data))
    topology_id = nimbus.submit("big-errors", upload, SPEC, {})
    assignment = nimbus.state.get_assignment(topology_id)
    assert assignment is not None
    (worker_id,) = assignment.worker_ids.values()
    return topology_id, worker_id


def _runner_with_error(text: str) -> Any:
    """What :class:`ClusterWorker` reads of its runner, holding one component error.

    As a component could leave it: in the statistics' last errors and queued for reporting.
    """
    stats = TopologyStats(10, {0: ExecutorRange("word", 1, 1)}, 0.5)
    error = {"component": "word", "task": 1, "error": text, "time": time.time()}
    stats.last_errors["word"] = error
    plan = ExecutionPlan(TopologySpec.from_dict(SPEC), {})  # its counts ride the heartbeat
    return SimpleNamespace(stats=stats, spark_ui_url=None, reported_errors=deque([error]),
                           pool=SimpleNamespace(pids=dict, hosted_endpoints=dict),  # none here
                           plan=plan)


def test_an_oversize_error_is_shortened_and_the_heartbeat_stored_on_zookeeper(
        zk_nimbus: tuple[Nimbus, str], tmp_path: Path) -> None:
    nimbus, url = zk_nimbus
    topology_id, worker_id = _submit(nimbus)
    huge = "Traceback (most recent call last):\n" + _incompressible(1_500_000) + "\nBoomError"
    client = NimbusClient(url, TOKEN)
    try:
        worker = ClusterWorker(client, worker_id, topology_id, tmp_path)
        worker.runner = _runner_with_error(huge)
        orders = worker._beat()
        assert orders.get("shutdown") is False, "the heartbeat was delivered and answered"
    finally:
        client.close()
    beat = nimbus.state.get_worker_heartbeat(topology_id, worker_id)
    assert beat is not None, "the heartbeat was stored on ZooKeeper"
    kept = beat.executor_stats["last_errors"]["word"]["error"]
    assert len(kept) <= ERROR_TEXT_MAX_CHARS and kept.endswith("BoomError")
    with httpx.Client(base_url=url) as http:
        page = http.get(f"/api/v1/topology/{topology_id}/component/word").json()
        topology = http.get(f"/api/v1/topology/{topology_id}").json()
    (shown,) = page["componentErrors"]
    assert shown["error"].startswith("Traceback") and shown["error"].endswith("BoomError")
    assert "characters cut" in shown["error"] and len(shown["error"]) <= ERROR_TEXT_MAX_CHARS
    (spout,) = topology["spouts"]
    assert spout["lastError"].startswith("Traceback")


def test_a_heartbeat_too_large_is_trimmed_by_nimbus_whatever_the_worker_sends(
        zk_nimbus: tuple[Nimbus, str]) -> None:
    """A worker that does not bound its heartbeat cannot make Nimbus write a huge node.

    ZooKeeper would refuse it: the optional parts go, the rest is stored.
    """
    nimbus, url = zk_nimbus
    topology_id, worker_id = _submit(nimbus)
    stats = {"windows": 7, "components": {"word": {"emitted": 5}},
             "recent_windows": [{"window": n, "pad": _incompressible(1000)}
                                for n in range(1500)],
             "last_errors": {"word": {"component": "word", "error": "x" * 100_000}}}
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        answer = http.post(f"/api/v1/worker/{worker_id}/heartbeat",
                           json={"topology_id": topology_id, "stats": stats})
    assert answer.status_code == 200, answer.text
    beat = nimbus.state.get_worker_heartbeat(topology_id, worker_id)
    assert beat is not None
    kept = beat.executor_stats
    assert kept["windows"] == 7 and kept["components"] == stats["components"]
    assert kept["recent_windows"] == [] and "recent_windows" in kept["trimmed"]
    assert len(kept["last_errors"]["word"]["error"]) <= ERROR_TEXT_MAX_CHARS
