"""``sparkstorm dev-zookeeper``: a ZooKeeper server in the foreground for development.

As Storm's ``storm dev-zookeeper``.

It listens on ``dev.zookeeper.bind.address`` (127.0.0.1), port ``storm.zookeeper.port``
(2181), and keeps its data in ``dev.zookeeper.path`` (unset:
``<storm.local.dir>/dev-zookeeper``), so a cluster started with
``-c storm.state.store=zookeeper`` and the same conf finds it. The server's log goes to
this terminal; SIGINT or SIGTERM stops it cleanly (exit code 0).
"""

from __future__ import annotations

import argparse
import signal
import threading
from typing import Any

from sparkstorm.config import load_config, parse_cli_overrides


def register(commands: Any) -> None:
    """Add the ``dev-zookeeper`` subcommand."""
    parser = commands.add_parser(
        "dev-zookeeper", help="run a ZooKeeper server for development in the foreground "
        "(loopback, storm.zookeeper.port, data under <storm.local.dir>/dev-zookeeper)")
    parser.add_argument("-c", "--config", action="append", default=[], metavar="KEY=VALUE",
                        help="configuration override, e.g. -c storm.zookeeper.port=2182")
    parser.set_defaults(handler=dev_zookeeper_command)


def dev_zookeeper_command(args: argparse.Namespace) -> int:
    """Run the server until SIGINT/SIGTERM (exit 0) or until it exits by itself (its code).

    Raises:
        DevZooKeeperError: Java or ZooKeeper missing, or the server failed to start.
    """
    from sparkstorm.cluster.store.devzookeeper import DevZooKeeper, dev_settings

    settings = dev_settings(load_config(cli=parse_cli_overrides(args.config)))
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    server = DevZooKeeper(settings)
    try:
        server.start()
        print(f"dev-zookeeper: serving on {settings.address}:{settings.port}, data in "
              f"{settings.data_dir}; Ctrl-C stops it", flush=True)
        code = server.wait(stop)
    finally:
        server.stop()
    if code is not None:
        print(f"dev-zookeeper: the server exited by itself with code {code}", flush=True)
        return code or 1
    return 0
