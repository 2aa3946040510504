"""Spark hosting, the driver's side: the hosting job and the hosting link's listener.

With ``topology.executor.hosting: spark`` (the default of an application started with
``spark-submit``) the topology's executor processes run in its own Spark application, as
Spark Streaming runs its receivers, and no sparkstorm daemon runs on the cluster:

- the executors split into ``topology.workers`` shares (``plan_shares``: each component's
  executors dealt round robin; empty shares are dropped);
- the driver waits until Spark's executors registered on as many hosts (at most
  ``topology.executor.hosting.wait.secs``), then submits the long-running **hosting jobs**,
  one per share, each of one task, share ``i`` preferring host ``i`` (modulo the hosts there
  are), each task holding ``topology.executor.hosting.cpus`` CPUs (see
  :meth:`SparkHosting.task_cpus`) so that Spark does not schedule windows' tasks on the
  cores its executor processes use;
- each task (:func:`~sparkstorm.spark_app.share.host_share`) starts its share's executors
  and reports where they answer over the **hosting link** (token first; reports and
  heartbeats, each answered: :mod:`sparkstorm.spark_app.link`); the driver passes every
  report of a share's current run to the window loop (``set_remote_endpoints``), so the
  next window calls a moved or restarted executor where it answers now;
- :meth:`SparkHosting.stop` answers every share's next frame with ``stop``: each stops its
  executor processes and ends its task, and the jobs end (cancelled if a task does not).

Failures (``tests/integration/hosts/test_spark_submit_faults.py``):

- an executor process dies: its share restarts it and reports the new pid; the next window
  calls it there (with checkpoints the topology rolls back, its state being gone);
- a Spark executor (or its host) is lost: Spark reruns its hosting task elsewhere, the new
  run reports, and the driver tells the older run, if it still talks, to stop;
- **Spark gives up** on a share's task (``spark.task.maxFailures`` failures: a host lost
  that many times under it), or the task ends (its share lost the driver): the driver starts
  the share again in a **new hosting job** of its own (:meth:`SparkHosting.restart`), on
  the live host with the fewest shares, so no number of host losses ends the topology. Why
  one job per share and a new job rather than anything else: Spark aborts the stage of a
  task it gave up on and kills that stage's running tasks, so with one job for every share
  a share's last failure would stop all the others; and a finished or aborted stage cannot
  be given another attempt, only a new job can run the partition again. A job whose
  attempts all failed before any reported (its executors cannot start anywhere) is not
  started again: the application fails with ``HOSTING_JOB_ENDED`` and Spark's reason;
- **the driver gives a share up** when it has heard nothing from the share's current run
  for ``topology.executor.hosting.timeout.secs`` plus two heartbeat periods (a host cut off
  from the network: Spark would wait ``spark.network.timeout``, 120 s, before it declares
  the executor lost, and until then keeps tasks there): the run is retired, its job
  cancelled, Spark told to kill and replace its executors on that host (no task is offered
  them from then on), and the share started again elsewhere as above. The share itself
  stops its executor processes after ``topology.executor.hosting.timeout.secs`` without an
  answer, a period before the driver gives it up, so the old copy has stopped before the
  new one starts, and when the link comes back its frames are answered ``stop``.

Not done yet (they fit here): rebalance, the REST API and UI served by the driver.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from sparkstorm.config import conf_float, conf_int
from sparkstorm.engine import (
    AuthenticatedListener,
    Endpoint,
    ExecutionPlan,
    HostingJob,
    dynamic_allocation,
    executor_cores,
    executor_counts,
    listener_tls,
    local_master,
    plan_shares,
    plan_tag,
    wait_for_hosts,
    wire_tls,
)
from sparkstorm.errors import EngineError, SparkstormError
from sparkstorm.spark_app.link import DriverAnswer, ShareBeat, ShareReport, receive, send
from sparkstorm.spark_app.share import ShareSettings, host_one_share
from sparkstorm.topology.spec import TopologySpec

logger = logging.getLogger(__name__)

Reported = dict[int, tuple[Endpoint, int]]
JOB_GROUP = "sparkstorm-executor-hosting"
"""The hosting jobs' Spark job groups: ``JOB_GROUP-<share>``, ``-<share>.<n>`` for its
``n``-th restart."""


@dataclass(frozen=True)
class ReportSeen:
    """One report the driver took.

    When, from which share and run, on which host, and which Python and sparkstorm the
    share's executors run (the shipped environment's).
    """

    time: float
    share: int
    run: str
    host: str
    python: str
    sparkstorm: str


@dataclass
class ShareJob:
    """One hosting job of one share: the share's ``generation``-th (0: the first)."""

    share: int
    generation: int
    job: HostingJob
    host: str | None
    """The host its task prefers (None: anywhere)."""
    reported: bool = False
    """Whether a run of its task reported the share's executors."""


@dataclass(frozen=True)
class ShareRestart:
    """A share started again by the driver in a new hosting job: when, and why."""

    time: float
    share: int
    generation: int
    reason: str
    host: str | None


@dataclass(frozen=True)
class DriverSide:
    """What the hosting tells the driver (``TopologyDriver``), and reads of it.

    Attributes:
        on_report: called, from a link's thread, with the endpoints and pids of each report
            and the plan tag of each (``set_remote_endpoints``).
        plan: the plan the driver runs now (``TopologyDriver.plan``); every answer carries
            its counts, which the shares follow after a ``rebalance -e`` (None: the plan
            never changes).
        on_share_lost: called with why, once a silent share was given up
            (``cancel_windows_in_flight``: the windows in flight have tasks on its host's
            Spark executor, which Spark would wait for).
    """

    on_report: Callable[[Reported, dict[int, str] | None], None]
    plan: Callable[[], ExecutionPlan] | None = None
    on_share_lost: Callable[[str], None] | None = None


class SparkHosting:
    """The driver's side of Spark hosting (see the module docs).

    Args:
        name: the topology's name.
        spec: its spec.
        conf: its conf (``spark.master`` and ``spark.driver.host`` set from the session).
        token: the topology's token (the driver's and every executor's).
        driver: what it tells the driver (:class:`DriverSide`).
        code: the file name of the code zip shipped with ``--py-files`` (None: none).
        checkpoint_id: the id executors write checkpoint parts under (None: off).
    """

    def __init__(self, name: str, spec: TopologySpec, conf: dict[str, Any], token: str,
                 driver: DriverSide, *, code: str | None = None,
                 checkpoint_id: str | None = None) -> None:
        self.name, self.spec, self.conf, self.token = name, spec, conf, token
        self.on_report = driver.on_report
        self.driver_plan = driver.plan
        self.on_share_lost = driver.on_share_lost
        self._plan_tag = plan_tag(ExecutionPlan(spec, conf))
        """The tag of the plan the shares were dealt from (:meth:`_follow_driver`)."""
        self.code = code
        self.checkpoint_id = checkpoint_id
        workers = conf_int(conf, "topology.workers")
        self.shares = [s for s in plan_shares(ExecutionPlan(spec, conf), workers) if s]
        self.timeout = conf_float(conf, "topology.executor.hosting.timeout.secs")
        self.reports: list[ReportSeen] = []
        """Every report taken, first ones and those after an executor moved or restarted."""
        self.current: dict[int, str] = {}
        """The run each share's executors belong to now (the last one that reported)."""
        self.heard: dict[int, float] = {}
        """When each share's current run was last heard from (monotonic)."""
        self.reserved_slots = 0
        """Spark task slots the hosting tasks hold (set by :meth:`start`)."""
        self.period = conf_float(conf, "topology.executor.hosting.heartbeat.secs")
        self.give_up_after = self.timeout + 2 * self.period
        """How long the driver waits for a share's frame before it gives the share up: a
        period after the share gives itself up (see the module docs)."""
        self.stopping = threading.Event()
        self.jobs: dict[int, ShareJob] = {}
        """The current hosting job of each share."""
        self.restarts: list[ShareRestart] = []
        """Every share the driver started again, in order."""
        self._failure: BaseException | None = None
        self._retired: set[str] = set()
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._sc: Any = None
        self._settings: ShareSettings | None = None
        self._cpus = 1
        self._local = False
        self._dedicated = False
        """Dynamic allocation is on: hosting tasks run on executors of their own."""

    # -- start ------------------------------------------------------------------------
    def start(self, spark: Any) -> None:
        """Place the shares and submit the hosting job; return once it is submitted.

        Raises:
            EngineError: ``HOSTING_NO_SPARK_EXECUTORS`` when no Spark executor registered
                in time; ``HOSTING_NO_WINDOW_SLOTS`` when the hosting tasks would leave a
                Spark executor (or a local master) no slot for windows.
        """
        sc = spark.sparkContext
        local = local_master(sc)
        if local:
            self.check_local_slots(int(sc.defaultParallelism))
        self._dedicated = dynamic_allocation(sc)
        if self._dedicated:
            # no executor exists until tasks wait for one: the hosting tasks ask Spark for
            # executors of their own, sized to a share, and hold none of the windows' slots
            hosts: list[str | None] = [None]
            cpus = (conf_int(self.conf, "topology.executor.hosting.cpus")
                    or max(len(s) for s in self.shares))
            self.reserved_slots = 0
            logger.info("topology %s: dynamic allocation is on: each hosting task runs on a "
                        "Spark executor of its own with %d cores, which Spark requests for "
                        "it; the windows' executors come and go with their load",
                        self.name, cpus)
        else:
            hosts = [None] if local else self._hosts(sc)
            cpus = self.task_cpus(executor_cores(sc),
                                  int(sc.getConf().get("spark.task.cpus", "1")), local)
            per_slot = 1 if local else int(sc.getConf().get("spark.task.cpus", "1"))
            self.reserved_slots = len(self.shares) * -(-cpus // per_slot)
        preferred = [hosts[i % len(hosts)] for i in range(len(self.shares))]
        self._sc, self._cpus, self._local = sc, cpus, local
        self._settings = self.settings(self.listen(local), local)
        with self._lock:
            for share, host in enumerate(preferred):
                self._submit(share, 0, host)
        threading.Thread(target=self._watch, name="hosting-watch", daemon=True).start()
        logger.info("topology %s: hosting job submitted: %d shares %s on %s, %d CPUs each",
                    self.name, len(self.shares), [sorted(s) for s in self.shares],
                    preferred, cpus)

    def _submit(self, share: int, generation: int, host: str | None) -> None:
        """Submit hosting job ``generation`` of ``share`` (the caller holds the lock)."""
        assert self._settings is not None
        settings = replace(self._settings, job=generation)
        group = f"{JOB_GROUP}-{share}" + (f".{generation}" if generation else "")
        job = HostingJob(self._sc, partial(host_one_share, settings, share), [host], self._cpus,
                         group, dedicated=self._dedicated)
        self.jobs[share] = ShareJob(share, generation, job, host)
        job.start()

    @property
    def job(self) -> HostingJob | None:
        """Share 0's current hosting job (None before :meth:`start`)."""
        current = self.jobs.get(0)
        return current.job if current is not None else None

    def _hosts(self, sc: Any) -> list[str | None]:
        wait = conf_float(self.conf, "topology.executor.hosting.wait.secs")
        limit = wait + conf_float(self.conf, "topology.executor.start.timeout.secs")
        try:
            found = wait_for_hosts(sc, len(self.shares), wait, limit, self.stopping)
        except TimeoutError as exc:
            msg = (f"topology {self.name}: no Spark executor registered within {limit:g} s "
                   "(topology.executor.hosting.wait.secs + topology.executor.start.timeout"
                   ".secs), so no task can host its executors; check that the cluster has "
                   "room for the application's executors (its UI, spark.executor.cores, "
                   "spark.executor.instances) and raise the wait if it is slow to start them")
            raise EngineError(msg, code="HOSTING_NO_SPARK_EXECUTORS") from exc
        if len(found) < len(self.shares):
            logger.warning("topology %s: %d shares on Spark executors of %d hosts %s (more "
                           "hosts did not register within topology.executor.hosting.wait."
                           "secs)", self.name, len(self.shares), len(found), found)
        return list(found)

    def check_local_slots(self, slots: int) -> None:
        """On a ``local`` master each hosting task holds one of its ``slots``.

        Raises:
            EngineError: ``HOSTING_NO_WINDOW_SLOTS`` when they would hold them all.
        """
        if len(self.shares) >= slots:
            msg = (f"topology {self.name}: the local master has {slots} task slots and "
                   f"{len(self.shares)} hosting tasks would hold one each "
                   "(topology.workers), leaving none for windows; run local[N] with N > "
                   f"{len(self.shares)}, or fewer topology.workers")
            raise EngineError(msg, code="HOSTING_NO_WINDOW_SLOTS")

    def task_cpus(self, cores: dict[str, int], task_cpus: int, local: bool) -> int:
        """The CPUs each hosting task holds.

        ``topology.executor.hosting.cpus``, or (0) one per executor process of the largest
        share, at most the smallest Spark executor's cores less one window task
        (``spark.task.cpus``). A local master: one slot (nothing to reserve on one host).

        Raises:
            EngineError: ``HOSTING_NO_WINDOW_SLOTS`` when a Spark executor has no more cores
                than a window task needs: a hosting task would leave it none for windows.
        """
        if local:
            return 1
        wanted = (conf_int(self.conf, "topology.executor.hosting.cpus")
                  or max(len(s) for s in self.shares))
        smallest = min(cores.values()) if cores else None
        if smallest is None:
            return wanted
        room = smallest - task_cpus
        if room < 1:
            msg = (f"topology {self.name}: Spark executors have {smallest} cores and a window "
                   f"task needs {task_cpus} (spark.task.cpus): a hosting task, which holds "
                   "at least one for its executor processes, would leave none for windows; "
                   "give executors more cores (spark.executor.cores, at least "
                   f"{task_cpus + 1})")
            raise EngineError(msg, code="HOSTING_NO_WINDOW_SLOTS")
        if wanted > room:
            logger.warning("topology %s: hosting tasks hold %d CPUs each, not %d (one per "
                           "executor process): Spark executors have %d cores and windows "
                           "need %d; give them more (spark.executor.cores) or set "
                           "topology.executor.hosting.cpus", self.name, room, wanted,
                           smallest, task_cpus)
            return room
        return wanted

    def settings(self, driver: tuple[str, int], local: bool) -> ShareSettings:
        """What every hosting task gets: the topology, its shares, where the driver is."""
        return ShareSettings(self.name, self.spec.to_dict(), self.conf, self.token, driver,
                             tuple(frozenset(s) for s in self.shares), self.code,
                             self.checkpoint_id, local)

    # -- restarts ---------------------------------------------------------------------
    def _watch(self) -> None:
        """Every heartbeat period: restart shares whose job ended, give up silent ones."""
        while not self.stopping.wait(min(self.period, 1.0)):
            try:
                self.check_shares()
            except Exception:  # the next round tries again
                logger.exception("topology %s: checking the shares failed", self.name)

    def check_shares(self, now: float | None = None) -> None:
        """Start again each share whose job ended or that went silent (see the module docs).

        A job that ended before any run of it reported fails the topology instead
        (:attr:`failure`): its executors cannot start. Once a silent share was given up,
        :attr:`on_share_lost` hears it (outside the lock).
        """
        given_up = self._check_shares(time.monotonic() if now is None else now)
        if given_up and self.on_share_lost is not None:
            self.on_share_lost("; ".join(given_up))

    def _check_shares(self, now: float) -> list[str]:
        given_up: list[str] = []
        with self._lock:
            if self.stopping.is_set():
                return given_up
            for share, current in sorted(self.jobs.items()):
                job = current.job
                if job.ended.is_set():
                    if not current.reported:
                        if self._failure is None:
                            self._failure = self._ended_error(share, job)
                        continue
                    why = (f"Spark gave up on its task: {_first_line(job.error)}"
                           if job.error is not None else
                           "its task ended (the share lost the driver)")
                    self._restart(share, why, avoid=None)
                    continue
                heard = self.heard.get(share)
                if current.reported and heard is not None and now - heard > self.give_up_after:
                    host = self._host_of(share)
                    run = self.current.get(share)
                    if run is not None:
                        self._retired.add(run)
                    self.heard.pop(share, None)
                    logger.warning("topology %s: share %d (run %s on %s) not heard from for "
                                   "%.1f s (topology.executor.hosting.timeout.secs %g + two "
                                   "heartbeats): given up", self.name, share, run, host,
                                   now - heard, self.timeout)
                    job.cancel()
                    if host is not None and not self._local:
                        lost = HostingJob.replace_executors_on(self._sc, host)
                        logger.warning("topology %s: Spark executors %s on %s killed and "
                                       "replaced (no task goes there any more)", self.name,
                                       lost, host)
                    self._restart(share, f"not heard from for {now - heard:.1f} s",
                                  avoid=host)
                    given_up.append(f"share {share} on {host} was given up")
        return given_up

    def _restart(self, share: int, reason: str, avoid: str | None) -> None:
        """Start ``share`` again in a new hosting job (the caller holds the lock)."""
        generation = self.jobs[share].generation + 1
        self.heard.pop(share, None)
        host = None if self._local else self._place(share, avoid)
        self._submit(share, generation, host)
        self.restarts.append(ShareRestart(time.time(), share, generation, reason, host))
        logger.warning("topology %s: share %d started again (hosting job %d, on %s): %s",
                       self.name, share, generation, host or "any host", reason)

    def _host_of(self, share: int) -> str | None:
        run = self.current.get(share)
        for seen in reversed(self.reports):
            if seen.share == share and seen.run == run:
                return seen.host
        return None

    def _place(self, share: int, avoid: str | None) -> str | None:
        """The live Spark executor host with the fewest other shares (not ``avoid``)."""
        if self._dedicated:
            return None  # Spark requests a new executor for it, where the cluster has room
        hosts = [h for h in HostingJob.live_hosts(self._sc) if h != avoid]
        if not hosts:
            return None
        load = {h: 0 for h in hosts}
        for other in self.jobs:
            host = self._host_of(other) if other != share else None
            if host in load:
                load[host] += 1
        return min(hosts, key=lambda h: (load[h], h))

    def _ended_error(self, share: int, job: HostingJob) -> EngineError:
        if job.error is not None:
            msg = (f"topology {self.name}: the hosting job of share {share} failed before "
                   f"any of its tasks reported the share's executors: {job.error}")
        else:
            msg = (f"topology {self.name}: the hosting job of share {share} ended before "
                   "its task reported the share's executors")
        error = EngineError(msg, code="HOSTING_JOB_ENDED")
        error.__cause__ = job.error
        return error

    def listen(self, local: bool) -> tuple[str, int]:
        """Open the link's listener and serve it; where hosting tasks reach it.

        Loopback for a local master; else the driver's address (``spark.driver.host``,
        bound on ``spark.driver.bindAddress`` when set, as Kubernetes' cluster mode has it).
        """
        advertised = "127.0.0.1" if local else str(self.conf.get("spark.driver.host")
                                                   or socket.gethostname())
        bind = advertised if local else str(self.conf.get("spark.driver.bindAddress")
                                            or advertised)
        self._listener = socket.create_server((bind, 0))
        # callers must send the token first, within a deadline, a bounded number at once;
        # in mutual TLS first when executor TCP is (topology.tcp.tls)
        AuthenticatedListener(self._listener, self.token, self._serve,
                              name=f"topology {self.name} hosting link",
                              handshake_timeout=conf_float(self.conf,
                                                           "topology.tcp.handshake.timeout.secs"),
                              max_connections=conf_int(self.conf, "topology.tcp.max.connections"),
                              tls=listener_tls(wire_tls(self.conf)))
        return advertised, int(self._listener.getsockname()[1])

    # -- the link ---------------------------------------------------------------------
    def _serve(self, conn: socket.socket) -> None:
        """One hosting task's link (authenticated): answer each of its frames."""
        with conn:
            conn.settimeout(self.timeout)
            share = None
            while True:
                try:
                    message = receive(conn)
                except (OSError, ConnectionError, SparkstormError) as exc:
                    if share is not None and not self.stopping.is_set():
                        logger.warning("topology %s: share %d's link closed: %s", self.name,
                                       share, exc)
                    return
                if not isinstance(message, ShareReport | ShareBeat):
                    return
                share = message.share
                stop = self._take(message)
                try:
                    send(conn, DriverAnswer(stop, None if stop else self._plan_order()))
                except OSError:
                    return
                if stop:
                    return

    def _plan_order(self) -> dict[str, Any] | None:
        """The driver's plan for an answer (None: no driver plan to follow).

        When the driver has switched to new executor counts (``rebalance -e``), the shares
        are dealt again from its plan, so a share started again later hosts its part of
        the new counts.
        """
        if self.driver_plan is None:
            return None
        plan = self.driver_plan()
        tag = plan_tag(plan)
        if tag != self._plan_tag:
            self._follow_driver(plan, tag)
        return {"executor_counts": executor_counts(plan), "plan_tag": tag}

    def _follow_driver(self, plan: ExecutionPlan, tag: str) -> None:
        with self._lock:
            if tag == self._plan_tag:
                return
            shares = [s for s in plan_shares(plan, conf_int(self.conf, "topology.workers"))
                      if s]
            if len(shares) != len(self.shares):
                logger.warning("topology %s: the new executor counts deal %d shares, not %d: "
                               "the hosting jobs stay %d", self.name, len(shares),
                               len(self.shares), len(self.shares))
                shares = (shares + [set()] * len(self.shares))[:len(self.shares)]
            self.spec, self.shares, self._plan_tag = plan.spec, shares, tag
            if self._settings is not None:
                self._settings = replace(self._settings, spec=plan.spec.to_dict(),
                                         shares=tuple(frozenset(s) for s in shares))
        logger.info("topology %s: shares follow the driver to %s: %s", self.name, tag,
                    [sorted(s) for s in shares])

    def _take(self, message: ShareReport | ShareBeat) -> bool:
        """Take a share's frame; whether that run must stop."""
        with self._lock:
            if message.run in self._retired or self.stopping.is_set():
                return True
            current = self.jobs.get(message.share)
            if current is not None and message.job != current.generation:
                self._retired.add(message.run)  # a run of a job the driver replaced
                return True
            if isinstance(message, ShareReport):
                if current is not None:
                    current.reported = True
                old = self.current.get(message.share)
                if old is not None and old != message.run:
                    self._retired.add(old)  # Spark reran the share: the old run stops
                self.current[message.share] = message.run
                self.reports.append(ReportSeen(time.time(), message.share, message.run,
                                               message.host, message.python,
                                               message.sparkstorm))
            elif self.current.get(message.share) != message.run:
                return False  # a beat before the run's report was taken: nothing to do
            self.heard[message.share] = time.monotonic()
        if isinstance(message, ShareReport):
            logger.info("topology %s: share %d (run %s) hosts executors %s on %s; Python %s, "
                        "sparkstorm from %s", self.name, message.share, message.run,
                        sorted(message.executors), message.host, message.python,
                        message.sparkstorm)
            # tagged with the plan they run: the driver takes only its own plan's
            tags = ({gid: message.plan_tag for gid in message.executors}
                    if message.plan_tag else None)
            self.on_report({gid: (Endpoint(path, host, port), pid)
                            for gid, (path, host, port, pid) in message.executors.items()},
                           tags)
        return False

    # -- state ------------------------------------------------------------------------
    def reported(self) -> bool:
        """Whether every share has reported."""
        with self._lock:
            return len(self.current) == len(self.shares)

    @property
    def failure(self) -> BaseException | None:
        """Why hosting failed: a share's job ended before any of its runs reported.

        (A job that ended after its share reported is started again, not a failure.)
        """
        if self.stopping.is_set():
            return None
        with self._lock:
            if self._failure is not None:
                return self._failure
            for share, current in sorted(self.jobs.items()):
                if current.job.ended.is_set() and not current.reported:
                    self._failure = self._ended_error(share, current.job)
                    return self._failure
        return None

    def wait_reported(self, timeout: float, stop: threading.Event | None = None) -> None:
        """Wait until every share reported.

        Raises:
            EngineError: ``HOSTING_JOB_ENDED`` (with Spark's reason) when the job ended
                first; ``EXECUTOR_START_FAILED`` when some share did not report in time.
        """
        deadline = time.monotonic() + timeout
        while not self.reported():
            failure = self.failure
            if failure is not None:
                msg = (f"topology {self.name}: the hosting job failed before every share "
                       f"reported its executors: {failure}")
                raise EngineError(msg, code="HOSTING_JOB_ENDED") from failure
            if time.monotonic() > deadline or (stop is not None and stop.is_set()):
                with self._lock:
                    missing = sorted(set(range(len(self.shares))) - set(self.current))
                msg = (f"topology {self.name}: shares {missing} did not report their "
                       f"executors within {timeout:g} s; see the hosting tasks' logs "
                       "(the Spark UI's stage of job group sparkstorm-executor-hosting)")
                raise EngineError(msg, code="EXECUTOR_START_FAILED")
            time.sleep(0.1)

    # -- stop -------------------------------------------------------------------------
    def stop(self, timeout: float = 30.0) -> None:
        """Tell every share to stop (at its next heartbeat), wait for the job to end.

        A job still running after ``timeout`` seconds is cancelled: Spark kills its tasks'
        Python workers, and the executor processes, which watch their parent, exit.
        """
        self.stopping.set()
        with self._lock:
            jobs = [current.job for current in self.jobs.values()]
        deadline = time.monotonic() + timeout
        late = [job for job in jobs if not job.join(max(0.0, deadline - time.monotonic()))]
        if late:
            logger.warning("topology %s: hosting tasks did not end within %g s; cancelling "
                           "their jobs", self.name, timeout)
            for job in late:
                job.cancel()
            for job in late:
                job.join(10.0)
        if self._listener is not None:
            self._listener.close()


def _first_line(error: BaseException | None) -> str:
    text = str(error or "").strip().splitlines()
    return text[0][:300] if text else repr(error)


__all__ = ["DriverSide", "ReportSeen", "Reported", "ShareJob", "ShareRestart",
           "SparkHosting"]
