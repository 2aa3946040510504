"""A topology as a Spark application: what ``spark-submit`` runs.

``spark-submit [Spark options] <sparkstorm/spark_app/__main__.py> FILE [options]`` runs the
topology FILE (a Python topology file, a Storm Flux ``.yaml`` file, or nothing in a
streamparse project's root, as ``sparkstorm run``) with the application's driver as the
topology's driver (window loop, acker) and its executor processes hosted by the
application's own Spark executors (:mod:`sparkstorm.spark_app.hosting`), or by the driver
itself with ``topology.executor.hosting: driver``. No Nimbus, supervisor or ZooKeeper
takes part: the driver serves the topology's REST API and web UI itself
(:mod:`sparkstorm.spark_app.control`). ``sparkstorm spark-submit`` builds, prints and runs
that command line.

It runs until SIGTERM or SIGINT (to the Python driver, or to the driver's JVM, whose
shutdown hook waits for it: ``spark-submit``'s process, ``yarn application -kill``, a
deleted Kubernetes pod), ``--time`` seconds, or a failure; then it drains as
``sparkstorm kill -w`` does: spouts deactivated, in-flight trees finish or time out
(``topology.shutdown.timeout.secs``), a last checkpoint is committed where checkpoints are
on, every share stops its executor processes, Spark stops. With ``topology.checkpoint.id``
the checkpoints are kept under that name, and an application started again with it
resumes from the last one. Exit code 0 after a drain, 1 when the topology failed, 2 for a
bad topology or conf.
"""

from __future__ import annotations

import argparse
import logging
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparkstorm.cli.run import progress_line
from sparkstorm.cli.target import Target, add_target_arguments, resolve_target
from sparkstorm.config import (
    conf_float,
    conf_optional_str,
    load_config,
    parse_cli_overrides,
)
from sparkstorm.config.reliability import checkpoint_every
from sparkstorm.errors import SparkstormError, TopologyError
from sparkstorm.spark_app.control import AppControl, app_host, remote_nimbus
from sparkstorm.topology.validate import (
    validate_topology,
    validate_topology_name,
    validate_windowed_bolts,
)

logger = logging.getLogger("sparkstorm.spark_app")

HOSTING_KEY = "topology.executor.hosting"
STOP_SLACK_SECS = 30.0
"""What the JVM's shutdown hook waits beyond the drain's own bounds."""
HOOK_ANSWER_SECS = 5.0
"""How long the Python driver waits, at its end, for the JVM's hook to have its answer."""


def build_parser() -> argparse.ArgumentParser:
    """The application's arguments (after spark-submit's own)."""
    parser = argparse.ArgumentParser(
        prog="spark-submit ... sparkstorm/spark_app/__main__.py",
        description="Run a sparkstorm topology as this Spark application.")
    add_target_arguments(parser)
    parser.add_argument("--code", metavar="ZIP",
                        help="file name of the topology's code zip shipped with --py-files: "
                             "the hosting tasks unpack it and import the components from it")
    parser.add_argument("-t", "--time", type=float, default=None,
                        help="drain and stop after this many seconds (default: at SIGTERM)")
    parser.add_argument("--status-secs", type=float, default=10.0,
                        help="seconds between two progress lines in the driver's log")
    parser.add_argument("--path", action="store_true",
                        help="print the path of the file spark-submit runs, and exit")
    return parser


@dataclass
class Stopping:
    """Why and when the application stops: a signal, the JVM's shutdown, ``--time``."""

    requested: threading.Event
    drained: threading.Event
    hook_returned: threading.Event = field(default_factory=threading.Event)
    """Set when the JVM's shutdown hook, if it ran, has its answer: the Python driver
    exits only then, or py4j's callback would lose its reply (a warning in the JVM)."""
    reason: str = ""
    failure: BaseException | None = None
    """What failed, when the topology stopped because something did."""

    def request(self, reason: str) -> None:
        """Ask the main thread to drain (from a signal handler or the JVM's hook)."""
        if not self.requested.is_set():
            self.reason = reason
            self.requested.set()


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run, turn our errors into a message and exit code 2."""
    args = build_parser().parse_args(argv)
    if args.path:
        print(Path(__file__).with_name("__main__.py"))
        return 0
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per heartbeat otherwise
    try:
        return run(args)
    except SparkstormError as exc:
        logger.error("%s", exc)
        return 2


def load_target(args: argparse.Namespace) -> tuple[Target, Path | None]:
    """The topology ``args`` name, from the shipped code when it is not here.

    In a cluster deploy mode (YARN, Kubernetes) the driver runs on a cluster machine: FILE
    (or the project) is then looked up in the code zip (``--code``), unpacked into a
    folder of its own, which the caller removes at the end (returned with the target).

    Raises:
        TopologyError: what ``sparkstorm run`` raises for a topology it cannot load.
    """
    import os

    from sparkstorm.spark_app.share import find_code, unpack_code

    local = Path(args.file).exists() if args.file else (Path.cwd() / "config.json").exists()
    folder = None
    if not local and args.code:
        found = find_code(args.code)
        if found is not None:
            folder, _ = unpack_code(found, {})
            if args.file:
                args.file = str(folder / args.file)
            else:
                os.chdir(folder)
    try:
        return resolve_target(args, submitting=args.code is not None), folder
    except BaseException:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise


def run(args: argparse.Namespace) -> int:
    """Run the topology until asked to stop; drain; 0, or 1 when it failed."""
    from sparkstorm.engine import TopologyDriver

    cli_conf = parse_cli_overrides(args.config)
    load_config(cli=cli_conf)  # bad values fail before anything is imported or started
    # the engine (PySpark, numpy) is imported before the topology: its folders go first on
    # sys.path, and a module of theirs named like one of the standard library's (a
    # streamparse topology file numbers.py) must not take that one's place
    del TopologyDriver  # imported for that alone
    target, unpacked = load_target(args)
    try:
        return _run_target(args, target, cli_conf)
    finally:
        if unpacked is not None:
            shutil.rmtree(unpacked, ignore_errors=True)


def _run_target(args: argparse.Namespace, target: Target, cli_conf: dict[str, Any]) -> int:
    from sparkstorm.engine import on_jvm_shutdown, submitted_spark

    for warning in target.warnings:
        logger.warning("%s", warning)
    name = target.name
    validate_topology_name(name)
    validate_topology(target.spec, topology_name=name)
    conf = load_config(cli=cli_conf, topology={**target.spec.config, "topology.name": name})
    validate_windowed_bolts(target.spec, conf)
    hosting = str(conf.get(HOSTING_KEY) or "spark")
    if hosting == "supervisor":
        msg = (f"{HOSTING_KEY} is 'supervisor', but a topology deployed with spark-submit "
               "has no supervisors: use 'spark' (its Spark executors host the executor "
               "processes) or 'driver', or deploy with sparkstorm submit to a Nimbus")
        raise TopologyError(msg, code="HOSTING_NEEDS_SUPERVISORS")
    spark = submitted_spark(conf, f"sparkstorm-{name}")
    stopping = Stopping(threading.Event(), threading.Event())
    bound = (conf_float(conf, "topology.shutdown.timeout.secs")
             + conf_float(conf, "topology.executor.hosting.timeout.secs") + STOP_SLACK_SECS)

    def on_shutdown() -> None:  # the JVM's hook thread: drain, then let Spark stop
        hooked.set()
        stopping.request("the driver's JVM is shutting down (SIGTERM or a kill)")
        stopping.drained.wait(bound)
        stopping.hook_returned.set()

    hooked = threading.Event()

    hook = on_jvm_shutdown(spark.sparkContext, on_shutdown, bound)
    remote = remote_nimbus(cli_conf, target.spec.config, conf)
    try:
        return _run(args, target, conf, spark, hosting, stopping, remote)
    finally:
        hook.remove()
        try:  # before the JVM's hook returns: Spark's own hook then finds it stopped
            spark.stop()
        except Exception as exc:  # noqa: BLE001 - a JVM that is going away: nothing to do
            logger.warning("Spark did not stop cleanly: %s", exc)
        stopping.drained.set()
        if hooked.is_set():
            stopping.hook_returned.wait(HOOK_ANSWER_SECS)


def _run(args: argparse.Namespace, target: Target, conf: dict[str, Any], spark: Any,
         hosting_kind: str, stopping: Stopping, remote: dict[str, Any] | None) -> int:
    """Serve the control plane (:mod:`.control`) around the topology's run; remove its folder."""
    sc = spark.sparkContext
    conf["spark.master"] = str(sc.master)
    conf["spark.driver.host"] = str(sc.getConf().get("spark.driver.host", "127.0.0.1"))
    folder = Path(tempfile.mkdtemp(prefix=f"sparkstorm-app-{target.name}-"))
    control = AppControl(target.name, conf, folder,
                         app_host(conf, {"spark.master": str(sc.master),
                                         "spark.driver.host": conf["spark.driver.host"]}),
                         remote)
    try:
        where = control.start()
        logger.info("topology %s: REST API %s, UI %s, token %s", target.name, where.rest_url,
                    where.ui_url or "(off)", where.token_file or "storm.cluster.token")
        topology_id = control.register(target.spec.to_dict(), {
            "spark_ui_url": sc.uiWebUrl or "", "spark_app_id": sc.applicationId})
        material = ", the TLS material: -c storm.tls.dir=..." if where.rest_url.startswith(
            "https:") else ""
        logger.info("operate it with: sparkstorm list --nimbus %s (the token: "
                    "-c storm.cluster.token=...%s); its id is %s", where.rest_url, material,
                    topology_id)
        return _run_topology(args, target, conf, spark, hosting_kind, stopping, control)
    finally:
        control.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _run_topology(args: argparse.Namespace, target: Target, conf: dict[str, Any], spark: Any,
                  hosting_kind: str, stopping: Stopping, control: AppControl) -> int:
    from sparkstorm.engine import TopologyDriver
    from sparkstorm.spark_app.hosting import DriverSide, SparkHosting

    sc = spark.sparkContext
    name, spec = target.name, target.spec
    token = secrets.token_hex(16)
    spark_hosted = hosting_kind == "spark"
    # checkpoints under topology.checkpoint.id are kept: a restart with it resumes
    driver = TopologyDriver(name, spec, conf, conf_optional_str(conf, "topology.checkpoint.id"),
                            hosted=set() if spark_hosted else None, token=token)
    driver.final_checkpoint = True
    control.starting(driver)
    checkpoints = checkpoint_every(conf) > 0
    told = DriverSide(driver.set_remote_endpoints, plan=lambda: driver.plan,
                      on_share_lost=driver.cancel_windows_in_flight)
    hosting = SparkHosting(name, spec, conf, token, told, code=args.code,
                           checkpoint_id=driver.checkpoint_id if checkpoints else None,
                           ) if spark_hosted else None
    for signum in (signal.SIGTERM, signal.SIGINT):  # after Spark's own (PySpark's SIGINT)
        signal.signal(signum, lambda n, _: stopping.request(f"signal {signal.Signals(n).name}"))
    logger.info("topology %s (%s) on %s, executors hosted by %s; Spark UI %s", name,
                target.label, sc.master, hosting_kind, sc.uiWebUrl)
    started = time.monotonic()
    try:
        if hosting is not None:
            hosting.start(spark)
            driver.reserved_slots = hosting.reserved_slots
            hosting.wait_reported(conf_float(conf, "topology.executor.start.timeout.secs")
                                  + conf_float(conf, "topology.executor.hosting.wait.secs"),
                                  stopping.requested)
        driver.start(spark)
        control.running(driver)
        _watch(args, driver, hosting, stopping, started, control)
    except SparkstormError as exc:
        if not stopping.requested.is_set():
            control.start_failed(exc)
            raise
        logger.warning("topology %s: stopped while starting (%s)", name, stopping.reason)
    finally:
        logger.info("topology %s: draining (%s): spouts deactivated, in-flight trees finish "
                    "or time out", name, stopping.reason or "failure")
        driver.stop(conf_float(conf, "topology.shutdown.timeout.secs") + STOP_SLACK_SECS)
        if hosting is not None:
            hosting.stop(conf_float(conf, "topology.executor.hosting.timeout.secs"))
    summary = driver.stats.summary()
    logger.info("topology %s: stopped after %.1f s: %s", name, time.monotonic() - started,
                progress_line(summary, time.monotonic() - started))
    failure = driver.failure or stopping.failure
    if failure is not None:
        logger.error("topology %s failed: %s", name, failure)
        return 1
    return 0


def _watch(args: argparse.Namespace, driver: Any, hosting: Any, stopping: Stopping,
           started: float, control: AppControl) -> None:
    """Log progress until a stop is requested, ``--time`` passed or something failed."""
    last = time.monotonic()
    while not stopping.requested.wait(0.25):
        elapsed = time.monotonic() - started
        if control.killed:
            stopping.request("killed through the REST API")
            return
        failure = driver.failure or (hosting.failure if hosting is not None else None)
        if failure is not None:
            stopping.failure = failure
            stopping.request("failure")
            return
        if args.time is not None and elapsed >= args.time:
            stopping.request(f"--time {args.time:g}")
            return
        if time.monotonic() - last >= args.status_secs:
            last = time.monotonic()
            logger.info("%s", progress_line(driver.stats.summary(), elapsed))


__all__ = ["build_parser", "main", "run"]
