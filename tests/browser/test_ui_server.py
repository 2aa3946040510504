"""The UI server alone, in front of a fake Nimbus (no browser, no cluster).

The proxy, the session token, CSRF, 404 pages, the DAG endpoint and the stack traces.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from sparkstorm.web.app import create_app

TOKEN = "s3cret"
TOPOLOGY = "exclamation-1-100"
SPEC = {"components": [
    {"name": "word", "kind": "spout", "par": 1, "num_tasks": 1, "inputs": []},
    {"name": "count", "kind": "bolt", "par": 2, "num_tasks": 4, "inputs": [
        {"source": "word", "stream": "default",
         "grouping": {"type": "FIELDS", "fields": ["word"]}},
        {"source": "word", "stream": "tick", "grouping": {"type": "ALL"}}]}]}

STACKS = {"topologyId": TOPOLOGY, "pending": [], "workers": [
    {"workerId": "w-1", "host": "h", "port": 6700, "timeSecs": 10.5,
     "stacks": 'Thread "worker-heartbeat"'}]}


class FakeNimbus:
    """Answers like Nimbus; records the calls it got."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str | None]] = []
        self.bodies: list[bytes] = []
        self.visualization = False
        self.application: dict[str, Any] | None = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        auth = request.headers.get("authorization")
        self.calls.append((request.method, request.url.path, auth))
        self.bodies.append(request.content)
        authorized = auth == f"Bearer {TOKEN}"
        if request.method == "POST":
            if not authorized:
                return httpx.Response(401, json={"error": "bad token",
                                                 "code": "AUTH_TOKEN_INVALID"})
            op = request.url.path.split("/")[5]
            return httpx.Response(200, json={"topologyOperation": op, "topologyId": TOPOLOGY,
                                             "status": "success"})
        return self._get(request.url.path, request.url.query.decode(), authorized)

    def _get(self, path: str, query: str, authorized: bool) -> httpx.Response:
        topology = f"/api/v1/topology/{TOPOLOGY}"
        open_reads: dict[str, Any] = {
            topology: {"id": TOPOLOGY, "name": "exclamation", "application": self.application},
            f"{topology}/component/count": {"id": "count", "name": "exclamation",
                                            "componentType": "bolt"},
            "/api/v1/cluster/summary": {"supervisors": 1, "window": query},
        }
        if self.visualization:
            open_reads[f"{topology}/visualization"] = {"topologyId": TOPOLOGY,
                                                       "components": SPEC["components"]}
        token_reads: dict[str, Any] = {
            f"{topology}/stacktrace": STACKS,
            f"{topology}/logs": {"query": query},
            f"{topology}/code": SPEC,
        }
        if path in open_reads:
            return httpx.Response(200, json=open_reads[path])
        if path in token_reads:
            return httpx.Response(200, json=token_reads[path]) if authorized else \
                httpx.Response(401, json={"error": "no token", "code": "AUTH_TOKEN_MISSING"})
        if path.startswith(f"{topology}/component/"):
            return httpx.Response(404, json={"error": "no component",
                                             "code": "COMPONENT_NOT_FOUND"})
        return httpx.Response(404, json={"error": "not found", "code": "TOPOLOGY_NOT_FOUND"})


@pytest.fixture
def nimbus() -> FakeNimbus:
    return FakeNimbus()


def _client(nimbus: FakeNimbus, local: Path, **conf: Any) -> TestClient:
    app = create_app({"storm.local.dir": str(local), "ui.allowed.hosts": ["ui.test"], **conf},
                     "http://nimbus.test",
                     transport=httpx.MockTransport(nimbus))
    return TestClient(app, base_url="http://ui.test")


def _csrf(client: TestClient) -> str:
    page = client.get("/")
    return page.text.split('name="csrf-token" content="')[1].split('"')[0]


def test_gets_are_proxied_without_any_token(nimbus: FakeNimbus, tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    response = client.get("/api/v1/cluster/summary?window=600")
    assert response.json() == {"supervisors": 1, "window": "window=600"}
    assert nimbus.calls == [("GET", "/api/v1/cluster/summary", None)]
    assert response.headers["x-frame-options"] == "DENY"


def test_an_action_needs_csrf_then_the_token_which_is_kept_server_side(
        nimbus: FakeNimbus, tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    action = f"/api/v1/topology/{TOPOLOGY}/deactivate"
    assert client.post(action).status_code == 403  # no session
    csrf = _csrf(client)
    assert client.post(action, headers={"X-CSRF-Token": "wrong"}).status_code == 403
    missing = client.post(action, headers={"X-CSRF-Token": csrf})
    assert missing.status_code == 401 and missing.json()["code"] == "AUTH_TOKEN_MISSING"
    assert not [c for c in nimbus.calls if c[0] == "POST"], "nothing reached Nimbus"

    assert client.post("/ui/session/token", json={"token": TOKEN}).status_code == 403
    stored = client.post("/ui/session/token", json={"token": TOKEN},
                         headers={"X-CSRF-Token": csrf})
    assert stored.status_code == 200 and TOKEN not in stored.text
    assert client.get("/ui/session").json()["hasToken"] is True
    done = client.post(action, headers={"X-CSRF-Token": csrf})
    assert done.json()["topologyOperation"] == "deactivate"
    killed = client.post(f"/api/v1/topology/{TOPOLOGY}/kill/5", headers={"X-CSRF-Token": csrf})
    assert killed.status_code == 200
    assert nimbus.calls[-1] == ("POST", f"/api/v1/topology/{TOPOLOGY}/kill/5", f"Bearer {TOKEN}")
    unknown = client.post(f"/api/v1/topology/{TOPOLOGY}/rm-rf", headers={"X-CSRF-Token": csrf})
    assert unknown.status_code == 404


def test_stack_traces_are_requested_and_read_with_the_session_token(
        nimbus: FakeNimbus, tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    path = f"/api/v1/topology/{TOPOLOGY}/stacktrace"
    assert client.get(path).status_code == 403  # no session
    csrf = _csrf(client)
    missing = client.get(path)
    assert missing.status_code == 401 and missing.json()["code"] == "AUTH_TOKEN_MISSING"
    assert client.post(path).status_code == 403  # the request needs the CSRF token
    assert client.post(path, headers={"X-CSRF-Token": csrf}).status_code == 401
    assert not [c for c in nimbus.calls if c[1] == path], "nothing reached Nimbus"

    client.post("/ui/session/token", json={"token": TOKEN}, headers={"X-CSRF-Token": csrf})
    foreign = client.get(path, headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403
    requested = client.post(path, headers={"X-CSRF-Token": csrf})
    assert requested.json()["topologyOperation"] == "stacktrace"
    assert requested.json()["previousTimeSecs"] == {"w-1": 10.5}  # read before the request
    assert nimbus.calls[-2:] == [("GET", path, f"Bearer {TOKEN}"),
                                 ("POST", path, f"Bearer {TOKEN}")]
    shown = client.get(path)
    assert shown.json() == STACKS and TOKEN not in shown.text
    assert nimbus.calls[-1] == ("GET", path, f"Bearer {TOKEN}")


def test_a_wrong_token_is_forgotten(nimbus: FakeNimbus, tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    csrf = _csrf(client)
    client.post("/ui/session/token", json={"token": "wrong"}, headers={"X-CSRF-Token": csrf})
    refused = client.post(f"/api/v1/topology/{TOPOLOGY}/activate",
                          headers={"X-CSRF-Token": csrf})
    assert refused.status_code == 401 and refused.json()["code"] == "AUTH_TOKEN_INVALID"
    assert client.get("/ui/session").json()["hasToken"] is False


def test_actions_can_be_disabled(nimbus: FakeNimbus, tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path, **{"ui.actions.enabled": False})
    csrf = _csrf(client)
    response = client.post(f"/api/v1/topology/{TOPOLOGY}/kill/0", headers={"X-CSRF-Token": csrf})
    assert response.status_code == 403
    assert client.get(f"/api/v1/topology/{TOPOLOGY}/stacktrace").status_code == 403
    assert "Actions are disabled" in client.get(f"/topology/{TOPOLOGY}").text


def test_unknown_pages_and_topologies_are_404_pages(nimbus: FakeNimbus, tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    page = client.get("/topology/nope-1-1")
    assert page.status_code == 404 and "Topology not found" in page.text
    assert "text/html" in page.headers["content-type"]
    assert client.get("/nowhere").status_code == 404
    assert client.get("/ui/topology/nope-1-1/graph").status_code == 404


def test_the_dag_comes_from_the_local_spec_or_from_nimbus_with_the_token(
        nimbus: FakeNimbus, tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    assert client.get(f"/ui/topology/{TOPOLOGY}/graph").status_code == 401
    csrf = _csrf(client)
    client.post("/ui/session/token", json={"token": TOKEN}, headers={"X-CSRF-Token": csrf})
    graph = client.get(f"/ui/topology/{TOPOLOGY}/graph").json()
    assert [n["id"] for n in graph["nodes"]] == ["word", "count"]
    assert graph["nodes"][1]["tasks"] == 4
    assert graph["edges"] == [
        {"source": "word", "target": "count", "stream": "default", "grouping": "FIELDS(word)"},
        {"source": "word", "target": "count", "stream": "tick", "grouping": "ALL"}]

    folder = tmp_path / "nimbus" / "stormdist" / TOPOLOGY
    folder.mkdir(parents=True)
    (folder / "stormcode.json").write_text(json.dumps({"components": SPEC["components"][:1]}))
    fresh = _client(nimbus, tmp_path)  # no token: the file on this machine is enough
    assert [n["id"] for n in fresh.get(f"/ui/topology/{TOPOLOGY}/graph").json()["nodes"]] == \
        ["word"]


def test_spec_paths_cannot_leave_stormdist(nimbus: FakeNimbus, tmp_path: Path) -> None:
    from sparkstorm.web.app import UiServer, UiSettings

    server = UiServer(UiSettings.of({"storm.local.dir": str(tmp_path)}), "http://nimbus.test")
    (tmp_path / "stormcode.json").write_text("{}")
    assert server.spec_file("../../stormcode.json") is None
    assert server.spec_file("..") is None


def test_rebalance_forwards_a_checked_body(nimbus: FakeNimbus, tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    csrf = _csrf(client)
    client.post("/ui/session/token", json={"token": TOKEN}, headers={"X-CSRF-Token": csrf})
    action = f"/api/v1/topology/{TOPOLOGY}/rebalance/5"
    bad = client.post(action, headers={"X-CSRF-Token": csrf},
                      json={"rebalanceOptions": {"executors": {"count": 0}}})
    assert bad.status_code == 422 and "count" in bad.json()["error"]
    assert client.post(action, headers={"X-CSRF-Token": csrf},
                       json={"executors": {"count": 2}}).status_code == 422
    assert client.post(f"/api/v1/topology/{TOPOLOGY}/rebalance/-1",
                       headers={"X-CSRF-Token": csrf}).status_code == 422
    done = client.post(action, headers={"X-CSRF-Token": csrf}, json={
        "rebalanceOptions": {"executors": {"count": "3"}, "numWorkers": 1}})
    assert done.json()["topologyOperation"] == "rebalance"
    assert nimbus.calls[-1] == ("POST", f"/api/v1/topology/{TOPOLOGY}/rebalance/5",
                                f"Bearer {TOKEN}")
    assert json.loads(nimbus.bodies[-1]) == {
        "rebalanceOptions": {"executors": {"count": 3}, "numWorkers": 1}}
    assert client.post(f"/api/v1/topology/{TOPOLOGY}/activate/5",
                       headers={"X-CSRF-Token": csrf}).status_code == 404


def test_component_pages_and_their_404s(nimbus: FakeNimbus, tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    page = client.get(f"/topology/{TOPOLOGY}/component/count")
    assert page.status_code == 200
    assert 'data-component="count"' in page.text and 'data-kind="bolt"' in page.text
    assert "/static/component.js" in page.text
    missing = client.get(f"/topology/{TOPOLOGY}/component/nope")
    assert missing.status_code == 404 and "Component not found" in missing.text
    assert f'href="/topology/{TOPOLOGY}"' in missing.text
    gone = client.get("/topology/gone-1-1/component/count")
    assert gone.status_code == 404 and "Topology not found" in gone.text


def test_the_dag_comes_from_the_open_visualization(nimbus: FakeNimbus, tmp_path: Path) -> None:
    nimbus.visualization = True
    client = _client(nimbus, tmp_path)  # no token needed
    graph = client.get(f"/ui/topology/{TOPOLOGY}/graph").json()
    assert [n["id"] for n in graph["nodes"]] == ["word", "count"]
    assert graph["edges"][0]["grouping"] == "FIELDS(word)"
    assert all(call[2] is None for call in nimbus.calls)


def test_the_ui_binds_to_loopback_unless_configured(tmp_path: Path) -> None:
    from sparkstorm.web.cli import build_server

    plain = {"storm.tls.enabled": False}  # where it binds (its TLS: test_pages.py's cluster)
    server = build_server({"storm.local.dir": str(tmp_path), "ui.port": 8099, **plain})
    assert (server.config.host, server.config.port) == ("127.0.0.1", 8099)
    assert build_server({"ui.host": "0.0.0.0", **plain}).config.host == "0.0.0.0"


def test_pages_load_only_their_own_scripts_and_styles(nimbus: FakeNimbus,
                                                      tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    for path in ("/", f"/topology/{TOPOLOGY}", f"/topology/{TOPOLOGY}/component/count"):
        page = client.get(path).text
        sources = re.findall(r'(?:src|href)="([^"]+)"', page)
        assert sources and all(s.startswith("/") and not s.startswith("//")
                               for s in sources), (path, sources)
        assert "<script>" not in page and "style=" not in page
    for name in ("ui.js", "charts.js", "dag.js", "stacks.js", "actions.js", "topology.js",
                 "component.js", "cluster.js", "ui.css"):
        text = client.get(f"/static/{name}").text
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
        assert "https://" not in text and "@import" not in text, name


def test_the_favicon_is_served_and_linked(nimbus: FakeNimbus, tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
    assert icon.content.startswith(b"<svg")
    assert '<link rel="icon" href="/favicon.ico"' in client.get("/").text


def test_logs_are_read_with_the_session_token_and_have_a_page(nimbus: FakeNimbus,
                                                              tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    path = f"/api/v1/topology/{TOPOLOGY}/logs"
    assert client.get(path, params={"worker": "w-1"}).status_code == 403  # no UI session
    page = client.get(f"/topology/{TOPOLOGY}/logs", params={"worker": "w-1",
                                                            "source": "executor-2"})
    assert page.status_code == 200 and 'data-worker="w-1"' in page.text
    assert 'data-source="executor-2"' in page.text and "logs.js" in page.text
    missing = client.get(path, params={"worker": "w-1"})
    assert missing.status_code == 401 and missing.json()["code"] == "AUTH_TOKEN_MISSING"
    assert not [c for c in nimbus.calls if c[1] == path], "nothing asked without the token"
    client.post("/ui/session/token", json={"token": TOKEN},
                headers={"X-CSRF-Token": _csrf_of(page.text)})
    read = client.get(path, params={"worker": "w-1", "source": "executor-2"})
    assert read.json() == {"query": "worker=w-1&source=executor-2"}
    assert nimbus.calls[-1] == ("GET", path, f"Bearer {TOKEN}")


def test_a_spark_submitted_topologys_log_page_says_where_its_executors_logs_are(
        nimbus: FakeNimbus, tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    supervised = client.get(f"/topology/{TOPOLOGY}/logs", params={"worker": "w-1"}).text
    assert 'id="spark-executor-logs"' not in supervised
    nimbus.application = {"sparkUiUrl": "http://10.0.0.5:4040",
                          "executorLogs": "theirs are in <b>sparkstorm-logs/</b>"}
    page = client.get(f"/topology/{TOPOLOGY}/logs", params={"worker": "w-1"}).text
    note = page.split('id="spark-executor-logs"')[1].split("</p>")[0]
    assert "theirs are in &lt;b&gt;sparkstorm-logs/&lt;/b&gt;." in note
    assert 'href="http://10.0.0.5:4040/executors/"' in note
    nimbus.application = {"sparkUiUrl": "javascript:alert(1)", "executorLogs": "x"}
    page = client.get(f"/topology/{TOPOLOGY}/logs", params={"worker": "w-1"}).text
    assert 'id="spark-executors-link"' not in page  # only http(s) links


def _csrf_of(page: str) -> str:
    return page.split('name="csrf-token" content="')[1].split('"')[0]


def test_log_levels_and_debug_sampling_are_forwarded_with_the_token(
        nimbus: FakeNimbus, tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    csrf = _csrf(client)
    base = f"/api/v1/topology/{TOPOLOGY}"
    body = {"namedLoggerLevels": {"root": {"target_level": "DEBUG", "timeout": 30}}}
    assert client.post(f"{base}/logconfig", json=body).status_code == 403  # no CSRF token
    missing = client.post(f"{base}/logconfig", json=body, headers={"X-CSRF-Token": csrf})
    assert missing.status_code == 401 and not [c for c in nimbus.calls if c[0] == "POST"]
    client.post("/ui/session/token", json={"token": TOKEN}, headers={"X-CSRF-Token": csrf})
    done = client.post(f"{base}/logconfig", json=body, headers={"X-CSRF-Token": csrf})
    assert done.status_code == 200
    assert nimbus.calls[-1] == ("POST", f"{base}/logconfig", f"Bearer {TOKEN}")
    assert json.loads(nimbus.bodies[-1]) == body
    sampled = client.post(f"{base}/component/count/debug/enable/25",
                          headers={"X-CSRF-Token": csrf})
    assert sampled.status_code == 200
    assert nimbus.calls[-1] == ("POST", f"{base}/component/count/debug/enable/25.0",
                                f"Bearer {TOKEN}")
    assert client.post(f"{base}/logconfig", content=b"[1]",
                       headers={"X-CSRF-Token": csrf}).status_code == 422


@pytest.mark.parametrize("path", ["/api/v1/..%2f..%2fdocs", "/api/v1/..%2F..%2Fopenapi.json",
                                  "/api/v1/topology/%2e%2e/%2e%2e/%2e%2e/docs"])
def test_the_proxy_never_leaves_nimbus_api(nimbus: FakeNimbus, tmp_path: Path,
                                           path: str) -> None:
    response = _client(nimbus, tmp_path).get(path)
    assert response.status_code == 404
    assert [c for c in nimbus.calls if not c[1].startswith("/api/v1/")] == []


def test_a_foreign_host_name_is_refused_an_address_is_not(nimbus: FakeNimbus,
                                                         tmp_path: Path) -> None:
    client = _client(nimbus, tmp_path)
    refused = client.get(f"/api/v1/topology/{TOPOLOGY}", headers={"host": "evil.example"})
    assert refused.status_code == 421 and refused.json()["code"] == "HOST_NOT_ALLOWED"
    assert nimbus.calls == [], "nothing reached Nimbus"
    for host in ("127.0.0.1:8080", "localhost:8080", "ui.test"):
        response = client.get(f"/api/v1/topology/{TOPOLOGY}", headers={"host": host})
        assert response.status_code == 200, (host, response.text)
