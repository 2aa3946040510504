"""Operating a spark-submitted topology without a cluster: its driver's REST API, UI and CLI.

The chaos topology runs with the real ``spark-submit`` on ``local[4]``, its executors hosted
by Spark tasks; its driver serves the Storm UI REST API and the web UI on ports it logs at
start, and registers with a cluster's Nimbus too (``nimbus.host`` set), started here; it
is given the cluster's TLS material, so both serve HTTPS (the REST API wants the CA's client
certificate: the CLI and the calls here present it, the UI's pages need none). Checked
against what the topology itself wrote (``acks.jsonl``: one line per acked id): the REST
figures, deactivate and activate through the CLI (``--nimbus``) and REST, refusals without
the token, debug sampling reaching the Spark-hosted executors, the driver's log through the
log API, the UI's pages, the listing in the cluster's Nimbus, and ``sparkstorm kill`` through
the driver's address, which drains the application and leaves nothing behind.
"""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from sparkstorm.testing.polling import wait_for
from sparkstorm.tls.contexts import http_verify
from sparkstorm.tls.material import CA_FILE, make_material
from tests.chaos.faults import acks
from tests.integration.cluster.harness import free_port
from tests.integration.spark_app.submitted import (
    alive,
    descendants,
    driver_addresses,
    spark_submit,
)

pytestmark = [pytest.mark.spark, pytest.mark.timeout(600)]

TOKEN = "app-control-test-token"


@dataclass
class ClusterNimbus:
    """A ``sparkstorm nimbus`` of its own (embedded store) that the application joins."""

    url: str
    port: int
    tls_dir: Path
    """The cluster's TLS material, which the application registers with too."""

    def get(self, path: str) -> Any:
        verify = http_verify({"storm.tls.dir": str(self.tls_dir)})
        response = httpx.get(f"{self.url}{path}", timeout=10, verify=verify)
        response.raise_for_status()
        return response.json()


@dataclass
class App:
    """The running application: its command, log, addresses and the topology's output."""

    process: subprocess.Popen[bytes]
    log: Path
    results: Path
    scratch: Path
    rest_url: str
    ui_url: str
    seen: dict[int, psutil.Process]
    tls_dir: Path

    def get(self, path: str, **params: Any) -> Any:
        response = httpx.get(f"{self.rest_url}{path}", params=params, timeout=10,
                             headers={"Authorization": f"Bearer {TOKEN}"}, verify=self.verify())
        assert response.is_success, response.text
        return response.json()

    def verify(self) -> ssl.SSLContext | bool:
        """The cluster's CA and client certificate, which the driver's REST API wants."""
        return http_verify({"storm.tls.dir": str(self.tls_dir)})

    def topology_id(self) -> str:
        return str(self.get("/api/v1/topology/summary")["topologies"][0]["id"])

    def topology(self) -> dict[str, Any]:
        return dict(self.get(f"/api/v1/topology/{self.topology_id()}"))

    def acked_ids(self) -> int:
        return len(acks(self.results))

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sparkstorm.cli.main", *args, "--nimbus", self.rest_url,
             "-c", f"storm.cluster.token={TOKEN}", "-c", f"storm.tls.dir={self.tls_dir}"],
            capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture(scope="module")
def cluster_nimbus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterNimbus]:
    folder = tmp_path_factory.mktemp("cluster-nimbus")
    port = free_port()
    make_material(folder / "tls", [])  # as the operator would (sparkstorm tls init)
    with (folder / "nimbus.log").open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "sparkstorm.cli.main", "nimbus",
             "-c", f"storm.local.dir={folder}", "-c", "storm.state.store=embedded",
             "-c", f"nimbus.port={port}", "-c", f"storm.cluster.token={TOKEN}",
             "-c", f"storm.tls.dir={folder / 'tls'}"],
            stdout=out, stderr=subprocess.STDOUT)
    nimbus = ClusterNimbus(f"https://127.0.0.1:{port}", port, folder / "tls")
    try:
        def up() -> bool:
            assert process.poll() is None, (folder / "nimbus.log").read_text()
            try:
                return bool(nimbus.get("/api/v1/cluster/summary"))
            except httpx.HTTPError:
                return False

        wait_for(up, 60, message="the cluster's Nimbus answers")
        yield nimbus
    finally:
        process.terminate()
        process.wait(30)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory,
        cluster_nimbus: ClusterNimbus) -> Iterator[App]:
    tmp_path = tmp_path_factory.mktemp("app")
    process, log = spark_submit(
        tmp_path, "spark", "chaos.count=1000000", f"storm.cluster.token={TOKEN}",
        "nimbus.host=127.0.0.1", f"nimbus.port={cluster_nimbus.port}",
        f"storm.tls.dir={cluster_nimbus.tls_dir}")
    seen: dict[int, psutil.Process] = {}
    try:
        verify = http_verify({"storm.tls.dir": str(cluster_nimbus.tls_dir)})
        yield App(process, log, tmp_path / "numbers", tmp_path / "tmp",
                  *driver_addresses(process, log, seen, verify), seen, cluster_nimbus.tls_dir)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def _running(app: App) -> dict[str, Any]:
    def acking() -> dict[str, Any] | None:
        descendants(app.process, app.seen)
        assert app.process.poll() is None, app.log.read_text()[-5000:]
        detail = app.topology()
        return detail if detail["workerStatus"] == "RUNNING" and app.acked_ids() >= 50 \
            else None

    return dict(wait_for(acking, 180, message="the topology runs and acks"))


def test_rest_figures_are_the_topologys_and_deactivate_and_activate_work(app: App) -> None:
    _running(app)
    answer = app.cli("deactivate", "chaos")
    assert answer.returncode == 0, answer.stderr
    wait_for(lambda: app.topology()["status"] == "INACTIVE", 30, message="INACTIVE")

    def settled() -> tuple[int, int] | None:
        """The acked ids in the file and in REST, once neither moves for two seconds."""
        before = (app.acked_ids(), app.topology()["spouts"][0]["acked"])
        time.sleep(2.0)  # a quiet period is what is checked: nothing to poll for
        after = (app.acked_ids(), app.topology()["spouts"][0]["acked"])
        return after if before == after else None

    in_file, in_rest = wait_for(settled, 60, message="an inactive topology stops acking")
    assert in_rest == in_file, "the REST API counts every acked tuple, once"

    refused = httpx.post(f"{app.rest_url}/api/v1/topology/{app.topology_id()}/activate",
                         timeout=10, verify=app.verify())
    assert refused.status_code == 401 and refused.json()["code"] == "AUTH_TOKEN_MISSING"
    assert app.topology()["status"] == "INACTIVE"
    activated = httpx.post(f"{app.rest_url}/api/v1/topology/{app.topology_id()}/activate",
                           headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10,
                           verify=app.verify())
    assert activated.is_success, activated.text
    wait_for(lambda: app.acked_ids() > in_file, 60, message="acks resume once activated")


def test_debug_sampling_reaches_the_spark_hosted_executors(app: App) -> None:
    _running(app)
    topology_id = app.topology_id()
    response = httpx.post(f"{app.rest_url}/api/v1/topology/{topology_id}/component/relay/"
                          "debug/enable/100", headers={"Authorization": f"Bearer {TOKEN}"},
                          timeout=10, verify=app.verify())
    assert response.is_success, response.text

    def sampled() -> bool:
        return any("sampled received tuple" in path.read_text(errors="replace")
                   for path in app.scratch.rglob("*.log"))

    wait_for(sampled, 60, message="the relay's executors log sampled tuples")


def test_the_driver_log_is_served_and_the_ui_shows_the_topology(app: App) -> None:
    detail = _running(app)
    topology_id, worker = app.topology_id(), detail["workers"][0]["workerId"]

    def driver_log() -> bool:
        text = app.get(f"/api/v1/topology/{topology_id}/logs", worker=worker).get("text")
        return bool(text) and "registered as" in str(text)

    wait_for(driver_log, 30, message="the driver's log through the log API")
    assert app.rest_url.startswith("https://") and app.ui_url.startswith("https://")
    browser = ssl.create_default_context(cafile=str(app.tls_dir / CA_FILE))  # no certificate
    page = httpx.get(f"{app.ui_url}/topology/{topology_id}", timeout=10, verify=browser)
    assert page.status_code == 200 and "chaos" in page.text
    proxied = httpx.get(f"{app.ui_url}/api/v1/topology/{topology_id}", timeout=10,
                        verify=browser).json()
    assert proxied["name"] == "chaos" and proxied["workerStatus"] == "RUNNING"


def test_the_cluster_nimbus_lists_the_application(app: App,
                                                  cluster_nimbus: ClusterNimbus) -> None:
    _running(app)

    def listed() -> dict[str, Any] | None:
        rows = cluster_nimbus.get("/api/v1/topology/summary")["topologies"]
        return next((r for r in rows if r["name"] == "chaos"), None)

    row = wait_for(listed, 30, message="the cluster's Nimbus lists the application")
    detail = cluster_nimbus.get(f"/api/v1/topology/{row['id']}")
    wait_for(lambda: cluster_nimbus.get(f"/api/v1/topology/{row['id']}")["spouts"][0]
             ["acked"] > 0, 30, message="the cluster's Nimbus gets the figures")
    assert detail["workers"][0]["host"] == "127.0.0.1"


def test_rebalance_e_regroups_the_spark_hosted_executors_in_place(app: App) -> None:
    _running(app)
    answer = app.cli("rebalance", "chaos", "-w", "0", "-e", "relay=1")
    assert answer.returncode == 0, answer.stderr
    wait_for(lambda: "every worker runs the new plan" in app.log.read_text(), 90,
             message="both shares followed the driver to the new counts")
    text = app.log.read_text()
    assert "shares follow the driver to ids=1,relay=1,sink=2" in text, text[-3000:]
    before = app.acked_ids()
    wait_for(lambda: app.acked_ids() >= before + 50, 60,
             message="ids are acked under the new counts")
    relay = next(b for b in app.topology()["bolts"] if b["boltId"] == "relay")
    assert relay["executors"] == 1


def test_kill_through_the_drivers_address_drains_and_ends_the_application(
        app: App, cluster_nimbus: ClusterNimbus) -> None:
    _running(app)
    listed = app.cli("list")
    assert listed.returncode == 0 and "chaos" in listed.stdout, listed.stderr
    answer = app.cli("kill", "chaos", "-w", "1")
    assert answer.returncode == 0, answer.stderr
    code = app.process.wait(120)
    text = app.log.read_text()
    assert code == 0, text[-5000:]
    assert "draining (killed through the REST API)" in text, text[-5000:]
    assert "stopped after" in text
    wait_for(lambda: not [p for p in app.seen.values() if alive(p)], 30,
             message="every process of the application exited")
    assert not list(app.scratch.glob("sparkstorm-*")), "the application's folders are left"
    rows = cluster_nimbus.get("/api/v1/topology/summary")["topologies"]
    statuses = [r["status"] for r in rows if r["name"] == "chaos"]
    assert statuses in ([], ["KILLED"]), "the cluster's Nimbus was told it ended"
