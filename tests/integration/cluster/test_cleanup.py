"""Nimbus's cleaner as a real process.

Expired inbox uploads go, and a restarted Nimbus removes the stormdist folders of topologies killed
while it was down (or whose removal it did not finish). No Spark: no supervisor runs.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from sparkstorm.cluster.store import open_store
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster

pytestmark = pytest.mark.timeout(120)

SPOUT = {"name": "word", "kind": "spout", "component": "topo:Words",
         "outputs": [{"fields": ["word"], "name": "default", "direct": False}],
         "inputs": [], "par": 1, "num_tasks": 1, "config": {}, "extra": {}}


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("topo.py", "# components\n")
    return buffer.getvalue()


def _upload(cluster: TestCluster, finish: bool = True) -> str:
    upload_id = str(cluster.request("POST", "/api/v1/uploads").json()["upload_id"])
    data = _zip()
    assert cluster.request("PUT", f"/api/v1/uploads/{upload_id}", content=data).is_success
    if finish:
        done = cluster.request("POST", f"/api/v1/uploads/{upload_id}/finish",
                               json={"sha256": hashlib.sha256(data).hexdigest()})
        assert done.is_success, done.text
    return upload_id


def _submit(cluster: TestCluster, name: str) -> str:
    body = {"name": name, "upload_id": _upload(cluster), "spec": {"components": [SPOUT]}}
    response = cluster.request("POST", "/api/v1/topologies", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["topologyId"])


def test_expired_uploads_are_removed_from_the_inbox(tmp_path: Path) -> None:
    with TestCluster(tmp_path, **{"nimbus.inbox.jar.expiration.secs": 2,
                                  "nimbus.cleanup.inbox.freq.secs": 1}) as cluster:
        cluster.start_nimbus()
        inbox = cluster.local / "nimbus" / "inbox"
        finished, partial = _upload(cluster), _upload(cluster, finish=False)
        assert {p.name for p in inbox.iterdir()} == {f"{finished}.zip", f"{partial}.part"}
        wait_for(lambda: not any(inbox.iterdir()), 15, message=f"inbox emptied\n{cluster.logs()}")
        body = {"name": "late", "upload_id": finished, "spec": {"components": [SPOUT]}}
        late = cluster.request("POST", "/api/v1/topologies", json=body)
        assert late.status_code == 404 and late.json()["code"] == "NO_SUCH_UPLOAD", late.text
        assert cluster.get("/api/v1/topology/summary")["topologies"] == []


def test_a_restarted_nimbus_removes_what_killed_topologies_left(cluster: TestCluster) -> None:
    cluster.start_nimbus()
    kept, killed = _submit(cluster, "kept"), _submit(cluster, "gone")
    stormdist = cluster.local / "nimbus" / "stormdist"
    assert {p.name for p in stormdist.iterdir()} == {kept, killed}

    cluster.kill9("nimbus")
    with open_store(cluster.conf) as store:  # killed while Nimbus was down: state only
        ClusterState(store).teardown_topology(killed)
    (stormdist / f".{killed}x.tmp").mkdir()  # a submit interrupted by the crash
    cluster.start_nimbus()

    assert {p.name for p in stormdist.iterdir()} == {kept}
    rows = cluster.get("/api/v1/topology/summary")["topologies"]
    assert [r["id"] for r in rows] == [kept]
    again = _submit(cluster, "gone")  # the name is free again, the counter goes on
    assert again.startswith("gone-3-")
