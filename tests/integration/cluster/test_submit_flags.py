"""streamparse's ``submit`` flags from a project's root, against a real Nimbus and supervisor.

``--force`` replaces the running topology of the same name (killed with ``--wait``, then
submitted again), ``-N/--override_name`` deploys under another name, ``-w``/``-a``/``-d``
become topology conf (``-d``: every tuple logged by the executors, on the cluster too), and
``--timeout`` bounds each answer of Nimbus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster
from tests.integration.cluster.test_streamparse_commands import _acked, _project, _sparkstorm

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


def _rows(cluster: TestCluster) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = cluster.get("/api/v1/topology/summary")["topologies"]
    return rows


def test_force_replaces_override_name_renames_and_flags_become_conf(
        cluster: TestCluster, tmp_path: Path) -> None:
    logs = tmp_path / "kept-logs"
    project = _project(tmp_path / "project", cluster.port, logs)
    cluster.start_nimbus()
    cluster.start_supervisor()
    first = _sparkstorm(cluster, project, "submit", "-e", "prod", "-d", "-a", "2",
                        "--timeout", "20000").stdout.strip()
    wait_for(lambda: _acked(cluster, first) > 5, 120, message=f"runs\n{cluster.logs()}")
    conf = cluster.get(f"/api/v1/topology/{first}")["configuration"]
    assert (conf["topology.debug"], conf["topology.acker.executors"]) == (True, 2)
    wait_for(lambda: any("emitted" in p.read_text(errors="replace")
                         for p in logs.glob("executor-*.log")), 60,
             message="-d: the executors log every tuple on the cluster too")

    refused = _sparkstorm(cluster, project, "submit", "-e", "prod", ok=False)
    assert refused.returncode == 2 and "TOPOLOGY_ALREADY_ALIVE" in refused.stderr

    second = _sparkstorm(cluster, project, "submit", "-e", "prod", "--force",
                         "--wait", "0").stdout.strip()
    assert second != first and second.startswith("numbers-")
    ids = [row["id"] for row in _rows(cluster)]
    assert first not in ids and second in ids, "the old one was killed before the new one"
    wait_for(lambda: _acked(cluster, second) > 5, 120, message=f"runs\n{cluster.logs()}")

    renamed = _sparkstorm(cluster, project, "submit", "-e", "prod", "-N", "numbers-b",
                          "-w", "1").stdout.strip()
    assert renamed.startswith("numbers-b-")
    assert sorted(row["name"] for row in _rows(cluster)) == ["numbers", "numbers-b"]
    for name in ("numbers", "numbers-b"):
        _sparkstorm(cluster, project, "kill", "-e", "prod", name, "--wait", "0")
    wait_for(lambda: not _rows(cluster), 60, message="both gone")
