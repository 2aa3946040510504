"""The hosting link in mutual TLS: a capture holds no token and no report; replayed, refused.

With ``topology.tcp.tls: on`` (the application has the cluster's material), a real share
(its executor processes included) reports to the driver's real listener through a relay
that records what the share sent, as a capture on the network would; the recording is
then replayed to the driver by a caller without a certificate.
"""

from __future__ import annotations

import contextlib
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sparkstorm.config import load_config
from sparkstorm.engine import send_frame
from sparkstorm.spark_app.link import ShareBeat, receive, send
from sparkstorm.testing.polling import wait_for
from sparkstorm.tls.material import make_material
from tests.unit.engine.test_wire_tls import _Recorder
from tests.unit.spark_app.test_hosting_link import Driver, Share

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def tls_conf(tmp_path: Path) -> dict[str, Any]:
    make_material(tmp_path / "tls", [])
    return load_config(topology={
        "test.dir": str(tmp_path), "test.count": 0, "topology.name": "relay",
        "topology.workers": 2, "topology.executor.hosting.heartbeat.secs": 0.1,
        "topology.executor.hosting.timeout.secs": 3, "spark.master": "local[2]",
        "topology.tcp.tls": "on", "storm.tls.dir": str(tmp_path / "tls")})


def test_a_share_reports_in_tls_and_its_capture_cannot_be_replayed(
        tls_conf: dict[str, Any]) -> None:
    driver = Driver(tls_conf)
    share = None
    try:
        recorder = _Recorder(driver.address)
        settings = replace(driver.settings, driver=("127.0.0.1", recorder.port))
        share = Share(driver, 0, tls_conf, settings)
        wait_for(lambda: driver.reports, 60, message="the share's report over TLS")
        driver.hosting.stop(timeout=5)  # the answer says stop: the share ends its link
        share.thread.join(30)
        recorder.thread.join(10)
        capture = bytes(recorder.sent)
        assert capture[:1] == b"\x16", "a TLS handshake record first"
        assert b"token-1" not in capture and b"report" not in capture
        reports = len(driver.reports)

        replayed = Driver(tls_conf)  # a driver listening again, as the real one still is
        try:
            with socket.create_connection(replayed.address, timeout=5) as replay, \
                    contextlib.suppress(OSError):  # a reset is a refusal too
                replay.sendall(capture)
                while replay.recv(65536):  # a TLS alert at most, then it is closed
                    pass
            assert replayed.reports == [] and replayed.hosting.current == {}
        finally:
            replayed.hosting.stop(timeout=0)
        assert len(driver.reports) == reports
    finally:
        driver.hosting.stop(timeout=0)
        if share is not None:
            share.thread.join(30)
            assert not share.thread.is_alive()


def test_a_plain_caller_with_the_token_is_refused_by_a_tls_driver(
        tls_conf: dict[str, Any]) -> None:
    driver = Driver(tls_conf)
    try:
        with socket.create_connection(driver.address, 5) as sock:
            sock.settimeout(5)
            with pytest.raises(OSError):  # ConnectionError: closed; or reset
                send_frame(sock, b"token-1")
                send(sock, ShareBeat(0, "r"))
                receive(sock)
        assert driver.hosting.current == {} and driver.reports == []
    finally:
        driver.hosting.stop(timeout=0)
