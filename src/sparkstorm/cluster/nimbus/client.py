"""The HTTP client of Nimbus's API, used by the CLI, supervisors and workers.

A refused call raises :class:`NimbusError` with the code from the server's JSON body; an
unreachable Nimbus raises ``NIMBUS_UNAVAILABLE``.
"""

from __future__ import annotations

import hashlib
import ssl
from collections.abc import Mapping
from http import HTTPStatus
from pathlib import Path
from typing import Any

import httpx

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.token import read_token
from sparkstorm.config import conf_int, conf_str
from sparkstorm.tls.contexts import http_scheme, http_verify

CHUNK_BYTES = 1 << 20


def nimbus_url(conf: Mapping[str, object]) -> str:
    """``https://<nimbus.host>:<nimbus.port>`` (0.0.0.0 means: this machine; http without TLS)."""
    host = conf_str(conf, "nimbus.host")
    host = "127.0.0.1" if host in ("0.0.0.0", "") else host
    return f"{http_scheme(conf)}://{host}:{conf_int(conf, 'nimbus.port')}"


class NimbusClient:
    """Calls one Nimbus.

    Args:
        url: Nimbus's base URL.
        token: the cluster token (None: send none; mutating calls then fail).
        timeout: seconds per request.
        origin: where the address came from, for the error when it cannot be reached
            (e.g. ``config.json envs.prod.nimbus = 'host:6627'``; None: nimbus.host/port).
        verify: how an ``https`` Nimbus is checked: the cluster CA and this host's client
            certificate (:func:`sparkstorm.tls.contexts.http_verify`).
    """

    def __init__(self, url: str, token: str | None, timeout: float = 30.0,
                 origin: str | None = None, verify: ssl.SSLContext | bool = True) -> None:
        self.url = url.rstrip("/")
        self.origin = origin
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout,
                                 verify=verify)

    @classmethod
    def from_conf(cls, conf: Mapping[str, object], *, timeout: float = 30.0,
                  origin: str | None = None, url: str | None = None,
                  token: str | None = None) -> NimbusClient:
        """A client for the Nimbus, token and TLS material that ``conf`` names (see the class).

        ``url``/``token`` replace the ones ``conf`` names.
        """
        return cls(url or nimbus_url(conf), token or read_token(conf), timeout, origin,
                   http_verify(conf))

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """Send one request and return its JSON body.

        Raises:
            NimbusError: the server's code, or ``NIMBUS_UNAVAILABLE``.
        """
        response = self._send(method, path, **kwargs)
        return response.json()

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            where = (f"the address is {self.origin}: fix it there, or give -c nimbus.host=HOST"
                     if self.origin else "do nimbus.host/nimbus.port point at it?")
            msg = (f"cannot reach Nimbus at {self.url} ({type(exc).__name__}: {exc}); is "
                   f"'sparkstorm nimbus' running, and {where}")
            raise NimbusError(msg, code="NIMBUS_UNAVAILABLE") from exc
        if response.status_code >= HTTPStatus.BAD_REQUEST:
            raise _error_from(response)
        return response

    # --- code and topologies --------------------------------------------------------------------

    def upload(self, archive: Path) -> str:
        """Upload a zip in chunks; return the upload id to submit with."""
        upload_id = str(self.call("POST", "/api/v1/uploads")["upload_id"])
        digest = hashlib.sha256()
        with archive.open("rb") as source:
            for chunk in iter(lambda: source.read(CHUNK_BYTES), b""):
                digest.update(chunk)
                self.call("PUT", f"/api/v1/uploads/{upload_id}", content=chunk)
        self.call("POST", f"/api/v1/uploads/{upload_id}/finish",
                  json={"sha256": digest.hexdigest()})
        return upload_id

    def submit(self, name: str, upload_id: str, spec: dict[str, Any],
               conf: Mapping[str, object], *, active: bool = True, owner: str = "") -> str:
        """Submit a topology; return its id."""
        body = {"name": name, "upload_id": upload_id, "spec": spec, "conf": dict(conf),
                "active": active, "owner": owner}
        return str(self.call("POST", "/api/v1/topologies", json=body)["topologyId"])

    def register_application(self, name: str, spec: dict[str, Any],
                             conf: Mapping[str, object], application: Mapping[str, Any],
                             *, active: bool = True) -> dict[str, str]:
        """Register a topology running as its own Spark application.

        Returns its ``topology_id`` and the ``worker_id`` its driver heartbeats under (see
        :mod:`sparkstorm.cluster.nimbus.applications`).
        """
        body = {"name": name, "spec": spec, "conf": dict(conf),
                "application": dict(application), "active": active}
        answer = self.call("POST", "/api/v1/applications", json=body)
        return {"topology_id": str(answer["topology_id"]),
                "worker_id": str(answer["worker_id"])}

    def topologies(self) -> list[dict[str, Any]]:
        """The rows of ``GET /api/v1/topology/summary``."""
        rows: list[dict[str, Any]] = self.call("GET", "/api/v1/topology/summary")["topologies"]
        return rows

    def topology_id(self, name: str) -> str:
        """The id of the live topology named ``name``.

        Raises:
            NimbusError: ``TOPOLOGY_NOT_FOUND``.
        """
        for row in self.topologies():
            if row["name"] == name:
                return str(row["id"])
        msg = f"no live topology named {name!r}; see 'sparkstorm list'"
        raise NimbusError(msg, code="TOPOLOGY_NOT_FOUND")

    def topology_spec(self, topology_id: str) -> dict[str, Any]:
        """The topology's spec as submitted (executor counts as rebalanced); needs the token.

        Raises:
            NimbusError: ``TOPOLOGY_NOT_FOUND``, ``AUTH_TOKEN_MISSING``, ...
        """
        spec: dict[str, Any] = self.call("GET", f"/api/v1/topology/{topology_id}/spec")["spec"]
        return spec

    def name_allowed(self, name: str) -> dict[str, Any]:
        """Storm's ``isTopologyNameAllowed``.

        Returns ``{"name", "allowed", "reason", "code"}``, with the reason and code of the refusal
        when not allowed.
        """
        answer: dict[str, Any] = self.call("GET", "/api/v1/topologies/name-allowed",
                                           params={"name": name})
        return answer

    def action(self, topology_id: str, op: str) -> None:
        """``activate``, ``deactivate`` or ``kill/<wait secs>``."""
        self.call("POST", f"/api/v1/topology/{topology_id}/{op}")

    def rebalance(self, topology_id: str, wait_secs: int | None,
                  num_workers: int | None = None,
                  executors: Mapping[str, int] | None = None) -> None:
        """Storm UI's rebalance call (wait None: the topology's message timeout)."""
        options: dict[str, Any] = {"executors": dict(executors or {})}
        if num_workers is not None:
            options["numWorkers"] = num_workers
        path = f"/api/v1/topology/{topology_id}/rebalance"
        self.call("POST", path if wait_secs is None else f"{path}/{wait_secs}",
                  json={"rebalanceOptions": options})

    def download(self, topology_id: str, part: str, dest: Path) -> None:
        """Save a topology's ``code`` (zip), ``spec`` or ``conf`` to ``dest``."""
        response = self._send("GET", f"/api/v1/topology/{topology_id}/code",
                              params={"part": part})
        dest.write_bytes(response.content)

    # --- worker umbilical -------------------------------------------------------------------------

    def worker_init(self, worker_id: str, topology_id: str) -> dict[str, Any]:
        """The worker's init context."""
        context: dict[str, Any] = self.call("GET", f"/api/v1/worker/{worker_id}/init",
                                            params={"topology_id": topology_id})
        return context

    def heartbeat(self, worker_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Send a heartbeat; return Nimbus's orders."""
        orders: dict[str, Any] = self.call("POST", f"/api/v1/worker/{worker_id}/heartbeat",
                                           json=body)
        return orders

    def log(self, worker_id: str, body: dict[str, Any]) -> None:
        """Send a message to Nimbus's log (``{"topology_id", "level", "message"}``)."""
        self.call("POST", f"/api/v1/worker/{worker_id}/log", json=body)

    def report_stack_traces(self, worker_id: str, body: dict[str, Any]) -> None:
        """Answer a stack trace request (``{"topology_id", "stacks"}``)."""
        self.call("POST", f"/api/v1/worker/{worker_id}/stacktrace", json=body)

    def report_log_tails(self, worker_id: str, body: dict[str, Any]) -> None:
        """Send the tails of the logs Nimbus asked for.

        The body is ``{"topology_id", "sources", "tails"}``, see
        :mod:`sparkstorm.cluster.nimbus.log_tails`.
        """
        self.call("POST", f"/api/v1/worker/{worker_id}/logs", json=body)

    def report_error(self, worker_id: str, body: dict[str, Any]) -> None:
        """Report an error of a component or of the worker."""
        self.call("POST", f"/api/v1/worker/{worker_id}/error", json=body)


def _error_from(response: httpx.Response) -> NimbusError:
    try:
        body = response.json()
        return NimbusError(str(body["error"]), code=str(body["code"]))
    except (ValueError, KeyError, TypeError):
        msg = f"Nimbus answered HTTP {response.status_code}: {response.text[:300]}"
        return NimbusError(msg, code="INTERNAL_ERROR")
