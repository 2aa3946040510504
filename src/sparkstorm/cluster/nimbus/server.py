"""Running Nimbus.

Open the state, start the cleaner and the monitor, serve the API with uvicorn.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import uvicorn

from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.nimbus.token import load_or_create_token
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.config import conf_int, conf_str
from sparkstorm.tls.contexts import http_scheme, uvicorn_ssl
from sparkstorm.tls.material import load_or_create_material, tls_enabled
from sparkstorm.tls.spark_rpc import load_or_create_spark_secret

logger = logging.getLogger(__name__)


def build_server(conf: Mapping[str, object], state: ClusterState) -> tuple[Nimbus,
                                                                          uvicorn.Server]:
    """A Nimbus with its monitor started, and the uvicorn server to run.

    ``server.run()`` blocks until SIGINT/SIGTERM.
    """
    if tls_enabled(conf):
        load_or_create_material(conf)  # first start on one machine: made, like the token
        _spark_secret(conf)
    nimbus = Nimbus(conf, state)
    app = create_app(nimbus, load_or_create_token(conf))
    host, port = conf_str(conf, "nimbus.host"), conf_int(conf, "nimbus.port")
    required = conf_str(conf, "nimbus.tls.client.auth") == "required"
    config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                            access_log=False, lifespan="off",
                            **uvicorn_ssl(conf, require_client=required))
    nimbus.cleaner.start()  # first round now: killed topologies' leftovers go at start
    nimbus.assigner.start()
    logger.info("nimbus listening on %s://%s:%s", http_scheme(conf), host, port)
    return nimbus, uvicorn.Server(config)


def _spark_secret(conf: Mapping[str, object]) -> None:
    """The standalone Spark secret beside material made before it existed (best effort).

    A TLS folder Nimbus cannot write (a read-only copy) is the operator's: its workers say
    ``SPARK_SECRET_MISSING`` if a standalone master needs the secret.
    """
    try:
        load_or_create_spark_secret(conf)
    except OSError as exc:
        logger.warning("cannot make the standalone Spark secret: %s", exc)
