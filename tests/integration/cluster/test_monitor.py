"""``sparkstorm monitor`` against a running cluster.

One line per interval with the count difference and the throughput; unknown topology, component or
stream exit 2 with a message that lists what exists. The same cluster answers the spec and
name-allowed calls.
"""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster

pytestmark = [pytest.mark.spark, pytest.mark.timeout(180)]

HEADER = ["topology", "component", "parallelism", "stream", "time-diff ms", "emitted",
          "throughput (tuples/s)"]


def _spout_emitted(cluster: TestCluster, topology_id: str) -> int:
    spouts = cluster.get(f"/api/v1/topology/{topology_id}")["spouts"]
    return int(spouts[0]["emitted"]) if spouts else 0


def _lines(stdout: str) -> list[list[str]]:
    return [line.split("\t") for line in stdout.splitlines()]


# slow (36 s in CI): the REST figures it reads are checked by test_topology_lifecycle.py
@pytest.mark.slow
def test_monitor_prints_throughput_lines_and_refuses_unknown_names(
        cluster: TestCluster) -> None:
    cluster.start_nimbus()
    cluster.start_supervisor()
    submitted = cluster.cli("submit", "examples/exclamation.py", "-c", "exclamation.count=0")
    assert submitted.returncode == 0, submitted.stderr + cluster.logs()
    topology_id = submitted.stdout.strip()
    wait_for(lambda: _spout_emitted(cluster, topology_id) > 0, 60,
             message=f"the spout emits\n{cluster.logs()}")

    result = cluster.cli("monitor", "exclamation", "-i", "1", "--count", "3")
    assert result.returncode == 0, result.stderr
    header, *rows = _lines(result.stdout)
    assert header == HEADER and len(rows) == 3, result.stdout
    for row in rows:
        assert row[:4] == ["exclamation", "word", "1", "default"], row
        assert 700 <= int(row[4]) <= 3000, row  # about one interval
        assert int(row[5]) >= 0 and float(row[6]) >= 0
    assert sum(int(row[5]) for row in rows) > 0, "the spout emitted during the lines"
    diff, millis, throughput = int(rows[-1][5]), int(rows[-1][4]), float(rows[-1][6])
    assert throughput == pytest.approx(diff * 1000 / millis, abs=0.06)

    bolt = cluster.cli("monitor", "exclamation", "-m", "exclaim2", "-w", "transferred",
                       "-i", "1", "--count", "1")
    assert bolt.returncode == 0, bolt.stderr
    (bolt_header, bolt_row) = _lines(bolt.stdout)
    assert bolt_header[5] == "transferred" and bolt_row[:4] == [
        "exclamation", "exclaim2", "2", "default"]

    _refused(cluster, ["nope"], "TOPOLOGY_NOT_FOUND", "['exclamation']")
    _refused(cluster, ["exclamation", "-m", "nope"], "COMPONENT_NOT_FOUND",
             "spouts are ['word'] and its bolts ['exclaim1', 'exclaim2']")
    _refused(cluster, ["exclamation", "-s", "nope"], "MONITOR_UNKNOWN_STREAM", "['default']")

    # the spec (token) and name-allowed calls of the same Nimbus
    spec = cluster.request("GET", f"/api/v1/topology/{topology_id}/spec")
    assert spec.status_code == 200 and {c["name"] for c in spec.json()["spec"][
        "components"]} == {"word", "exclaim1", "exclaim2"}
    assert cluster.request("GET", f"/api/v1/topology/{topology_id}/spec",
                           token=None).status_code == 401
    taken: dict[str, Any] = cluster.get("/api/v1/topologies/name-allowed?name=exclamation")
    assert taken["allowed"] is False and taken["code"] == "TOPOLOGY_ALREADY_ALIVE"
    assert cluster.get("/api/v1/topologies/name-allowed?name=other")["allowed"] is True


def _refused(cluster: TestCluster, args: list[str], code: str, listing: str) -> None:
    result = cluster.cli("monitor", *args, "--count", "1")
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"[{code}]" in result.stderr and listing in result.stderr, result.stderr
    assert result.stdout == ""
