"""The ``Host`` header check of the REST API and the UI (against DNS rebinding).

A page on an attacker's domain whose name is made to resolve to 127.0.0.1 can read a
loopback server's open API from the victim's browser: the browser thinks it is
same-origin. The request still carries the attacker's name in ``Host``, so both servers
answer only under names they know: any IP address (rebinding needs a name), ``localhost``,
this machine's own names, the addresses they were told to bind, and ``ui.allowed.hosts``.
Others get a 421 with ``HOST_NOT_ALLOWED`` saying which key to set.

Example:
    >>> names = allowed_names({"ui.allowed.hosts": ["storm.example.com"]})
    >>> [host_allowed(h, names) for h in ("127.0.0.1:8080", "[::1]:80", "localhost",
    ...                                   "storm.example.com:8080", "evil.example")]
    [True, True, True, True, False]
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

STATUS = 421
"""Misdirected Request: this server does not answer under that name."""


def allowed_names(conf: Mapping[str, object]) -> frozenset[str]:
    """The host names (lower case) a server of ``conf`` answers under, IP addresses aside."""
    from sparkstorm.config import conf_str

    configured = conf.get("ui.allowed.hosts")
    extra = [str(name) for name in configured] if isinstance(configured, list) else []
    names = {"localhost", socket.gethostname(), socket.getfqdn(),
             conf_str(conf, "nimbus.host"), conf_str(conf, "ui.host"), *extra}
    return frozenset(name.lower() for name in names if name)


def host_allowed(header: str, names: frozenset[str]) -> bool:
    """Whether a ``Host`` header names this server (see the module docs)."""
    host = header.strip().lower()
    if host.startswith("["):  # [v6]:port
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    if not host:
        return False
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return host.rstrip(".") in names
    return True


def check_hosts(app: FastAPI, conf: Mapping[str, object]) -> None:
    """Refuse, in ``app``, every request whose ``Host`` is not one of ``conf``'s names."""
    names = allowed_names(conf)

    @app.middleware("http")
    async def host_header(request: Request, call_next: Any) -> Any:
        header = request.headers.get("host", "")
        if not host_allowed(header, names):
            msg = (f"this server does not answer under the name {header!r}; use its address "
                   "or add the name to ui.allowed.hosts")
            return JSONResponse({"error": msg, "code": "HOST_NOT_ALLOWED"}, status_code=STATUS)
        return await call_next(request)


__all__ = ["allowed_names", "check_hosts", "host_allowed"]
