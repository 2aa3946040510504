"""TLS on the topology's TCP channels: executor calls, the endpoint lookup.

With ``topology.tcp.tls`` on, every TCP connection to an executor or to the driver's
endpoint lookup is mutual TLS with the cluster's material (:mod:`sparkstorm.tls`): the
caller and the listener each prove a certificate of the cluster CA, the tuples travel
encrypted, and the topology's token is sent inside the channel. A captured connection
cannot be replayed: its keys were ephemeral, and a replayed handshake cannot prove the
private key it never had. Unix sockets (callers on the executor's own host) stay plain.

``auto`` (the default) turns it on in the workers of a cluster with ``storm.tls.enabled``:
their supervisor names the cluster's material in their environment
(:func:`~sparkstorm.tls.material.files_env`), the same in every worker of the topology.
Local mode (``sparkstorm run``, ``LocalCluster``) and ``spark-submit`` stay plain unless
``on``; callers on the executor's own host use its Unix socket either way.

The material is named by paths (:class:`~sparkstorm.tls.material.TlsFiles`, picklable: it
rides every stage to Spark tasks on other hosts, where the same paths must hold the
cluster's material, as ``storm.tls.dir`` on a shared or copied folder does); each process
builds its contexts once. Callers follow the process's setting (:func:`use`): an executor
pool sets it when it starts (every executor of a worker, and the worker's calls, share
it), an executor process from its plan file, a Spark task from its stage. One process runs
the executors of one topology, or local-mode topologies that all stay plain.

Example:
    >>> wire_tls({"topology.tcp.tls": "off"}) is None
    True
"""

from __future__ import annotations

import functools
import os
import socket
import ssl
from collections.abc import Mapping

from sparkstorm.config.access import conf_str
from sparkstorm.tls.contexts import client_context, server_context
from sparkstorm.tls.material import TlsFiles, files_from_env, tls_files

TCP_TLS_KEY = "topology.tcp.tls"

_active: list[TlsFiles | None] = [None]
"""The process's setting for its TCP callers (a list: set without ``global``)."""


def use(files: TlsFiles | None) -> None:
    """Make this process's TCP callers (executor calls, lookups) use ``files`` (None: plain)."""
    _active[0] = files


def active() -> TlsFiles | None:
    """What this process's TCP callers use now."""
    return _active[0]


def wire_tls(conf: Mapping[str, object]) -> TlsFiles | None:
    """The material TCP channels use under ``conf``, None when they stay plain.

    A worker's supervisor names the cluster's files in its environment
    (:func:`~sparkstorm.tls.material.files_env`); they win over ``conf``'s.
    """
    mode = conf_str(conf, TCP_TLS_KEY)
    given = files_from_env(os.environ)
    if mode == "off" or (mode == "auto" and given is None):
        return None
    return given or tls_files(conf)


@functools.lru_cache(maxsize=4)
def listener_context(files: TlsFiles) -> ssl.SSLContext:
    """The context a listener wraps its callers in (one per process and material)."""
    return server_context(files, require_client=True)


@functools.lru_cache(maxsize=4)
def caller_context(files: TlsFiles) -> ssl.SSLContext:
    """The context a caller wraps its connections in (one per process and material)."""
    return client_context(files)


def secure_caller(sock: socket.socket, host: str) -> socket.socket:
    """``sock`` wrapped in mutual TLS to ``host`` (the handshake done), or as it is.

    As the process's setting (:func:`use`) says.
    """
    files = _active[0]
    if files is None:
        return sock
    # the handshake's last flight, the token and the request are small writes in a row:
    # Nagle would hold each behind the peer's delayed ACK (40 ms a call)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return caller_context(files).wrap_socket(sock, server_hostname=host)


def listener_tls(files: TlsFiles | None) -> ssl.SSLContext | None:
    """The context a listener serving under ``files`` wraps callers in (None: plain)."""
    return None if files is None else listener_context(files)
