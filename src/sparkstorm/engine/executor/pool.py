"""Starts, watches and restarts the executor processes of one topology's driver."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import astuple
from pathlib import Path
from typing import Any

from sparkstorm.config import conf_float, conf_optional_str
from sparkstorm.engine.executor.interpreter import (
    check_executor_python,
    executor_python,
    executor_sys_path,
    is_own_python,
)
from sparkstorm.engine.executor.process_memory import lean_malloc_environment
from sparkstorm.engine.plan.execution import ExecutionPlan, plan_tag
from sparkstorm.engine.spark.stage import call_executor
from sparkstorm.engine.wire.endpoint import Endpoint, advertised_host
from sparkstorm.engine.wire.messages import ComponentError
from sparkstorm.engine.wire.protocol import CloseRequest, LogControlRequest, ReplanRequest, Request
from sparkstorm.engine.wire.secure import use, wire_tls
from sparkstorm.errors import EngineError
from sparkstorm.periodic import PeriodicThread

logger = logging.getLogger(__name__)

# Fields groupings use hash(); every executor process must hash alike.
HASH_SEED = "20140916"
MONITOR_INTERVAL = 0.05
"""Seconds between two looks at the executor processes (a dead one restarts this soon)."""
STABLE_LIFETIME = 10.0
"""Seconds an executor must have lived to restart at once (no start-up backoff)."""


class ExecutorPool:
    """One OS process per executor; a dead one is restarted (with a short backoff).

    Args:
        plan: the topology's plan.
        name: the topology's name (in logs).
        workdir: where sockets and the plan file go.
        checkpoint_id: the id executors write checkpoint parts under (None: off).
        hosted: the executors this pool runs (None: all); the others run in other worker
            processes, and their endpoints arrive through :meth:`set_remote`.
        token: what TCP callers send first (None: a new one; the workers of one topology
            share theirs).
    """

    def __init__(self, plan: ExecutionPlan, name: str, workdir: Path,
                 checkpoint_id: str | None = None, *, hosted: Iterable[int] | None = None,
                 token: str | None = None) -> None:
        self.plan = plan
        self.name = name
        self.checkpoint_id = checkpoint_id
        self.workdir = workdir
        self.plan_file = workdir / "plan.json"
        local = set(hosted) if hosted is not None else {e.gid for e in plan.executors}
        self.sockets = {e.gid: str(workdir / f"e{e.gid}.sock") for e in plan.executors
                        if e.gid in local}
        """The Unix socket of each executor this pool runs."""
        self.token = token or secrets.token_hex(16)
        self.tls = wire_tls(plan.conf)
        """The TCP channels' material (None: plain): its executors' and this process's."""
        use(self.tls)
        """What a TCP caller sends first (the Spark tasks get it with their stage)."""
        self.host = advertised_host(plan.conf)
        self.endpoints: dict[int, Endpoint] = {}
        """Every executor's addresses: this pool's as each executor reported its TCP port
        (a restarted one keeps its port when it is still free), other workers' as they
        last reported them."""
        self.endpoints_version = 0
        """Changes whenever an endpoint does, so that callers rebuild what holds them."""
        self.remote_pids: dict[int, int] = {}
        self.processes: dict[int, subprocess.Popen[bytes]] = {}
        self.restarts = 0
        # called from the monitor thread with each start-up failure report
        self.on_startup_error: Callable[[ComponentError], None] = lambda error: None
        self.spawned_at: dict[int, float] = {}
        self.backoff: dict[int, float] = {}
        self.restart_at: dict[int, float] = {}
        self.stopping = threading.Event()
        self.lock = threading.RLock()
        self.replans = 0
        """Executor counts taken in place (``rebalance -e``, :meth:`replan`)."""
        self.plan_tag = plan_tag(plan)
        """The tag of the plan the executors run: endpoints reported under another are not
        taken (:meth:`set_remote`)."""
        self.start_timeout = conf_float(plan.conf, "topology.executor.start.timeout.secs")
        self.monitor = PeriodicThread(f"{name}-pool", MONITOR_INTERVAL, self._check_processes)
        self.python = sys.executable
        """The executors' interpreter (``topology.executor.python``, resolved by start)."""
        self.sys_path = [p for p in sys.path if p]
        """What executors get of our ``sys.path`` (see ``engine.executor.interpreter``)."""
        # executor-<gid>.log goes to a kept folder when the runner names one
        self.log_dir = Path(conf_optional_str(plan.conf, "topology.executor.log.dir") or workdir)
        self.log_dir.mkdir(parents=True, exist_ok=True)

    def start(self) -> None:
        """Start every executor and wait until all of them accept connections.

        Raises:
            EngineError: ``EXECUTOR_START_FAILED`` when one exits or does not come up;
                ``EXECUTOR_PYTHON_NOT_FOUND`` or ``EXECUTOR_PYTHON_UNUSABLE`` when
                ``topology.executor.python`` names no interpreter, or one that cannot
                import sparkstorm's executor (checked before any executor starts).
        """
        self.python = executor_python(self.plan.conf)
        self.sys_path = executor_sys_path(self.python)
        if not is_own_python(self.python):
            check_executor_python(self.python, self._environment())
        self._write_plan_file()
        for gid in self.sockets:
            self._spawn(gid)
        deadline = time.monotonic() + self.start_timeout
        for gid, path in self.sockets.items():
            self._wait_ready(gid, path, deadline)
        self.monitor.start()

    def _write_plan_file(self) -> None:
        """What every executor process starts from (a restarted one too): replaced whole."""
        data = {"name": self.name, "spec": self.plan.spec.to_dict(), "conf": self.plan.conf,
                "sys_path": self.sys_path, "checkpoint_id": self.checkpoint_id,
                "token": self.token,
                "tls": None if self.tls is None else [str(p) for p in astuple(self.tls)]}
        staging = self.plan_file.with_name(self.plan_file.name + ".tmp")
        staging.write_text(json.dumps(data, default=str), encoding="utf-8")
        os.replace(staging, self.plan_file)

    def _environment(self) -> dict[str, str]:
        """The environment of the executor processes."""
        return {**lean_malloc_environment(), **os.environ, "PYTHONHASHSEED": HASH_SEED,
                "PYTHONPATH": os.pathsep.join(self.sys_path),
                # temporary files of the executor and its shell children (multilang pid
                # dirs) go in our folder, which goes when we stop, even after a kill -9
                "TMPDIR": str(self.workdir)}

    def _spawn(self, gid: int, restarted: bool = False) -> None:
        env = self._environment()
        log = open(self.log_path(gid), "ab")  # noqa: SIM115 - child owns it
        self.processes[gid] = subprocess.Popen(
            [self.python, "-m", "sparkstorm.engine.executor.main", "--plan",
             str(self.plan_file), "--gid", str(gid), "--socket", self.sockets[gid],
             # the port it had (kept if still free); 0 the first time: the OS picks one
             "--tcp", f"{self.host}:{self.endpoints[gid].port if gid in self.endpoints else 0}",
             # its windows died with its predecessor: the next one it gets waits for none
             *(["--restarted"] if restarted else [])],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
            # a terminal's Ctrl-C must reach only the driver, which shuts executors down in
            # order; executors still exit when the driver dies (they watch their parent)
            start_new_session=True,
        )
        log.close()
        self.spawned_at[gid] = time.monotonic()

    def _wait_ready(self, gid: int, path: str, deadline: float) -> None:
        while not os.path.exists(path):
            process = self.processes[gid]
            if process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise EngineError(self._start_failure(gid, process.returncode),
                                  code="EXECUTOR_START_FAILED")
            time.sleep(0.02)
        self._note_port(gid)

    def _start_failure(self, gid: int, code: int | None) -> str:
        """Why executor ``gid`` did not start: its component's own error first.

        The component, its task and the last line of its traceback, then the log file and
        the traceback (an executor that never answered: the log's tail).
        """
        component = self.plan.executors[gid].component
        log = self.log_path(gid)
        report = Path(self.sockets[gid] + ".error")
        try:
            error = ComponentError.from_wire(json.loads(report.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError):
            state = ("exited with code " + str(code)) if code is not None else "did not answer"
            return (f"executor {gid} ({component!r}) of topology {self.name!r} did not start "
                    f"({state}); its log {log} ends:\n{self.log_tail(gid)}")
        lines = error.error.strip().splitlines() or ["(no message)"]
        task = "" if error.task is None else f" task {error.task}"
        return (f"component {component!r}{task} of topology {self.name!r} failed to start: "
                f"{lines[-1]} (executor {gid}; log {log}); fix what its traceback shows:"
                f"\n{error.error.rstrip()}")

    def _note_port(self, gid: int) -> None:
        """Take the TCP port executor ``gid`` reported; a changed one changes its endpoint.

        The executor writes it to ``<socket>.port`` before its socket appears.
        """
        path = self.sockets.get(gid)
        if path is None:
            return  # a rebalance moved it away
        try:
            port = int(Path(path + ".port").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # not written yet: a restarting executor
        endpoint = Endpoint(path, self.host, port)
        if self.endpoints.get(gid) != endpoint:
            with self.lock:
                if gid in self.sockets:
                    self.endpoints[gid] = endpoint
                    self.endpoints_version += 1

    def log_path(self, gid: int) -> Path:
        """Where executor ``gid`` writes its log."""
        return self.log_dir / f"executor-{gid}.log"

    def log_tail(self, gid: int, lines: int = 30) -> str:
        """The last ``lines`` lines of an executor's log."""
        path = self.log_path(gid)
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def _check_processes(self) -> None:
        """One round of the monitor: restart the executors that exited.

        Under :attr:`lock`: a replan renumbers the executors meanwhile.
        """
        with self.lock:
            self._check_processes_locked()

    def _check_processes_locked(self) -> None:
        for gid, process in list(self.processes.items()):
            socket_path = self.sockets.get(gid)
            if socket_path is None:  # a rebalance moved it away meanwhile (rehost)
                continue
            if process.poll() is not None and not self.stopping.is_set():
                self._restart(gid, process.returncode)
            elif os.path.exists(socket_path):
                self._note_port(gid)  # a restarted executor may have had to take another

    def _restart(self, gid: int, code: int | None) -> None:
        """Restart a dead executor; one that keeps dying at start-up waits longer each time.

        The wait is 0.5 s doubling up to 30 s, so a broken ``initialize`` cannot spin the
        machine.
        """
        now = time.monotonic()
        if gid not in self.restart_at:
            self._collect_startup_error(gid)
            lived = now - self.spawned_at.get(gid, 0.0)
            delay = 0.0 if lived > STABLE_LIFETIME else min(2 * self.backoff.get(gid, 0.25), 30.0)
            self.backoff[gid] = delay
            self.restart_at[gid] = now + delay
            component = self.plan.executors[gid].component
            logger.warning("topology %s: executor %d (%s) exited with code %s; restarting it"
                           " in %.1f s", self.name, gid, component, code, delay)
        if now < self.restart_at[gid]:
            return
        del self.restart_at[gid]
        with self.lock:
            if gid not in self.sockets:  # moved away by a rebalance meanwhile
                return
            self.restarts += 1
            self._spawn(gid, restarted=True)

    def _collect_startup_error(self, gid: int) -> None:
        path = Path(self.sockets[gid] + ".error")
        if path.exists():
            try:
                self.on_startup_error(ComponentError.from_wire(
                    json.loads(path.read_text(encoding="utf-8"))))
            except (OSError, ValueError, KeyError):
                logger.warning("unreadable start-up error report %s", path)
            path.unlink(missing_ok=True)


    def rehost(self, hosted: set[int], grace: float = 5.0) -> None:
        """Run exactly the executors ``hosted`` from now on (a rebalance moved some).

        The ones that stay keep running, untouched. The ones that left are closed (their
        new worker starts them fresh; their endpoint is forgotten until it reports one),
        the ones that arrived start fresh here, as restarted executors: they join windows
        mid-stream. Returns once the new ones accept connections or their start timed out
        (the monitor goes on restarting them).

        Called from one thread at a time (the worker's), never with :attr:`lock` held.
        """
        leaving = sorted(set(self.sockets) - hosted)
        arriving = sorted(hosted - set(self.sockets))
        for gid in leaving:
            self._give_up(gid, grace)
        for gid in arriving:
            path = str(self.workdir / f"e{gid}.sock")
            _remove_files(path)  # left by an earlier stay here, they would say "ready"
            with self.lock:
                self.sockets[gid] = path
                self.remote_pids.pop(gid, None)
                if self.endpoints.pop(gid, None) is not None:
                    self.endpoints_version += 1
                self._spawn(gid, restarted=True)
        deadline = time.monotonic() + self.start_timeout
        for gid in arriving:
            while not os.path.exists(self.sockets[gid]) and time.monotonic() < deadline:
                time.sleep(0.02)
            self._note_port(gid)
        if leaving or arriving:
            logger.info("topology %s: executors %s left this worker, %s arrived", self.name,
                        leaving, arriving)

    def replan(self, plan: ExecutionPlan, staying: dict[int, int], leaving: Iterable[int],
               arriving: Iterable[int], grace: float = 5.0, *,
               hosted: set[int] | None = None) -> None:
        """Take new executor counts in place (``rebalance -e``, ``engine.plan.regroup``).

        Called between windows (nothing in flight): from the driver's window loop, or, in a
        worker that hosts some executors, once the driver has switched to ``plan``. The
        leaving executors (old gids) run here are closed; the staying ones are renumbered
        (old gid -> new gid in ``staying``) and hear ``replan`` with the new spec, keeping
        their process, socket and port; the executors of ``hosted`` not running here yet
        start fresh, as restarted executors. A staying executor that does not take the new
        plan is killed: the monitor restarts it from the new plan file (a restart: its
        trees replay). The endpoints of other workers' executors are forgotten: each worker
        reports them again once it runs ``plan`` (tagged with its :attr:`plan_tag`).

        Args:
            plan: the new plan.
            staying: old gid -> new gid of the executors that stay (any worker's).
            leaving: old gids that go (any worker's).
            arriving: new gids that are new (any worker's).
            grace: seconds a leaving executor has to close before it is killed.
            hosted: the new gids this pool runs from now on (None: every executor of
                ``plan``, the driver that hosts them all).

        Returns once the started executors accept connections or their start timed out.
        """
        wanted = hosted if hosted is not None else {e.gid for e in plan.executors}
        left = sorted(g for g in leaving if g in self.sockets)
        for gid in left:
            self._give_up(gid, grace)
        with self.lock:
            self.replans += 1
            local = {g: n for g, n in staying.items() if g in self.sockets}
            self._rename_logs(local, left)
            self.plan = plan
            self.plan_tag = plan_tag(plan)
            self._write_plan_file()
            for name in ("sockets", "endpoints", "processes", "spawned_at", "backoff",
                         "restart_at"):
                kept = getattr(self, name)
                setattr(self, name, {local[g]: v for g, v in kept.items() if g in local})
            self.remote_pids = {}
            self.endpoints_version += 1
        moved_away = sorted(set(self.sockets) - wanted)  # a staying one another worker runs
        for gid in moved_away:
            self._give_up(gid, grace)
        spec = plan.spec.to_dict()
        for gid in sorted(self.sockets):
            try:
                self.call(gid, ReplanRequest(spec, gid), self.start_timeout)
            except (ConnectionError, EngineError, KeyError) as exc:
                logger.error("topology %s: executor %d did not take the new plan (%s); "
                             "restarting it", self.name, gid, exc)
                self.kill(gid)
        started = sorted(wanted - set(self.sockets))
        with self.lock:
            for gid in started:
                # a name no staying executor holds (they keep their old socket)
                path = str(self.workdir / f"e{gid}-r{self.replans}.sock")
                _remove_files(path)
                self.sockets[gid] = path
                self._spawn(gid, restarted=True)
        deadline = time.monotonic() + self.start_timeout
        for gid in started:
            while not os.path.exists(self.sockets[gid]) and time.monotonic() < deadline:
                time.sleep(0.02)
            self._note_port(gid)
        logger.info("topology %s: new executor counts (%s): executors here %s stay "
                    "(renumbered), %s left, %s started", self.name, self.plan_tag, local,
                    left + moved_away, started)

    def _rename_logs(self, staying: dict[int, int], left: list[int]) -> None:
        """Executor logs follow their gids: a renumbered executor's log takes its new name.

        The processes keep writing to their open files, whatever the name. The logs of the
        executors that left are kept as ``executor-<gid>.r<replan>.log``.
        """
        for gid in left:
            with contextlib.suppress(OSError):
                os.replace(self.log_path(gid),
                           self.log_dir / f"executor-{gid}.r{self.replans}.log")
        moved = {}
        for old in staying:  # two steps: a new name may be another one's old name
            staged = self.log_dir / f"executor-{old}.log.replan"
            with contextlib.suppress(OSError):
                os.replace(self.log_path(old), staged)
                moved[old] = staged
        for old, staged in moved.items():
            os.replace(staged, self.log_path(staying[old]))

    def _give_up(self, gid: int, grace: float) -> None:
        """Stop running executor ``gid`` here: close it, kill it if it lingers, forget it."""
        with self.lock:  # the monitor restarts only executors still in sockets
            process = self.processes.pop(gid, None)
            endpoint = self.endpoints.pop(gid, None)
            path = self.sockets.pop(gid, None)
            self.endpoints_version += 1
            for kept in (self.spawned_at, self.backoff, self.restart_at):
                kept.pop(gid, None)
        if process is None:
            return
        if process.poll() is None and endpoint is not None:
            with contextlib.suppress(ConnectionError, EngineError):
                call_executor(endpoint, self.token, CloseRequest(), 1.0, answer_timeout=1.0)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if path is not None:
            _remove_files(path)

    def missing(self) -> list[int]:
        """Executors of other workers whose endpoint is not known yet (not reported)."""
        return [e.gid for e in self.plan.executors
                if e.gid not in self.sockets and e.gid not in self.endpoints]

    def set_remote(self, reported: dict[int, tuple[Endpoint, int]],
                   tags: Mapping[int, str] | None = None) -> None:
        """Endpoints and process ids of executors other workers run, as they report them.

        A known executor whose process id changed was restarted (its state is gone): it
        counts in :attr:`restarts`, as a restart here does. An endpoint whose tag (in
        ``tags``) is not :attr:`plan_tag` was reported under another plan: a worker that has
        not followed a ``rebalance -e`` yet, or a stale report; it is not taken (untagged
        ones are, as a worker before plan tags reported them).
        """
        tags = tags or {}
        with self.lock:
            for gid, (endpoint, pid) in reported.items():
                if gid in self.sockets or tags.get(gid, self.plan_tag) != self.plan_tag:
                    continue
                if self.endpoints.get(gid) != endpoint:
                    self.endpoints[gid] = endpoint
                    self.endpoints_version += 1
                known = self.remote_pids.get(gid)
                if known is not None and known != pid:
                    self.restarts += 1
                self.remote_pids[gid] = pid

    def where(self, gid: int) -> tuple[int, Endpoint, int] | None:
        """Where executor ``gid`` answers now: ``(endpoints_version, endpoint, pid)``.

        What the driver's endpoint lookup answers (``engine.driver.endpoint_lookup``); the pid is 0
        for an executor of another worker that has not reported one. None: unknown.
        """
        with self.lock:
            endpoint = self.endpoints.get(gid)
            if endpoint is None:
                return None
            process = self.processes.get(gid)
            pid = process.pid if process is not None else self.remote_pids.get(gid, 0)
            return self.endpoints_version, endpoint, pid

    def hosted_endpoints(self) -> dict[int, list[Any]]:
        """The endpoints and current process ids of this pool's executors.

        For the heartbeat: ``{gid: [path, host, port, pid, plan tag]}`` (the tag of the plan
        the gids belong to, :attr:`plan_tag`).
        """
        with self.lock:  # gids and tag of one plan (a replan renumbers them)
            pids = self.pids()
            return {gid: [e.path, e.host, e.port, pids.get(gid, 0), self.plan_tag]
                    for gid, e in self.endpoints.items() if gid in self.sockets}

    def kill(self, gid: int) -> None:
        """Kill executor ``gid``; the monitor restarts it.

        SIGKILL works on a stopped process too.
        """
        process = self.processes.get(gid)
        if process is not None and process.poll() is None:
            process.kill()

    def pids(self) -> dict[int, int]:
        """Current process id of each executor."""
        return {gid: p.pid for gid, p in self.processes.items()}

    def call(self, gid: int, request: Request, timeout: float = 10.0) -> Any:
        """Send one request to an executor (used to close it); returns the reply's payload.

        Raises:
            ConnectionError: no answer within ``timeout``.
            EngineError: the executor could not answer, or stopped answering pings.
        """
        return call_executor(self.endpoints[gid], self.token, request, timeout,
                             answer_timeout=timeout)[0]

    def log_control(self, gid: int, levels: dict[str, str], sample_pct: float) -> None:
        """Set an executor's log levels and debug sampling, now and for its restarts.

        Kept in ``<socket>.control``, which a (re)started executor applies before it serves.
        An executor hosted elsewhere (by a Spark task) is only called: its host's caller
        sends the setting again while it is set.

        Raises:
            ConnectionError: the executor did not answer (it gets the setting when it
                starts again).
        """
        control = LogControlRequest(levels, sample_pct)
        if gid in self.sockets:
            path = Path(self.sockets[gid] + ".control")
            staging = path.with_name(path.name + ".tmp")
            staging.write_text(json.dumps(control.to_wire()), encoding="utf-8")
            os.replace(staging, path)
        self.call(gid, control, timeout=2.0)

    def stop(self, grace: float = 5.0) -> None:
        """Close spouts and executors, then make sure no process is left behind."""
        self.stopping.set()
        self.monitor.stop()
        for gid, process in self.processes.items():
            if process.poll() is None and gid in self.endpoints:
                # killed below if still there (one that never started has no endpoint)
                with contextlib.suppress(ConnectionError, EngineError):
                    self.call(gid, CloseRequest(), timeout=1.0)
        deadline = time.monotonic() + grace
        for process in self.processes.values():
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _remove_files(socket_path: str) -> None:
    """Remove an executor's socket and the port and error files next to it."""
    for suffix in ("", ".port", ".error"):
        with contextlib.suppress(OSError):
            os.unlink(socket_path + suffix)
