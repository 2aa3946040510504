"""Nimbus answers only under names it knows: DNS rebinding cannot read its open API."""

from __future__ import annotations

from fastapi.testclient import TestClient

from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.host_check import allowed_names, host_allowed
from sparkstorm.cluster.nimbus.service import Nimbus


def test_an_unknown_host_name_is_refused_before_anything_is_read(nimbus: Nimbus) -> None:
    client = TestClient(create_app(nimbus, "secret"), base_url="http://rebound.example")
    response = client.get("/api/v1/cluster/summary")
    assert response.status_code == 421
    assert response.json()["code"] == "HOST_NOT_ALLOWED"
    assert "ui.allowed.hosts" in response.json()["error"]
    for base in ("http://127.0.0.1:6627", "http://[::1]:6627", "http://localhost:6627"):
        answer = TestClient(create_app(nimbus, "secret"), base_url=base).get(
            "/api/v1/cluster/summary")
        assert answer.status_code == 200, base


def test_configured_names_and_this_machines_own_are_allowed() -> None:
    import socket

    names = allowed_names({"ui.allowed.hosts": ["Storm.Example.com"]})
    assert host_allowed("storm.example.com:443", names)
    assert host_allowed(socket.gethostname(), names)
    assert not host_allowed("", names) and not host_allowed("storm.example.org", names)
