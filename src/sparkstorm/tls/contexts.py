"""``ssl`` contexts for the cluster's channels: every peer signed by the cluster CA.

Servers present this host's certificate and (where daemons are the only callers) require a
client certificate; clients verify the server against the cluster CA and present theirs.
Mutual TLS makes a captured connection worthless: its keys are ephemeral (TLS 1.3 only), and
a replayed handshake cannot prove the private key it never had.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import Any

from sparkstorm.tls.material import TlsFiles, require_tls_files, tls_enabled


def server_context(files: TlsFiles, *, require_client: bool = True) -> ssl.SSLContext:
    """A server's context; ``require_client``: refuse callers without a CA-signed certificate."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_cert_chain(files.cert, files.key)
    context.load_verify_locations(files.ca)
    context.verify_mode = ssl.CERT_REQUIRED if require_client else ssl.CERT_OPTIONAL
    return context


def client_context(files: TlsFiles) -> ssl.SSLContext:
    """A client's context: the server must be signed by the cluster CA for the name dialled."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_verify_locations(files.ca)
    context.load_cert_chain(files.cert, files.key)
    return context


def http_scheme(conf: Mapping[str, object]) -> str:
    """``https`` when ``storm.tls.enabled``, else ``http``."""
    return "https" if tls_enabled(conf) else "http"


def http_verify(conf: Mapping[str, object], wait_secs: float = 0.0) -> ssl.SSLContext | bool:
    """Httpx's ``verify`` for a cluster client: the cluster CA and this host's certificate.

    ``True`` (the system's authorities, no client certificate) with TLS off: a plain
    ``http://`` URL never uses it.

    Raises:
        ConfigError: ``TLS_MATERIAL_MISSING``.
    """
    if not tls_enabled(conf):
        return True
    return client_context(require_tls_files(conf, wait_secs))


def uvicorn_ssl(conf: Mapping[str, object], *, require_client: bool,
                wait_secs: float = 0.0) -> dict[str, Any]:
    """Uvicorn ``Config`` keywords serving HTTPS with this host's certificate ({} with TLS off).

    ``require_client``: callers must present a certificate signed by the cluster CA (daemons'
    own APIs); otherwise one is asked for but not needed (browsers).

    Raises:
        ConfigError: ``TLS_MATERIAL_MISSING``.
    """
    if not tls_enabled(conf):
        return {}
    files = require_tls_files(conf, wait_secs)
    return {"ssl_certfile": str(files.cert), "ssl_keyfile": str(files.key),
            "ssl_ca_certs": str(files.ca),
            "ssl_cert_reqs": int(ssl.CERT_REQUIRED if require_client else ssl.CERT_NONE)}
