"""Every validation code of :mod:`sparkstorm.topology.validate` is refused at submission.

A raw spec JSON over the REST API gets HTTP 400 with the stable code, and neither the store nor
Nimbus's files change (the upload the submit names is removed too).
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import SupervisorInfo
from sparkstorm.topology import validate
from tests.unit.cluster.nimbus.http_helpers import AUTH, LOOPBACK, dump_store, upload_code


def _stream(*fields: str, name: str = "default", direct: bool = False) -> dict[str, Any]:
    return {"fields": list(fields), "name": name, "direct": direct}


def _spout(**changes: Any) -> dict[str, Any]:
    return {"name": "word", "kind": "spout", "component": "topo:Words",
            "outputs": [_stream("w")], "inputs": [], "par": 1, "num_tasks": 1,
            "config": {}, "extra": {}, **changes}


def _input(**changes: Any) -> dict[str, Any]:
    return {"source": "word", "stream": "default", "grouping": {"type": "SHUFFLE"},
            **changes}


def _bolt(**changes: Any) -> dict[str, Any]:
    return {**_spout(name="split", kind="bolt", component="topo:Split",
                     inputs=[_input()]), **changes}


def _spec(*components: dict[str, Any]) -> dict[str, Any]:
    return {"components": list(components), "config": {}}


VALID = _spec(_spout(), _bolt())

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("INVALID_TOPOLOGY_NAME", "a.b", VALID),
    ("INVALID_TOPOLOGY_NAME", " ", VALID),
    ("DUPLICATE_COMPONENT_ID", "t", _spec(_spout(), _spout(), _bolt())),
    ("DUPLICATE_COMPONENT_ID", "t", _spec(_spout(), _bolt(name="word"))),
    ("RESERVED_COMPONENT_ID", "t", _spec(_spout(name="__acker"))),
    ("RESERVED_COMPONENT_ID", "t", _spec(_spout(), _bolt(name="__system"))),
    ("RESERVED_COMPONENT_ID", "t", _spec(_spout(name=""))),
    ("COMPONENT_ID_WITH_SLASH", "t", _spec(_spout(name="words/en"))),
    ("NO_SPOUT", "t", _spec()),
    ("NO_SPOUT", "t", _spec(_bolt(inputs=[_input(source="split")]))),
    ("BOLT_WITHOUT_INPUTS", "t", _spec(_spout(), _bolt(inputs=[]))),
    ("UNKNOWN_SOURCE_COMPONENT", "t", _spec(_spout(), _bolt(inputs=[_input(source="nope")]))),
    ("UNKNOWN_SOURCE_STREAM", "t", _spec(_spout(), _bolt(inputs=[_input(stream="other")]))),
    ("INVALID_GROUPING", "t",
     _spec(_spout(), _bolt(inputs=[_input(grouping={"type": "RANDOM"})]))),
    ("UNKNOWN_GROUPING_FIELD", "t",
     _spec(_spout(), _bolt(inputs=[_input(grouping={"type": "FIELDS", "fields": ["x"]})]))),
    ("UNKNOWN_GROUPING_FIELD", "t",
     _spec(_spout(), _bolt(inputs=[_input(grouping={"type": "FIELDS", "fields": []})]))),
    ("UNKNOWN_GROUPING_FIELD", "t",
     _spec(_spout(), _bolt(inputs=[_input(grouping={"type": "PARTIAL_KEY",
                                                    "fields": ["w", "y"]})]))),
    ("DUPLICATE_FIELD_NAME", "t", _spec(_spout(outputs=[_stream("w", "n", "w")]))),
    ("DUPLICATE_STREAM_ID", "t", _spec(_spout(outputs=[_stream("w"), _stream("v")]))),
    ("PARALLELISM_BELOW_ONE", "t", _spec(_spout(par=0))),
    ("PARALLELISM_BELOW_ONE", "t", _spec(_spout(), _bolt(par=-2, num_tasks=1))),
    ("PARALLELISM_BELOW_ONE", "t", _spec(_spout(par="2"))),
    ("TASKS_BELOW_ONE", "t", _spec(_spout(num_tasks=0))),
    ("TASKS_BELOW_ONE", "t", _spec(_spout(num_tasks=1.5))),
    ("PARALLELISM_ABOVE_TASKS", "t", _spec(_spout(), _bolt(par=3, num_tasks=2))),
    ("TASKS_ABOVE_LIMIT", "t", _spec(_spout(), _bolt(par=10**9, num_tasks=10**9))),
    ("DIRECT_GROUPING_ON_NON_DIRECT_STREAM", "t",
     _spec(_spout(), _bolt(inputs=[_input(grouping={"type": "DIRECT"})]))),
    ("NON_DIRECT_GROUPING_ON_DIRECT_STREAM", "t",
     _spec(_spout(outputs=[_stream("w", direct=True)]), _bolt())),
    # Nimbus's default limits (issue 30): 256 components, 512 executors, 256 per worker
    ("COMPONENTS_ABOVE_LIMIT", "t",
     _spec(_spout(), *(_bolt(name=f"split{i}") for i in range(256)))),
    ("EXECUTORS_ABOVE_LIMIT", "t", _spec(_spout(), _bolt(par=512, num_tasks=512))),
    ("SUPERVISOR_EXECUTORS_ABOVE_LIMIT", "t", _spec(_spout(), _bolt(par=300, num_tasks=300))),
]


def _snapshot(nimbus: Nimbus) -> dict[str, Any]:
    """Every store node and every file under ``<storm.local.dir>/nimbus`` with contents."""
    root = nimbus.inbox.folder.parent
    files = {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None
             for p in sorted(root.rglob("*"))}
    return {"store": dump_store(nimbus.state.store), "files": files}


def _submit(http: TestClient, name: str, spec: dict[str, Any]) -> Any:
    body = {"name": name, "upload_id": upload_code(http), "spec": spec, "conf": {}}
    return http.post("/api/v1/topologies", headers=AUTH, json=body)


@pytest.fixture
def http(nimbus: Nimbus, state: ClusterState) -> TestClient:
    """The API of a Nimbus with one supervisor and one running topology.

    A refusal must not touch what is there either.
    """
    state.register_supervisor(SupervisorInfo("s1", "host-s1", (6700, 6701)))
    client = TestClient(create_app(nimbus, "secret"), base_url=LOOPBACK)
    assert _submit(client, "running", VALID).status_code == 200
    return client


@pytest.mark.parametrize(("code", "name", "spec"), CASES,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_each_validation_code_is_refused_at_submission(
        nimbus: Nimbus, http: TestClient, code: str, name: str, spec: dict[str, Any]) -> None:
    before = _snapshot(nimbus)  # taken before the upload: a refusal removes it too
    refused = _submit(http, name, spec)
    assert refused.status_code == 400, refused.text
    body = refused.json()
    assert body["code"] == code and body["error"], body
    assert _snapshot(nimbus) == before


def test_the_valid_spec_of_the_cases_is_accepted(nimbus: Nimbus, http: TestClient) -> None:
    """The cases differ from this spec by one mistake each: it alone passes."""
    accepted = _submit(http, "t", VALID)
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["topologyId"] in nimbus.storms()


def test_every_code_of_validate_py_has_a_case() -> None:
    declared = set(re.findall(r'code="([A-Z_]+)"', inspect.getsource(validate)))
    assert declared == {code for code, _, _ in CASES}
