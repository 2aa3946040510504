"""A hosting task: one share of a topology's executors, run inside a Spark task.

The driver's hosting job (:mod:`sparkstorm.spark_app.hosting`) runs :func:`host_share` once
per share, in a Spark Python worker on the share's Spark executor, for the topology's life
(Spark reruns it elsewhere when that executor is lost). It:

1. puts the topology's shipped code (the ``--py-files`` zip ``sparkstorm spark-submit``
   made) first on ``sys.path``, unpacked into a folder of its own so that shell
   components find their ``resources/``;
2. starts the share's executor processes (:class:`ExecutorHostRunner`, as a supervisor's
   worker does; they are its children, listen on this host's address and exit when it
   dies);
3. reports where they answer to the driver over the hosting link
   (:mod:`sparkstorm.spark_app.link`; mutual TLS with the cluster's material when executor
   TCP has it, ``topology.tcp.tls``) and heartbeats on it, reporting again when an
   executor restarted;
4. stops the executors and ends the task when the driver says stop, closes the link, or is
   not heard from for ``topology.executor.hosting.timeout.secs``.

Everything here must be picklable by reference (module-level names): Spark ships
:func:`host_share` with a :class:`ShareSettings` to its executors.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import socket
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparkstorm.config import conf_float, conf_int
from sparkstorm.engine import (
    ExecutionPlan,
    caller_context,
    executor_counts,
    plan_shares,
    plan_tag,
    send_frame,
    wire_tls,
    with_counts,
)
from sparkstorm.multilang.shell_base import with_code_resources
from sparkstorm.spark_app.link import (
    DriverAnswer,
    ExecutorAddress,
    ShareBeat,
    ShareReport,
    receive,
    send,
)
from sparkstorm.topology.spec import TopologySpec

logger = logging.getLogger(__name__)

CODE_DIR_PREFIX = "sparkstorm-{pid}-code-"
"""The unpacked code's folder: named by the process like the executor hosts' folders, so
that when a SIGKILL leaves it behind (a Spark executor killed with its Python workers, as
after the driver's own death) the next folder made on the host removes it
(``engine.executor.workdirs``)."""
LOG_DIR_KEY = "topology.executor.log.dir"


@dataclass(frozen=True)
class ShareSettings:
    """What every hosting task of one topology gets from the driver (pickled).

    Attributes:
        name: the topology's name.
        spec: its spec, as a dict.
        conf: its conf.
        token: the topology's token.
        driver: the driver's hosting listener (host, port).
        shares: the executors (gids) of each share.
        code: the file name of the shipped code zip (None: nothing shipped).
        checkpoint_id: where executors write checkpoint parts (None: checkpoints off).
        local: whether Spark's master is ``local`` (executors listen on loopback).
        job: which hosting job of its share this is (0: the first; the driver starts a
            share again in a new job), sent with every frame.
    """

    name: str
    spec: dict[str, Any]
    conf: dict[str, Any]
    token: str
    driver: tuple[str, int]
    shares: tuple[frozenset[int], ...]
    code: str | None = None
    checkpoint_id: str | None = None
    local: bool = False
    job: int = 0


def local_address() -> str:
    """This host's address as Spark names its executor here.

    ``SPARK_LOCAL_IP`` when the host sets it, Kubernetes' ``SPARK_EXECUTOR_POD_IP``, else
    what the host name resolves to.
    """
    return (os.environ.get("SPARK_LOCAL_IP") or os.environ.get("SPARK_EXECUTOR_POD_IP")
            or socket.gethostbyname(socket.gethostname()))


def find_code(name: str, search: Iterable[str] | None = None) -> Path | None:
    """The shipped code zip ``name``: on ``sys.path`` (``--py-files``) or in the cwd."""
    for entry in [*(sys.path if search is None else search), os.getcwd()]:
        path = Path(entry)
        if path.name == name and path.is_file():
            return path
        if (path / name).is_file():
            return path / name
    return None


def unpack_code(zip_path: Path, conf: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    """Unpack the code zip into a new folder, put it on ``sys.path``; the folder and conf.

    The folder goes first on ``sys.path`` with the code's ``topology.code.python.paths``
    (a streamparse project's ``src/`` and topologies folder) before it; the executor
    processes get this ``sys.path``. A relative ``topology.multilang.resources.dir``
    becomes a folder of the unpacked code, as on a supervisor's worker.
    """
    with zipfile.ZipFile(zip_path) as archive:
        folder = Path(tempfile.mkdtemp(prefix=CODE_DIR_PREFIX.format(pid=os.getpid())))
        for member in archive.namelist():  # our own zip, but never outside the folder
            if not (folder / member).resolve().is_relative_to(folder.resolve()):
                folder.rmdir()
                msg = f"code zip {zip_path} has a member outside its folder: {member!r}"
                raise ValueError(msg)
        archive.extractall(folder)
    paths = [str(folder / str(p)) for p in conf.get("topology.code.python.paths") or []]
    sys.path[:0] = [*paths, str(folder)]
    return folder, with_code_resources(conf, folder)


def share_conf(settings: ShareSettings) -> dict[str, Any]:
    """The topology's conf on this host.

    Executors listen on this host's address; on a cluster their logs go to
    ``sparkstorm-logs/`` in the Spark executor's working directory (unless
    ``topology.executor.log.dir`` says where), which Spark keeps beside the executor's own
    ``stdout`` and ``stderr``.
    """
    conf = dict(settings.conf)
    conf["storm.local.hostname"] = "127.0.0.1" if settings.local else local_address()
    if not settings.local and not conf.get(LOG_DIR_KEY):
        conf[LOG_DIR_KEY] = os.path.join(os.getcwd(), "sparkstorm-logs")
    return conf


def host_share(settings: ShareSettings, index: int, records: Iterable[Any]) -> Iterator[int]:
    """The hosting task of share ``index`` (see the module docs); yields ``index`` at the end.

    Raises:
        EngineError: ``EXECUTOR_START_FAILED`` (and the other start-up errors of the
            executor pool) when the share's executors cannot start: the Spark task fails,
            and Spark retries it.
    """
    from sparkstorm.cluster.worker.executor_host import ExecutorHostRunner

    for _ in records:  # drained, or PySpark discards the Python worker after the task
        pass
    conf = share_conf(settings)
    code_dir = None
    if settings.code:
        found = find_code(settings.code)
        if found is None:
            logger.warning("share %d: the code zip %s is neither on sys.path nor in %s",
                           index, settings.code, os.getcwd())
        else:
            code_dir, conf = unpack_code(found, conf)
    spec = TopologySpec.from_dict(settings.spec)
    hosted = set(settings.shares[index])
    try:
        runner = ExecutorHostRunner(settings.name, spec, conf, hosted, settings.token,
                                    settings.checkpoint_id)
        ShareLink(settings, index, conf, runner).run()
    finally:
        if code_dir is not None:
            shutil.rmtree(code_dir, ignore_errors=True)
    yield index


def host_one_share(settings: ShareSettings, share: int, partition: int,
                   records: Iterable[Any]) -> Iterator[int]:
    """The task of a hosting job of one share (its one partition): :func:`host_share`."""
    del partition  # always 0: the job has one task
    return host_share(settings, share, records)


class ShareLink:
    """A share's executors and its link to the driver, for the task's life.

    Args:
        settings: the topology's hosting settings.
        index: which share.
        conf: the conf on this host.
        runner: runs the share's executors (an ``ExecutorHostRunner``: ``start``, ``stop``,
            and its ``pool`` tells where they answer).
    """

    def __init__(self, settings: ShareSettings, index: int, conf: dict[str, Any],
                 runner: Any) -> None:
        self.settings = settings
        self.index = index
        self.runner = runner
        self.run_id = secrets.token_hex(8)
        self.host = str(conf["storm.local.hostname"])
        self.period = conf_float(conf, "topology.executor.hosting.heartbeat.secs")
        self.timeout = conf_float(conf, "topology.executor.hosting.timeout.secs")
        self.connect_timeout = min(self.timeout, 30.0)
        self.tls = wire_tls(conf)
        """The link's mutual TLS material when executor TCP has it (``topology.tcp.tls``)."""
        self.shutdown = conf_int(conf, "topology.shutdown.timeout.secs")
        self.stopped_by = ""
        """Why the share stopped: ``driver`` (asked), ``lost`` (no answer, link closed)."""

    def run(self) -> None:
        """Start the executors, report, heartbeat until told to stop; stop them."""
        self.runner.start()
        try:
            self._talk()
        finally:
            self.runner.stop(min(float(self.shutdown), 10.0))
            logger.info("share %d: executors stopped (%s)", self.index, self.stopped_by)

    def report(self) -> ShareReport:
        """Where the share's executors answer now, and their pids."""
        pool = self.runner.pool
        pids = pool.pids()
        executors: dict[int, ExecutorAddress] = {
            gid: (e.path, e.host, e.port, int(pids.get(gid, 0)))
            for gid, e in pool.endpoints.items() if gid in pool.sockets}
        import sparkstorm

        return ShareReport(self.index, self.run_id, self.host, executors, sys.executable,
                           str(Path(sparkstorm.__file__).parent), self.settings.job,
                           plan_tag(self.runner.plan))

    def _talk(self) -> None:
        """Report, then beat every period; each frame waits for the driver's answer."""
        try:
            sock = socket.create_connection(self.settings.driver, self.connect_timeout)
            if self.tls is not None:  # the handshake within the connect timeout
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock = caller_context(self.tls).wrap_socket(
                    sock, server_hostname=self.settings.driver[0])
        except OSError as exc:  # ssl.SSLError too
            self.stopped_by = f"lost: driver at {self.settings.driver} unreachable ({exc})"
            return
        with sock:
            sock.settimeout(self.timeout)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            try:
                send_frame(sock, self.settings.token.encode())
                last = self.report()
                if self._exchange(sock, last):
                    return
                while True:
                    self._wait(self.period)
                    now = self.report()
                    changed = (now.executors, now.plan_tag) != (last.executors, last.plan_tag)
                    message: ShareReport | ShareBeat = (
                        now if changed else
                        ShareBeat(self.index, self.run_id, int(self.runner.pool.restarts),
                                  self.settings.job))
                    last = now
                    if self._exchange(sock, message):
                        return
            except (OSError, ConnectionError) as exc:  # TimeoutError is an OSError
                self.stopped_by = f"lost: no answer from the driver ({exc!r})"

    def _exchange(self, sock: socket.socket, message: ShareReport | ShareBeat) -> bool:
        """Send ``message``, read the answer; whether the driver said stop."""
        send(sock, message)
        answer = receive(sock)
        if isinstance(answer, DriverAnswer) and answer.stop:
            self.stopped_by = "driver: stop"
            return True
        if isinstance(answer, DriverAnswer) and answer.plan is not None:
            self.follow(answer.plan)
        return False

    def follow(self, driver_plan: dict[str, Any]) -> bool:
        """Regroup the share's executors as the driver did (``rebalance -e``), if it did.

        The share's executors under the driver's new counts are the same deal of them over
        the shares as the driver's (:func:`~sparkstorm.engine.plan_shares`), so both sides
        agree without saying which; the next report carries the new plan's tag, and the
        driver, which waits for it, calls them there. Whether the executors were regrouped.
        """
        counts, tag = driver_plan.get("executor_counts"), driver_plan.get("plan_tag")
        if not isinstance(counts, dict) or tag == plan_tag(self.runner.plan):
            return False
        try:
            merged = {**executor_counts(self.runner.plan),
                      **{str(k): int(v) for k, v in counts.items()}}
            new = ExecutionPlan(with_counts(self.runner.plan.spec, merged), self.runner.conf)
        except (TypeError, ValueError) as exc:
            logger.warning("share %d: ignoring the driver's plan %r: %s", self.index,
                           driver_plan, exc)
            return False
        shares = [s for s in plan_shares(new, conf_int(self.runner.conf, "topology.workers"))
                  if s]
        mine = shares[self.index] if self.index < len(shares) else set()
        ids = [[min(e.tasks), max(e.tasks)] for e in new.executors if e.gid in mine]
        followed = bool(self.runner.follow_driver_plan(counts, ids))
        if followed:
            logger.info("share %d: follows the driver to executor counts %s: hosts %s",
                        self.index, merged, sorted(mine))
        return followed

    def _wait(self, seconds: float) -> None:
        """Sleep between beats."""
        time.sleep(seconds)


__all__ = ["ShareLink", "ShareSettings", "find_code", "host_one_share", "host_share",
           "local_address",
           "share_conf", "unpack_code"]
