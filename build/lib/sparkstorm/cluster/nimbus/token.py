"""The cluster token: the shared secret every mutating API call presents.

``storm.cluster.token`` wins when set. Otherwise Nimbus generates one on first start and
writes it to ``<storm.local.dir>/nimbus/token`` (mode 0600); clients on the same machine read
it from there, clients elsewhere must set ``storm.cluster.token``.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.config import conf_optional_str, local_dir

logger = logging.getLogger(__name__)

TOKEN_ENV = "SPARKSTORM_STORM_CLUSTER_TOKEN"
"""The variable that sets ``storm.cluster.token``; supervisors pass the token to workers
through it, never on their (visible) command line."""


def token_file(conf: Mapping[str, object]) -> Path:
    """Where Nimbus keeps a generated token."""
    return local_dir(conf) / "nimbus" / "token"


def read_token(conf: Mapping[str, object]) -> str | None:
    """The token a client presents: the configured one, else the file's, else None."""
    configured = conf_optional_str(conf, "storm.cluster.token")
    if configured:
        return configured
    try:
        return token_file(conf).read_text().strip() or None
    except OSError:
        return None


def load_or_create_token(conf: Mapping[str, object]) -> str:
    """The token Nimbus checks; generated and saved (0600) on first use when unset.

    Called once at Nimbus start. A restarted Nimbus reuses the saved token, so running
    workers and supervisors keep working.
    """
    existing = read_token(conf)
    if existing:
        return existing
    path = token_file(conf)
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    # O_EXCL with 0600: the secret is never readable by others, not even for a moment
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    logger.warning("storm.cluster.token is unset: generated one into %s", path)
    return token


def check_authorization(header: str, token: str) -> None:
    """Refuse an ``Authorization`` header that does not carry ``Bearer <token>``.

    Raises:
        NimbusError: ``AUTH_TOKEN_MISSING`` or ``AUTH_TOKEN_INVALID``.
    """
    if not header:
        msg = ("this call needs the cluster token: send 'Authorization: Bearer <token>'; "
               "the token is storm.cluster.token, or <storm.local.dir>/nimbus/token")
        raise NimbusError(msg, code="AUTH_TOKEN_MISSING")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip(), token):
        msg = "the cluster token sent does not match Nimbus's; check storm.cluster.token"
        raise NimbusError(msg, code="AUTH_TOKEN_INVALID")
