"""Nimbus's REST API (FastAPI): Storm UI paths, uploads, submission and the worker umbilical.

Reads of the UI API are open (Nimbus binds to loopback by default); everything that changes
state, downloads code or belongs to a worker needs ``Authorization: Bearer <token>``.
Every error is ``{"error": <message>, "code": <CODE>}`` with the status of
:data:`~sparkstorm.cluster.nimbus.errors.CODES`.
"""

from __future__ import annotations

import logging
import reprlib
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from pydantic import BaseModel, Field, field_validator
from starlette.exceptions import HTTPException

from sparkstorm.cluster.nimbus.errors import NimbusError, status_of
from sparkstorm.cluster.nimbus.host_check import check_hosts
from sparkstorm.cluster.nimbus.log_control import LogControl
from sparkstorm.cluster.nimbus.log_tails import SOURCE, LogTails
from sparkstorm.cluster.nimbus.logviewer_proxy import LogviewerProxy
from sparkstorm.cluster.nimbus.logviewer_proxy import add_routes as add_logviewer_routes
from sparkstorm.cluster.nimbus.request_limits import RequestLimits
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.nimbus.stormdist import PARTS
from sparkstorm.cluster.nimbus.token import check_authorization
from sparkstorm.cluster.nimbus.ui_component import ComponentPage
from sparkstorm.cluster.nimbus.ui_views import UiSources, UiViews
from sparkstorm.cluster.nimbus.umbilical import Umbilical
from sparkstorm.config import conf_int
from sparkstorm.errors import SparkstormError
from sparkstorm.topology.spec import MAX_VALUE_DEPTH, value_depth

logger = logging.getLogger(__name__)


class FinishUpload(BaseModel):
    """Body of ``POST /api/v1/uploads/{id}/finish``."""

    sha256: str


class _WithConf(BaseModel):
    """A body with a topology ``conf`` override, checked for depth."""

    conf: dict[str, Any] = Field(default_factory=dict)

    @field_validator("conf")
    @classmethod
    def _not_too_deep(cls, conf: dict[str, Any]) -> dict[str, Any]:
        """Refuse a conf override nested deeper than a spec's config may be.

        A 400, not a RecursionError when the conf is copied.
        """
        for key, value in conf.items():
            if value_depth(value) > MAX_VALUE_DEPTH:
                msg = (f"conf[{key!r}] is nested more than {MAX_VALUE_DEPTH} lists or objects "
                       "deep; flatten the value")
                raise ValueError(msg)
        return conf


class SubmitTopology(_WithConf):
    """Body of ``POST /api/v1/topologies``."""

    name: str
    upload_id: str
    spec: Any
    active: bool = True
    owner: str = ""


class RegisterApplication(_WithConf):
    """Body of ``POST /api/v1/applications``: a topology running as its own Spark application.

    ``application`` says where it runs (``host``, ``rest_url``, ``ui_url``,
    ``spark_ui_url``); see :mod:`sparkstorm.cluster.nimbus.applications`.
    """

    name: str
    spec: Any
    application: dict[str, Any]
    active: bool = True
    owner: str = ""


class RebalanceOptions(BaseModel):
    """Storm UI's ``rebalanceOptions``: ``numWorkers`` and executors per component."""

    numWorkers: int | None = None  # noqa: N815 - Storm's field name
    executors: dict[str, int] = Field(default_factory=dict)


class Rebalance(BaseModel):
    """Body of ``POST /api/v1/topology/{id}/rebalance/{wait}`` (optional, as in Storm)."""

    rebalanceOptions: RebalanceOptions = Field(  # noqa: N815 - Storm's field name
        default_factory=RebalanceOptions)


def _error(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse({"error": message, "code": code}, status_code=status)


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 2, 60, 60


def _problem(error: Mapping[str, Any]) -> str:
    """One pydantic error as ``body.conf: Input should be a valid dictionary, got [1]``."""
    where = ".".join(str(part) for part in error.get("loc", ()))
    return f"{where}: {error.get('msg')}, got {_REPR.repr(error.get('input'))}"


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(SparkstormError)
    async def ours(_: Request, exc: SparkstormError) -> JSONResponse:
        return _error(status_of(exc), str(exc.args[0]) if exc.args else "", exc.code)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(_problem(error) for error in exc.errors())
        msg = (f"malformed request: {problems}; send the fields with the types of this call's "
               "request schema (GET /docs)")
        return _error(422, msg, "BAD_REQUEST")

    @app.exception_handler(HTTPException)
    async def http(_: Request, exc: HTTPException) -> JSONResponse:
        code = "NOT_FOUND" if exc.status_code == HTTPStatus.NOT_FOUND else "BAD_REQUEST"
        return _error(exc.status_code, str(exc.detail), code)

    @app.exception_handler(Exception)
    async def crashed(_: Request, exc: Exception) -> JSONResponse:
        logger.exception("nimbus request failed")
        return _error(500, f"{type(exc).__name__}: {exc}", "INTERNAL_ERROR")


def _token_check(token: str) -> Any:
    def require_token(request: Request) -> None:
        check_authorization(request.headers.get("authorization", ""), token)

    return Depends(require_token)


def create_app(nimbus: Nimbus, token: str) -> FastAPI:
    """The Nimbus API for ``nimbus``, checking mutating calls against ``token``."""
    app = FastAPI(title="sparkstorm nimbus", version="1")
    # outermost: a body is never read before its token and size are checked
    app.add_middleware(RequestLimits, token=token, max_json_bytes=conf_int(
        nimbus.conf, "nimbus.request.max.bytes"), max_upload_bytes=nimbus.inbox.max_bytes)
    check_hosts(app, nimbus.conf)  # DNS rebinding must not reach even the open reads
    _install_error_handlers(app)
    auth = _token_check(token)
    _upload_routes(app, nimbus, auth)
    _topology_routes(app, nimbus, auth)
    control = LogControl(nimbus.clock)
    views = UiViews(UiSources(nimbus, nimbus.state, nimbus.conf, nimbus.clock, nimbus.started,
                              control.sampling))
    _ui_routes(app, views, ComponentPage(views))
    tails = LogTails(nimbus.clock)
    _worker_routes(app, nimbus.umbilical, auth, tails, control)
    _log_routes(app, views, tails, auth)
    add_logviewer_routes(app, LogviewerProxy(nimbus.state, nimbus.conf, token), auth)
    _log_control_routes(app, views, control, auth)
    return app


def _log_control_routes(app: FastAPI, views: UiViews, control: LogControl,
                        auth: Any) -> None:
    """Add the routes of Storm UI's dynamic log levels and debug sampling.

    See :mod:`sparkstorm.cluster.nimbus.log_control`.
    """
    @app.get("/api/v1/topology/{topology_id}/logconfig")
    def logconfig(topology_id: str) -> dict[str, Any]:
        views.topologies.storm(topology_id)
        return control.levels(topology_id)

    @app.post("/api/v1/topology/{topology_id}/logconfig", dependencies=[auth])
    def set_logconfig(topology_id: str, body: dict[str, Any]) -> dict[str, Any]:
        views.topologies.storm(topology_id)
        return control.set_levels(topology_id, body)

    def debug(topology_id: str, component: str | None, action: str,
              spct: float) -> dict[str, Any]:
        views.topologies.storm(topology_id)
        if action not in ("enable", "disable"):
            msg = f"unknown debug action {action!r}; use enable or disable"
            raise NimbusError(msg, code="BAD_REQUEST")
        if component is not None:
            names = {str(c["name"]) for c in
                     views.topologies.topology_spec(topology_id)["components"]}
            if component not in names:
                msg = f"topology {topology_id} has no component {component!r}"
                raise NimbusError(msg, code="COMPONENT_NOT_FOUND")
        control.set_sampling(topology_id, component, action == "enable", spct)
        return _action(f"debug/{action}", topology_id)

    @app.post("/api/v1/topology/{topology_id}/debug/{action}/{spct}", dependencies=[auth])
    def topology_debug(topology_id: str, action: str, spct: float) -> dict[str, Any]:
        return debug(topology_id, None, action, spct)

    @app.post("/api/v1/topology/{topology_id}/component/{component}/debug/{action}/{spct}",
              dependencies=[auth])
    def component_debug(topology_id: str, component: str, action: str,
                        spct: float) -> dict[str, Any]:
        return debug(topology_id, component, action, spct)


def _log_routes(app: FastAPI, views: UiViews, tails: LogTails, auth: Any) -> None:
    """The live log viewer's reads (see :mod:`sparkstorm.cluster.nimbus.log_tails`)."""
    @app.get("/api/v1/topology/{topology_id}/logs", dependencies=[auth])
    def logs(topology_id: str, worker: str, source: str = "worker") -> dict[str, Any]:
        views.topologies.storm(topology_id)
        if not SOURCE.match(source):
            msg = f"unknown log {source!r}; ask for 'worker' or 'executor-<executor id>'"
            raise NimbusError(msg, code="BAD_REQUEST")
        assignment = views.state.get_assignment(topology_id)
        slots = {wid: slot for slot, wid in (assignment.worker_ids.items()
                                             if assignment else ())}
        if worker not in slots:
            msg = (f"topology {topology_id} has no worker {worker!r} now; its workers are "
                   f"{sorted(slots)}")
            raise NimbusError(msg, code="WORKER_NOT_ASSIGNED")
        tails.forget({wid for tid in views.state.assignments()
                      for wid in views.worker_ids(tid)})
        tails.want(worker, source)
        slot = slots[worker]
        return {"topologyId": topology_id, "workerId": worker, "source": source,
                "host": views.host_names(assignment).get(slot.node, slot.node),
                "port": slot.port, **tails.read(worker, source)}

    @app.post("/api/v1/worker/{worker_id}/logs", dependencies=[auth])
    def log_tails(worker_id: str, body: dict[str, Any]) -> dict[str, Any]:
        tails.store(worker_id, body)
        return {"status": "success"}


def _upload_routes(app: FastAPI, nimbus: Nimbus, auth: Any) -> None:
    @app.post("/api/v1/uploads", dependencies=[auth])
    def begin_upload() -> dict[str, Any]:
        return {"upload_id": nimbus.inbox.begin(), "max_bytes": nimbus.inbox.max_bytes}

    @app.put("/api/v1/uploads/{upload_id}", dependencies=[auth])
    async def upload_chunk(upload_id: str, request: Request) -> dict[str, Any]:
        size = 0
        # streamed: an oversize chunk is refused without holding it in memory
        async for piece in request.stream():
            if piece:
                size = nimbus.inbox.chunk(upload_id, piece)
        return {"upload_id": upload_id, "size": size}

    @app.post("/api/v1/uploads/{upload_id}/finish", dependencies=[auth])
    def finish_upload(upload_id: str, body: FinishUpload) -> dict[str, Any]:
        nimbus.inbox.finish(upload_id, body.sha256)
        return {"upload_id": upload_id, "status": "success"}


def _action(op: str, topology_id: str) -> dict[str, Any]:
    return {"topologyOperation": op, "topologyId": topology_id, "status": "success"}


def _topology_routes(app: FastAPI, nimbus: Nimbus, auth: Any) -> None:
    @app.post("/api/v1/topologies", dependencies=[auth])
    def submit(body: SubmitTopology) -> dict[str, Any]:
        topology_id = nimbus.submit(body.name, body.upload_id, body.spec, body.conf,
                                    active=body.active, owner=body.owner)
        return {"topologyId": topology_id, "status": "success"}

    @app.post("/api/v1/applications", dependencies=[auth])
    def register(body: RegisterApplication) -> dict[str, Any]:
        return nimbus.register_application(body.name, body.spec, body.conf, body.application,
                                           active=body.active, owner=body.owner)

    @app.post("/api/v1/topology/{topology_id}/activate", dependencies=[auth])
    def activate(topology_id: str) -> dict[str, Any]:
        nimbus.set_active(topology_id, True)
        return _action("activate", topology_id)

    @app.post("/api/v1/topology/{topology_id}/deactivate", dependencies=[auth])
    def deactivate(topology_id: str) -> dict[str, Any]:
        nimbus.set_active(topology_id, False)
        return _action("deactivate", topology_id)

    @app.post("/api/v1/topology/{topology_id}/kill/{wait}", dependencies=[auth])
    def kill(topology_id: str, wait: int) -> dict[str, Any]:
        nimbus.kill(topology_id, max(0, wait))
        return _action("kill", topology_id)

    @app.post("/api/v1/topology/{topology_id}/kill", dependencies=[auth])
    def kill_default_wait(topology_id: str) -> dict[str, Any]:
        nimbus.kill(topology_id)  # waits the topology's topology.message.timeout.secs
        return _action("kill", topology_id)

    @app.post("/api/v1/topology/{topology_id}/rebalance/{wait}", dependencies=[auth])
    def rebalance(topology_id: str, wait: int, body: Rebalance | None = None) -> dict[str, Any]:
        options = (body or Rebalance()).rebalanceOptions
        nimbus.rebalance(topology_id, max(0, wait), options.numWorkers, options.executors)
        return _action("rebalance", topology_id)

    @app.post("/api/v1/topology/{topology_id}/rebalance", dependencies=[auth])
    def rebalance_default_wait(topology_id: str,
                               body: Rebalance | None = None) -> dict[str, Any]:
        options = (body or Rebalance()).rebalanceOptions  # waits the message timeout
        nimbus.rebalance(topology_id, None, options.numWorkers, options.executors)
        return _action("rebalance", topology_id)

    @app.get("/api/v1/topologies/name-allowed")
    def name_allowed(name: str) -> dict[str, Any]:
        refusal = nimbus.name_refusal(name)  # Storm's isTopologyNameAllowed
        return {"name": name, "allowed": refusal is None,
                "reason": str(refusal.args[0]) if refusal else None,
                "code": refusal.code if refusal else None}

    @app.get("/api/v1/topology/{topology_id}/spec", dependencies=[auth])
    def spec(topology_id: str) -> dict[str, Any]:
        base = nimbus.storm(topology_id)  # Storm's getUserTopology; it names the code
        return {"topologyId": topology_id, "name": base.name,
                "spec": nimbus.topology_spec(topology_id)}

    @app.get("/api/v1/topology/{topology_id}/code", dependencies=[auth])
    def code(topology_id: str, part: str = "code") -> FileResponse:
        nimbus.storm(topology_id)
        if part not in PARTS:
            msg = f"unknown code part {part!r}; ask for one of {sorted(PARTS)}"
            raise NimbusError(msg, code="BAD_REQUEST")
        path = nimbus.stormdist.folder(topology_id) / PARTS[part]
        if not path.is_file():
            msg = f"topology {topology_id} has no {part} on this Nimbus"
            raise NimbusError(msg, code="TOPOLOGY_NOT_FOUND")
        return FileResponse(path)


def _ui_routes(app: FastAPI, views: UiViews, components: ComponentPage) -> None:
    app.get("/api/v1/cluster/summary")(views.cluster_summary)
    app.get("/api/v1/cluster/configuration")(views.cluster_configuration)
    app.get("/api/v1/nimbus/conf")(views.cluster_configuration)
    app.get("/api/v1/nimbus/summary")(views.nimbus_summary)
    app.get("/api/v1/supervisor/summary")(views.supervisor_summary)
    app.get("/api/v1/topology/summary")(views.topology_summary)

    @app.get("/api/v1/owner-resources")
    def owner_resources() -> dict[str, Any]:
        return views.owner_resources()

    @app.get("/api/v1/owner-resources/{owner}")
    def owner_resource(owner: str) -> dict[str, Any]:
        return views.owner_resources(owner)

    @app.get("/api/v1/supervisor")
    def supervisor(id: str | None = None, host: str | None = None) -> dict[str, Any]:  # noqa: A002
        return views.supervisor(id, host)

    @app.get("/api/v1/topology-workers/{topology_id}")
    def topology_workers(topology_id: str) -> dict[str, Any]:
        return views.topology_workers(topology_id)

    @app.get("/api/v1/topology/{topology_id}")
    def topology(topology_id: str, window: str | None = None) -> dict[str, Any]:
        return views.topology(topology_id, window)

    @app.get("/api/v1/topology/{topology_id}/metrics")
    def metrics(topology_id: str, window: str | None = None) -> dict[str, Any]:
        """Storm 2.x serves the topology page here too."""
        return views.topology(topology_id, window)

    @app.get("/api/v1/topology/{topology_id}/conf")
    def topology_conf(topology_id: str) -> dict[str, Any]:
        return views.topology_conf(topology_id)

    @app.get("/api/v1/topology/{topology_id}/visualization")
    def visualization(topology_id: str) -> dict[str, Any]:
        return views.visualization(topology_id)

    @app.get("/api/v1/topology/{topology_id}/component/{component}")
    def component(topology_id: str, component: str,
                  window: str | None = None) -> dict[str, Any]:
        return components.page(topology_id, component, window)


def _worker_routes(app: FastAPI, umbilical: Umbilical, auth: Any, tails: LogTails,
                   control: LogControl) -> None:
    @app.get("/api/v1/worker/{worker_id}/init", dependencies=[auth])
    def init(worker_id: str, topology_id: str | None = None) -> dict[str, Any]:
        return umbilical.init_context(worker_id, topology_id)

    @app.post("/api/v1/worker/{worker_id}/heartbeat", dependencies=[auth])
    def heartbeat(worker_id: str, body: dict[str, Any]) -> dict[str, Any]:
        topology_id = str(body.get("topology_id") or "")
        return {**umbilical.heartbeat(worker_id, body), "send_logs": tails.wanted(worker_id),
                "log_control": control.orders(topology_id)}

    @app.post("/api/v1/worker/{worker_id}/log", dependencies=[auth])
    def log(worker_id: str, body: dict[str, Any]) -> dict[str, Any]:
        umbilical.log(worker_id, body)
        return {"status": "success"}

    @app.post("/api/v1/worker/{worker_id}/stacktrace", dependencies=[auth])
    def stacktrace_answer(worker_id: str, body: dict[str, Any]) -> dict[str, Any]:
        umbilical.store_stack_traces(worker_id, body)
        return {"status": "success"}

    @app.post("/api/v1/topology/{topology_id}/stacktrace", dependencies=[auth])
    def stacktrace_request(topology_id: str) -> dict[str, Any]:
        workers = umbilical.request_stack_traces(topology_id)
        return {**_action("stacktrace", topology_id), "workers": workers}

    @app.get("/api/v1/topology/{topology_id}/stacktrace", dependencies=[auth])
    def stacktraces(topology_id: str) -> dict[str, Any]:
        return umbilical.stack_traces(topology_id)

    @app.post("/api/v1/worker/{worker_id}/error", dependencies=[auth])
    def error(worker_id: str, body: dict[str, Any]) -> dict[str, Any]:
        umbilical.report_error(worker_id, body)
        return {"status": "success"}
