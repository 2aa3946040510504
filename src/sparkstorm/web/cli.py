"""``sparkstorm ui``: serve the web UI on ``ui.host``:``ui.port`` for the configured Nimbus."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from sparkstorm.config import conf_int, conf_str

logger = logging.getLogger(__name__)


def register(commands: Any) -> None:
    """Add the ``ui`` subcommand."""
    parser = commands.add_parser("ui", help="serve the web UI (pages on ui.host:ui.port)")
    parser.add_argument("-c", "--config", action="append", default=[],
                        metavar="KEY=VALUE", help="configuration override")
    parser.set_defaults(handler=ui_command)


def build_server(conf: dict[str, object]) -> Any:
    """The uvicorn server of the UI for ``conf``."""
    import uvicorn

    from sparkstorm.cluster.nimbus.client import nimbus_url
    from sparkstorm.web.app import create_app

    app = create_app(conf, nimbus_url(conf))
    host = conf_str(conf, "ui.host")
    port = conf_int(conf, "ui.port")
    logger.info("sparkstorm UI on http://%s:%d for Nimbus %s", host, port, nimbus_url(conf))
    return uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))


def ui_command(args: argparse.Namespace) -> int:
    """Serve the UI until SIGINT/SIGTERM."""
    from sparkstorm.config import load_config, parse_cli_overrides

    conf = load_config(cli=parse_cli_overrides(args.config))
    build_server(conf).run()
    return 0
