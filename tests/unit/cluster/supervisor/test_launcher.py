"""The launcher's reading of a worker's local heartbeat, and the verdict on a silent one.

Only this incarnation's heartbeat counts; the supervisor's verdict uses a fixed clock.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from sparkstorm.cluster.nimbus.client import NimbusClient
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.embedded import EmbeddedStore
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


def test_a_changed_assignment_wakes_the_supervisor_at_once(tmp_path: Path) -> None:
    """A changed assignment wakes the supervisor at once.

    A move or a rebalance changes an existing assignment: the supervisor must act on it now, not at
    its next round (an hour away here).
    """
    from sparkstorm.cluster.store.records import Assignment, WorkerSlot
    from sparkstorm.testing.polling import wait_for

    conf = {"storm.local.dir": str(tmp_path), "supervisor.monitor.frequency.secs": 3600}
    with EmbeddedStore(tmp_path / "store.sqlite") as store:
        state = ClusterState(store)
        client = NimbusClient("http://127.0.0.1:1", None)
        supervisor = Supervisor(conf, state, client)
        rounds: list[float] = []
        supervisor.sync = lambda: rounds.append(1.0)  # type: ignore[method-assign]
        slot = WorkerSlot("elsewhere", 6700)

        def assign(worker_id: str) -> None:
            state.set_assignment("t-1-1", Assignment("t-1-1", {(1, 1): slot}, {(1, 1): 1},
                                                     {slot: worker_id}, {"elsewhere": "h"}))
        try:
            supervisor.start()
            wait_for(lambda: len(rounds) >= 1, 10, message="the first round")
            assign("w1")
            wait_for(lambda: len(rounds) >= 2, 10, message="a new assignment wakes it")
            settled = len(rounds)
            assign("w2")  # the same topology, a new worker id: only a data watch sees it
            wait_for(lambda: len(rounds) > settled, 10, message="a changed one wakes it")
        finally:
            supervisor.stop()
            client.close()


def test_a_worker_killed_before_its_first_heartbeat_leaves_no_runner_folder(
        tmp_path: Path) -> None:
    launcher = Launcher(tmp_path, "http://127.0.0.1:1", None, 0.0)
    gone = WorkerProcess("w1", "t-1-1", 6700, 2**22 + 7, create_time=1000.0)  # no such pid
    mine = Path(tempfile.mkdtemp(prefix=f"sparkstorm-{gone.pid}-"))
    other = Path(tempfile.mkdtemp(prefix=f"sparkstorm-{gone.pid + 1}-"))
    try:
        launcher.kill(gone, forget=False)  # no heartbeat named a folder
        assert not mine.exists(), "its own pid's runner folder goes"
        assert other.exists(), "another pid's stays"
    finally:
        for folder in (mine, other):
            if folder.exists():
                folder.rmdir()
