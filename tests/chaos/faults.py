"""The chaos suite's machinery, shared with ``benchmarks/chaos_recovery.py``.

A topology on a real cluster (Nimbus, a supervisor, the worker, Spark local[2], loopback
only), the faults (kill -9 of one process each), and the checks (every id acked exactly
once, the sink saw every id, no process or folder left).
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from sparkstorm.testing.polling import wait_for
from tests.integration.cluster.harness import TestCluster

TOPOLOGY = Path(__file__).resolve().parent / "topology" / "chaos.py"
COUNT = 600
"""Ids per run: ten seconds of stream at the spout's rate."""
CONF: dict[str, Any] = {"topology.message.timeout.secs": 10,
                        "nimbus.task.timeout.secs": 20}
"""Cluster conf of the chaos runs: lost trees replay after 10 s."""


def acks(folder: Path) -> list[dict[str, Any]]:
    """The spout's commits, in order."""
    path = folder / "acks.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def sink_ids(folder: Path) -> set[int]:
    """Every id some sink task received."""
    return {json.loads(line)["id"] for path in folder.glob("sink-*.jsonl")
            for line in path.read_text().splitlines() if line.strip()}


class Run:
    """One chaos run: the cluster, the topology's folder, and every process it saw."""

    def __init__(self, cluster: TestCluster, folder: Path, count: int = COUNT) -> None:
        self.cluster = cluster
        self.folder = folder
        self.count = count
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


def kill_executor(run: Run) -> float:
    """Kill -9 one sink executor (the executor with the highest gid)."""
    executors = [p for p in _descendants(run) if "sparkstorm.engine.executor_main" in _cmdline(p)]
    target = max(executors, key=lambda p: int(_cmdline(p).split("--gid")[1].split()[0]))
    os.kill(target.pid, signal.SIGKILL)
    return time.time()


def kill_python_worker(run: Run) -> float:
    """Kill -9 the Spark Python workers (``pyspark.daemon`` and the workers it forked)."""
    def targets() -> list[psutil.Process]:
        return [p for p in _descendants(run) if "pyspark.daemon" in _cmdline(p)
                or "pyspark/daemon.py" in _cmdline(p)]

    found = wait_for(targets, 30, message="a Spark Python worker runs")
    for process in found:
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


FAULTS: dict[str, Callable[[Run], float]] = {
    "executor": kill_executor, "python-worker": kill_python_worker, "worker": kill_worker,
    "supervisor": kill_supervisor, "nimbus": kill_nimbus}
"""Each fault: inject it, return when (epoch seconds) the process was killed."""


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
