"""The launcher's reading of a worker's local heartbeat (only this incarnation's counts) and
the supervisor's verdict on a silent worker, with a fixed clock."""

from __future__ import annotations

import json
from pathlib import Path

from sparkstorm.cluster.nimbus.client import NimbusClient
from sparkstorm.cluster.state.cluster_state import ClusterState
from sparkstorm.cluster.state.embedded import EmbeddedStore
from sparkstorm.cluster.supervisor.launcher import Launcher, WorkerProcess
from sparkstorm.cluster.supervisor.supervisor import Supervisor


def test_last_heartbeat_ignores_missing_torn_and_earlier_incarnations(tmp_path: Path) -> None:
    launcher = Launcher(tmp_path, "http://127.0.0.1:1", None, 0.0)
    process = WorkerProcess("w1", "t-1-1", 6700, 123, create_time=1000.0)
    folder = launcher.root / "w1"
    folder.mkdir()
    assert launcher.last_heartbeat(process) is None, "none written yet"
    (folder / "heartbeat.json").write_text('{"time_secs": 10')
    assert launcher.last_heartbeat(process) is None, "torn"
    (folder / "heartbeat.json").write_text(json.dumps({"time_secs": 900.0}))
    assert launcher.last_heartbeat(process) is None, "the previous worker's"
    (folder / "heartbeat.json").write_text(json.dumps({"time_secs": 1005.5}))
    assert launcher.last_heartbeat(process) == 1005.5


def test_silence_gives_the_start_timeout_before_the_first_heartbeat(tmp_path: Path) -> None:
    conf = {"storm.local.dir": str(tmp_path), "supervisor.worker.timeout.secs": 30,
            "supervisor.worker.start.timeout.secs": 120}
    with EmbeddedStore(tmp_path / "store.sqlite") as store:
        client = NimbusClient("http://127.0.0.1:1", None)
        try:
            supervisor = Supervisor(conf, ClusterState(store), client)
        finally:
            client.close()
        now = 10_000.0
        process = WorkerProcess("w1", "t-1-1", 6700, 123, create_time=now - 100)
        folder = supervisor.launcher.root / "w1"
        folder.mkdir(parents=True)
        assert supervisor.silence(process, now) is None, "still starting"
        late = supervisor.silence(process, now + 21)
        assert late is not None and "supervisor.worker.start.timeout.secs=120" in late
        (folder / "heartbeat.json").write_text(json.dumps({"time_secs": now - 29}))
        assert supervisor.silence(process, now) is None, "heartbeating"
        silent = supervisor.silence(process, now + 2)
        assert silent is not None and "no heartbeat for 31.0 s" in silent
        assert "supervisor.worker.timeout.secs=30" in silent
