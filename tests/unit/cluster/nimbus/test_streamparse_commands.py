"""streamparse's cluster commands against an in-process Nimbus (FastAPI's test client).

``stats`` (cluster, topology, component, ``--all``), ``slot_usage``, ``worker_uptime`` and
``tail`` read the REST API of a Nimbus with one supervisor and a topology whose worker sent
one heartbeat (and, for ``tail``, its logs' tails); ``remove_logs`` removes the kept logs of
a topology whose supervisor is this machine.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sparkstorm.cli import tail
from sparkstorm.cli.main import main
from sparkstorm.cli.tail import LogReader, TailPrinter
from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.client import NimbusClient
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import SupervisorInfo
from tests.unit.cluster.nimbus.helpers import running, submit
from tests.unit.cluster.nimbus.http_helpers import LOOPBACK

pytestmark = pytest.mark.usefixtures("two_components")

WORKER_LOG = "worker started\nworker running\n"
SPLIT_LOG = "".join(f"split line {n}\n" for n in range(30))


@pytest.fixture
def served(nimbus: Nimbus, monkeypatch: pytest.MonkeyPatch) -> Callable[[], NimbusClient]:
    """Every command's Nimbus client is the in-process API of ``nimbus`` (one app)."""
    app = create_app(nimbus, "secret")

    def client(*_: Any, **__: Any) -> NimbusClient:
        made = NimbusClient("http://testserver", "secret")
        made.http = TestClient(app, base_url=LOOPBACK, headers={"Authorization": "Bearer secret"})
        return made

    monkeypatch.setattr(NimbusClient, "from_conf", staticmethod(client))
    monkeypatch.setattr(tail, "POLL_SECS", 0.0)
    return client


def _out(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_stats_prints_the_cluster_the_topology_and_a_component(
        nimbus: Nimbus, state: ClusterState, served: Callable[[], NimbusClient],
        capsys: pytest.CaptureFixture[str]) -> None:
    topology_id, _ = running(nimbus, state)
    cluster = _out(["stats"], capsys)
    for title in ("Cluster summary", "Topology summary", "Supervisor summary"):
        assert title in cluster
    assert topology_id in cluster and "host-s1" in cluster
    topology = _out(["stats", "-n", "t"], capsys)
    for title in ("Topology summary: t", "Topology stats: t", "Spouts (all time): t",
                  "Bolts (all time): t"):
        assert title in topology
    assert "10m 0s" in topology and "2.500" in topology, "windows and complete latency"
    assert "Executors" not in topology
    split = _out(["stats", "-n", "t", "-c", "split"], capsys)
    for title in ("Component summary: split of t", "Bolt stats: split of t",
                  "Input stats (all time): split of t", "Executors (all time): split of t"):
        assert title in split
    assert "[1-4]" in split and "host-s1" in split and "6700" in split, "the executor row"
    every = _out(["stats", "-n", "t", "--all"], capsys)
    assert "Spout stats: word of t" in every and "Bolt stats: split of t" in every
    assert "Topology stats: t" in _out(["stats", "--all"], capsys), "every topology"
    assert main(["stats", "-n", "t", "-c", "nope"]) == 2
    assert "[COMPONENT_NOT_FOUND]" in capsys.readouterr().err


def test_slot_usage_and_worker_uptime(nimbus: Nimbus, state: ClusterState,
                                      served: Callable[[], NimbusClient],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    _, worker_id = running(nimbus, state)
    slots = _out(["slot_usage"], capsys)
    row = next(line for line in slots.splitlines() if "host-s1" in line)
    assert [c.strip() for c in row.strip("│ ").split("│")] == ["host-s1", "s1", "1", "1",
                                                               "0", "1 (2)"]
    assert " t " in next(line for line in slots.splitlines() if "host" in line), "column t"
    uptime = _out(["worker-uptime"], capsys)
    row = next(line for line in uptime.splitlines() if "host-s1" in line)
    assert [c.strip() for c in row.strip("│ ").split("│")] == [
        "host-s1", "6700", "t", worker_id, "1m 5s", "65", "RUNNING"]


def _send_tails(http: TestClient, worker_id: str, topology_id: str, worker: str,
                split: str) -> None:
    assert http.post(f"/api/v1/worker/{worker_id}/logs", json={
        "topology_id": topology_id,
        "sources": {"worker": "worker", "executor-0": "executor 0 (split)",
                    "executor-1": "executor 1 (word)"},
        "tails": {"worker": worker, "executor-0": split, "executor-1": ""}},
    ).status_code == 200


def test_tail_prints_each_log_s_last_lines_picked_by_pattern_and_grep(
        nimbus: Nimbus, state: ClusterState, served: Callable[[], NimbusClient],
        capsys: pytest.CaptureFixture[str]) -> None:
    topology_id, worker_id = running(nimbus, state)
    _send_tails(served().http, worker_id, topology_id, WORKER_LOG, SPLIT_LOG)
    out = _out(["tail", "-n", "t", "-l", "3"], capsys)
    assert out.splitlines() == [
        "==> host-s1:6700 worker <==", "worker started", "worker running", "",
        "==> host-s1:6700 executor 0 (split) <==",
        "split line 27", "split line 28", "split line 29"], "the word log is empty"
    picked = _out(["tail", "-n", "t", "--pattern", "split", "--grep", "line 1[0-2]$"], capsys)
    assert picked.splitlines() == ["==> host-s1:6700 executor 0 (split) <==",
                                   "split line 10", "split line 11", "split line 12"]
    assert main(["tail", "-n", "t", "--grep", "("]) == 2
    assert "[LOG_PATTERN_INVALID]" in capsys.readouterr().err


def test_tail_follow_prints_only_the_new_lines(nimbus: Nimbus, state: ClusterState,
                                               served: Callable[[], NimbusClient]) -> None:
    topology_id, worker_id = running(nimbus, state)
    http = served().http
    _send_tails(http, worker_id, topology_id, WORKER_LOG, SPLIT_LOG)
    reader = LogReader(served(), topology_id)
    reader.refresh_workers()
    for _ in range(2):
        reader.poll()
    assert reader.complete()
    out = io.StringIO()
    printer = TailPrinter(None, out)
    printer.last_title = "host-s1:6700 executor 0 (split)"
    slid = "".join(f"split line {n}\n" for n in range(20, 32))  # the tail's window slid
    polls = iter([slid,
                  "another start\n"])  # nothing in common: more came than a tail holds

    def sleep(_: float) -> None:
        try:
            text = next(polls)
        except StopIteration:
            raise KeyboardInterrupt from None
        nimbus.clock.advance(1.0)  # type: ignore[attr-defined]
        _send_tails(http, worker_id, topology_id, WORKER_LOG, text)

    # the tail module's own ``time``: patching ``time.sleep`` itself let the served Nimbus's
    # threads take a poll's text (and send it) between two of the follow loop's polls
    with pytest.MonkeyPatch.context() as patch, pytest.raises(KeyboardInterrupt):
        patch.setattr(tail, "time", SimpleNamespace(sleep=sleep, monotonic=time.monotonic))
        tail._follow(reader, printer, 10)
    assert out.getvalue().splitlines() == [
        "split line 30", "split line 31", "",
        "==> host-s1:6700 executor 0 (split) (lines missed) <==", "another start"]


def test_remove_logs_cleans_this_machine_and_says_what_to_run_elsewhere(
        nimbus: Nimbus, state: ClusterState, served: Callable[[], NimbusClient],
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kept = tmp_path / "kept-logs"
    kept.mkdir()
    for name in ("executor-0.log", "executor-12.log", "worker.log", "executor-1.log.1"):
        (kept / name).write_text("x\n")
    state.register_supervisor(SupervisorInfo("here", "localhost", (6700,)))
    submit(nimbus, "kept", {"topology.executor.log.dir": str(kept)})
    out = _out(["remove_logs", "-n", "kept"], capsys)
    assert sorted(p.name for p in kept.iterdir()) == ["executor-1.log.1", "worker.log"]
    assert f"removed {kept / 'executor-0.log'}" in out
    _out(["remove_logs", "-n", "kept", "--pattern", r"\.log\.\d+$"], capsys)
    assert sorted(p.name for p in kept.iterdir()) == ["worker.log"]

    state.register_supervisor(SupervisorInfo("far", "far-away.example", (6700,)))
    submit(nimbus, "remote", {"topology.executor.log.dir": "/var/log/topo"})
    assert main(["remove_logs", "-n", "remote", "-u", "storm"]) == 2
    err = capsys.readouterr().err
    assert "[REMOVE_LOGS_REMOTE_HOSTS]" in err and "['far-away.example']" in err
    assert "cd /var/log/topo && ls | grep -E '^executor-\\d+\\.log$' | sudo -u storm " \
           "xargs -r rm -f" in err, err
    submit(nimbus, "plain")
    assert "keeps no logs to remove" in _out(["remove_logs", "-n", "plain"], capsys)
