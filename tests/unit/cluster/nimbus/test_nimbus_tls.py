"""Nimbus's API over TLS: the cluster CA, client certificates, the token on top."""

from __future__ import annotations

import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from sparkstorm.cluster.nimbus.client import NimbusClient
from sparkstorm.config import load_config
from sparkstorm.tls.contexts import http_verify
from sparkstorm.tls.material import tls_files

TOKEN = "s3cret-token"


def _conf(tmp_path: Path, port: int, **more: Any) -> dict[str, object]:
    return load_config(env={}, cli={"storm.local.dir": str(tmp_path / "local"),
                                    "nimbus.port": port, "storm.cluster.token": TOKEN,
                                    **more})


def _port(server: Any) -> int:
    return int(server.servers[0].sockets[0].getsockname()[1])


def test_nimbus_serves_https_to_cluster_certificates_only(
        served: Callable[..., Any], tmp_path: Path) -> None:
    server = served(**{"storm.tls.enabled": True, "storm.cluster.token": TOKEN})
    conf = _conf(tmp_path, _port(server))
    assert not tls_files(conf).missing(), "a first start made the material"

    client = NimbusClient.from_conf(conf, timeout=10)
    try:
        assert client.url.startswith("https://127.0.0.1:")
        assert "supervisors" in client.call("GET", "/api/v1/cluster/summary")
        assert client.call("POST", "/api/v1/uploads")["upload_id"], "the token still counts"
    finally:
        client.close()

    base = f"127.0.0.1:{_port(server)}"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with pytest.raises(httpx.HTTPError):  # nothing is served in clear
        httpx.get(f"http://{base}/api/v1/cluster/summary", timeout=5)
    # the right token (captured), the right CA, but no client certificate: refused
    anonymous = ssl.create_default_context(cafile=tls_files(conf).ca)
    with pytest.raises(httpx.HTTPError):
        httpx.post(f"https://{base}/api/v1/uploads", headers=auth, verify=anonymous,
                   timeout=5)


def test_optional_client_auth_lets_users_in_with_the_token_alone(
        served: Callable[..., Any], tmp_path: Path) -> None:
    server = served(**{"storm.tls.enabled": True, "storm.cluster.token": TOKEN,
                       "nimbus.tls.client.auth": "optional"})
    conf = _conf(tmp_path, _port(server))
    user = ssl.create_default_context(cafile=tls_files(conf).ca)
    url = f"https://127.0.0.1:{_port(server)}/api/v1/uploads"
    assert httpx.post(url, verify=user, timeout=5).status_code == 401
    answer = httpx.post(url, verify=user, timeout=5,
                        headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200, answer.text
    assert isinstance(http_verify(conf), ssl.SSLContext)
