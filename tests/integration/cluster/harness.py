"""A real cluster for tests.

Nimbus and a supervisor run as subprocesses on a free port and a temporary ``storm.local.dir``,
configured through a ``sparkstorm.yaml`` named by ``SPARKSTORM_CONF_FILE``.
:meth:`TestCluster.close` kills every process it started, the workers included (by process group),
and waits until they are gone. It also checks that their Spark JVMs, killed with their workers,
left no temporary folder behind (``engine.spark.session.scratch_dir``): every JVM the cluster starts
gets a ``java.io.tmpdir`` of the test's own (``JAVA_TOOL_OPTIONS``), where a JVM that ignores
the worker's scratch folder would leave its ``spark-<uuid>`` folder. Only that folder is
checked, so another Spark application on the machine, which makes its folders in ``/tmp``,
cannot fail (or lose its folders to) a test.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import yaml

from sparkstorm.child_process import die_with_parent
from sparkstorm.engine import workdirs_of
from sparkstorm.testing.polling import wait_for
from sparkstorm.tls.contexts import http_verify
from sparkstorm.tls.material import make_material

ROOT = Path(__file__).resolve().parents[3]

BASE_CONF: dict[str, Any] = {
    "spark.master": "local[2]",
    "spark.ui.enabled": False,
    "topology.window.ms": 100,
    "nimbus.monitor.freq.secs": 1,
    "nimbus.task.timeout.secs": 30,
    "nimbus.task.launch.secs": 60,
    "supervisor.monitor.frequency.secs": 1,
    "supervisor.worker.shutdown.sleep.secs": 5,
    "supervisor.slots.ports": [6700, 6701],
    "storm.zookeeper.session.timeout": 5000,
    "nimbus.upload.max.bytes": 200_000,
}


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class TestCluster:
    """Processes of one test cluster; use as a context manager."""

    __test__ = False  # not a test class, despite its name

    def __init__(self, tmp: Path, **conf: Any) -> None:
        self.tmp = tmp
        self.local = tmp / "local"
        self.port = free_port()
        self.ui_port = free_port()
        self.conf = {**BASE_CONF, "storm.local.dir": str(self.local), "nimbus.port": self.port,
                     "ui.port": self.ui_port, "storm.tls.dir": str(tmp / "tls"), **conf}
        self.tls = bool(self.conf.get("storm.tls.enabled", True))
        """Whether the cluster speaks TLS (on unless the test turned it off)."""
        if self.tls and not Path(str(self.conf["storm.tls.dir"])).exists():
            # made once for all the cluster's daemons, as an operator would (sparkstorm tls init)
            make_material(Path(str(self.conf["storm.tls.dir"])), [])
        self.verify = http_verify(self.conf)
        """httpx's ``verify``: the cluster CA and the cluster's client certificate."""
        self.conf_file = tmp / "sparkstorm.yaml"
        self.conf_file.write_text(yaml.safe_dump(self.conf))
        self.java_tmp = tmp / "java-tmp"
        """``java.io.tmpdir`` of the cluster's JVMs unless they set their own (see close)."""
        self.java_tmp.mkdir()
        self.env = {**os.environ, "SPARKSTORM_CONF_FILE": str(self.conf_file),
                    "JAVA_TOOL_OPTIONS": _with_java_tmpdir(self.java_tmp)}
        self.scheme = "https" if self.tls else "http"
        self.url = f"{self.scheme}://127.0.0.1:{self.port}"
        self.daemons: dict[str, subprocess.Popen[bytes]] = {}
        self.supervisor_dirs: dict[str, Path] = {"supervisor": self.local}
        """Each supervisor's ``storm.local.dir`` by daemon name."""
        self.envs: dict[str, dict[str, str]] = {}

    def __enter__(self) -> TestCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- processes -----------------------------------------------------------------------------

    def start(self, daemon: str, name: str | None = None,
              env: dict[str, str] | None = None) -> None:
        """Start ``sparkstorm <daemon>`` in its own process group, logging to ``<name>.log``.

        ``name`` (default: ``daemon``) is its key in :attr:`daemons`. The daemon dies with
        the test process even when that is killed with -9 (``PR_SET_PDEATHSIG``), so an
        interrupted run leaves no Nimbus or supervisor behind.
        """
        name = name or daemon
        log = (self.tmp / f"{name}.log").open("ab")
        self.daemons[name] = subprocess.Popen(
            [sys.executable, "-m", "sparkstorm.cli.main", "-v", daemon], cwd=ROOT,
            env=env or self.env, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent)
        log.close()

    def kill9(self, name: str) -> None:
        """SIGKILL a daemon's process group (its workers, in groups of their own, stay)."""
        process = self.daemons.pop(name)
        _signal(process.pid, signal.SIGKILL)
        process.wait(10)

    def kill_worker(self, record: dict[str, Any]) -> None:
        """SIGKILL a worker with everything it started (a lost machine)."""
        descendants = _children(record["pid"])
        _signal(record["pid"], signal.SIGKILL)
        for child in descendants:
            _kill(child)
        wait_for(lambda: not _group_alive(record["pid"])
                 and not any(_running(c) for c in descendants), 30,
                 message=f"worker {record['worker_id']} gone")

    def start_named_supervisor(self, name: str, **conf: Any) -> str:
        """Start one more supervisor with its own local dir (and ``conf`` on top).

        Returns its supervisor id once Nimbus lists it.
        """
        local = self.tmp / f"{name}-local"
        self.supervisor_dirs[name] = local
        own = {**self.conf, "storm.local.dir": str(local), "storm.cluster.token": self.token(),
               **conf}
        conf_file = self.tmp / f"{name}.yaml"
        conf_file.write_text(yaml.safe_dump(own))
        self.envs[name] = {**self.env, "SPARKSTORM_CONF_FILE": str(conf_file)}
        self.start("supervisor", name, self.envs[name])
        id_file = local / "supervisor" / "supervisor-id"
        wait_for(id_file.is_file, 30, message=f"{name} started\n{self.logs()}")
        supervisor_id = id_file.read_text().strip()
        wait_for(lambda: supervisor_id in {s["id"] for s in
                                           self.get("/api/v1/supervisor/summary")["supervisors"]},
                 30, message=f"{name} registered\n{self.logs()}")
        return supervisor_id

    def start_nimbus(self) -> None:
        """Start Nimbus and wait until its API answers."""
        self.start("nimbus")
        wait_for(self._nimbus_up, 30, message=f"nimbus up\n{self.logs()}")

    def start_cluster(self) -> None:
        """Start ``sparkstorm cluster`` (Nimbus and a supervisor in one process)."""
        self.start("cluster")
        self.daemons["nimbus"] = self.daemons["cluster"]  # for _nimbus_up's liveness check
        wait_for(self._nimbus_up, 30, message=f"nimbus up\n{self.logs()}")
        wait_for(lambda: self.get("/api/v1/supervisor/summary")["supervisors"], 30,
                 message=f"supervisor registered\n{self.logs()}")

    def start_supervisor(self) -> None:
        """Start a supervisor and wait until Nimbus lists it."""
        self.start("supervisor")
        wait_for(lambda: self.get("/api/v1/supervisor/summary")["supervisors"], 30,
                 message=f"supervisor registered\n{self.logs()}")

    def _nimbus_up(self) -> bool:
        try:
            return httpx.get(self.url + "/api/v1/cluster/summary", timeout=2,
                             verify=self.verify).is_success
        except httpx.HTTPError:
            assert self.daemons["nimbus"].poll() is None, self.logs()
            return False

    def worker_records(self, supervisor: str | None = None) -> list[dict[str, Any]]:
        """The worker records (pid, worker id, ...) of the supervisors.

        Of one supervisor (by daemon name), or of all of them.
        """
        names = [supervisor] if supervisor else list(self.supervisor_dirs)
        records = []
        for name in names:
            folder = self.supervisor_dirs[name] / "supervisor" / "workers"
            for path in folder.glob("*/worker.json"):
                try:
                    records.append(json.loads(path.read_text()))
                except (OSError, ValueError):
                    continue  # being written or removed right now
        return records

    def local_heartbeat(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """A worker's ``heartbeat.json`` (written even while Nimbus is down)."""
        for local in self.supervisor_dirs.values():
            path = local / "supervisor" / "workers" / record["worker_id"] / "heartbeat.json"
            try:
                return dict(json.loads(path.read_text()))
            except (OSError, ValueError):
                continue
        return None

    def close(self) -> None:
        """Stop the daemons, then every worker group they left; wait until all are gone."""
        daemons = {p.pid: p for p in self.daemons.values()}.values()
        for process in daemons:
            _signal(process.pid, signal.SIGTERM)
        for process in daemons:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                _signal(process.pid, signal.SIGKILL)
                process.wait(10)
        pids = [r["pid"] for r in self.worker_records()]
        # executors run in sessions of their own: take them by descent, before the worker
        descendants = [c for pid in pids for c in _children(pid)]
        for pid in pids:
            _signal(pid, signal.SIGKILL)
        for child in descendants:
            _kill(child)
        wait_for(lambda: not any(_group_alive(pid) for pid in pids)
                 and not any(_running(c) for c in descendants), 30,
                 message="worker processes gone")
        # a worker killed here could not remove its runner folder (its executors' sockets)
        for pid in pids:
            for workdir in workdirs_of(pid):
                shutil.rmtree(workdir, ignore_errors=True)
        # only this cluster's JVMs use java_tmp: Spark elsewhere on the machine cannot fail this
        left = sorted(self.java_tmp.glob("spark-*"))
        assert not left, (
            f"the cluster's Spark JVMs, killed with their workers, left {left}: a worker's "
            "JVM must keep its temporary files in the worker's folder (java.io.tmpdir from "
            "spark.local.dir, engine.spark.session.scratch_dir)")

    def logs(self) -> str:
        """The daemons' and workers' logs, for failure messages (last lines of each)."""
        parts = []
        workers = [p for local in self.supervisor_dirs.values()
                   for p in local.glob("supervisor/workers/*/*.log")]
        for path in [*self.tmp.glob("*.log"), *workers]:
            try:
                lines = path.read_text(errors="replace").splitlines()[-40:]
            except FileNotFoundError:
                # a worker's folder may be removed between the glob and the read (tests
                # build their failure message while a kill is cleaning up)
                continue
            parts.append(f"--- {path.name} ---\n" + "\n".join(lines))
        return "\n".join(parts)

    # --- clients -------------------------------------------------------------------------------

    def token(self) -> str:
        """The token Nimbus generated."""
        return (self.local / "nimbus" / "token").read_text().strip()

    def get(self, path: str) -> Any:
        """GET a Nimbus API path; return its JSON."""
        response = httpx.get(self.url + path, timeout=10, verify=self.verify)
        response.raise_for_status()
        return response.json()

    def request(self, method: str, path: str, *, token: str | None = "",
                **kwargs: Any) -> httpx.Response:
        """Call Nimbus with the cluster token ('' = the real one, None = none)."""
        headers = {} if token is None else {"Authorization": f"Bearer {token or self.token()}"}
        return httpx.request(method, self.url + path, headers=headers, timeout=30,
                             verify=self.verify, **kwargs)

    def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run ``sparkstorm <args>`` against this cluster."""
        return subprocess.run([sys.executable, "-m", "sparkstorm.cli.main", *args], cwd=ROOT,
                              env=self.env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)


def _with_java_tmpdir(folder: Path) -> str:
    """``JAVA_TOOL_OPTIONS`` with ``java.io.tmpdir`` set to ``folder``.

    The JVM reads these options before its command line, so a ``-Djava.io.tmpdir`` that the
    engine passes (the worker's scratch folder) still wins; only a JVM without one uses
    ``folder``, where :meth:`TestCluster.close` looks for what it left.
    """
    return f"{os.environ.get('JAVA_TOOL_OPTIONS', '')} -Djava.io.tmpdir={folder}".strip()


def _signal(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _kill(process: psutil.Process) -> None:
    with contextlib.suppress(psutil.Error):
        process.kill()


def _running(process: psutil.Process) -> bool:
    try:
        return bool(process.is_running() and process.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def _children(pid: int) -> list[psutil.Process]:
    try:
        return list(psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        return []


def _group_alive(pgid: int) -> bool:
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                return True
        except (ProcessLookupError, psutil.Error):
            continue
    return False


def wait_gone(pid: int, timeout: float = 30) -> None:
    """Wait until ``pid`` (and its process group) no longer runs."""
    wait_for(lambda: not _group_alive(pid), timeout, message=f"process group {pid} gone")


def closed_after(test_cluster: TestCluster, request: Any) -> Iterator[TestCluster]:
    """Yield ``test_cluster`` to a test, print its logs if the test failed, close it.

    The body of every cluster fixture: ``yield from closed_after(TestCluster(...), request)``.
    """
    try:
        yield test_cluster
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            print(test_cluster.logs())
        test_cluster.close()
