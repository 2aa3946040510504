"""The cluster token guards every call that changes state, hands out code or is a worker's.

A missing or wrong token is refused and changes nothing; the right token is accepted; Nimbus listens
on loopback unless told otherwise. FastAPI's test client, one real bind.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import SupervisorInfo
from sparkstorm.cluster.supervisor.logviewer import LogFolders, LogviewerServer
from tests.unit.cluster.nimbus.helpers import SPEC
from tests.unit.cluster.nimbus.http_helpers import LOOPBACK, code_zip, dump_store, sha256

TOKEN = "secret"


@dataclass(frozen=True)
class World:
    """A running topology and two uploads to aim the calls at."""

    topology_id: str
    worker_id: str
    begun: str
    """An upload in progress that holds a whole zip."""
    sha256: str
    """The checksum of ``begun``'s zip."""
    finished: str
    """A finished upload, ready to submit."""


Call = Callable[[World], tuple[dict[str, str], dict[str, Any]]]
"""Path parameters and request arguments (body, params) of a call that would succeed."""


def _no_args(_: World) -> tuple[dict[str, str], dict[str, Any]]:
    return {}, {}


def _topology(w: World) -> tuple[dict[str, str], dict[str, Any]]:
    return {"topology_id": w.topology_id}, {}


def _worker(body: dict[str, Any]) -> Call:
    return lambda w: ({"worker_id": w.worker_id}, {"json": {"topology_id": w.topology_id,
                                                            **body}})


GUARDED: dict[str, tuple[str, str, Call]] = {
    "begin upload": ("POST", "/api/v1/uploads", _no_args),
    "upload chunk": ("PUT", "/api/v1/uploads/{upload_id}",
                     lambda w: ({"upload_id": w.begun}, {"content": b"more"})),
    "finish upload": ("POST", "/api/v1/uploads/{upload_id}/finish",
                      lambda w: ({"upload_id": w.begun}, {"json": {"sha256": w.sha256}})),
    "submit": ("POST", "/api/v1/topologies",
               lambda w: ({}, {"json": {"name": "other", "upload_id": w.finished,
                                        "spec": SPEC}})),
    "register application": ("POST", "/api/v1/applications",
                             lambda w: ({}, {"json": {"name": "app", "spec": SPEC,
                                                      "application": {"host": "h"}}})),
    "activate": ("POST", "/api/v1/topology/{topology_id}/activate", _topology),
    "deactivate": ("POST", "/api/v1/topology/{topology_id}/deactivate", _topology),
    "kill": ("POST", "/api/v1/topology/{topology_id}/kill/{wait}",
             lambda w: ({"topology_id": w.topology_id, "wait": "0"}, {})),
    "kill, default wait": ("POST", "/api/v1/topology/{topology_id}/kill", _topology),
    "rebalance": ("POST", "/api/v1/topology/{topology_id}/rebalance/{wait}",
                  lambda w: ({"topology_id": w.topology_id, "wait": "0"},
                             {"json": {"rebalanceOptions": {"executors": {"word": 1}}}})),
    "rebalance, default wait": ("POST", "/api/v1/topology/{topology_id}/rebalance",
                                _topology),
    "stacktrace request": ("POST", "/api/v1/topology/{topology_id}/stacktrace", _topology),
    "stacktraces": ("GET", "/api/v1/topology/{topology_id}/stacktrace", _topology),
    "spec": ("GET", "/api/v1/topology/{topology_id}/spec", _topology),
    "code": ("GET", "/api/v1/topology/{topology_id}/code", _topology),
    "worker init": ("GET", "/api/v1/worker/{worker_id}/init",
                    lambda w: ({"worker_id": w.worker_id}, {})),
    "worker heartbeat": ("POST", "/api/v1/worker/{worker_id}/heartbeat",
                         _worker({"stats": {}, "uptime_secs": 1})),
    "worker log": ("POST", "/api/v1/worker/{worker_id}/log", _worker({"message": "hello"})),
    "worker stacktrace": ("POST", "/api/v1/worker/{worker_id}/stacktrace",
                          _worker({"stacks": "Thread main"})),
    "worker error": ("POST", "/api/v1/worker/{worker_id}/error",
                     _worker({"component": "word", "error": "boom"})),
    "log tails": ("GET", "/api/v1/topology/{topology_id}/logs",
                  lambda w: ({"topology_id": w.topology_id}, {"params": {
                      "worker": w.worker_id}})),
    "logconfig": ("POST", "/api/v1/topology/{topology_id}/logconfig",
                  lambda w: ({"topology_id": w.topology_id}, {"json": {"namedLoggerLevels": {
                      "x": {"target_level": "DEBUG", "timeout": 30}}}})),
    "debug": ("POST", "/api/v1/topology/{topology_id}/debug/{action}/{spct}",
              lambda w: ({"topology_id": w.topology_id, "action": "enable", "spct": "10"}, {})),
    "component debug": ("POST",
                        "/api/v1/topology/{topology_id}/component/{component}/debug/{action}/"
                        "{spct}",
                        lambda w: ({"topology_id": w.topology_id, "component": "word",
                                    "action": "enable", "spct": "10"}, {})),
    "worker log tails": ("POST", "/api/v1/worker/{worker_id}/logs",
                         _worker({"sources": {"worker": "worker"},
                                  "tails": {"worker": "a line"}})),
    "log files": ("GET", "/api/v1/topology/{topology_id}/logfiles", _topology),
    "log file": ("GET", "/api/v1/topology/{topology_id}/logfile", lambda w: (
        {"topology_id": w.topology_id}, {"params": {"worker": w.worker_id,
                                                    "file": "worker.log"}})),
    "log search": ("GET", "/api/v1/topology/{topology_id}/logsearch", lambda w: (
        {"topology_id": w.topology_id}, {"params": {"search": "line"}})),
    "log download": ("GET", "/api/v1/topology/{topology_id}/logdownload", lambda w: (
        {"topology_id": w.topology_id}, {"params": {"worker": w.worker_id,
                                                    "file": "worker.log"}})),
    "daemon logs": ("GET", "/api/v1/daemonlogs", _no_args),
    "daemon log": ("GET", "/api/v1/daemonlog", lambda w: (
        {}, {"params": {"daemon": "supervisor", "supervisor": "s1",
                        "file": "supervisor.log"}})),
    "daemon log search": ("GET", "/api/v1/daemonlog/search", lambda w: (
        {}, {"params": {"daemon": "supervisor", "supervisor": "s1", "file": "supervisor.log",
                        "search": "x"}})),
    "daemon log download": ("GET", "/api/v1/daemonlog/download", lambda w: (
        {}, {"params": {"daemon": "supervisor", "supervisor": "s1",
                        "file": "supervisor.log"}})),
}
"""Every token-guarded route: the mutating ones, code and spec downloads, the umbilical."""

BAD_TOKENS = {
    "missing": ({}, "AUTH_TOKEN_MISSING"),
    "wrong token": ({"Authorization": "Bearer not-the-secret"}, "AUTH_TOKEN_INVALID"),
    "wrong scheme": ({"Authorization": f"Basic {TOKEN}"}, "AUTH_TOKEN_INVALID"),
    "empty bearer": ({"Authorization": "Bearer "}, "AUTH_TOKEN_INVALID"),
}


@pytest.fixture(scope="module")
def logviewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A real supervisor logviewer (its root folder and URL) for the log routes' calls."""
    local = tmp_path_factory.mktemp("logviewer")
    (local / "logs").mkdir()
    (local / "logs" / "supervisor.log").write_text("supervisor line\n")
    # plain HTTP: the token checks (tests/unit/cluster/nimbus/test_nimbus_tls.py: the TLS in front)
    server = LogviewerServer({"logviewer.port": 0, "storm.tls.enabled": False},
                             LogFolders(local / "supervisor", local / "logs"), TOKEN)
    server.start()
    yield local / "supervisor", server.url
    server.stop()


@pytest.fixture
def world(nimbus: Nimbus, state: ClusterState, logviewer: tuple[Path, str]) -> World:
    state.register_supervisor(SupervisorInfo("s1", "host-s1", (6700, 6701),
                                             logviewer_url=logviewer[1]))
    data = code_zip()
    finished = nimbus.inbox.begin()
    nimbus.inbox.chunk(finished, data)
    nimbus.inbox.finish(finished, sha256(data))
    topology_id = nimbus.submit("t", finished, SPEC, {})
    assignment = state.get_assignment(topology_id)
    assert assignment is not None
    (worker_id,) = assignment.worker_ids.values()
    folder = logviewer[0] / "workers" / worker_id  # the worker's logs on s1's host
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "worker.json").write_text(json.dumps({"topology_id": topology_id}))
    (folder / "worker.log").write_text("a line\n")
    begun, ready = nimbus.inbox.begin(), nimbus.inbox.begin()
    nimbus.inbox.chunk(begun, data)
    nimbus.inbox.chunk(ready, data)
    nimbus.inbox.finish(ready, sha256(data))
    return World(topology_id, worker_id, begun, sha256(data), ready)


def _request(http: TestClient, world: World, name: str,
             headers: dict[str, str]) -> Any:
    method, template, call = GUARDED[name]
    path_params, kwargs = call(world)
    return http.request(method, template.format(**path_params), headers=headers, **kwargs)


def _snapshot(nimbus: Nimbus, http: TestClient, world: World) -> dict[str, Any]:
    """The store, Nimbus's files (with contents) and the pending stack trace requests."""
    root = nimbus.inbox.folder.parent
    files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
             if p.is_file()}
    traces = http.get(f"/api/v1/topology/{world.topology_id}/stacktrace",
                      headers={"Authorization": f"Bearer {TOKEN}"}).json()
    return {"store": dump_store(nimbus.state.store), "files": files, "traces": traces}


@pytest.mark.parametrize("token", sorted(BAD_TOKENS))
@pytest.mark.parametrize("name", sorted(GUARDED))
def test_guarded_calls_refuse_a_missing_or_bad_token_and_change_nothing(
        nimbus: Nimbus, world: World, name: str, token: str) -> None:
    http = TestClient(create_app(nimbus, TOKEN), base_url=LOOPBACK)
    before = _snapshot(nimbus, http, world)
    headers, code = BAD_TOKENS[token]
    response = _request(http, world, name, headers)
    assert response.status_code == 401, response.text
    assert response.json()["code"] == code
    assert _snapshot(nimbus, http, world) == before


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_guarded_calls_accept_the_right_token(nimbus: Nimbus, world: World,
                                              name: str) -> None:
    """The same requests pass with the token: the refusals above are the token's doing."""
    http = TestClient(create_app(nimbus, TOKEN), base_url=LOOPBACK)
    response = _request(http, world, name, {"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.text


def test_the_table_covers_every_guarded_and_every_mutating_route(nimbus: Nimbus) -> None:
    """A new route that changes state must be token-guarded and listed in GUARDED."""
    routes = [r for r in create_app(nimbus, TOKEN).routes if isinstance(r, APIRoute)]
    guarded = {(m, r.path) for r in routes if r.dependencies for m in r.methods}
    mutating = {(m, r.path) for r in routes for m in r.methods if m not in ("GET", "HEAD")}
    assert mutating - guarded == set(), "mutating routes without the token check"
    assert guarded == {(method, path) for method, path, _ in GUARDED.values()}


def _bound_hosts(server: Any) -> set[str]:
    return {s.getsockname()[0] for listener in server.servers for s in listener.sockets}


def test_nimbus_binds_loopback_by_default(served: Callable[..., Any]) -> None:
    assert _bound_hosts(served()) == {"127.0.0.1"}
    assert _bound_hosts(served(**{"nimbus.host": "0.0.0.0"})) == {"0.0.0.0"}, \
        "nimbus.host is honoured (so the default above is not an accident)"
