"""A spark-submitted driver's REST API and UI over HTTPS when the application names material.

The control plane (:class:`~sparkstorm.spark_app.control.AppControl`: its own Nimbus on an
embedded store, the REST API and the UI) is started without Spark, with material made by
the project's own ``make_material`` (what ``sparkstorm tls init`` makes). Whether the
registration client verifies with it is covered by
``tests/integration/spark_app/test_spark_submit_control.py`` (the driver registers with its
own Nimbus over HTTPS there); the choice without material by ``_tls_conf``'s doctest.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sparkstorm.cli.main import main
from sparkstorm.config import load_config
from sparkstorm.errors import ConfigError
from sparkstorm.spark_app.control import AppControl, ControlAddresses
from sparkstorm.tls.contexts import http_verify
from sparkstorm.tls.material import CA_FILE, make_material

pytestmark = pytest.mark.timeout(60)

TOKEN = "control-tls-test-token"
SUMMARY = "/api/v1/cluster/summary"


@pytest.fixture
def tls_conf(tmp_path: Path) -> dict[str, Any]:
    make_material(tmp_path / "tls", [])
    return load_config(topology={
        "topology.name": "demo", "storm.tls.dir": str(tmp_path / "tls"),
        "storm.cluster.token": TOKEN, "topology.app.rest.port": 0,
        "topology.app.ui.port": 0})


@pytest.fixture
def served(tls_conf: dict[str, Any], tmp_path: Path) -> Iterator[ControlAddresses]:
    folder = tmp_path / "app"
    folder.mkdir()
    control = AppControl("demo", tls_conf, folder, "127.0.0.1")
    try:
        yield control.start()
    finally:
        control.stop()


def test_the_rest_api_wants_the_cas_client_certificate_and_the_ui_serves_https(
        served: ControlAddresses, tls_conf: dict[str, Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert served.rest_url.startswith("https://127.0.0.1:")
    assert served.ui_url is not None and served.ui_url.startswith("https://127.0.0.1:")

    answer = httpx.get(f"{served.rest_url}{SUMMARY}", verify=http_verify(tls_conf), timeout=10)
    assert answer.status_code == 200 and "stormVersion" in answer.text

    # a caller that trusts the CA but has no certificate of it (a token is not enough)
    browser = ssl.create_default_context(cafile=str(tmp_path / "tls" / CA_FILE))
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"{served.rest_url}{SUMMARY}", verify=browser, timeout=10)
    with pytest.raises(httpx.HTTPError):  # plain HTTP gets no answer
        httpx.get(f"{served.rest_url.replace('https:', 'http:')}{SUMMARY}", timeout=10)

    # the UI asks browsers for no certificate, and reaches the REST API with the material
    page = httpx.get(f"{served.ui_url}{SUMMARY}", verify=browser, timeout=10)
    assert page.status_code == 200 and "stormVersion" in page.text

    monkeypatch.chdir(tmp_path)  # no streamparse project here
    code = main(["list", "--nimbus", served.rest_url, "-c", f"storm.tls.dir={tmp_path / 'tls'}",
                 "-c", f"storm.cluster.token={TOKEN}"])
    out = capsys.readouterr()
    assert code == 0, out.err


def test_material_that_does_not_load_stops_the_start(tls_conf: dict[str, Any],
                                                    tmp_path: Path) -> None:
    (tmp_path / "tls" / "node-key.pem").write_text("not a key\n")
    folder = tmp_path / "app"
    folder.mkdir()
    control = AppControl("demo", tls_conf, folder, "127.0.0.1")
    try:
        with pytest.raises(ConfigError) as failed:
            control.start()
        assert failed.value.code == "TLS_MATERIAL_INVALID"
        assert "node-key.pem" in str(failed.value)
    finally:
        control.stop()
