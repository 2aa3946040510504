"""Bad uploads and submissions are refused with a stable code and change nothing.

Not the store, not Nimbus's disk: no stormdist folder, no upload, partial or finished, left in the
inbox (a refused submit removes the upload it names).
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from sparkstorm.cluster.store import open_store
from sparkstorm.cluster.store.cluster_state import ClusterState
from tests.integration.cluster.harness import TestCluster

pytestmark = pytest.mark.timeout(120)

SPOUT = {"name": "word", "kind": "spout", "component": "topo:Words",
         "outputs": [{"fields": ["word"], "name": "default", "direct": False}],
         "inputs": [], "par": 1, "num_tasks": 1, "config": {}, "extra": {}}
VALID_SPEC = {"components": [SPOUT], "config": {}}


@pytest.fixture
def nimbus(cluster: TestCluster) -> Iterator[TestCluster]:
    """A running Nimbus (no supervisor: nothing could run anyway)."""
    cluster.start_nimbus()
    yield cluster


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name), data)
    return buffer.getvalue()


def _upload(cluster: TestCluster, data: bytes, chunk: int = 64_000) -> httpx.Response:
    """Begin, chunks, finish; return the first refusal or the finish response."""
    begun = cluster.request("POST", "/api/v1/uploads")
    assert begun.status_code == 200, begun.text
    upload_id = begun.json()["upload_id"]
    for start in range(0, len(data), chunk):
        sent = cluster.request("PUT", f"/api/v1/uploads/{upload_id}",
                               content=data[start:start + chunk])
        if sent.status_code != 200:
            return sent
    return cluster.request("POST", f"/api/v1/uploads/{upload_id}/finish",
                           json={"sha256": hashlib.sha256(data).hexdigest()})


def _snapshot(cluster: TestCluster) -> dict[str, Any]:
    """What a bad request must not change: store contents and Nimbus's files."""
    with open_store(cluster.conf) as store:
        state = ClusterState(store)
        stored = (state.active_storms(), state.assignments(), state.heartbeat_storms(),
                  state.task_storms())
    files = sorted(str(p.relative_to(cluster.local / "nimbus"))
                   for p in (cluster.local / "nimbus").rglob("*"))
    return {"store": stored, "files": files}


def _inbox(cluster: TestCluster) -> list[str]:
    """The uploads, finished or partial, in Nimbus's inbox."""
    return sorted(p.name for p in (cluster.local / "nimbus" / "inbox").iterdir())


def _refused(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code and body["error"], body


@pytest.mark.parametrize(("members", "code"), [
    ({"../evil.py": b"x"}, "UPLOAD_UNSAFE_PATH"),
    ({"ok.py": b"", "/etc/evil": b"x"}, "UPLOAD_UNSAFE_PATH"),
    ({"a/../../evil.py": b"x"}, "UPLOAD_UNSAFE_PATH"),
])
def test_zip_slip_uploads_are_refused(nimbus: TestCluster, members: dict[str, bytes],
                                      code: str) -> None:
    before = _snapshot(nimbus)
    _refused(_upload(nimbus, _zip(members)), 400, code)
    assert _snapshot(nimbus) == before


def test_corrupt_zip_and_wrong_checksum_are_refused(nimbus: TestCluster) -> None:
    before = _snapshot(nimbus)
    _refused(_upload(nimbus, b"PK\x03\x04 this is not a zip at all"), 400, "UPLOAD_CORRUPT_ZIP")
    truncated = _zip({"topo.py": b"x" * 5000})[:-30]
    _refused(_upload(nimbus, truncated), 400, "UPLOAD_CORRUPT_ZIP")
    upload_id = nimbus.request("POST", "/api/v1/uploads").json()["upload_id"]
    nimbus.request("PUT", f"/api/v1/uploads/{upload_id}", content=_zip({"a.py": b""}))
    finished = nimbus.request("POST", f"/api/v1/uploads/{upload_id}/finish",
                              json={"sha256": "0" * 64})
    _refused(finished, 400, "UPLOAD_CHECKSUM_MISMATCH")
    assert _snapshot(nimbus) == before


def test_an_oversize_upload_is_refused_and_dropped(nimbus: TestCluster) -> None:
    before = _snapshot(nimbus)
    _refused(_upload(nimbus, b"\0" * 300_000), 413, "UPLOAD_TOO_LARGE")
    assert _snapshot(nimbus) == before


def test_mutating_calls_need_the_right_token(nimbus: TestCluster) -> None:
    before = _snapshot(nimbus)
    for token, code in ((None, "AUTH_TOKEN_MISSING"), ("wrong", "AUTH_TOKEN_INVALID")):
        _refused(nimbus.request("POST", "/api/v1/uploads", token=token), 401, code)
        body = {"name": "t", "upload_id": "stormjar-" + "0" * 32, "spec": VALID_SPEC}
        _refused(nimbus.request("POST", "/api/v1/topologies", token=token, json=body), 401,
                 code)
        _refused(nimbus.request("POST", "/api/v1/topology/x-1-1/kill/0", token=token), 401,
                 code)
        _refused(nimbus.request("GET", "/api/v1/worker/w/init", token=token), 401, code)
    assert _snapshot(nimbus) == before
    token_file = nimbus.local / "nimbus" / "token"
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert nimbus.get("/api/v1/topology/summary")["topologies"] == [], "reads stay open"


@pytest.mark.parametrize(("name", "spec", "conf", "status", "code"), [
    ("t", {"components": [], "config": {}}, {}, 400, "NO_SPOUT"),
    ("t", {"components": [{**SPOUT, "kind": "bolt"}], "config": {}}, {}, 400, "NO_SPOUT"),
    ("t", {"components": [{**SPOUT, "par": 3}]}, {}, 400, "PARALLELISM_ABOVE_TASKS"),
    ("t", {"nothing": "here"}, {}, 400, "INVALID_TOPOLOGY_SPEC"),
    ("t", ["not", "an", "object"], {}, 400, "INVALID_TOPOLOGY_SPEC"),
    ("a/b", VALID_SPEC, {}, 400, "INVALID_TOPOLOGY_NAME"),
    ("t", VALID_SPEC, {"topology.workers": "many"}, 400, "CONFIG_WRONG_TYPE"),
])
def test_invalid_topologies_are_refused(nimbus: TestCluster, name: str, spec: Any,
                                        conf: dict[str, Any], status: int, code: str) -> None:
    before = _snapshot(nimbus)  # before the upload: a refusal takes the upload away too
    finished = _upload(nimbus, _zip({"topo.py": b"# components\n"}))
    assert finished.status_code == 200, finished.text
    body = {"name": name, "upload_id": finished.json()["upload_id"], "spec": spec,
            "conf": conf}
    _refused(nimbus.request("POST", "/api/v1/topologies", json=body), status, code)
    assert _inbox(nimbus) == []
    assert _snapshot(nimbus) == before


def test_submit_refuses_a_missing_upload_and_a_live_duplicate_name(nimbus: TestCluster) -> None:
    missing = {"name": "t", "upload_id": "stormjar-" + "0" * 32, "spec": VALID_SPEC}
    _refused(nimbus.request("POST", "/api/v1/topologies", json=missing), 404, "NO_SUCH_UPLOAD")
    first = _upload(nimbus, _zip({"topo.py": b""})).json()["upload_id"]
    submitted = nimbus.request("POST", "/api/v1/topologies",
                               json={**missing, "upload_id": first})
    assert submitted.status_code == 200, submitted.text
    topology_id = submitted.json()["topologyId"]
    assert topology_id.startswith("t-1-")
    assert (nimbus.local / "nimbus" / "stormdist" / topology_id / "stormjar.zip").is_file()
    before = _snapshot(nimbus)
    second = _upload(nimbus, _zip({"topo.py": b""})).json()["upload_id"]
    again = nimbus.request("POST", "/api/v1/topologies", json={**missing, "upload_id": second})
    _refused(again, 409, "TOPOLOGY_ALREADY_ALIVE")
    assert _inbox(nimbus) == []
    assert _snapshot(nimbus) == before


def test_cli_submit_of_a_live_name_fails_with_the_code_and_uploads_nothing(
        nimbus: TestCluster) -> None:
    """Storm's StormSubmitter asks isTopologyNameAllowed before uploading the jar."""
    args = ("submit", "examples/exclamation.py", "--name", "exc", "-c", "exclamation.count=0")
    first = nimbus.cli(*args)
    assert first.returncode == 0, first.stderr
    topology_id = first.stdout.strip()
    before = _snapshot(nimbus)
    again = nimbus.cli(*args)
    assert again.returncode == 2, again.stdout + again.stderr
    assert again.stdout == ""
    assert again.stderr.startswith("sparkstorm submit: error: [TOPOLOGY_ALREADY_ALIVE] ")
    assert topology_id in again.stderr and "--name" in again.stderr
    assert _inbox(nimbus) == []
    assert _snapshot(nimbus) == before


def test_unknown_topology_actions_are_404(nimbus: TestCluster) -> None:
    for path in ("/api/v1/topology/nope-1-1/activate", "/api/v1/topology/nope-1-1/kill/0"):
        _refused(nimbus.request("POST", path), 404, "TOPOLOGY_NOT_FOUND")
    _refused(httpx.get(nimbus.url + "/api/v1/topology/nope-1-1", verify=nimbus.verify), 404,
             "TOPOLOGY_NOT_FOUND")


