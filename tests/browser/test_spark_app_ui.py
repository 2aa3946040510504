"""The web UI a spark-submitted topology's driver serves, in Chromium.

The chaos topology runs with the real ``spark-submit`` on ``local[4]`` and no cluster: its
driver serves the REST API and the pages (:mod:`sparkstorm.spark_app.control`). The pages
list it, show the REST figures, its Deactivate button works with the token, and its log page
says where the executors hosted by Spark write their logs.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import psutil
import pytest

from sparkstorm.testing.polling import wait_for
from tests.browser.helpers import cells, open_page
from tests.integration.spark_app.submitted import (
    descendants,
    driver_addresses,
    python_driver,
    spark_submit,
)

pytestmark = [pytest.mark.spark, pytest.mark.timeout(400)]

TOKEN = "app-ui-test-token"


@dataclass
class AppUi:
    rest_url: str
    ui_url: str

    def rest(self, path: str) -> Any:
        response = httpx.get(f"{self.rest_url}{path}", timeout=10)
        response.raise_for_status()
        return response.json()

    def topology_id(self) -> str:
        return str(self.rest("/api/v1/topology/summary")["topologies"][0]["id"])


@pytest.fixture(scope="module")
def app_ui(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[AppUi]:
    tmp_path = tmp_path_factory.mktemp("app-ui")
    process, log = spark_submit(tmp_path, "driver", "chaos.count=1000000",
                                f"storm.cluster.token={TOKEN}")
    seen: dict[int, psutil.Process] = {}
    try:
        app = AppUi(*driver_addresses(process, log, seen))
        wait_for(lambda: app.rest(f"/api/v1/topology/{app.topology_id()}")["spouts"][0]
                 ["acked"] > 0, 180, message="the topology acks")
        yield app
        descendants(process, seen)
        python_driver(seen).send_signal(signal.SIGTERM)
        assert process.wait(120) == 0, log.read_text()[-5000:]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def test_the_drivers_pages_list_the_topology_and_deactivate_it(app_ui: AppUi,
                                                               page: Any) -> None:
    topology_id = app_ui.topology_id()
    open_page(page, f"{app_ui.ui_url}/")
    page.wait_for_selector(f'a[href="/topology/{topology_id}"]')

    open_page(page, f"{app_ui.ui_url}/topology/{topology_id}")
    page.wait_for_selector('#topology-summary td[data-field=status]:text("ACTIVE")')
    page.wait_for_selector('#spouts tr[data-id="ids"]')
    assert cells(page, '#spouts tr[data-id="ids"]')["executors"] == "1"

    page.on("dialog", lambda dialog: dialog.accept())
    page.click("button[data-action=deactivate]")
    page.wait_for_selector("#token-dialog[open]")
    page.fill("#token-input", TOKEN)
    page.click("#token-ok")
    page.wait_for_selector("#action-status[data-result=ok]")
    wait_for(lambda: app_ui.rest(f"/api/v1/topology/{topology_id}")["status"] == "INACTIVE",
             30, message="the driver's Nimbus says INACTIVE")
    page.wait_for_selector('#topology-summary td[data-field=status]:text("INACTIVE")')
    acked = app_ui.rest(f"/api/v1/topology/{topology_id}")["spouts"][0]["acked"]
    assert acked > 0
    # no supervisor serves the Spark-hosted executors' logs: the log page says where they are
    page.goto(f"{app_ui.ui_url}/topology/{topology_id}/logs")
    note = page.inner_text("#spark-executor-logs")
    assert "executor-<id>.log" in note and "Executors tab" in note, note

