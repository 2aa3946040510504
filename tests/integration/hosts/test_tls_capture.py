"""Nothing readable or replayable crosses the hosts' network, Spark's own network included.

A topology spread over hosts B and C (``topology.workers=2``, Nimbus on A) runs tuples with
known bytes (``tls_topology/tls_probe_topology.py``) while tcpdump (Debian's,
``scripts/install-tcpdump.sh``) records everything on the hosts' bridge. Neither the cluster
token nor the topology's tuples may appear in the capture, not even in Spark's shuffle
blocks (the workers set ``spark.authenticate`` and ``spark.network.crypto.enabled`` with the
cluster's Spark secret); and a captured connection to Nimbus (a worker's heartbeat, its
token inside) replayed from host A gets no answer. A Spark application without the
standalone master's secret, or with a wrong one, is refused by the master.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.hosts.conftest import HOST_A, MASTER, ROOT, SCRIPT, TestHosts
from tests.integration.hosts.control_plane import (
    ClusterHosts,
    kill_topology,
    wait_every_id_once,
)

# slow: test_two_workers_run_executors_on_both_hosts (test_cluster_across_hosts.py) runs the
# same TLS cluster across hosts in make test; tests/unit/engine/test_wire_tls.py and
# tests/unit/cluster/nimbus/test_nimbus_tls.py check the capture and replay on loopback
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

PROBE = Path(__file__).resolve().parent / "tls_topology" / "tls_probe_topology.py"
MARKER = b"TLS-PROBE-4b7e1c"
BRIDGE = os.environ.get("TEST_HOSTS_BRIDGE", "ssbr0")
NIMBUS_PORT = int(os.environ.get("TEST_HOSTS_NIMBUS_PORT", "6627"))
SPARK_MASTER_PORT = 7077


def _tcpdump() -> str:
    found = shutil.which("tcpdump")
    if not found:
        subprocess.run(["bash", str(ROOT / "scripts" / "install-tcpdump.sh")],
                       check=False, capture_output=True, timeout=600)
        found = shutil.which("tcpdump")
    if not found:
        pytest.skip("tcpdump is missing and scripts/install-tcpdump.sh could not install it")
    return found


def client_streams(pcap: bytes, port: int) -> dict[tuple[str, int], bytes]:
    """What each TCP client sent to ``port`` in an Ethernet pcap, by (address, its port)."""
    streams: dict[tuple[str, int], bytearray] = defaultdict(bytearray)
    offset = 24  # the global header
    while offset + 16 <= len(pcap):
        length = struct.unpack_from("<I", pcap, offset + 8)[0]
        frame = pcap[offset + 16:offset + 16 + length]
        offset += 16 + length
        if len(frame) < 34 or frame[12:14] != b"\x08\x00" or frame[23] != 6:  # IPv4 TCP
            continue
        ip = frame[14:]
        tcp = ip[(ip[0] & 0x0F) * 4:]
        source, destination = struct.unpack_from(">HH", tcp)
        payload = tcp[(tcp[12] >> 4) * 4:struct.unpack_from(">H", ip, 2)[0]
                      - (ip[0] & 0x0F) * 4]
        if destination == port and payload:
            streams[(socket.inet_ntoa(ip[12:16]), source)] += payload
    return {key: bytes(value) for key, value in streams.items()}


def test_a_capture_between_hosts_holds_no_token_no_tuple_and_cannot_be_replayed(
        cluster_hosts: TestHosts, tmp_path: Path) -> None:
    cluster = ClusterHosts(cluster_hosts)
    token = (cluster_hosts.shared / "conf" / "token").read_bytes().strip()
    capture = tmp_path / "hosts.pcap"
    dump = subprocess.Popen([_tcpdump(), "-i", BRIDGE, "-w", str(capture), "-U", "-s", "0",
                             "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: capture.exists(), 30, message="tcpdump started")
        results = cluster_hosts.shared / "results" / "tls-probe"
        shutil.rmtree(results, ignore_errors=True)
        results.mkdir(parents=True)
        count = 400
        cluster.cli("submit", str(PROBE), "--name", "tls-probe", "-c", f"probe.dir={results}",
                    "-c", f"probe.count={count}", "-c", "topology.workers=2",
                    "-c", "spark.executor.memory=1g",
                    "-c", f"spark.executorEnv.PYTHONPATH={ROOT / 'src'}:{ROOT}")
        cluster.wait_spread()
        wait_every_id_once(cluster, results, count)
        time.sleep(2)  # a last heartbeat or two (with the token) into the capture
    finally:
        dump.send_signal(signal.SIGINT)
        dump.wait(30)
    kill_topology(cluster, "tls-probe")
    recorded = capture.read_bytes()
    assert len(recorded) > 100_000, "the capture saw the hosts' traffic"
    assert token not in recorded, "the cluster token crossed the network in clear"

    # a connection recorded from its first byte: a TLS ClientHello, then the heartbeats
    heartbeats = {k: v for k, v in client_streams(recorded, NIMBUS_PORT).items()
                  if v[:1] == b"\x16"}
    assert heartbeats, "workers called Nimbus across the bridge in TLS"
    (caller, _), sent = max(heartbeats.items(), key=lambda item: len(item[1]))
    replayed = cluster_hosts.shared / "results" / "replayed.bin"
    replayed.write_bytes(sent)
    # from host A, which never had a certificate's key: the bytes as recorded
    replay = cluster_hosts.run("A", "python3", "-c", (
        "import socket, sys\n"
        f"s = socket.create_connection(('{HOST_A}', {NIMBUS_PORT}), timeout=10)\n"
        f"data = open('{replayed}', 'rb').read()\n"
        "answer = b''\n"
        "try:\n"
        "    s.sendall(data)\n"
        "    while chunk := s.recv(65536):\n"
        "        answer += chunk\n"
        "except OSError:\n"
        "    pass\n"
        "print('HTTP' if b'HTTP/1.1' in answer else 'refused')\n"), timeout=60)
    assert replay.stdout.strip() == "refused", (caller, replay.stdout, replay.stderr)

    # tuples: sparkstorm's channels (executor TCP, lookups, heartbeats) are TLS, Spark's
    # block transfers (its shuffle) and RPC encrypted with the standalone cluster's secret
    leaks = tuple_packets(recorded)
    assert leaks == [], f"{len(leaks)} packets carried a tuple in clear"
    assert client_streams(recorded, SPARK_MASTER_PORT), "Spark's RPC crossed the bridge"
    # Spark's RPC in clear is Java serialization, its messages' class names readable
    assert b"DeployMessages" not in recorded, "Spark's RPC crossed in clear"


NO_SECRET_APP = """
import sys
from pyspark.sql import SparkSession
builder = SparkSession.builder.master(sys.argv[1]).appName(sys.argv[2])
for setting in sys.argv[3:]:
    builder = builder.config(*setting.split("=", 1))
builder.config("spark.ui.enabled", "false").getOrCreate().stop()
"""


def test_the_standalone_master_refuses_an_application_without_its_secret(
        cluster_hosts: TestHosts) -> None:
    # Spark clients run on the hosts read the hosts' spark-defaults.conf (the secret):
    # these two run without it, one with no authentication, one with a wrong secret
    script = cluster_hosts.shared / "results" / "no_secret_app.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(NO_SECRET_APP)
    apps = {"no-secret-app": [], "wrong-secret-app": [
        "spark.authenticate=true", "spark.authenticate.secret=not-the-cluster-secret",
        "spark.network.crypto.enabled=true"]}
    running = {}
    try:
        for name, settings in apps.items():
            log = (cluster_hosts.shared / "results" / f"{name}.log").open("w")
            running[name] = (log, subprocess.Popen(
                ["bash", str(SCRIPT), "exec", "B", "env", "-u", "SPARK_CONF_DIR",
                 sys.executable, str(script), MASTER, name, *settings],
                env=cluster_hosts.env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True))

        def refused(name: str) -> bool:
            text = (cluster_hosts.shared / "results" / f"{name}.log").read_text()
            return "Failed to connect to master" in text or "Giving up" in text

        for name in apps:
            wait_for(lambda name=name: refused(name), 120,
                     message=f"{name}'s first registration with the master refused")
    finally:
        for log, process in running.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)
            log.close()
    master_log = (cluster_hosts.shared / "spark-master.log").read_text()
    for name in apps:
        assert f"Registering app {name}" not in master_log, f"the master took {name}"


def tuple_packets(pcap: bytes) -> list[bytes]:
    """The TCP payloads of ``pcap`` that hold a tuple's :data:`MARKER`."""
    found = []
    offset = 24
    while offset + 16 <= len(pcap):
        length = struct.unpack_from("<I", pcap, offset + 8)[0]
        frame = pcap[offset + 16:offset + 16 + length]
        offset += 16 + length
        if MARKER in frame:
            found.append(frame)
    return found
