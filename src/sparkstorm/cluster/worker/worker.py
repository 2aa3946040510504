"""The worker process.

Init context from Nimbus, a :class:`TopologyDriver` on Spark, and a heartbeat every
``worker.heartbeat.frequency.secs`` whose answer it obeys.

The first heartbeat goes out before Spark starts, so Nimbus sees the worker alive during
the slow part of its start. When Nimbus is unreachable the worker keeps running and keeps
trying: running topologies never depend on Nimbus being up.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from sparkstorm.cluster.heartbeat_size import TrimLog, bound_stats
from sparkstorm.cluster.nimbus.client import NimbusClient
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.token import TOKEN_ENV
from sparkstorm.cluster.worker.log_files import log_sources, tail
from sparkstorm.cluster.worker.resources import ResourceSampler
from sparkstorm.cluster.worker.virtualenv import exec_worker, worker_virtualenv
from sparkstorm.config import conf_bool, conf_float, conf_int
from sparkstorm.config.reliability import checkpoint_every
from sparkstorm.engine import LogLevels, executor_counts, plan_tag
from sparkstorm.errors import EngineError, SparkstormError, shorten_error_text
from sparkstorm.multilang.shell import with_code_resources
from sparkstorm.periodic import PeriodicThread
from sparkstorm.tls.contexts import client_context
from sparkstorm.tls.material import files_from_env
from sparkstorm.tls.spark_rpc import cluster_worker_settings

logger = logging.getLogger(__name__)

EXIT_OK, EXIT_FAILED, EXIT_NOT_ASSIGNED = 0, 1, 3

LOCAL_HEARTBEAT = "heartbeat.json"
"""The worker's latest heartbeat, in its folder (the supervisor starts it there)."""


class ClusterWorker:
    """One worker's life: init, run, heartbeat, stop.

    Args:
        client: the Nimbus client (with the token).
        worker_id: the id Nimbus gave this worker in the assignment.
        topology_id: its topology.
        code_dir: the extracted code, put first on ``sys.path``.
        local_dir: where ``heartbeat.json`` goes (None: nowhere).
        virtualenvs_dir: where topology virtualenvs are built on this host, unless
            ``topology.virtualenv.root`` says (None: next to the code).
    """

    def __init__(self, client: NimbusClient, worker_id: str, topology_id: str,
                 code_dir: Path, local_dir: Path | None = None,
                 virtualenvs_dir: Path | None = None) -> None:
        self.client = client
        self.worker_id = worker_id
        self.topology_id = topology_id
        self.code_dir = code_dir
        self.virtualenvs_dir = virtualenvs_dir or code_dir.parent / "virtualenvs"
        self.reexec: Path | None = None
        """The virtualenv python to run this worker again under (set by :meth:`run`)."""
        self.stop = threading.Event()
        self.started = time.monotonic()
        self.runner: Any = None
        self._starting: Any = None
        """The runner being started (its plan names the component a start failure is of)."""
        self.active = True
        self.local_dir = local_dir
        self.heartbeat_max_bytes = conf_int({}, "worker.heartbeat.max.bytes")
        self._trims = TrimLog("worker")
        self._lock = threading.Lock()
        self.resources = ResourceSampler()
        self.log_levels = LogLevels()
        self._log_control_sent: Any = None
        self.executor_host = False
        """Whether this worker hosts executors for another worker's driver (it runs no
        windows of its own: it is up once its executors serve)."""
        self._beats: Any = None
        """The heartbeat timer (woken when a rebalance -e waits for a heartbeat)."""

    def run(self) -> int:
        """Run until Nimbus says shutdown, a signal arrives or the topology fails."""
        sys.path.insert(0, str(self.code_dir))  # executors inherit our sys.path
        try:
            context = self.client.worker_init(self.worker_id, self.topology_id)
        except NimbusError as exc:
            logger.error("worker %s cannot start: %s", self.worker_id, exc)
            return EXIT_NOT_ASSIGNED if exc.code == "WORKER_NOT_ASSIGNED" else EXIT_FAILED
        self.active = bool(context.get("active", True))
        self.heartbeat_max_bytes = conf_int(context.get("conf") or {},
                                            "worker.heartbeat.max.bytes")
        if self._beat().get("shutdown"):
            return EXIT_OK
        # heartbeats go on while Spark starts (the slow part), so a short
        # nimbus.task.timeout.secs never mistakes a starting worker for a dead one
        beats = PeriodicThread("worker-heartbeat", _heartbeat_interval(context),
                               self._heartbeat_round, first_now=False)
        self._beats = beats
        beats.start()
        try:
            # a topology virtualenv (built here first if need be): main() runs us again in it
            self.reexec = worker_virtualenv(context, self.virtualenvs_dir, self.code_dir)
            if self.reexec is not None:
                self.stop.set()
                beats.stop(5)
                return EXIT_OK
            self._start_runner(context)
        except Exception as exc:  # noqa: BLE001 - reported to Nimbus, then we exit failed
            self.stop.set()
            beats.stop(5)
            self._start_failed(exc)
            return EXIT_FAILED
        for signum in (signal.SIGTERM, signal.SIGINT):  # after Spark, which sets its own
            signal.signal(signum, lambda *_: self.stop.set())
        while not self.stop.wait(0.2):
            if self.runner.stopped.is_set():
                break
        self.stop.set()
        beats.stop(5)
        return self._shutdown()

    def _start_runner(self, context: dict[str, Any]) -> None:
        from sparkstorm.cluster.worker.executor_host import ExecutorHostRunner
        from sparkstorm.engine import TopologyDriver  # starts the JVM: import late
        from sparkstorm.topology.spec import TopologySpec

        spec = TopologySpec.from_dict(context["spec"])
        conf = with_host_settings(with_code_resources(dict(context["conf"]), self.code_dir))
        for folder in reversed(conf.get("topology.code.python.paths") or []):
            sys.path.insert(0, str(self.code_dir / str(folder)))  # a project's src/, ...
        if not conf.get("topology.executor.log.dir"):  # executor logs next to worker.log
            conf["topology.executor.log.dir"] = os.getcwd()
        if self.local_dir is not None:  # Spark's scratch files go with the worker's folder
            conf.setdefault("spark.local.dir", str(self.local_dir / "spark-local"))
        # Spark's UI listens on every interface without authentication, and has kill links:
        # off in workers unless the topology or the cluster's conf turns it on
        conf.setdefault("spark.ui.enabled", False)
        if files_from_env(os.environ) is not None:  # a TLS cluster: Spark's network too
            from sparkstorm.config import load_config

            conf.update(cluster_worker_settings(conf, load_config()))  # this host's secret
        hosted = _hosted_gids(spec, conf, context.get("executors"))
        token = context.get("token") or None
        runner: Any
        self.executor_host = not context.get("driver", True)
        if not self.executor_host:
            # checkpoints under the topology's id: a restarted worker resumes from them
            runner = TopologyDriver(context["topology_name"], spec, conf, self.topology_id,
                                    hosted=hosted, token=token)
        else:  # the driver runs in another worker; this one hosts some executors
            checkpoints = checkpoint_every(conf) > 0
            runner = ExecutorHostRunner(context["topology_name"], spec, conf, hosted or set(),
                                        str(token), self.topology_id if checkpoints else None)
        self._starting = runner
        if hasattr(runner, "heartbeat_now") and self._beats is not None:  # see engine.plan.regroup
            runner.heartbeat_now = self._beats.wake
        runner.set_active(self.active)
        runner.start()
        with self._lock:
            self.runner = runner
            runner.set_active(self.active)  # an order may have come while Spark started
        logger.info("worker %s runs topology %s", self.worker_id, self.topology_id)
        role = "executor host" if self.executor_host else "driver"
        self._log("info", f"running ({role}): Spark {runner.spark_ui_url or '(UI off)'}, "
                          f"{len(runner.pool.sockets)} executors")

    def _start_failed(self, failure: Exception) -> None:
        """Tell Nimbus the topology could not start here.

        The error goes under its component (``COMPONENT_CLASS_NOT_FOUND``, a failing
        ``prepare``...) and a last heartbeat carries ``start_failure``, which Nimbus keeps
        (the topology shows ``workerStatus`` FAILING) until a later start runs windows.
        """
        # our errors say it all (an executor's start failure carries the executor's log);
        # the worker's own stack only helps with anything else
        text = shorten_error_text(str(failure) if isinstance(failure, SparkstormError)
                                  else "".join(traceback.format_exception(failure)))
        component = _failed_component(str(failure), self._starting)
        logger.error("worker %s cannot start topology %s (component %s): %s", self.worker_id,
                     self.topology_id, component, failure)
        failed = {"component": component, "code": getattr(failure, "code", None)
                  or type(failure).__name__, "error": text, "time_secs": time.time()}
        body = {"topology_id": self.topology_id, "time_secs": time.time(),
                "uptime_secs": time.monotonic() - self.started,
                "stats": {"start_failure": failed}}
        self._local_heartbeat(body)
        try:
            self.client.report_error(self.worker_id, {
                "topology_id": self.topology_id, "component": component, "error": text,
                "time_secs": failed["time_secs"]})
            self.client.heartbeat(self.worker_id, body)
        except NimbusError as exc:
            logger.warning("start failure not delivered to nimbus: %s", exc)

    def _log(self, level: str, message: str) -> None:
        """A message for Nimbus's log (Apex's ``log``); never fatal when Nimbus is away."""
        try:
            self.client.log(self.worker_id, {"topology_id": self.topology_id, "level": level,
                                             "message": message})
        except NimbusError as exc:
            logger.warning("log message not delivered to nimbus: %s", exc)

    def _heartbeat_round(self) -> None:
        """One heartbeat, and what its answer orders.

        The main loop stops the timer once :attr:`stop` is set.
        """
        if self.stop.is_set():
            return
        self._obey(self._beat())

    def _obey(self, orders: dict[str, Any]) -> None:
        """Do what a heartbeat answer orders."""
        if orders.get("shutdown"):
            logger.info("nimbus says shut down")
            self.stop.set()
            return
        if orders.get("stack_trace"):
            threading.Thread(target=self._send_stack_traces, name="stack-traces",
                             daemon=True).start()
        if orders.get("send_logs"):  # someone reads these logs in the UI now
            self._send_log_tails(list(orders["send_logs"]))
        endpoints = orders.get("endpoints")
        runner = self.runner or self._starting  # a starting driver waits for them
        if isinstance(endpoints, dict) and hasattr(runner, "set_remote_endpoints"):
            runner.set_remote_endpoints(remote_endpoints(endpoints), endpoint_tags(endpoints))
        counts = orders.get("executor_counts")
        if isinstance(counts, dict):
            self._follow_counts(counts, orders.get("executors"))
        if isinstance(orders.get("driver_plan"), dict):
            self._follow_driver_plan(orders["driver_plan"], orders.get("executors"))
        if isinstance(orders.get("executors"), list) and not _counts_differ(runner, counts):
            self._follow_assignment(orders["executors"])
        if isinstance(orders.get("log_control"), dict):
            self._log_control(orders["log_control"])
        if "active" in orders:
            with self._lock:
                self.active = bool(orders["active"])
                if self.runner is not None:
                    self.runner.set_active(self.active)

    def _follow_counts(self, counts: dict[str, Any], executors: Any) -> None:
        """Take new executor counts in place (``rebalance -e``) when the driver runs here.

        The driver applies them between windows (``engine.plan.regroup``), hosting the
        executors of ``executors`` (this slot's in the assignment); the other workers
        follow the driver (:meth:`_follow_driver_plan`). A worker without the driver
        ignores this.
        """
        runner = self.runner
        if runner is None or not hasattr(runner, "replan"):
            return
        current = executor_counts(runner.plan)
        wanted = {str(k): v for k, v in counts.items() if current.get(str(k)) != v}
        if not wanted or runner.replan_pending:
            return
        try:
            runner.replan(wanted, executors if isinstance(executors, list) else None)
        except EngineError as exc:
            logger.warning("ignoring executor counts %s: %s", counts, exc)
            return
        logger.info("new executor counts %s: the driver regroups its executors in place",
                    wanted)

    def _follow_driver_plan(self, driver_plan: dict[str, Any], executors: Any) -> None:
        """Regroup this worker's executors as the driver did (``rebalance -e``).

        ``driver_plan`` is what the driver's latest heartbeat said it runs
        (``executor_counts``); the driver switches between windows and then waits for
        this worker's endpoints under the new plan (``engine.plan.regroup``).
        """
        runner = self.runner
        counts = driver_plan.get("executor_counts")
        if runner is None or not hasattr(runner, "follow_driver_plan") or not isinstance(
                counts, dict) or not _counts_differ(runner, counts):
            return
        if runner.follow_driver_plan(counts, executors):
            logger.info("followed the driver to executor counts %s", counts)
            if self._beats is not None:  # the driver waits for these endpoints
                self._beats.wake()

    def _follow_assignment(self, executors: list[Any]) -> None:
        """Host the executors Nimbus's assignment gives this worker's slot now.

        A rebalance that keeps this worker may move executors to or from it (Storm's
        rebalance): the runner starts the new ones and stops the ones that left, and the
        others, spouts included, go on. Not while new executor counts are on their way
        (``_counts_differ``): those regroup the executors first (:meth:`_follow_counts`,
        :meth:`_follow_driver_plan`).
        """
        runner = self.runner
        if runner is None or not hasattr(runner, "rehost") or getattr(
                runner, "replan_pending", False):
            return  # the executor list follows the new counts once they are taken
        try:
            wanted = {(int(first), int(last)) for first, last in executors}
        except (TypeError, ValueError):
            logger.warning("ignoring a malformed executor list: %r", executors)
            return
        hosted = {e.gid for e in runner.plan.executors
                  if (min(e.tasks), max(e.tasks)) in wanted}
        if len(hosted) != len(wanted):
            logger.warning("executors %s are not in this worker's plan; ignored",
                           sorted(wanted))
            return
        if hosted != set(runner.pool.sockets):
            logger.info("the assignment moved executors: this worker hosts %s now (ran %s)",
                        sorted(hosted), sorted(runner.pool.sockets))
            runner.rehost(hosted)

    def _beat(self) -> dict[str, Any]:
        runner = self.runner
        stats: dict[str, Any] = {}
        if runner is not None:
            stats = runner.stats.summary()
            stats["spark_ui_url"] = runner.spark_ui_url
            stats["resources"] = self.resources.sample(os.getpid(), runner.pool.pids())
            # where this worker's executors answer, for the driver (through Nimbus)
            stats["endpoints"] = {str(gid): where for gid, where in
                                  runner.pool.hosted_endpoints().items()}
            # what the driver runs, relayed to the other workers (engine.plan.regroup)
            stats["executor_counts"] = executor_counts(runner.plan)
            stats["plan_tag"] = plan_tag(runner.plan)
            stats["serving"] = self.executor_host
            stats, trimmed = bound_stats(stats, self.heartbeat_max_bytes)
            self._trims.note(self.worker_id, self.heartbeat_max_bytes, trimmed)
        elif getattr(self._starting, "plan", None) is not None:
            # a driver starting after a rebalance -e waits for the other workers to
            # follow its plan (engine.plan.regroup): they learn it from this heartbeat
            stats = {"executor_counts": executor_counts(self._starting.plan),
                     "plan_tag": plan_tag(self._starting.plan)}
        body = {"topology_id": self.topology_id, "time_secs": time.time(),
                "uptime_secs": time.monotonic() - self.started, "stats": stats}
        starting = self._starting
        # the runner's temporary folder, for the supervisor to remove should we be SIGKILLed
        workdir = {"workdir": str(starting.workdir)} if starting is not None else {}
        self._local_heartbeat({**body, **workdir})
        try:
            orders = self.client.heartbeat(self.worker_id, body)
        except NimbusError as exc:
            logger.warning("heartbeat not delivered (%s); going on", exc)
            return {}
        if runner is not None:
            self._report_errors(runner.reported_errors)
        return orders

    def _send_stack_traces(self) -> None:
        """Answer Nimbus's stack trace request with this worker's and its executors'."""
        runner = self.runner
        try:
            stacks = runner.stack_traces() if runner is not None else "(starting)"
            self.client.report_stack_traces(self.worker_id, {"topology_id": self.topology_id,
                                                             "stacks": stacks})
        except NimbusError as exc:
            logger.warning("stack traces not delivered: %s", exc)

    def _log_control(self, control: dict[str, Any]) -> None:
        """Apply Nimbus's log levels here and pass them on to the executors.

        With each component's debug sampling, again at every heartbeat while any is set, so
        that a restarted executor gets them too.
        """
        levels = {str(k): str(v) for k, v in (control.get("levels") or {}).items()}
        sampling = {str(k): float(v) for k, v in (control.get("sampling") or {}).items()}
        self.log_levels.apply(levels)
        runner = self.runner
        if runner is None or (not levels and not sampling and
                              self._log_control_sent == (levels, sampling)):
            return
        self._log_control_sent = (levels, sampling)
        # topology.debug (submit -d) samples every tuple until the UI's Debug says otherwise
        default = 100.0 if conf_bool(getattr(runner, "conf", {}), "topology.debug") else 0.0
        for executor in self._controlled(runner):
            pct = sampling.get(executor.component, sampling.get("*", default))
            try:
                runner.pool.log_control(executor.gid, levels, pct)
            except (OSError, KeyError) as exc:  # restarting: it starts with the setting
                logger.info("log control not delivered to executor %s: %s", executor.gid, exc)

    def _controlled(self, runner: Any) -> list[Any]:
        """The executors whose log levels and sampling this worker sets: its own."""
        return _hosted(runner)

    def _send_log_tails(self, wanted: list[str]) -> None:
        """Send the tails of the logs Nimbus asked for, with the list of every log."""
        runner = self.runner
        executors = {} if runner is None else {
            e.gid: (e.component, runner.pool.log_path(e.gid)) for e in _hosted(runner)}
        sources = log_sources(self.local_dir, executors)
        body = {"topology_id": self.topology_id,
                "sources": {name: label for name, (label, _) in sources.items()},
                "tails": {name: tail(sources[name][1]) for name in wanted if name in sources}}
        try:
            self.client.report_log_tails(self.worker_id, body)
        except NimbusError as exc:
            logger.warning("log tails not delivered: %s", exc)

    def _report_errors(self, errors: Any) -> None:
        """Send the components' new errors to Nimbus.

        Its error store feeds the UI's last error and error lists; what cannot be sent waits for the
        next heartbeat.
        """
        while errors:
            error = errors[0]
            try:
                self.client.report_error(self.worker_id, {
                    "topology_id": self.topology_id, "component": error["component"],
                    "error": shorten_error_text(str(error["error"])),
                    "time_secs": error.get("time")})
            except NimbusError as exc:
                logger.warning("component error not delivered (%s); will retry", exc)
                return
            errors.popleft()

    def _local_heartbeat(self, body: dict[str, Any]) -> None:
        """Write the heartbeat to ``heartbeat.json`` in the worker's folder too.

        Storm's local worker heartbeat: the supervisor and people read it even when Nimbus is down.
        """
        if self.local_dir is None:
            return
        path = self.local_dir / LOCAL_HEARTBEAT
        staging = path.with_name(f".{LOCAL_HEARTBEAT}.tmp")
        try:
            staging.write_text(json.dumps({"worker_id": self.worker_id, **body}, default=str))
            os.replace(staging, path)
        except OSError as exc:
            logger.warning("cannot write the local heartbeat %s: %s", path, exc)

    def _shutdown(self) -> int:
        self._log("info", "shutting down")
        self.runner.stop(shutdown_bound(self.runner.conf))  # the supervisor waits as long
        failure = self.runner.failure
        if failure is None:
            return EXIT_OK
        text = shorten_error_text("".join(traceback.format_exception(failure)))
        try:
            self.client.report_error(self.worker_id, {"topology_id": self.topology_id,
                                                      "component": "__worker", "error": text})
        except NimbusError as exc:
            logger.warning("could not report the failure to nimbus: %s", exc)
        return EXIT_FAILED


HOST_KEYS = ("storm.local.hostname",)
"""Keys that describe a host, not a topology: a worker takes them from its own host's conf
(its supervisor's ``SPARKSTORM_CONF_FILE`` and environment), never from the submitter's."""


def with_host_settings(conf: dict[str, Any],
                       local: dict[str, object] | None = None) -> dict[str, Any]:
    """The topology's conf with this host's :data:`HOST_KEYS` (``local``: this host's conf).

    A submitter's ``storm.local.hostname`` names the submitter's host: executors of a worker
    on another host could not listen there. Unset on this host, the key is dropped, and
    executors advertise what :func:`~sparkstorm.engine.wire.endpoint.advertised_host` finds.
    """
    if local is None:
        from sparkstorm.config import load_config

        local = load_config()
    found = dict(conf)
    for key in HOST_KEYS:
        value = local.get(key)
        if value is None:
            found.pop(key, None)
        else:
            found[key] = value
    return found


def _hosted(runner: Any) -> list[Any]:
    """The plan's executors this worker's pool runs."""
    return [e for e in runner.plan.executors if e.gid in runner.pool.sockets]


def _hosted_gids(spec: Any, conf: dict[str, Any], executors: Any) -> set[int] | None:
    """The gids of the executors Nimbus assigned to this worker's slot.

    Nimbus names them by executor id (first and last task); None when the context does not
    say (all of them).
    """
    if not isinstance(executors, list):
        return None
    from sparkstorm.engine import ExecutionPlan

    wanted = {(int(first), int(last)) for first, last in executors}
    return {e.gid for e in ExecutionPlan(spec, conf).executors
            if (min(e.tasks), max(e.tasks)) in wanted}


def remote_endpoints(reported: dict[str, Any]) -> dict[int, tuple[Any, int]]:
    """The heartbeat answer's ``endpoints`` as the driver takes them.

    They arrive as ``{gid: [path, host, port, pid]}``.
    """
    from sparkstorm.engine import Endpoint

    found = {}
    for gid, where in reported.items():
        try:
            path, host, port, pid = where[:4]
            found[int(gid)] = (Endpoint(str(path), str(host), int(port)), int(pid))
        except (TypeError, ValueError):
            logger.warning("ignoring a malformed endpoint of executor %s: %r", gid, where)
    return found


TAG_INDEX = 4
"""Where the plan tag is in a reported endpoint (``[path, host, port, pid, tag]``)."""


def endpoint_tags(reported: dict[str, Any]) -> dict[int, str]:
    """The plan tag of each endpoint in the heartbeat answer's ``endpoints`` (5th item).

    Endpoints of a worker that has not followed a ``rebalance -e`` yet carry the old plan's
    tag, which the driver's pool does not take (``ExecutorPool.set_remote``).
    """
    tags = {}
    for gid, where in reported.items():
        if isinstance(where, list) and len(where) > TAG_INDEX:
            with contextlib.suppress(TypeError, ValueError):
                tags[int(gid)] = str(where[TAG_INDEX])
    return tags


def _counts_differ(runner: Any, counts: Any) -> bool:
    """Whether executor ``counts`` (Nimbus's, or the driver's) are not what ``runner`` runs."""
    if runner is None or not isinstance(counts, dict):
        return False
    current = executor_counts(runner.plan)
    return any(current.get(str(name)) != count for name, count in counts.items())


def _heartbeat_interval(context: dict[str, Any]) -> float:
    """The heartbeat period of the init context, at least 0.1 s.

    The topology's ``worker.heartbeat.frequency.secs``, as the umbilical sends it; a configured 0
    must not flood Nimbus.
    """
    return max(0.1, float(context["heartbeat_interval_secs"]))


def shutdown_bound(conf: dict[str, Any]) -> float:
    """Seconds a stopping worker takes at most.

    Draining in-flight trees (``topology.shutdown.timeout.secs``), then stopping executors
    and Spark (``worker.shutdown.close.secs``). Its supervisor waits that long (plus
    ``supervisor.worker.shutdown.sleep.secs``) before SIGKILL, so the worker's own clean-up
    runs to its end.
    """
    return (conf_float(conf, "topology.shutdown.timeout.secs")
            + conf_float(conf, "worker.shutdown.close.secs"))


def _failed_component(message: str, runner: Any) -> str:
    """The component an executor start failure names, else ``__worker``.

    The failure names it as ``component 'split' task 3 ...`` (the component raised) or
    ``executor 3 ('split') ...`` (its process died); ``__worker`` when Spark or the plan
    failed, not one component.
    """
    plan = getattr(runner, "plan", None)
    for executor in plan.executors if plan is not None else ():
        if (f"component {executor.component!r} " in message
                or f"executor {executor.gid} ({executor.component!r})" in message):
            return str(executor.component)
    return "__worker"


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run the worker, return its exit code."""
    parser = argparse.ArgumentParser(prog="python -m sparkstorm.cluster.worker")
    parser.add_argument("--nimbus", required=True, help="Nimbus's base URL")
    parser.add_argument("--worker-id", required=True)
    parser.add_argument("--topology-id", required=True)
    parser.add_argument("--code-dir", required=True, type=Path)
    parser.add_argument("--virtualenvs-dir", type=Path, default=None,
                        help="where topology virtualenvs are built on this host")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per heartbeat otherwise
    tls = files_from_env(os.environ)  # the supervisor's, when its Nimbus speaks https
    client = NimbusClient(args.nimbus, os.environ.get(TOKEN_ENV) or None,
                          verify=client_context(tls) if tls else True)
    worker = ClusterWorker(client, args.worker_id, args.topology_id, args.code_dir,
                           Path.cwd(), args.virtualenvs_dir)
    try:
        code = worker.run()
    finally:
        client.close()
        if "pyspark" in sys.modules:  # exit only once Spark's JVM is gone
            from sparkstorm.engine import stop_spark_jvm

            stop_spark_jvm()
    if worker.reexec is not None:
        exec_worker(worker.reexec, sys.argv[1:] if argv is None else argv)
    return code
