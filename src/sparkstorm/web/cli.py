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


def ui_url(conf: dict[str, object]) -> str:
    """Where the UI of ``conf`` answers (``ui.host``:``ui.port``).

    Example:
        >>> ui_url({"ui.port": 8081})
        'https://127.0.0.1:8081'
        >>> ui_url({"ui.port": 8081, "storm.tls.enabled": False})
        'http://127.0.0.1:8081'
    """
    from sparkstorm.tls.contexts import http_scheme

    host = "127.0.0.1" if conf_str(conf, "ui.host") in ("0.0.0.0", "") else conf_str(
        conf, "ui.host")
    return f"{http_scheme(conf)}://{host}:{conf_int(conf, 'ui.port')}"


def build_server(conf: dict[str, object]) -> Any:
    """The uvicorn server of the UI for ``conf``."""
    import uvicorn

    from sparkstorm.cluster.nimbus.client import nimbus_url
    from sparkstorm.tls.contexts import uvicorn_ssl
    from sparkstorm.tls.material import MATERIAL_WAIT_SECS
    from sparkstorm.web.app import create_app

    # browsers present no certificate: the UI asks none; its calls to Nimbus present ours
    ssl_options = uvicorn_ssl(conf, require_client=False, wait_secs=MATERIAL_WAIT_SECS)
    app = create_app(conf, nimbus_url(conf))
    host, port = conf_str(conf, "ui.host"), conf_int(conf, "ui.port")
    logger.info("sparkstorm UI on %s for Nimbus %s", ui_url(conf), nimbus_url(conf))
    return uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                         **ssl_options))


def ui_command(args: argparse.Namespace) -> int:
    """Serve the UI until SIGINT/SIGTERM."""
    from sparkstorm.config import load_config, parse_cli_overrides

    conf = load_config(cli=parse_cli_overrides(args.config))
    build_server(conf).run()
    return 0
