"""Fixtures of the browser suite: Debian's Chromium driven by Playwright, and a real cluster.

The cluster (Nimbus, a supervisor, the flaky exclamation topology of ``topologies/flaky.py``, which
fails every 7th tuple at its last bolt, and ``sparkstorm ui``) is shared by a module.

Chromium is installed by ``scripts/install-chromium.sh`` when missing (``make test`` runs it
too). When it cannot be installed, or Playwright is missing, the tests skip with the reason;
under ``CI=true`` they fail instead, so that CI never passes without running them.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from sparkstorm.testing.polling import wait_for
from sparkstorm.tls.material import make_material
from tests.integration.cluster.harness import ROOT, TestCluster, free_port

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "test-artifacts"
FLAKY = Path(__file__).parent / "topologies" / "flaky.py"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser tests cannot run under CI=true: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium() -> Path:
    """The Chromium binary, installed with apt-get when missing."""
    if not CHROMIUM.exists():
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(["bash", str(ROOT / "scripts" / "install-chromium.sh")],
                           check=False, capture_output=True, timeout=900)
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing and scripts/install-chromium.sh could not "
                     "install it (needs root or sudo and apt-get)")
    return CHROMIUM


@pytest.fixture(scope="session")
def tls_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The TLS material every cluster of the session serves its UI with (TLS stays on)."""
    folder = tmp_path_factory.mktemp("browser-tls") / "tls"
    make_material(folder, [])
    return folder


def spki_pin(certificate: Path) -> str:
    """The base64 SHA-256 of a certificate's public key, as Chromium pins it."""
    cert = x509.load_pem_x509_certificate(certificate.read_bytes())
    key = cert.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(key).digest()).decode()


@pytest.fixture(scope="session")
def browser(chromium: Path, tls_dir: Path) -> Iterator[Any]:
    """A headless Chromium for the whole session.

    It trusts the UI's certificate by its public key (``--ignore-certificate-errors-spki-list``
    takes exactly that key, no other certificate error is ignored), as a user's browser
    trusts it once the cluster CA is imported.
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed: pip install -e '.[test]'")
    pin = "--ignore-certificate-errors-spki-list=" + spki_pin(tls_dir / "node.pem")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(chromium), headless=True,
                                              args=[*CHROMIUM_ARGS, pin])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page in a fresh browser context (no cookies: a new UI session)."""
    # local times show in the browser's zone: UTC, so that tests know what to expect
    context = browser.new_context(viewport={"width": 1366, "height": 900}, timezone_id="UTC")
    context.set_default_timeout(15_000)
    new_page = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    new_page.on("pageerror", lambda exc: errors.append(str(exc)))
    new_page.on("request", lambda request: requests.append(request.url))
    yield new_page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
    # the UI works without any resource from outside the machine
    outside = [url for url in requests
               if not url.startswith(("https://127.0.0.1:", "http://127.0.0.1:", "data:"))]
    assert not outside, f"the page loaded resources from elsewhere: {outside}"


@dataclass
class UiCluster:
    """A running cluster with the flaky topology and the UI server in front of it."""

    cluster: TestCluster
    ui_url: str
    topology_id: str

    def rest(self, path: str) -> Any:
        """Nimbus's own answer (not through the UI)."""
        return self.cluster.get(path)

    def topology(self, window: str | None = None) -> dict[str, Any]:
        query = f"?window={window}" if window else ""
        return dict(self.rest(f"/api/v1/topology/{self.topology_id}{query}"))

    def component(self, name: str, window: str | None = None) -> dict[str, Any]:
        query = f"?window={window}" if window else ""
        return dict(self.rest(f"/api/v1/topology/{self.topology_id}/component/{name}{query}"))

    def status(self) -> str | None:
        rows = self.rest("/api/v1/topology/summary")["topologies"]
        return next((r["status"] for r in rows if r["id"] == self.topology_id), None)

    def spec(self) -> dict[str, Any]:
        response = self.cluster.request(
            "GET", f"/api/v1/topology/{self.topology_id}/code", params={"part": "spec"})
        response.raise_for_status()
        return dict(response.json())


def ui_up(url: str, cluster: TestCluster) -> bool:
    """Whether the UI at ``url`` answers (fails if its process died)."""
    try:
        return httpx.get(url + "/", timeout=2, verify=cluster.verify).is_success
    except httpx.HTTPError:
        assert cluster.daemons["ui"].poll() is None, cluster.logs()
        return False


@contextlib.contextmanager
def running_ui(folder: Path, tls_dir: Path, topology: Path, *submit: str,
               ready: Callable[[UiCluster], bool] | None = None, ready_secs: float = 120,
               what: str = "ready", **conf: Any) -> Iterator[UiCluster]:
    """Nimbus, a supervisor running ``topology`` and ``sparkstorm ui`` in front of them.

    All are stopped at the end; the cluster's logs are printed when the setup fails.

    Args:
        folder: the cluster's own folder.
        tls_dir: the TLS material of the browser suite (``tls_dir``).
        topology: the topology file submitted.
        submit: more arguments of ``sparkstorm submit``.
        ready: polled until true before the cluster is handed over.
        ready_secs: how long ``ready`` may take.
        what: what ``ready`` means, for the message when it times out.
        conf: the cluster's configuration beyond its UI port and TLS folder.
    """
    cluster = TestCluster(folder, **{"ui.port": free_port(), "storm.tls.dir": str(tls_dir),
                                     **conf})
    try:
        cluster.start_nimbus()
        cluster.start_supervisor()
        result = cluster.cli("submit", str(topology), *submit)
        assert result.returncode == 0, result.stderr + cluster.logs()
        cluster.start("ui")
        url = f"{cluster.scheme}://127.0.0.1:{cluster.conf['ui.port']}"
        wait_for(lambda: ui_up(url, cluster), 30, message=f"ui up\n{cluster.logs()}")
        ui = UiCluster(cluster, url, result.stdout.strip())
        if ready is not None:
            wait_for(lambda: ready(ui), ready_secs, message=f"{what}\n{cluster.logs()}")
        yield ui
    except BaseException:
        print(cluster.logs())
        raise
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def ui_cluster(tmp_path_factory: pytest.TempPathFactory, browser: Any,
               tls_dir: Path) -> Iterator[UiCluster]:
    """Nimbus + supervisor running the flaky topology (20 pending), and ``sparkstorm ui``."""
    # the worker's Spark UI is on, for its link on the topology page
    with running_ui(tmp_path_factory.mktemp("browser"), tls_dir, FLAKY,
                    "-c", "topology.max.spout.pending=20", **{"spark.ui.enabled": True}) as ui:
        yield ui


def screenshot(page: Any, name: str) -> Path:
    """Save a full-page screenshot as ``test-artifacts/<name>.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
