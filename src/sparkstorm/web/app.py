"""The UI server (FastAPI).

Pages (cluster, topology, component, 404s), static files, a read-only proxy of Nimbus's ``/api/v1``,
the DAG from Nimbus's open ``/visualization``, and the topology actions
(:mod:`sparkstorm.web.actions`), which it forwards with the session's cluster token, and the
workers' stack traces, which it reads with that token.

Security: the session cookie is HttpOnly and SameSite=Strict; every POST needs the session's
CSRF token in ``X-CSRF-Token`` and, when the browser sends one, a same-origin ``Origin``;
the Content-Security-Policy allows scripts and styles from this server only; the cluster token
stays on the server.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException

from sparkstorm.cluster.nimbus.host_check import check_hosts
from sparkstorm.config import conf_bool, local_dir
from sparkstorm.tls.contexts import http_verify
from sparkstorm.web import pages
from sparkstorm.web.actions import (
    forward_action,
    forward_post,
    forward_stack_traces,
    forward_token_get,
)
from sparkstorm.web.sessions import SESSION_COOKIE, Session, SessionStore

logger = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
TOPOLOGY_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,200}$")
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self'; "
                                "img-src 'self' data:; connect-src 'self'; "
                                "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-cache, no-store",
}


def _json_error(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse({"error": message, "code": code}, status_code=status)


@dataclass(frozen=True)
class UiSettings:
    """What the UI server reads of the configuration."""

    actions_enabled: bool
    """``ui.actions.enabled``: the action buttons and POST routes."""
    local_dir: Path
    """``storm.local.dir``, where a Nimbus on this machine keeps topology specs."""

    @classmethod
    def of(cls, conf: Mapping[str, object]) -> UiSettings:
        """The settings in ``conf`` (declared defaults for missing keys)."""
        return cls(conf_bool(conf, "ui.actions.enabled"), local_dir(conf).resolve())


class UiServer:
    """State of one UI server: its settings, sessions and Nimbus client."""

    def __init__(self, settings: UiSettings, nimbus_url: str,
                 transport: httpx.AsyncBaseTransport | None = None,
                 verify: ssl.SSLContext | bool = True) -> None:
        self.nimbus_url = nimbus_url
        self.sessions = SessionStore()
        self.actions_enabled = settings.actions_enabled
        self.local_dir = settings.local_dir
        self.client = httpx.AsyncClient(base_url=nimbus_url, timeout=10, transport=transport,
                                        verify=verify)

    # --- sessions ------------------------------------------------------------------------------

    def session_of(self, request: Request) -> Session | None:
        """The session the request's cookie names, None without a live one."""
        return self.sessions.get(request.cookies.get(SESSION_COOKIE))

    def page(self, request: Request, render: Any, status: int = 200) -> HTMLResponse:
        """Render a page with the request's session, creating one (and its cookie) if needed."""
        session = self.session_of(request)
        fresh = session is None
        if session is None:
            session = self.sessions.create()
        response = HTMLResponse(render(session), status_code=status)
        if fresh:
            response.set_cookie(SESSION_COOKIE, session.id, httponly=True, samesite="strict",
                                path="/")
        return response

    def check_session(self, request: Request) -> Session:
        """The session of a request that uses the cluster token, from a same-origin page.

        Raises:
            HTTPException: 403 without a session or with a foreign Origin.
        """
        origin = request.headers.get("origin")
        if origin and urlsplit(origin).netloc != request.headers.get("host"):
            raise HTTPException(403, "cross-site request refused (Origin does not match)")
        session = self.session_of(request)
        if session is None:
            raise HTTPException(403, "no UI session: reload the page and try again")
        return session

    def check_post(self, request: Request) -> Session:
        """The session of a state-changing request, after its CSRF checks.

        Raises:
            HTTPException: 403 without a session, with a wrong CSRF token or a foreign Origin.
        """
        session = self.check_session(request)
        given = request.headers.get("x-csrf-token", "")
        if not hmac.compare_digest(given.encode(), session.csrf.encode()):
            raise HTTPException(403, "missing or wrong CSRF token: reload the page")
        return session

    def not_found(self, request: Request, topology_id: str, component: str | None,
                  response: httpx.Response) -> HTMLResponse:
        """The 404 page of an unknown topology or component, saying which one."""
        try:
            nimbus_code = str(response.json().get("code", ""))
        except ValueError:
            nimbus_code = ""
        if component is None or nimbus_code == "TOPOLOGY_NOT_FOUND":
            title = "Topology not found"
            message = (f"No topology with id '{topology_id}' is known to Nimbus: it may have "
                       "been killed, or the id is mistyped.")
            link = None
        else:
            title = "Component not found"
            message = (f"Topology '{topology_id}' has no component '{component}'. Its "
                       "components are listed on the topology page.")
            link = f"/topology/{quote(topology_id, safe='')}"
        return self.page(request, lambda s: pages.error_page(s, 404, title, message, link), 404)

    # --- Nimbus --------------------------------------------------------------------------------

    async def nimbus_get(self, path: str, params: Any = None) -> httpx.Response:
        """``GET`` ``path`` from Nimbus (without the cluster token)."""
        return await self.client.get(path, params=params)

    def spec_file(self, topology_id: str) -> Path | None:
        """``<storm.local.dir>/nimbus/stormdist/<id>/stormcode.json`` if this machine has it."""
        if not TOPOLOGY_ID.match(topology_id):
            return None
        path = self.local_dir / "nimbus" / "stormdist" / topology_id / "stormcode.json"
        return path if path.is_file() else None

    async def topology_spec(self, topology_id: str, session: Session | None) -> dict[str, Any]:
        """The submitted spec: from Nimbus's disk when local, else Nimbus with the token."""
        path = self.spec_file(topology_id)
        if path is not None:
            data: dict[str, Any] = json.loads(path.read_text())
            return data
        if session is None or session.token is None:
            msg = ("the topology spec is not on this machine and Nimbus serves it only with "
                   "the cluster token: enter the token (any action asks for it)")
            raise HTTPException(401, msg)
        response = await self.client.get(
            f"/api/v1/topology/{quote(topology_id, safe='')}/code", params={"part": "spec"},
            headers={"Authorization": f"Bearer {session.token}"})
        if response.status_code == HTTPStatus.NOT_FOUND:
            raise HTTPException(404, f"topology {topology_id!r} not found")
        response.raise_for_status()
        spec: dict[str, Any] = response.json()
        return spec


def graph_of(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Nodes and edges of the DAG from a topology spec.

    Example:
        >>> spec = {"components": [
        ...     {"name": "w", "kind": "spout", "par": 1, "num_tasks": 1, "inputs": []},
        ...     {"name": "b", "kind": "bolt", "par": 2, "num_tasks": 2, "inputs": [
        ...         {"source": "w", "stream": "default",
        ...          "grouping": {"type": "FIELDS", "fields": ["word"]}}]}]}
        >>> graph_of(spec)["edges"]
        [{'source': 'w', 'target': 'b', 'stream': 'default', 'grouping': 'FIELDS(word)'}]
    """
    nodes, edges = [], []
    for component in spec.get("components", []):
        nodes.append({"id": component["name"], "kind": component["kind"],
                      "executors": int(component.get("par", 1)),
                      "tasks": int(component.get("num_tasks", component.get("par", 1)))})
        for item in component.get("inputs", []):
            grouping = item.get("grouping") or {}
            label = str(grouping.get("type", "?"))
            if grouping.get("fields"):
                label += "(" + ",".join(grouping["fields"]) + ")"
            edges.append({"source": item["source"], "target": component["name"],
                          "stream": item.get("stream", "default"), "grouping": label})
    return {"nodes": nodes, "edges": edges}


def create_app(conf: Mapping[str, object], nimbus_url: str,
               transport: httpx.AsyncBaseTransport | None = None) -> FastAPI:
    """The UI app for the Nimbus at ``nimbus_url``."""
    # an https Nimbus: checked against the cluster CA, with this host's client certificate
    verify = http_verify(conf) if nimbus_url.startswith("https:") else True
    ui = UiServer(UiSettings.of(conf), nimbus_url, transport, verify)
    app = FastAPI(title="sparkstorm ui", version="1", docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.ui = ui
    check_hosts(app, conf)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if request.url.path.startswith(("/api/", "/ui/")):
            code = {401: "AUTH_TOKEN_MISSING", 403: "FORBIDDEN", 404: "NOT_FOUND"}.get(
                exc.status_code, "BAD_REQUEST")
            return _json_error(exc.status_code, str(exc.detail), code)
        title = "Not found" if exc.status_code == HTTPStatus.NOT_FOUND else "Error"
        message = str(exc.detail) if exc.status_code != HTTPStatus.NOT_FOUND else \
            f"There is no page at {request.url.path}."
        return ui.page(request, lambda s: pages.error_page(s, exc.status_code, title, message),
                       exc.status_code)

    @app.exception_handler(httpx.HTTPError)
    async def nimbus_down(request: Request, exc: httpx.HTTPError) -> Response:
        message = f"Nimbus at {ui.nimbus_url} did not answer ({type(exc).__name__}: {exc})"
        if request.url.path.startswith(("/api/", "/ui/")):
            return _json_error(502, message, "NIMBUS_UNREACHABLE")
        return ui.page(request, lambda s: pages.error_page(s, 502, "Nimbus unreachable",
                                                           message), 502)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _page_routes(app, ui)
    _api_routes(app, ui)
    _proxy_route(app, ui)  # last: the routes above take their paths first
    return app


def _page_routes(app: FastAPI, ui: UiServer) -> None:
    @app.get("/", response_class=HTMLResponse)
    async def cluster(request: Request) -> HTMLResponse:
        return ui.page(request, pages.cluster_page)

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        return Response((STATIC / "favicon.svg").read_bytes(), media_type="image/svg+xml",
                        headers={"Cache-Control": "max-age=86400"})

    @app.get("/topology/{topology_id}/logs", response_class=HTMLResponse)
    async def logs(request: Request, topology_id: str, worker: str = "",
                   source: str = "worker") -> HTMLResponse:
        response = await ui.nimbus_get(f"/api/v1/topology/{quote(topology_id, safe='')}")
        if response.status_code != HTTPStatus.NOT_FOUND:  # gone: its kept logs are listed
            response.raise_for_status()
        body = response.json()
        name = str(body.get("name", topology_id))
        application = body.get("application")  # a spark-submitted topology: logs elsewhere
        return ui.page(request, lambda s: pages.logs_page(
            s, topology_id, name, worker, source,
            application if isinstance(application, dict) else None))

    @app.get("/logs", response_class=HTMLResponse)
    async def daemon_logs_page(request: Request) -> HTMLResponse:
        """Nimbus's and the supervisors' own logs."""
        return ui.page(request, lambda s: pages.logs_page(s, "", "", "", ""))

    @app.get("/topology/{topology_id}", response_class=HTMLResponse)
    async def topology(request: Request, topology_id: str) -> HTMLResponse:
        response = await ui.nimbus_get(f"/api/v1/topology/{quote(topology_id, safe='')}")
        if response.status_code == HTTPStatus.NOT_FOUND:
            return ui.not_found(request, topology_id, None, response)
        response.raise_for_status()
        name = str(response.json().get("name", topology_id))
        return ui.page(request, lambda s: pages.topology_page(s, topology_id, name,
                                                              ui.actions_enabled))

    @app.get("/topology/{topology_id}/component/{component}", response_class=HTMLResponse)
    async def component(request: Request, topology_id: str, component: str) -> HTMLResponse:
        response = await ui.nimbus_get(f"/api/v1/topology/{quote(topology_id, safe='')}"
                                       f"/component/{quote(component, safe='')}")
        if response.status_code == HTTPStatus.NOT_FOUND:
            return ui.not_found(request, topology_id, component, response)
        response.raise_for_status()
        body = response.json()
        name, kind = str(body.get("name", topology_id)), str(body.get("componentType", ""))
        return ui.page(request, lambda s: pages.component_page(s, topology_id, name,
                                                               component, kind,
                                                               ui.actions_enabled))


def _api_routes(app: FastAPI, ui: UiServer) -> None:
    @app.get("/ui/topology/{topology_id}/graph")
    async def graph(request: Request, topology_id: str) -> dict[str, Any]:
        """The DAG: from Nimbus's open ``/visualization``, else from the submitted spec."""
        encoded = quote(topology_id, safe="")
        response = await ui.nimbus_get(f"/api/v1/topology/{encoded}/visualization")
        if response.is_success:
            return graph_of(response.json())
        exists = await ui.nimbus_get(f"/api/v1/topology/{encoded}")
        if exists.status_code == HTTPStatus.NOT_FOUND:
            raise HTTPException(404, f"topology {topology_id!r} not found")
        return graph_of(await ui.topology_spec(topology_id, ui.session_of(request)))

    @app.get("/ui/session")
    async def session_state(request: Request) -> dict[str, Any]:
        session = ui.session_of(request)
        return {"session": session is not None,
                "hasToken": bool(session and session.token),
                "actionsEnabled": ui.actions_enabled}

    @app.post("/ui/session/token")
    async def set_token(request: Request) -> dict[str, Any]:
        session = ui.check_post(request)
        try:
            body = await request.json()
        except ValueError:
            body = None
        token = body.get("token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token.strip():
            raise HTTPException(400, 'send {"token": "<cluster token>"}')
        session.token = token.strip()
        return {"status": "success"}

    @app.post("/ui/session/logout")
    async def forget_token(request: Request) -> dict[str, Any]:
        ui.check_post(request).token = None
        return {"status": "success"}

    def action_session(request: Request) -> Session:
        session = ui.check_post(request)
        if not ui.actions_enabled:
            raise HTTPException(403, "actions are disabled on this UI (ui.actions.enabled: "
                                     "false)")
        return session

    @app.post("/api/v1/topology/{topology_id}/logconfig")
    async def logconfig(request: Request, topology_id: str) -> Response:
        """Storm's dynamic log levels, forwarded with the session's token."""
        session = action_session(request)
        return await forward_post(ui.client, session,
                                  f"/api/v1/topology/{quote(topology_id, safe='')}/logconfig",
                                  await request.body())

    @app.post("/api/v1/topology/{topology_id}/debug/{action}/{spct}")
    async def debug(request: Request, topology_id: str, action: str, spct: float) -> Response:
        """Storm's debug sampling of a whole topology, forwarded with the session's token."""
        session = action_session(request)
        return await forward_post(ui.client, session, f"/api/v1/topology/"
                                  f"{quote(topology_id, safe='')}/debug/{quote(action)}/{spct}",
                                  b"")

    @app.post("/api/v1/topology/{topology_id}/component/{component}/debug/{action}/{spct}")
    async def component_debug(request: Request, topology_id: str, component: str,
                              action: str, spct: float) -> Response:
        """Storm's debug sampling of one component, forwarded with the session's token."""
        session = action_session(request)
        path = (f"/api/v1/topology/{quote(topology_id, safe='')}/component/"
                f"{quote(component, safe='')}/debug/{quote(action)}/{spct}")
        return await forward_post(ui.client, session, path, b"")

    @app.post("/api/v1/topology/{topology_id}/{action}")
    async def act(request: Request, topology_id: str, action: str) -> Response:
        session = action_session(request)
        return await forward_action(ui.client, session, topology_id, action, None,
                                    await request.body())

    @app.post("/api/v1/topology/{topology_id}/{action}/{wait}")
    async def act_wait(request: Request, topology_id: str, action: str, wait: int) -> Response:
        session = action_session(request)
        return await forward_action(ui.client, session, topology_id, action, wait,
                                    await request.body())

    @app.get("/api/v1/topology/{topology_id}/stacktrace")
    async def stack_traces(request: Request, topology_id: str) -> Response:
        """The workers' stack traces: Nimbus serves them only with the session's token."""
        session = ui.check_session(request)
        if not ui.actions_enabled:
            raise HTTPException(403, "actions are disabled on this UI (ui.actions.enabled: "
                                     "false)")
        return await forward_stack_traces(ui.client, session, topology_id)

    @app.get("/api/v1/topology/{topology_id}/logs")
    async def log_tail(request: Request, topology_id: str) -> Response:
        """A worker's or executor's log tail.

        Nimbus serves it only with the session's token (logs can hold what components print).
        """
        return await forward_token_get(
            ui.client, ui.check_session(request),
            f"/api/v1/topology/{quote(topology_id, safe='')}/logs", request.query_params)

    _logviewer_routes(app, ui)


def _logviewer_routes(app: FastAPI, ui: UiServer) -> None:
    """Log pages, searches and downloads (Nimbus's logviewer routes), with the session's token."""
    def topology_log(what: str) -> Any:
        async def read(request: Request, topology_id: str) -> Response:
            path = f"/api/v1/topology/{quote(topology_id, safe='')}/{what}"
            session = ui.check_session(request)
            if what == "logdownload":
                return await _download(ui, session, path, request.query_params)
            return await forward_token_get(ui.client, session, path, request.query_params)
        return read

    for what in ("logfiles", "logfile", "logsearch", "logdownload"):
        app.add_api_route(f"/api/v1/topology/{{topology_id}}/{what}", topology_log(what),
                          methods=["GET"])

    @app.get("/api/v1/daemonlogs")
    async def daemon_logs(request: Request) -> Response:
        return await forward_token_get(ui.client, ui.check_session(request),
                                       "/api/v1/daemonlogs")

    @app.get("/api/v1/daemonlog")
    async def daemon_log(request: Request) -> Response:
        return await forward_token_get(ui.client, ui.check_session(request),
                                       "/api/v1/daemonlog", request.query_params)

    @app.get("/api/v1/daemonlog/search")
    async def daemon_log_search(request: Request) -> Response:
        return await forward_token_get(ui.client, ui.check_session(request),
                                       "/api/v1/daemonlog/search", request.query_params)

    @app.get("/api/v1/daemonlog/download")
    async def daemon_log_download(request: Request) -> Response:
        return await _download(ui, ui.check_session(request), "/api/v1/daemonlog/download",
                               request.query_params)


async def _download(ui: UiServer, session: Session, path: str,
                    params: Mapping[str, str]) -> Response:
    """A whole log file from Nimbus, streamed to the browser as an attachment."""
    if session.token is None:
        return JSONResponse({"error": "the cluster token is needed to download logs: open "
                                      "the log page and give it first",
                             "code": "AUTH_TOKEN_MISSING"}, status_code=401)
    request = ui.client.build_request("GET", path, params=params,
                                      headers={"Authorization": f"Bearer {session.token}"})
    response = await ui.client.send(request, stream=True)
    if response.status_code != HTTPStatus.OK:
        body = await response.aread()
        await response.aclose()
        return Response(body, status_code=response.status_code,
                        media_type=response.headers.get("content-type", "application/json"))
    headers = {k: v for k, v in response.headers.items()
               if k.lower() in ("content-disposition", "content-type")}
    return StreamingResponse(response.aiter_bytes(), headers=headers,
                             background=BackgroundTask(response.aclose))


def _proxy_route(app: FastAPI, ui: UiServer) -> None:
    @app.get("/api/v1/{path:path}")
    async def proxy(request: Request, path: str) -> Response:
        """Nimbus's read-only UI API, as is (no token is ever added to a GET).

        Only under ``/api/v1``: a path that climbs out of it (``..``, encoded or not) is
        not Nimbus's API, and is not served.
        """
        if any(part in ("..", ".") for part in unquote(path).replace("\\", "/").split("/")):
            raise HTTPException(404, f"there is no API path {path!r}")
        response = await ui.nimbus_get(f"/api/v1/{quote(path, safe='/')}",
                                       params=request.query_params)
        return Response(response.content, status_code=response.status_code,
                        media_type=response.headers.get("content-type", "application/json"))
