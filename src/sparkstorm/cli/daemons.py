"""``sparkstorm nimbus``, ``sparkstorm supervisor`` and ``sparkstorm cluster`` (both at once).

Each takes ``-c KEY=VALUE`` overrides on top of defaults, ``sparkstorm.yaml`` and the
``SPARKSTORM_*`` environment, and runs until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import logging
import signal
import threading
import time
from typing import Any

from sparkstorm.cluster.daemon_log import attach as attach_daemon_log
from sparkstorm.config import load_config, parse_cli_overrides
from sparkstorm.errors import ConfigError

logger = logging.getLogger(__name__)

TOKEN_WAIT_SECS = 60.0


def register(commands: Any) -> None:
    """Add the ``nimbus``, ``supervisor`` and ``cluster`` subcommands."""
    for name, handler, text in (
        ("nimbus", nimbus_command, "run Nimbus: the REST API, uploads, assignments, monitor"),
        ("supervisor", supervisor_command, "run a supervisor: launch this node's workers"),
        ("cluster", cluster_command, "run Nimbus and one supervisor in one process"),
    ):
        parser = commands.add_parser(name, help=text)
        parser.add_argument("-c", "--config", action="append", default=[],
                            metavar="KEY=VALUE", help="configuration override")
        parser.set_defaults(handler=handler)


def _conf(args: argparse.Namespace) -> dict[str, object]:
    return load_config(cli=parse_cli_overrides(args.config))


def _serve(server: Any) -> None:
    """Run uvicorn until SIGINT/SIGTERM, then return so that cleanup runs.

    uvicorn re-raises the signal it caught once it has stopped; with the default handler
    that would end the process before our ``finally`` blocks (the workers of ``cluster``
    would outlive it). A no-op handler turns that re-raise into nothing.
    """
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: None)
    _bound_shutdown(server)
    server.run()


SHUTDOWN_GRACE_SECS = 5.0
"""How long a stopping daemon's HTTP server waits for requests still running (uvicorn waits
for ever by default: a worker's heartbeat or a browser's request in flight held ``sparkstorm
cluster``'s stop, and with it the killing of its workers, for about 30 s)."""


def _bound_shutdown(server: Any) -> None:
    """Let ``server`` (uvicorn) wait at most :data:`SHUTDOWN_GRACE_SECS` for open requests."""
    server.config.timeout_graceful_shutdown = SHUTDOWN_GRACE_SECS


def nimbus_command(args: argparse.Namespace) -> int:
    """Serve Nimbus until SIGINT/SIGTERM."""
    from sparkstorm.cluster.nimbus.server import build_server
    from sparkstorm.cluster.store import open_store
    from sparkstorm.cluster.store.cluster_state import ClusterState

    conf = _conf(args)
    attach_daemon_log(conf, "nimbus")  # <storm.local.dir>/logs/nimbus.log, for the logviewer
    with open_store(conf) as store:
        nimbus, server = build_server(conf, ClusterState(store))
        try:
            _serve(server)
        finally:
            nimbus.assigner.stop()
            nimbus.cleaner.stop()
    return 0


def _wait_for_token(conf: dict[str, object]) -> str:
    """The cluster token; a supervisor started with Nimbus may have to wait for its file."""
    from sparkstorm.cluster.nimbus.token import read_token, token_file

    deadline = time.monotonic() + TOKEN_WAIT_SECS
    while (token := read_token(conf)) is None:
        if time.monotonic() > deadline:
            msg = (f"no cluster token: storm.cluster.token is unset and {token_file(conf)} "
                   "does not exist; start Nimbus with the same storm.local.dir first, or set "
                   "storm.cluster.token")
            raise ConfigError(msg, code="CLUSTER_TOKEN_MISSING")
        time.sleep(0.2)
    return token


def supervisor_command(args: argparse.Namespace) -> int:
    """Run a supervisor until SIGINT/SIGTERM; its workers keep running after it."""
    from sparkstorm.cluster.nimbus.client import NimbusClient, nimbus_url
    from sparkstorm.cluster.store import open_store
    from sparkstorm.cluster.store.cluster_state import ClusterState
    from sparkstorm.cluster.supervisor.supervisor import Supervisor
    from sparkstorm.tls.contexts import http_verify

    conf = _conf(args)
    client = NimbusClient(nimbus_url(conf), _wait_for_token(conf),
                          verify=http_verify(conf, TOKEN_WAIT_SECS))
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with open_store(conf) as store:
        supervisor = Supervisor(conf, ClusterState(store), client)
        supervisor.start()
        stop.wait()
        supervisor.stop()
    client.close()
    return 0


def _start_ui(conf: dict[str, object]) -> tuple[Any, threading.Thread]:
    """The web UI in a thread of this process.

    Uvicorn skips signal handlers off the main thread, so the cluster's own handling of
    SIGINT/SIGTERM stays in charge.
    """
    from sparkstorm.web.cli import build_server as build_ui_server

    ui_server = build_ui_server(conf)
    _bound_shutdown(ui_server)
    thread = threading.Thread(target=ui_server.run, name="ui", daemon=True)
    thread.start()
    return ui_server, thread


def where_to_look(conf: dict[str, object], nimbus: str, supervisor_root: Any) -> str:
    """What ``sparkstorm cluster`` prints once up: the UI, Nimbus and where logs go.

    Example:
        >>> print(where_to_look({"ui.port": 8080}, "https://127.0.0.1:6627", "/tmp/sup"))
        sparkstorm cluster: UI https://127.0.0.1:8080, Nimbus https://127.0.0.1:6627
        worker logs: /tmp/sup/workers/<worker id>/worker.log (and live in the UI)
    """
    from sparkstorm.web.cli import ui_url

    return (f"sparkstorm cluster: UI {ui_url(conf)}, Nimbus {nimbus}\n"
            f"worker logs: {supervisor_root}/workers/<worker id>/worker.log (and live in the UI)")


def cluster_command(args: argparse.Namespace) -> int:
    """Nimbus, one supervisor and the web UI on the same store.

    Stopping it stops the workers too.
    """
    from sparkstorm.cluster.nimbus.client import NimbusClient, nimbus_url
    from sparkstorm.cluster.nimbus.server import build_server
    from sparkstorm.cluster.nimbus.token import load_or_create_token
    from sparkstorm.cluster.store import open_store
    from sparkstorm.cluster.store.cluster_state import ClusterState
    from sparkstorm.cluster.supervisor.supervisor import Supervisor
    from sparkstorm.tls.contexts import http_verify

    conf = _conf(args)
    attach_daemon_log(conf, "nimbus")  # the supervisor writes its own supervisor.log
    with open_store(conf) as store:
        state = ClusterState(store)
        nimbus, server = build_server(conf, state)  # makes the TLS material when missing
        client = NimbusClient(nimbus_url(conf), load_or_create_token(conf),
                              verify=http_verify(conf))
        supervisor = Supervisor(conf, state, client)
        supervisor.start()
        ui_server, ui_thread = _start_ui(conf)
        print(where_to_look(conf, nimbus_url(conf), supervisor.root), flush=True)
        try:
            _serve(server)
        finally:
            logger.info("stopping: the UI, Nimbus's assigner, then the supervisor and its "
                        "workers")
            ui_server.should_exit = True
            # the assigner first: Nimbus no longer hears heartbeats, so its monitor would
            # reassign the workers the supervisor is about to stop (and it would start them)
            nimbus.assigner.stop()
            nimbus.cleaner.stop()
            ui_thread.join(10)
            supervisor.stop(kill_workers=True)
            client.close()
            logger.info("stopped")
    return 0
