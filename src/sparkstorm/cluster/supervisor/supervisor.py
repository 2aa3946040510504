"""The supervisor's sync loop: make the running workers match the assignments.

Every ``supervisor.monitor.frequency.secs`` (and at once when an assignment appears, goes or
changes)
it re-registers itself, downloads code for new assignments into
``<storm.local.dir>/supervisor/stormdist/<topology id>/``, launches workers for its slots,
restarts dead ones and kills the ones no longer assigned. It never depends on Nimbus for the
workers that already run: a download that fails is retried at the next round.

A worker that runs but whose local heartbeat (``heartbeat.json`` in its folder) is older
than ``supervisor.worker.timeout.secs`` (30) is hung: it is killed, its whole process group
with it, and launched again. Right after a launch, before its first heartbeat, a worker has
``supervisor.worker.start.timeout.secs`` (120) instead, as in Storm.

A worker that died or hung before it ran a window failed to start: the next start of that
topology's worker waits, longer after each failure in a row (:mod:`.backoff`).

It also serves its host's logs (:mod:`.logviewer`), keeps a stopped worker's logs and
removes them after the retention limits (:mod:`.log_retention`), and writes its own log to
``<storm.local.dir>/logs/supervisor.log``.
"""

from __future__ import annotations

import json
import logging
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sparkstorm.cluster.daemon_log import attach, detach
from sparkstorm.cluster.nimbus.client import NimbusClient
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.inbox import UnpackLimits, safe_extract
from sparkstorm.cluster.nimbus.ui_views import VERSION
from sparkstorm.cluster.store.base import Watch
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.store.records import SupervisorInfo
from sparkstorm.cluster.supervisor.backoff import RestartBackoff
from sparkstorm.cluster.supervisor.launcher import Launcher, WorkerProcess
from sparkstorm.cluster.supervisor.log_retention import ARTIFACTS, clean_up, log_bytes
from sparkstorm.cluster.supervisor.logviewer import LogFolders, LogviewerServer
from sparkstorm.cluster.worker.worker import shutdown_bound
from sparkstorm.config import conf_float, conf_int_list, local_dir
from sparkstorm.errors import ConfigError
from sparkstorm.periodic import PeriodicThread
from sparkstorm.tls.material import files_env, tls_enabled, tls_files

logger = logging.getLogger(__name__)


def _supervisor_id(root: Path) -> str:
    """This supervisor's id, kept on disk so a restart keeps its slots and workers."""
    path = root / "supervisor-id"
    if path.is_file():
        return path.read_text().strip()
    root.mkdir(parents=True, exist_ok=True)
    identifier = str(uuid.uuid4())
    path.write_text(identifier)
    return identifier


class Supervisor:
    """One node's supervisor.

    Args:
        conf: the supervisor's effective configuration.
        state: the cluster state (the caller owns its store).
        client: a client of Nimbus (code downloads).
    """

    def __init__(self, conf: Mapping[str, object], state: ClusterState,
                 client: NimbusClient) -> None:
        self.conf = dict(conf)
        self.state = state
        self.client = client
        self.root = local_dir(conf) / "supervisor"
        self.id = _supervisor_id(self.root)
        self.hostname = socket.gethostname()
        self.ports = tuple(conf_int_list(conf, "supervisor.slots.ports"))
        token = client.http.headers.get("authorization", "").removeprefix("Bearer ") or None
        self.launcher = Launcher(self.root, client.url, token, conf_float(
            conf, "supervisor.worker.shutdown.sleep.secs"),
            files_env(tls_files(conf)) if tls_enabled(conf) else None)
        self.workers: dict[str, WorkerProcess] = self.launcher.adopt()
        self.worker_timeout = conf_float(conf, "supervisor.worker.timeout.secs")
        self.start_timeout = conf_float(conf, "supervisor.worker.start.timeout.secs")
        self.started = time.time()
        self.backoff = RestartBackoff(
            conf_float(conf, "supervisor.worker.restart.backoff.secs"),
            conf_float(conf, "supervisor.worker.restart.backoff.max.secs"))
        self._assignment_watches: dict[str, Watch] = {}
        self._watches_lock = threading.Lock()  # watch callbacks run on the store's threads
        self._stopping = False  # under _watches_lock: no new watch once stop began
        self._timer: PeriodicThread | None = None
        self._token = token  # the logviewer's calls need it, as Nimbus's log calls do
        self.logviewer: LogviewerServer | None = None
        self._log_handler: logging.Handler | None = None
        self._next_log_cleanup = 0.0

    def start(self) -> None:
        """Start the logviewer, register, then run the sync loop on a daemon thread."""
        self._log_handler = attach(self.conf, "supervisor")
        if self._token:
            self.logviewer = LogviewerServer(self.conf, LogFolders(
                self.root, local_dir(self.conf) / "logs"), self._token)
            self.logviewer.start()
        self.register()
        self.state.on_assignments_change(self._watch_assignments)
        self._timer = PeriodicThread("supervisor", conf_float(
            self.conf, "supervisor.monitor.frequency.secs"), self.sync)
        self._timer.start()
        logger.info("supervisor %s started with slots %s", self.id, list(self.ports))

    def stop(self, *, kill_workers: bool = False) -> None:
        """Stop the loop; leave the workers running (a restart adopts them) unless asked."""
        with self._watches_lock:
            self._stopping = True
            for watch in self._assignment_watches.values():
                watch.cancel()
            self._assignment_watches.clear()
        if self._timer is not None:
            self._timer.stop(30)
        if kill_workers:
            for process in list(self.workers.values()):
                self.launcher.kill(process)
            self.workers.clear()
        if self.logviewer is not None:
            self.logviewer.stop()
            self.logviewer = None
        if self._log_handler is not None:
            detach(self._log_handler)
            self._log_handler = None

    def _watch_assignments(self, topology_ids: list[str]) -> None:
        """Wake the loop when an assignment appears, goes or changes.

        A change moves a worker here or away, or gives it new worker ids (a rebalance): each
        topology's assignment node gets its own data watch, so the supervisor acts at once, not at
        its next round.
        """
        with self._watches_lock:
            if self._stopping:
                return
            for gone in set(self._assignment_watches) - set(topology_ids):
                self._assignment_watches.pop(gone).cancel()
            for topology_id in set(topology_ids) - set(self._assignment_watches):
                self._assignment_watches[topology_id] = self.state.on_assignment_change(
                    topology_id, lambda _assignment: self._wake())
        self._wake()

    def _wake(self) -> None:
        if self._timer is not None:
            self._timer.wake()

    def register(self) -> None:
        """Publish (refresh) this supervisor's ephemeral record."""
        used = tuple(sorted({p.port for p in self.workers.values()}))
        self.state.register_supervisor(SupervisorInfo(
            self.id, self.hostname, self.ports, used, time.time() - self.started, VERSION,
            time.time(), self.logviewer.url if self.logviewer else ""))

    def wanted(self) -> dict[str, tuple[str, int]]:
        """The workers assigned to this supervisor: worker id -> (topology id, port)."""
        wanted = {}
        for topology_id in self.state.assignments():
            assignment = self.state.get_assignment(topology_id)
            for slot, worker_id in assignment.worker_ids.items() if assignment else ():
                if slot.node == self.id:
                    wanted[worker_id] = (topology_id, slot.port)
        return wanted

    def sync(self) -> None:
        """One round: kill unassigned workers, start or restart assigned ones."""
        self.register()
        wanted = self.wanted()
        for worker_id, process in list(self.workers.items()):
            if worker_id not in wanted:
                logger.info("worker %s is no longer assigned: stopping it", worker_id)
                self.launcher.kill(process, grace=self._grace(process.topology_id))
                del self.workers[worker_id]
        self._remove_unused_code({tid for tid, _ in wanted.values()})
        self.backoff.forget({tid for tid, _ in wanted.values()})
        for worker_id, (topology_id, port) in sorted(wanted.items()):
            self._ensure_running(worker_id, topology_id, port)
        self._clean_up_logs()
        self.register()

    def _clean_up_logs(self) -> None:
        """Apply the logviewer's retention limits to gone workers' logs, at its interval."""
        now = time.time()
        if now < self._next_log_cleanup:
            return
        self._next_log_cleanup = now + conf_float(self.conf, "logviewer.cleanup.interval.secs")
        mib = 1024 * 1024
        clean_up(self.root / ARTIFACTS,
                 max_age_secs=conf_float(self.conf, "logviewer.cleanup.age.mins") * 60,
                 max_bytes=conf_float(self.conf, "logviewer.max.per.worker.logs.size.mb") * mib,
                 max_total_bytes=conf_float(self.conf, "logviewer.max.sum.worker.logs.size.mb")
                 * mib, live_bytes=log_bytes(self.root / "workers"), now=now)

    def silence(self, process: WorkerProcess, now: float | None = None) -> str | None:
        """Why a running worker counts as hung, or None while it heartbeats.

        Hung: its local heartbeat is too old, or it wrote none within the start timeout.
        """
        now = time.time() if now is None else now
        beat = self.launcher.last_heartbeat(process)
        if beat is None:
            if now - process.create_time > self.start_timeout:
                return (f"no heartbeat within {now - process.create_time:.1f} s of its launch "
                        f"(supervisor.worker.start.timeout.secs={self.start_timeout:g})")
            return None
        if now - beat > self.worker_timeout:
            return (f"no heartbeat for {now - beat:.1f} s "
                    f"(supervisor.worker.timeout.secs={self.worker_timeout:g})")
        return None

    def _ensure_running(self, worker_id: str, topology_id: str, port: int) -> None:
        process = self.workers.get(worker_id)
        if process is not None and self.launcher.alive(process):
            reason = self.silence(process)
            if reason is None:
                return
            logger.warning("worker %s (pid %s) of %s is hung: %s; killing its process group",
                           worker_id, process.pid, topology_id, reason)
            self._ended(worker_id, process)
        elif process is not None:
            logger.warning("worker %s (pid %s) of %s died", worker_id, process.pid,
                           topology_id)
            self._ended(worker_id, process)
        if not self.backoff.ready(topology_id):
            return  # a worker that keeps failing to start waits its back-off
        try:
            code = self._ensure_code(topology_id)
        except NimbusError as exc:
            logger.warning("cannot download the code of %s yet: %s", topology_id, exc)
            return
        self.workers[worker_id] = self.launcher.launch(worker_id, topology_id, port, code)

    def _grace(self, topology_id: str) -> float:
        """How long a worker of ``topology_id`` gets between SIGTERM and SIGKILL.

        Its own shutdown bound, from the topology's conf, plus
        ``supervisor.worker.shutdown.sleep.secs``.
        """
        conf: dict[str, Any] = self.conf
        try:
            path = self.root / "stormdist" / topology_id / "stormconf.json"
            conf = {**self.conf, **json.loads(path.read_text())}
        except (OSError, ValueError):
            pass  # code already removed: the supervisor's own conf
        try:
            return shutdown_bound(conf) + self.launcher.shutdown_secs
        except ConfigError:
            return shutdown_bound(self.conf) + self.launcher.shutdown_secs

    def _ended(self, worker_id: str, process: WorkerProcess) -> None:
        """Reap what a dead or hung worker left and set when it may start again.

        At once if it ran windows, after the back-off if it failed to start.
        """
        ran = self.launcher.ran_windows(process)
        self.launcher.kill(process, forget=False)
        del self.workers[worker_id]
        wait = self.backoff.died(process.topology_id, ran)
        if wait:
            logger.warning("worker %s of %s failed to start (%d time(s) in a row): starting "
                           "it again in %.1f s (back-off)", worker_id, process.topology_id,
                           self.backoff.failures[process.topology_id], wait)
        else:
            logger.warning("worker %s of %s: restarting it", worker_id, process.topology_id)

    def _ensure_code(self, topology_id: str) -> Path:
        """The topology's extracted code folder, downloaded once (atomically)."""
        folder = self.root / "stormdist" / topology_id
        if folder.is_dir():
            return folder / "code"
        staging = folder.with_name(f".{topology_id}.download")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            for part, name in (("code", "stormjar.zip"), ("spec", "stormcode.json"),
                               ("conf", "stormconf.json")):
                self.client.download(topology_id, part, staging / name)
            safe_extract(staging / "stormjar.zip", staging / "code",
                         UnpackLimits.from_conf(self.conf))  # the supervisor's own limits
            staging.rename(folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return folder / "code"

    def _remove_unused_code(self, in_use: set[str]) -> None:
        for folder in (self.root / "stormdist").glob("*"):
            if folder.is_dir() and not folder.name.startswith(".") \
                    and folder.name not in in_use:
                shutil.rmtree(folder, ignore_errors=True)
