"""Worker processes: launched in their own process group, recorded on disk, killed by group.

Topology virtualenvs are built by the workers in ``<supervisor dir>/virtualenvs/``
(:mod:`sparkstorm.cluster.worker.virtualenv`). Each worker has
``<supervisor dir>/workers/<worker id>/`` with ``worker.json`` (pid, start
time, topology, port), ``worker.log`` (its stdout and stderr) and ``heartbeat.json`` (the
worker's latest local heartbeat, written by the worker itself every
``worker.heartbeat.frequency.secs``). A restarted supervisor reads the records back and
adopts the workers still running: the start time guards against a recycled pid.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from sparkstorm.cluster.nimbus.token import TOKEN_ENV
from sparkstorm.cluster.supervisor.log_retention import ARTIFACTS, keep_logs
from sparkstorm.cluster.worker.worker import LOCAL_HEARTBEAT
from sparkstorm.engine import WORKDIR_PREFIX, workdirs_of

logger = logging.getLogger(__name__)

SAME_START_SECS = 0.5
"""A live pid is our worker only if its process started within this of the recorded start
time (otherwise the pid was reused by another process)."""

@dataclass(frozen=True)
class WorkerProcess:
    """A launched worker, as recorded in ``worker.json``."""

    worker_id: str
    topology_id: str
    port: int
    pid: int
    create_time: float


class Launcher:
    """Starts, checks and stops worker processes.

    Args:
        root: the supervisor's folder; records go under ``root/workers``.
        nimbus_url: passed to workers.
        token: the cluster token, passed to workers through the environment.
        shutdown_secs: grace period between SIGTERM and SIGKILL
            (``supervisor.worker.shutdown.sleep.secs``).
        env: more environment for workers (the TLS files:
            :func:`sparkstorm.tls.material.files_env`).
    """

    def __init__(self, root: Path, nimbus_url: str, token: str | None,
                 shutdown_secs: float, env: Mapping[str, str] | None = None) -> None:
        self.env = dict(env or {})
        self.root = root / "workers"
        self.root.mkdir(parents=True, exist_ok=True)
        self.nimbus_url = nimbus_url
        self.token = token
        self.shutdown_secs = shutdown_secs
        self._children: dict[int, subprocess.Popen[bytes]] = {}

    def launch(self, worker_id: str, topology_id: str, port: int,
               code_dir: Path) -> WorkerProcess:
        """Start ``python -m sparkstorm.cluster.worker`` for one assignment slot."""
        folder = self.root / worker_id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / LOCAL_HEARTBEAT).unlink(missing_ok=True)  # the previous incarnation's
        env = {**os.environ, **self.env}
        if self.token:
            env[TOKEN_ENV] = self.token
        command = [sys.executable, "-m", "sparkstorm.cluster.worker", "--nimbus",
                   self.nimbus_url, "--worker-id", worker_id, "--topology-id", topology_id,
                   "--code-dir", str(code_dir),
                   # topology virtualenvs: one folder per host, shared by its workers
                   "--virtualenvs-dir", str(self.root.parent / "virtualenvs")]
        with (folder / "worker.log").open("ab") as log:
            child = subprocess.Popen(command, cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)  # survives our own crash
        self._children[child.pid] = child
        process = WorkerProcess(worker_id, topology_id, port, child.pid,
                                psutil.Process(child.pid).create_time())
        (folder / "worker.json").write_text(json.dumps(asdict(process)))
        logger.info("launched worker %s of %s on port %s (pid %s)", worker_id, topology_id,
                    port, child.pid)
        return process

    def adopt(self) -> dict[str, WorkerProcess]:
        """The workers recorded on disk (alive or not), by worker id."""
        found = {}
        for record in self.root.glob("*/worker.json"):
            try:
                process = WorkerProcess(**json.loads(record.read_text()))
            except (OSError, ValueError, TypeError):
                logger.warning("ignoring unreadable worker record %s", record)
                continue
            found[process.worker_id] = process
        return found

    def alive(self, process: WorkerProcess) -> bool:
        """Whether the worker's main process still runs (a zombie is dead)."""
        child = self._children.get(process.pid)
        if child is not None and child.poll() is not None:
            return False
        try:
            proc = psutil.Process(process.pid)
            return bool(abs(proc.create_time() - process.create_time) < SAME_START_SECS
                        and proc.status() != psutil.STATUS_ZOMBIE)
        except psutil.Error:
            return False

    def last_heartbeat(self, process: WorkerProcess) -> float | None:
        """Epoch seconds of the worker's latest local heartbeat.

        None when this incarnation of the worker has written none yet.
        """
        path = self.root / process.worker_id / LOCAL_HEARTBEAT
        try:
            beat = json.loads(path.read_text())
            time_secs = float(beat["time_secs"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # none yet, or replaced right now (the worker writes atomically)
        # a heartbeat older than the process comes from an earlier worker in this folder
        return time_secs if time_secs >= process.create_time - 1.0 else None

    def ran_windows(self, process: WorkerProcess) -> bool:
        """Whether this incarnation of the worker ran windows, as its local heartbeat says.

        One that did not failed to start.
        """
        if self.last_heartbeat(process) is None:
            return False
        try:
            beat = json.loads((self.root / process.worker_id / LOCAL_HEARTBEAT).read_text())
            return bool(beat["stats"].get("windows"))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return False

    def kill(self, process: WorkerProcess, *, forget: bool = True,
             grace: float | None = None) -> None:
        """Stop a worker: SIGTERM its group, wait, SIGKILL what is left, remove its folders.

        With ``forget``, its log files are kept in ``workers-artifacts`` (:mod:`.log_retention`)
        before its folder goes.

        SIGTERM (and SIGCONT) the worker's group, wait the grace period (``grace``, by
        default ``shutdown_secs``), SIGKILL what is left, then every process the worker had
        started, and remove the temporary folder it named in its heartbeat.

        The final SIGKILL also reaps what a killed worker left behind (its Spark JVM stays
        in its group); executor processes run in sessions of their own, so they are taken
        by descent, collected before the worker goes. SIGCONT lets a stopped worker act on
        the SIGTERM.
        """
        descendants = _descendants(process.pid) if self.alive(process) else []
        if self.alive(process):
            _signal_group(process.pid, signal.SIGTERM)
            _signal_group(process.pid, signal.SIGCONT)
            deadline = time.monotonic() + (self.shutdown_secs if grace is None else grace)
            while self.alive(process) and time.monotonic() < deadline:
                time.sleep(0.1)
        if self._owns_group(process):
            _signal_group(process.pid, signal.SIGKILL)
        for descendant in descendants:
            _kill(descendant)
        child = self._children.pop(process.pid, None)
        if child is not None:
            child.wait(5)
        self._remove_workdir(process)
        if forget:  # its logs stay until the logviewer's retention limits (log_retention)
            keep_logs(self.root / process.worker_id, self.root.parent / ARTIFACTS)
            shutil.rmtree(self.root / process.worker_id, ignore_errors=True)
        logger.info("stopped worker %s (pid %s)", process.worker_id, process.pid)

    def _remove_workdir(self, process: WorkerProcess) -> None:
        """Remove the runner folder a killed worker could not remove itself.

        It is ``<tmp>/sparkstorm-<pid>-*``, named in its local heartbeat: only a folder of
        that name, of that very pid, is removed. A worker killed before its first heartbeat
        named none: then the folders of that name and pid in this host's temp folder go
        (one made just before the kill stayed behind a stopped test cluster).
        """
        prefix = f"{WORKDIR_PREFIX}{process.pid}-"
        try:
            beat = json.loads((self.root / process.worker_id / LOCAL_HEARTBEAT).read_text())
            workdirs = [Path(str(beat["workdir"]))]
        except (OSError, ValueError, KeyError, TypeError):
            workdirs = workdirs_of(process.pid)
        for workdir in workdirs:
            if workdir.name.startswith(prefix) and workdir.is_dir():
                shutil.rmtree(workdir, ignore_errors=True)
                logger.info("removed worker %s's folder %s", process.worker_id, workdir)

    def _owns_group(self, process: WorkerProcess) -> bool:
        """Whether the process group still belongs to that worker.

        A member of it started no earlier than the worker did (pids and so group ids get recycled).
        """
        for proc in psutil.process_iter(["pid", "create_time"]):
            try:
                if (os.getpgid(proc.info["pid"]) == process.pid
                        and proc.info["create_time"] >= process.create_time - 0.5):
                    return True
            except (ProcessLookupError, PermissionError):
                continue
        return False


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return list(psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        return []


def _kill(process: psutil.Process) -> None:
    with contextlib.suppress(psutil.Error):
        process.kill()  # psutil checks the pid still names the same process


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone
        os.killpg(pgid, signum)
