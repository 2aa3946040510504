"""The control plane a spark-submitted topology carries: REST API, web UI, umbilical.

A topology deployed with ``spark-submit`` has no Nimbus to serve its REST API, so its driver
runs one of its own, for this topology only: a Nimbus on an embedded state store in the
application's folder, serving the Storm UI REST API on ``topology.app.rest.port``, and the
web UI on ``topology.app.ui.port`` (both a free port by default, on ``topology.app.host``).
The topology registers there as an application (:mod:`sparkstorm.cluster.nimbus.
applications`) and the driver heartbeats to it as a supervisor's worker does
(:class:`AppWorker`): the figures, errors and actions an operator sees are the same as
under a cluster's Nimbus, and the CLI's topology commands take its address
(``--nimbus URL``). Actions need the token: ``storm.cluster.token`` when set, else one
generated into ``<folder>/nimbus/token`` (mode 0600), logged at start.

With ``nimbus.host`` set (on the command line, in the topology or ``SPARKSTORM_NIMBUS_HOST``)
the topology registers with that Nimbus too, so that the cluster's UI lists it beside
supervisor-run topologies; an action taken in either reaches the driver (each umbilical
passes on what changed in its Nimbus's answers, so the two do not undo each other).

With ``storm.tls.enabled`` and material named (``storm.tls.dir`` or ``storm.tls.{ca,cert,key}.
file``, e.g. a ``sparkstorm tls init`` folder shipped with the application), the REST API
serves HTTPS and asks callers for a certificate of that CA as Nimbus does
(``nimbus.tls.client.auth``), the UI serves HTTPS without asking browsers for one, and the
addresses are ``https://``. Without material named it stays plain ``http://``: spark-submit
on YARN or Kubernetes has no cluster CA, and the default folder (``<storm.local.dir>/tls``)
is never made here, as Nimbus would.
"""

from __future__ import annotations

import logging
import os
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparkstorm.cluster.nimbus.client import NimbusClient
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.worker.log_files import WORKER_LOG
from sparkstorm.cluster.worker.worker import ClusterWorker
from sparkstorm.config import conf_float, conf_int, conf_optional_str, conf_str, load_config
from sparkstorm.periodic import PeriodicThread
from sparkstorm.tls.contexts import http_verify, uvicorn_ssl
from sparkstorm.tls.material import tls_enabled

logger = logging.getLogger(__name__)

SERVER_STOP_SECS = 5.0
EDGE_ORDERS = ("active", "executor_counts", "log_control")
"""Orders a driver with two Nimbuses takes only when they change (see the module docs)."""
MATERIAL_KEYS = ("storm.tls.dir", "storm.tls.ca.file", "storm.tls.cert.file",
                 "storm.tls.key.file")
"""Any of them given names the TLS material the control plane serves with (module docs)."""


@dataclass(frozen=True)
class ControlAddresses:
    """Where the application's control plane answers."""

    rest_url: str
    ui_url: str | None
    token_file: Path | None
    """Where the generated token is (None: ``storm.cluster.token`` is set)."""


class AppWorker(ClusterWorker):
    """The driver's umbilical to a Nimbus: heartbeats out, orders in.

    The worker's heartbeat and orders (:class:`~sparkstorm.cluster.worker.worker.\
ClusterWorker`), for a runner this application started itself. ``stop`` is set when the
    Nimbus says ``shutdown`` (the topology was killed there).

    Args:
        client: the Nimbus client.
        worker_id, topology_id: what registering answered.
        folder: where the driver's log (``worker.log``) is, for the log viewer.
        edge_triggered: take :data:`EDGE_ORDERS` only when they change.
    """

    def __init__(self, client: NimbusClient, worker_id: str, topology_id: str, folder: Path,
                 *, edge_triggered: bool = False) -> None:
        super().__init__(client, worker_id, topology_id, folder, folder)
        self.edge_triggered = edge_triggered
        self._last: dict[str, Any] = {}
        self._timer: PeriodicThread | None = None

    def begin(self, heartbeat_secs: float) -> None:
        """Heartbeat every ``heartbeat_secs`` from now on (first one now)."""
        self._timer = PeriodicThread(f"umbilical-{self.topology_id}", max(0.1, heartbeat_secs),
                                     self._heartbeat_round, first_now=True)
        self._beats = self._timer
        self._timer.start()

    def starting(self, runner: Any) -> None:
        """The driver being started (its plan shows in the heartbeats meanwhile)."""
        self._starting = runner

    def running(self, runner: Any) -> None:
        """The driver runs: its statistics, endpoints and errors go out with each beat."""
        with self._lock:
            self._starting = runner
            self.runner = runner
            runner.set_active(self.active)

    def start_failed(self, failure: Exception) -> None:
        """Report a failed start under its component, as a worker does."""
        self._start_failed(failure)

    def end(self) -> None:
        """Stop heartbeating."""
        if self._timer is not None:
            self._timer.stop(SERVER_STOP_SECS)

    def _local_heartbeat(self, body: dict[str, Any]) -> None:
        """No ``heartbeat.json``: no supervisor reads it."""

    def _controlled(self, runner: Any) -> list[Any]:
        """Every executor that answers: the driver's own and those Spark tasks host."""
        return [e for e in runner.plan.executors if e.gid in runner.pool.endpoints]

    def _follow_assignment(self, executors: list[Any]) -> None:
        """Nothing: the application's one slot names every executor.

        Who hosts them (Spark's tasks or the driver) is the application's choice.
        """

    def _follow_counts(self, counts: dict[str, Any], executors: Any) -> None:
        """``rebalance -e``: the driver regroups in place.

        Executors it hosts itself regroup in its pool; executors hosted by Spark follow
        the driver's plan through their hosting link (``hosted`` None: all are the driver's).
        """
        hosted_here = self.runner is not None and len(self.runner.pool.sockets) == len(
            self.runner.plan.executors)
        super()._follow_counts(counts, None if hosted_here else [])

    def _obey(self, orders: dict[str, Any]) -> None:
        if self.edge_triggered:
            for key in EDGE_ORDERS:
                if key in orders:
                    if orders[key] == self._last.get(key):
                        del orders[key]
                    else:
                        self._last[key] = orders[key]
        super()._obey(orders)


class AppControl:
    """The application's own Nimbus, REST API and UI, and its umbilicals (module docs).

    Args:
        name: the topology's name.
        conf: the topology's effective conf.
        folder: the application's folder (state store, token, the driver's log); the
            caller removes it.
        host: the address to serve on and advertise.
        remote_nimbus: the conf naming a cluster's Nimbus to register with too (None: none).
    """

    def __init__(self, name: str, conf: Mapping[str, Any], folder: Path, host: str,
                 remote_nimbus: Mapping[str, Any] | None = None) -> None:
        self.name = name
        self.folder = folder
        self.host = host
        self.conf = dict(conf)
        self.remote_conf = dict(remote_nimbus) if remote_nimbus is not None else None
        self.own_conf: dict[str, object] = {
            **load_config(), "storm.local.dir": str(folder), "storm.state.store": "embedded",
            "storm.cluster.token": self.conf.get("storm.cluster.token") or "",
            "nimbus.host": host, "nimbus.monitor.freq.secs": 1,
            "nimbus.cleanup.inbox.freq.secs": 3600, "ui.host": host,
            "worker.heartbeat.frequency.secs": conf_float(conf, "worker.heartbeat.frequency.secs"),
            **_tls_conf(conf),
        }
        self.addresses: ControlAddresses | None = None
        self.workers: list[AppWorker] = []
        self._store: Any = None
        self._nimbus: Any = None
        self._servers: list[tuple[Any, threading.Thread]] = []
        self._clients: list[NimbusClient] = []
        self._log_handler: logging.Handler | None = None

    # --- serving ----------------------------------------------------------------------------

    def start(self) -> ControlAddresses:
        """Serve the REST API (and the UI unless ``topology.app.ui.port`` is -1)."""
        from sparkstorm.cluster.nimbus.api import create_app
        from sparkstorm.cluster.nimbus.service import Nimbus
        from sparkstorm.cluster.nimbus.token import load_or_create_token, token_file
        from sparkstorm.cluster.store import open_store
        from sparkstorm.cluster.store.cluster_state import ClusterState

        self._keep_driver_log()
        self._store = open_store(self.own_conf)
        self._nimbus = Nimbus(self.own_conf, ClusterState(self._store))
        token = load_or_create_token(self.own_conf)
        self.own_conf["storm.cluster.token"] = token
        required = conf_str(self.own_conf, "nimbus.tls.client.auth") == "required"
        rest_port = self._serve(create_app(self._nimbus, token),
                                conf_int(self.conf, "topology.app.rest.port"), "rest-api",
                                uvicorn_ssl(self.own_conf, require_client=required))
        self._nimbus.assigner.start()
        scheme = "https" if tls_enabled(self.own_conf) else "http"
        rest_url = f"{scheme}://{_url_host(self.host)}:{rest_port}"
        ui_url = None
        if conf_int(self.conf, "topology.app.ui.port") >= 0:
            from sparkstorm.web.app import create_app as create_ui

            ui_port = self._serve(create_ui(self.own_conf, rest_url, self._ui_transport()),
                                  conf_int(self.conf, "topology.app.ui.port"), "ui",
                                  uvicorn_ssl(self.own_conf, require_client=False))
            ui_url = f"{scheme}://{_url_host(self.host)}:{ui_port}"
        generated = None if self.conf.get("storm.cluster.token") else token_file(self.own_conf)
        self.addresses = ControlAddresses(rest_url, ui_url, generated)
        return self.addresses

    def _serve(self, app: Any, port: int, name: str, ssl_options: Mapping[str, Any]) -> int:
        """Serve ``app`` with uvicorn on a thread; return the port it listens on.

        ``ssl_options``: uvicorn's TLS keywords (:func:`~sparkstorm.tls.contexts.uvicorn_ssl`).
        """
        import uvicorn

        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, port))
        except OSError as exc:
            sock.close()
            from sparkstorm.errors import ConfigError

            msg = (f"cannot serve the topology's {name} on {self.host}:{port} ({exc}); set "
                   f"topology.app.{'rest' if name == 'rest-api' else 'ui'}.port to a free "
                   "port (0: any) or topology.app.host to an address of this host")
            raise ConfigError(msg, code="APP_PORT_UNAVAILABLE") from exc
        sock.listen(128)  # callers queue from now on, not refused until uvicorn's thread runs
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                **ssl_options)
        try:  # here, not in the thread: bad material must stop the start, not one server
            config.load()
        except (ssl.SSLError, OSError) as exc:
            sock.close()
            from sparkstorm.errors import ConfigError

            msg = (f"cannot serve the topology's {name} over HTTPS: the TLS material "
                   f"{ssl_options.get('ssl_certfile')} / {ssl_options.get('ssl_keyfile')} "
                   f"does not load ({exc}); give storm.tls.dir a folder 'sparkstorm tls init' "
                   "made (or matching storm.tls.cert.file and storm.tls.key.file)")
            raise ConfigError(msg, code="TLS_MATERIAL_INVALID") from exc
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                                  name=f"app-{name}", daemon=True)
        thread.start()
        self._servers.append((server, thread))
        return int(sock.getsockname()[1])

    def _ui_transport(self) -> Any:
        """The UI's way to the REST API: over TLS, a connection per call (None: httpx's own).

        An idle TLS connection kept open would hold the REST server's stop until its
        keep-alive timeout (the server waits for the close_notify an idle client never reads).
        """
        if not tls_enabled(self.own_conf):
            return None
        import httpx

        return httpx.AsyncHTTPTransport(verify=http_verify(self.own_conf),
                                        limits=httpx.Limits(max_keepalive_connections=0))

    def _keep_driver_log(self) -> None:
        """A copy of the driver's log in the folder: the UI's log viewer shows it."""
        handler = logging.FileHandler(self.folder / WORKER_LOG)
        handler.setFormatter(logging.Formatter(
            "%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logging.getLogger().addHandler(handler)
        self._log_handler = handler

    # --- the umbilicals ---------------------------------------------------------------------

    def register(self, spec: dict[str, Any], application: dict[str, Any],
                 *, active: bool = True) -> str:
        """Register with the own Nimbus (and the remote one); start heartbeating.

        Returns the topology's id in the own Nimbus.

        Raises:
            NimbusError: the own Nimbus refused it (what a submit would refuse).
        """
        assert self.addresses is not None
        where = {"host": self.host, "rest_url": self.addresses.rest_url,
                 "ui_url": self.addresses.ui_url or "", **application}
        # the own Nimbus keeps the conf as given (its defaults are the topology's already)
        conf = {k: v for k, v in self.conf.items() if k != "storm.cluster.token"}
        targets: list[tuple[str, str, ssl.SSLContext | bool]] = [
            (self.addresses.rest_url, str(self.own_conf["storm.cluster.token"]),
             http_verify(self.own_conf))]
        if self.remote_conf is not None:
            from sparkstorm.cluster.nimbus.client import nimbus_url
            from sparkstorm.cluster.nimbus.token import read_token

            targets.append((nimbus_url(self.remote_conf), read_token(self.remote_conf) or "",
                            http_verify(self.remote_conf)))
        own_id = ""
        for index, (url, token, verify) in enumerate(targets):
            client = NimbusClient(url, token or None, timeout=10.0, verify=verify)
            self._clients.append(client)
            try:
                ids = client.register_application(self.name, spec, conf, where, active=active)
            except NimbusError as exc:
                if index == 0:
                    raise
                logger.warning("not registered with Nimbus at %s: %s", url, exc)
                continue
            own_id = own_id or ids["topology_id"]
            worker = AppWorker(client, ids["worker_id"], ids["topology_id"], self.folder,
                               edge_triggered=len(targets) > 1)
            self.workers.append(worker)
            logger.info("topology registered as %s with Nimbus at %s", ids["topology_id"], url)
        for worker in self.workers:
            worker.begin(conf_float(self.own_conf, "worker.heartbeat.frequency.secs"))
        return own_id

    def starting(self, runner: Any) -> None:
        """See :meth:`AppWorker.starting`."""
        for worker in self.workers:
            worker.starting(runner)

    def running(self, runner: Any) -> None:
        """See :meth:`AppWorker.running`."""
        for worker in self.workers:
            worker.running(runner)

    def start_failed(self, failure: Exception) -> None:
        """See :meth:`AppWorker.start_failed`."""
        for worker in self.workers:
            worker.start_failed(failure)

    @property
    def killed(self) -> bool:
        """Whether a Nimbus said ``shutdown``: the topology was killed there."""
        return any(worker.stop.is_set() for worker in self.workers)

    def stop(self) -> None:
        """Stop heartbeating, unregister from a remote Nimbus, stop serving."""
        for worker in self.workers:
            worker.end()
        for worker in self.workers[1:]:  # the cluster's Nimbus forgets it now
            try:
                worker.client.action(worker.topology_id, "kill/0")
            except NimbusError as exc:
                logger.info("not unregistered from %s: %s", worker.client.url, exc)
        for client in self._clients:
            client.close()
        for server, _ in self._servers:
            server.should_exit = True
        deadline = time.monotonic() + SERVER_STOP_SECS
        for _, thread in self._servers:
            thread.join(max(0.1, deadline - time.monotonic()))
        if self._nimbus is not None:
            self._nimbus.assigner.stop()
        if self._store is not None:
            self._store.close()
        if self._log_handler is not None:
            logging.getLogger().removeHandler(self._log_handler)
            self._log_handler.close()


def app_host(conf: Mapping[str, Any], spark_conf: Mapping[str, str]) -> str:
    """The address the control plane serves on (``topology.app.host``, module docs).

    Example:
        >>> app_host({}, {"spark.master": "local[4]"})
        '127.0.0.1'
        >>> app_host({}, {"spark.master": "spark://m:7077", "spark.driver.host": "10.0.0.5"})
        '10.0.0.5'
    """
    configured = conf_str(conf, "topology.app.host")
    if configured:
        return configured
    if str(spark_conf.get("spark.master", "")).startswith("local"):
        return "127.0.0.1"
    driver_host = spark_conf.get("spark.driver.host")
    if driver_host:
        return str(driver_host)
    from sparkstorm.spark_app.share import local_address

    return local_address()


def remote_nimbus(cli_conf: Mapping[str, Any], topology_conf: Mapping[str, Any],
                  conf: Mapping[str, Any]) -> dict[str, Any] | None:
    """The conf of a cluster's Nimbus to register with, when ``nimbus.host`` is set.

    Set means given on the command line, in the topology or in ``SPARKSTORM_NIMBUS_HOST``
    (the default, loopback, names no Nimbus).
    """
    given = ("nimbus.host" in cli_conf or "nimbus.host" in topology_conf
             or bool(os.environ.get("SPARKSTORM_NIMBUS_HOST")))
    return dict(conf) if given else None


def _tls_conf(conf: Mapping[str, Any]) -> dict[str, object]:
    """The own Nimbus's TLS keys: the application's material if it names some, else TLS off.

    Example:
        >>> _tls_conf({"storm.tls.enabled": True})
        {'storm.tls.enabled': False}
        >>> _tls_conf({"storm.tls.dir": "/opt/app/tls"})["storm.tls.enabled"]
        True
    """
    named = {key: value for key in MATERIAL_KEYS if (value := conf_optional_str(conf, key))}
    if not (tls_enabled(conf) and named):
        return {"storm.tls.enabled": False}
    return {"storm.tls.enabled": True, **named,
            "nimbus.tls.client.auth": conf_str(conf, "nimbus.tls.client.auth")}


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


__all__ = ["AppControl", "AppWorker", "ControlAddresses", "app_host", "remote_nimbus"]
