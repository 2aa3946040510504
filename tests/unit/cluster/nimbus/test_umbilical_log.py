"""The umbilical's ``log`` call (Apex).

A worker's message lands in Nimbus's log with the worker's topology, host and port; only assigned
workers, only with the token.
"""

from __future__ import annotations

import logging

import pytest

from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from tests.unit.cluster.nimbus.helpers import api_client, running

AUTH = {"Authorization": "Bearer secret"}


@pytest.mark.usefixtures("two_components")
def test_worker_log_lines_reach_nimbus_s_log(nimbus: Nimbus, state: ClusterState,
                                             caplog: pytest.LogCaptureFixture) -> None:
    topology_id, worker_id = running(nimbus, state)
    client = api_client(nimbus)
    path = f"/api/v1/worker/{worker_id}/log"
    with caplog.at_level(logging.INFO, logger="sparkstorm.nimbus.workers"):
        response = client.post(path, headers=AUTH, json={
            "topology_id": topology_id, "level": "warning", "message": "spouts paused"})
    assert response.status_code == 200, response.text
    (record,) = [r for r in caplog.records if r.name == "sparkstorm.nimbus.workers"]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == \
        f"worker {worker_id} ({topology_id} host-s1:6700): spouts paused"
    assert client.post(path, json={"message": "x"}).status_code == 401
    stranger = client.post("/api/v1/worker/nobody/log", headers=AUTH, json={"message": "x"})
    assert stranger.status_code == 404 and stranger.json()["code"] == "WORKER_NOT_ASSIGNED"
