"""The chaos suite's machinery, shared with ``benchmarks/chaos_recovery.py``.

A topology on a real cluster (Nimbus, a supervisor, the worker, Spark local[2], loopback
only), the faults (kill -9 of one process each, of all of them at once, or a ZooKeeper
outage under a cluster on the ZooKeeper store), and the checks (every id acked exactly once,
the sink saw every id, no process or folder left).
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster
from tests.integration.zookeeper.zkserver import ZooKeeperServer
from tests.jsonl import whole_records

TOPOLOGY = Path(__file__).resolve().parent / "topology" / "chaos.py"
COUNT = 600
"""Ids per run: ten seconds of stream at the spout's rate."""
CONF: dict[str, Any] = {"topology.message.timeout.secs": 10,
                        "nimbus.task.timeout.secs": 20}
"""Cluster conf of the chaos runs: lost trees replay after 10 s."""
ZOOKEEPER_SESSION_MS = 3000
"""The daemons' ZooKeeper session timeout in the outage run (the cluster suite's)."""
OUTAGE_SECS = 25.0
"""How long ZooKeeper stays down: past the daemons' session timeout (3 s), past
``storm.zookeeper.connection.timeout`` (15 s: their store calls fail, they do not only wait)
and past ``nimbus.task.timeout.secs`` (20 s: no heartbeat reaches the store meanwhile)."""
OUTAGE_COUNT = 2700
"""Ids of the outage run: 45 seconds of stream, so that ids still flow (and are acked) once
ZooKeeper is back, not only while it is down."""


def acks(folder: Path) -> list[dict[str, Any]]:
    """The spout's commits, in order."""
    path = folder / "acks.jsonl"
    if not path.exists():
        return []
    return whole_records(path)


def sink_ids(folder: Path) -> set[int]:
    """Every id some sink task received."""
    return {record["id"] for path in folder.glob("sink-*.jsonl")
            for record in whole_records(path)}


class Run:
    """One chaos run: the cluster, the topology's folder, and every process it saw."""

    def __init__(self, cluster: TestCluster, folder: Path, count: int = COUNT,
                 zookeeper: ZooKeeperServer | None = None) -> None:
        self.cluster = cluster
        self.folder = folder
        self.count = count
        self.zookeeper = zookeeper
        """The ZooKeeper server of a cluster on the ZooKeeper store (the outage stops it)."""
        self.restored = 0.0
        """When (epoch seconds) a fault that ends by itself ended (ZooKeeper answering)."""
        self.seen: dict[int, psutil.Process] = {}
        """Worker processes and their descendants (executors, JVM, Python workers)."""
        self.worker_pids: set[int] = set()

    def start(self) -> None:
        """Start Nimbus and a supervisor, submit, wait until acks flow."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.cluster.start_nimbus()
        self.cluster.start_supervisor()
        result = self.cluster.cli("submit", str(TOPOLOGY), "--name", "chaos",
                                  "-c", f"chaos.dir={self.folder}",
                                  "-c", f"chaos.count={self.count}")
        assert result.returncode == 0, result.stderr + self.cluster.logs()
        self.wait_acked(30, 180)

    def note_processes(self) -> None:
        """Remember the worker and everything it started (checked gone at the end)."""
        for record in self.cluster.worker_records():
            self.worker_pids.add(record["pid"])
            try:
                worker = psutil.Process(record["pid"])
                self.seen[worker.pid] = worker
                self.seen |= {c.pid: c for c in worker.children(recursive=True)}
            except psutil.Error:
                continue

    def wait_acked(self, at_least: int, timeout: float) -> None:
        """Wait until ``at_least`` distinct ids are committed."""
        wait_for(lambda: len({a["id"] for a in acks(self.folder)}) >= at_least, timeout,
                 message=f"{at_least} ids acked\n{self.cluster.logs()}")
        self.note_processes()

    def check_every_id_once(self) -> None:
        """Every id committed exactly once, and seen by the sink."""
        self.wait_acked(self.count, 240)
        counts = Counter(a["id"] for a in acks(self.folder))
        assert set(counts) == set(range(self.count))
        assert [i for i, n in counts.items() if n != 1] == [], "ids acked twice"
        assert sink_ids(self.folder) >= set(range(self.count)), "ids the sink never saw"

    def kill_and_check_nothing_left(self) -> None:
        """``sparkstorm kill``, then: no worker record, no process, no runner folder."""
        self.note_processes()
        killed = self.cluster.cli("kill", "chaos", "-w", "0")
        assert killed.returncode == 0, killed.stderr
        wait_for(lambda: not self.cluster.worker_records(), 90,
                 message=f"worker records removed\n{self.cluster.logs()}")
        wait_for(lambda: not [p for p in self.seen.values() if _alive(p)], 60,
                 message=f"processes left: {[p.pid for p in self.seen.values() if _alive(p)]}")
        temp = Path(tempfile.gettempdir())
        left = [p for pid in self.worker_pids for p in temp.glob(f"sparkstorm-{pid}-*")]
        assert left == [], f"runner folders left: {left}"


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _descendants(run: Run) -> list[psutil.Process]:
    (record,) = run.cluster.worker_records()
    return list(psutil.Process(record["pid"]).children(recursive=True))


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _sink_executor(run: Run) -> psutil.Process:
    """One sink executor (the executor with the highest gid)."""
    executors = [p for p in _descendants(run) if "sparkstorm.engine.executor.main" in _cmdline(p)]
    return max(executors, key=lambda p: int(_cmdline(p).split("--gid")[1].split()[0]))


def kill_executor(run: Run) -> float:
    """Kill -9 one sink executor (the executor with the highest gid)."""
    os.kill(_sink_executor(run).pid, signal.SIGKILL)
    return time.time()


def _python_workers(run: Run) -> list[psutil.Process]:
    """The Spark Python workers (``pyspark.daemon`` and the workers it forked), once some run."""
    def targets() -> list[psutil.Process]:
        return [p for p in _descendants(run) if "pyspark.daemon" in _cmdline(p)
                or "pyspark/daemon.py" in _cmdline(p)]

    return wait_for(targets, 30, message="a Spark Python worker runs")


def kill_python_worker(run: Run) -> float:
    """Kill -9 the Spark Python workers (``pyspark.daemon`` and the workers it forked)."""
    for process in _python_workers(run):
        try:
            os.kill(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
    return time.time()


def kill_worker(run: Run) -> float:
    """Kill -9 the worker (the Spark driver) alone; its supervisor restarts it."""
    (record,) = run.cluster.worker_records()
    os.kill(record["pid"], signal.SIGKILL)
    return time.time()


def kill_supervisor(run: Run) -> float:
    """Kill -9 the supervisor (the worker goes on), then start it again (it adopts it)."""
    run.cluster.kill9("supervisor")
    killed = time.time()
    run.cluster.start_supervisor()
    return killed


def kill_nimbus(run: Run) -> float:
    """Kill -9 Nimbus (the worker goes on), then start it again (it resumes from the store)."""
    run.cluster.kill9("nimbus")
    killed = time.time()
    run.cluster.start_nimbus()
    return killed


def kill_all_at_once(run: Run) -> float:
    """Kill -9 an executor, the Python workers, the worker, the supervisor and Nimbus together.

    Every target is found first, then all are killed back to back (within milliseconds,
    daemons first, so no supervisor sees the worker die); then Nimbus and the supervisor
    start again, as an operator would. The new supervisor finds its worker dead and launches
    it again; the new Nimbus gives it a full timeout from its own start.
    """
    executor = _sink_executor(run)
    python_workers = _python_workers(run)
    (record,) = run.cluster.worker_records()
    run.note_processes()  # the old worker's processes must all be gone at the end
    killed = time.time()
    run.cluster.kill9("supervisor")
    run.cluster.kill9("nimbus")
    for pid in [executor.pid, *(p.pid for p in python_workers), record["pid"]]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    run.cluster.start_nimbus()
    run.cluster.start_supervisor()
    return killed


def zookeeper_outage(run: Run) -> float:
    """Stop the ZooKeeper server for :data:`OUTAGE_SECS`, then start it on the same port.

    Same data directory, so the cluster state survives, as after a real outage. Nimbus's
    and the supervisor's stores lose their connection; the worker holds no store client
    (its heartbeats go to Nimbus, its tuples and acks between its executors).
    """
    server = run.zookeeper
    assert server is not None, "the zookeeper-outage fault needs a cluster on ZooKeeper"
    stopped = time.time()
    server.stop()
    time.sleep(max(0.0, stopped + OUTAGE_SECS - time.time()))
    server.start()
    run.restored = time.time()
    return stopped


FAULTS: dict[str, Callable[[Run], float]] = {
    "executor": kill_executor, "python-worker": kill_python_worker, "worker": kill_worker,
    "supervisor": kill_supervisor, "nimbus": kill_nimbus, "all-at-once": kill_all_at_once,
    "zookeeper-outage": zookeeper_outage}
"""Each fault: inject it, return when (epoch seconds) the process was killed (the
outage: ZooKeeper stopped)."""
ZOOKEEPER_FAULTS = frozenset({"zookeeper-outage"})
"""The faults that need a cluster on the ZooKeeper store (:func:`zookeeper_cluster_conf`)."""
KILL_FAULTS = sorted(set(FAULTS) - ZOOKEEPER_FAULTS)
"""The kill -9 faults, run on the default (embedded) store."""
COUNTS = {"zookeeper-outage": OUTAGE_COUNT}
"""Ids per run of the faults that need more than :data:`COUNT`."""


@contextlib.contextmanager
def zookeeper_server(workdir: Path) -> Iterator[ZooKeeperServer]:
    """A ZooKeeper server of one run alone (a fault stops it), on a free loopback port."""
    server = ZooKeeperServer(workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def zookeeper_cluster_conf(server: ZooKeeperServer) -> dict[str, Any]:
    """The cluster conf keys that put its state on ``server`` (a root of its own)."""
    return {"storm.state.store": "zookeeper",
            "storm.zookeeper.servers": ["127.0.0.1"],
            "storm.zookeeper.port": server.port,
            "storm.zookeeper.root": f"/chaos-{uuid.uuid4().hex[:12]}",
            "storm.zookeeper.session.timeout": ZOOKEEPER_SESSION_MS}


def longest_ack_pause(folder: Path, since: float) -> float:
    """The longest time without a new commit from ``since`` to the last commit.

    How long the topology stopped making progress: time to recovery, when ``since`` is the
    fault.
    """
    times = [since, *sorted(a["time"] for a in acks(folder) if a["time"] > since)]
    return max((b - a for a, b in zip(times, times[1:], strict=False)), default=0.0)


def steady_ack_pause(folder: Path, since: float, until: float) -> float:
    """The longest pause between commits from ``since`` to ``until``, without a fault.

    The reference, measured in the same run, that a fault's pause compares with (``since``
    after the start-up burst: the first window acks everything emitted during start-up).
    """
    times = sorted(a["time"] for a in acks(folder) if since <= a["time"] <= until)
    return max((b - a for a, b in zip(times, times[1:], strict=False)), default=0.0)
