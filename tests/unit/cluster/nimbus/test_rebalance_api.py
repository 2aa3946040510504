"""``POST /api/v1/topology/{id}/rebalance/{wait}`` with Storm UI's body.

Through FastAPI's test client (no server process, no Spark).
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from sparkstorm.cli.topology_actions import parse_executors
from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import TopologyStatus
from sparkstorm.errors import ConfigError
from tests.unit.cluster.nimbus.helpers import only_worker, register, submit
from tests.unit.cluster.nimbus.http_helpers import LOOPBACK

AUTH = {"Authorization": "Bearer secret"}


@pytest.mark.usefixtures("two_components")
def test_rest_rebalance_takes_storm_ui_s_body(nimbus: Nimbus, state: ClusterState) -> None:
    register(state, "s1", 6700)
    topology_id = submit(nimbus)
    first = only_worker(state, topology_id)
    client = TestClient(create_app(nimbus, "secret"), base_url=LOOPBACK)
    path = f"/api/v1/topology/{topology_id}/rebalance"
    assert client.post(f"{path}/0", json={}).json()["code"] == "AUTH_TOKEN_MISSING"
    too_many = client.post(f"{path}/0", headers=AUTH,
                           json={"rebalanceOptions": {"executors": {"split": 9}}})
    assert too_many.status_code == 400 and too_many.json()["code"] == "PARALLELISM_ABOVE_TASKS"
    ok = client.post(f"{path}/0", headers=AUTH,
                     json={"rebalanceOptions": {"numWorkers": 1, "executors": {"split": 4}}})
    assert ok.status_code == 200, ok.text
    assert ok.json() == {"topologyOperation": "rebalance", "topologyId": topology_id,
                         "status": "success"}
    base = state.get_storm(topology_id)
    assert base is not None and base.status == TopologyStatus.ACTIVE
    assert base.component_executors == {"word": 1, "split": 4}
    assert only_worker(state, topology_id) == first, "one worker regroups in place"
    # the pages show the executors it runs now, not the submitted ones
    page = client.get(f"/api/v1/topology/{topology_id}").json()
    assert {b["boltId"]: b["executors"] for b in page["bolts"]} == {"split": 4}
    assert client.get(f"/api/v1/topology/{topology_id}/component/split").json()[
        "executors"] == 4
    drawn = client.get(f"/api/v1/topology/{topology_id}/visualization").json()
    assert {c["name"]: c["par"] for c in drawn["components"]} == {"word": 1, "split": 4}
    waiting = client.post(f"{path}/30", headers=AUTH)  # no body: same executors, new worker
    assert waiting.status_code == 200, waiting.text
    summary = client.get("/api/v1/topology/summary").json()["topologies"]
    assert summary[0]["status"] == "REBALANCING"
    again = client.post(f"{path}/0", headers=AUTH)
    assert again.status_code == 409 and again.json()["code"] == "TOPOLOGY_BEING_REBALANCED"


def test_cli_executor_options() -> None:
    assert parse_executors(["split=4", " count = 2"]) == {"split": 4, "count": 2}
    for bad in ("split", "split=", "=3", "split=-1", "split=x"):
        with pytest.raises(ConfigError):
            parse_executors([bad])
