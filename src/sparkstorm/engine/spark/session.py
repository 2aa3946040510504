"""The SparkSession a worker runs its windows on."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from typing import Any

from py4j.java_gateway import JavaClass, JavaMember, JVMView  # type: ignore[import-untyped]
from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from sparkstorm.config import conf_bool, spark_settings
from sparkstorm.engine.executor.process_memory import lean_malloc_environment
from sparkstorm.tls.spark_rpc import AUTHENTICATE, SECRET, needs_shared_secret, read_spark_secret

_LOCAL_MASTER = re.compile(r"local(?:\[(\*|\d+)(,\d+)?\])?")

DRIVER_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC"
"""The driver JVM's options unless ``spark.driver.extraJavaOptions`` is set.

A window job costs the JVM a fixed amount of scheduling and shuffle bookkeeping, and
little work per byte: our executors do the per-tuple work. Measured on the word count
(``benchmarks/RESULTS.md``, 2026-11-26), the C2 compiler was still compiling after
minutes of windows, about half the JVM's CPU, and G1's concurrent marking, started by the
windows' blobs (humongous objects to G1), another tenth. C1 alone compiles once and
quickly, and the parallel collector has no concurrent phase. In local mode the driver JVM
runs the tasks too; executor JVMs of a cluster keep Spark's defaults.
"""


DRIVER_MEMORY = "512m"
"""The driver JVM's heap unless ``spark.driver.memory`` is set (Spark's default: 1g).

With 1g the parallel collector grew its young generation to 315 MiB and the JVM to 665-847 MiB
of the batch word count's peak (``benchmarks/RESULTS.md``, 2026-11-26), though a window
job's live data is a few tens of MiB: the engine's jobs move blobs that die young. Half of it
bounds the JVM where it matters (one machine running the executors too).
"""


def get_spark(conf: dict[str, Any], app_name: str) -> tuple[SparkSession, bool]:
    """The active SparkSession, or a new one from the ``spark.*`` keys of ``conf``.

    PySpark's Python workers must run the interpreter sparkstorm is installed in, so
    ``PYSPARK_PYTHON`` is set to it unless the user chose one.

    With ``topology.window.overlap`` on, a ``local[N]`` master gets twice the task slots
    (:func:`overlap_master`).

    Returns:
        The session and whether we created it (then we stop it at shutdown).
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    spark_conf = SparkConf().setAppName(app_name)
    spark_conf.set("spark.ui.showConsoleProgress", "false")  # it would garble our progress
    settings = session_settings(conf)
    scratch = scratch_dir(settings)
    if scratch is not None:  # java.io.tmpdir must exist before the JVM starts
        os.makedirs(scratch, exist_ok=True)
    for key, value in settings.items():
        spark_conf.set(key, value)
    secret = shared_secret(conf, settings)
    if secret is not None:
        # PySpark launches the JVM with every setting on its command line, which any user
        # of the host can read (ps): launch it first, then give the secret to the
        # SparkContext over the gateway
        SparkContext._ensure_initialized(conf=spark_conf)
        spark_conf.set(SECRET, secret)
    spark = SparkSession.builder.config(conf=spark_conf).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark, True


def shared_secret(conf: dict[str, Any], settings: dict[str, str]) -> str | None:
    """The standalone master's shared secret a session of ``settings`` must be given.

    Only when ``spark.authenticate`` is on, the master is standalone (or local-cluster) and
    no ``spark.authenticate.secret`` is set: then it is read from the file
    ``storm.spark.secret.file`` names (:mod:`sparkstorm.tls.spark_rpc`).

    Raises:
        ConfigError: ``SPARK_SECRET_MISSING`` when that file is missing or empty.
    """
    if (settings.get(AUTHENTICATE, "false").lower() != "true" or SECRET in settings
            or not needs_shared_secret(settings.get("spark.master", ""))):
        return None
    return read_spark_secret(conf)


def submitted_spark(conf: dict[str, Any], app_name: str) -> SparkSession:
    """The SparkSession of an application started by ``spark-submit``.

    ``spark-submit``'s settings (its ``--master``, ``--conf``, the cluster manager's
    defaults) win: the topology's ``spark.*`` keys only fill in what it left unset, and the
    master is never changed (no ``local[*]`` default, no doubled local slots). Spark logs at
    WARN unless ``spark.log.level`` says otherwise. The session is the application's: it
    is stopped when the application ends.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if "PYSPARK_GATEWAY_PORT" in os.environ:
        # spark-submit's JVM runs already: connect to it first, or SparkConf() would be a
        # Python dict without spark-submit's settings (its --conf, spark-defaults.conf)
        SparkContext._ensure_initialized()
    spark_conf = SparkConf()  # spark-submit's settings, from the JVM's system properties
    spark_conf.setIfMissing("spark.app.name", app_name)
    spark_conf.set("spark.ui.showConsoleProgress", "false")
    # a window is a few jobs a second: Spark's INFO lines for each would bury the driver's
    # own (--conf spark.log.level=INFO brings them back)
    spark_conf.setIfMissing("spark.log.level", "WARN")
    for key, value in spark_settings(conf).items():
        if key != "spark.master":
            spark_conf.setIfMissing(key, value)
    # the driver's JVM runs already: the secret goes to the SparkContext, never on a command line
    secret = shared_secret(conf, {k: v for k, v in spark_conf.getAll()})
    if secret is not None:
        spark_conf.set(SECRET, secret)
    return SparkSession.builder.config(conf=spark_conf).getOrCreate()


class _CachedStatics(JavaClass):  # type: ignore[misc] # py4j is untyped
    """A py4j ``JavaClass`` that asks the JVM what each static method name is only once.

    py4j sends a reflection command (one round trip to the JVM) on every ``Class.method``
    attribute access before the call itself; PySpark's RDD building does that for each
    ``PythonRDD.valueOfPair``, ``PythonUtils.toSeq``... A static method stays a method, so
    the :class:`JavaMember` is kept; fields (their values may change) and nested classes
    are asked each time, as py4j does.
    """

    def __getattr__(self, name: str) -> Any:
        members = self.__dict__.setdefault("_sparkstorm_members", {})
        member = members.get(name)
        if member is None:
            member = super().__getattr__(name)
            if isinstance(member, JavaMember):
                members[name] = member
        return member


class CachedLookupJVMView(JVMView):  # type: ignore[misc] # py4j is untyped
    """PySpark's ``SparkContext._jvm``, remembering the classes its short names resolved to.

    ``sc._jvm.PythonRDD`` makes py4j's JVM try the name in every package PySpark imported
    (``java_import``) until one loads it: failed class loads through the jars, on every
    access. Building one window's RDD makes about forty such lookups (measured on the word
    count's 3-stage window: 26 ms for the RDD chain with them, 14 ms without;
    ``benchmarks/RESULTS.md``, 2026-11-26 "the fixed cost per window job"), on the window's
    critical path, in a JVM that runs the window's tasks on the same cores. Only names
    that resolved to a class are remembered: a name that did not (a package, or a class of
    a jar added later) is asked again, as py4j does.
    """

    def __getattr__(self, name: str) -> Any:
        classes = self.__dict__.setdefault("_sparkstorm_classes", {})
        found = classes.get(name)
        if found is None:
            found = super().__getattr__(name)
            if type(found) is JavaClass:
                cached = _CachedStatics.__new__(_CachedStatics)
                cached.__dict__.update(found.__dict__)
                classes[name] = found = cached
        return found


def cache_jvm_lookups() -> None:
    """Make PySpark's JVM view remember its class lookups (:class:`CachedLookupJVMView`).

    Called by the driver when it starts its windows, once its SparkContext exists; again is
    harmless (a view already caching, or no JVM, is left as it is). A later SparkContext
    with a new JVM sets a new, plain view.
    """
    view = SparkContext._jvm
    if view is None or isinstance(view, CachedLookupJVMView):
        return
    cached = CachedLookupJVMView.__new__(CachedLookupJVMView)
    cached.__dict__.update(view.__dict__)
    SparkContext._jvm = cached


def session_settings(conf: dict[str, Any]) -> dict[str, str]:
    """The Spark settings of a session made for ``conf``: its ``spark.*`` keys over ours.

    Example:
        >>> session_settings({"spark.master": "local[2]"})["spark.master"]
        'local[4]'
        >>> session_settings({"spark.driver.extraJavaOptions": "-Xss4m"})[
        ...     "spark.driver.extraJavaOptions"]
        '-Xss4m'
    """
    settings = engine_spark_defaults() | spark_settings(conf)
    if conf_bool(conf, "topology.window.overlap"):
        settings["spark.master"] = overlap_master(settings["spark.master"])
    scratch, options = scratch_dir(settings), settings["spark.driver.extraJavaOptions"]
    if scratch is not None and "-Djava.io.tmpdir=" not in options:
        # the JVM's own temporary files go with Spark's scratch files (a worker's folder)
        settings["spark.driver.extraJavaOptions"] = \
            f"{options} -Djava.io.tmpdir={scratch}".strip()
    return settings


def scratch_dir(settings: dict[str, str]) -> str | None:
    """``spark.local.dir``'s first folder, where the driver JVM's temporary files go too.

    Spark puts its scratch files under ``spark.local.dir``, but the JVM it launches also
    makes an empty ``spark-<uuid>`` folder in ``java.io.tmpdir`` (``/tmp``), removed only by
    its shutdown hook. A JVM that dies by SIGKILL (a worker killed with its process group)
    leaves it there; :func:`session_settings` points ``java.io.tmpdir`` at this folder (a
    worker's, see ``cluster.worker``), which goes with the worker's folder. None when
    ``spark.local.dir`` is not set.

    Example:
        >>> scratch_dir({"spark.local.dir": "/w/spark-local,/d2"})
        '/w/spark-local'
        >>> scratch_dir({}) is None
        True
    """
    return settings.get("spark.local.dir", "").split(",")[0].strip() or None


def engine_spark_defaults() -> dict[str, str]:
    """The Spark settings the engine chooses unless the topology's ``spark.*`` keys do.

    They take effect only when the JVM is launched by the session built from them: the driver
    JVM's options (:data:`DRIVER_JVM_OPTIONS`) and heap (:data:`DRIVER_MEMORY`), and the
    Python workers' malloc settings (``engine.executor.process_memory``).
    """
    workers = {f"spark.executorEnv.{key}": value
               for key, value in lean_malloc_environment().items()}
    return {"spark.driver.extraJavaOptions": DRIVER_JVM_OPTIONS,
            "spark.driver.memory": DRIVER_MEMORY, **workers}


def overlap_master(master: str) -> str:
    """A local ``master`` with twice its task slots; any other master unchanged.

    Our Spark tasks mostly wait for executor processes, and with overlapping windows the
    tasks of two windows hold slots at once: a task of window ``w+1`` waits until its
    executor has done window ``w``, so the slots must outnumber one stage's tasks or
    window ``w``'s task may find none free. Twice the cores keeps both windows running.

    Example:
        >>> overlap_master("local[2]"), overlap_master("local[3,4]"), overlap_master("yarn")
        ('local[4]', 'local[6,4]', 'yarn')
    """
    match = _LOCAL_MASTER.fullmatch(master)
    if match is None:
        return master
    slots, failures = match.group(1) or "1", match.group(2) or ""
    count = (os.cpu_count() or 1) if slots == "*" else int(slots)
    return f"local[{2 * count}{failures}]"


def stop_spark_jvm(timeout: float = 15.0) -> int | None:
    """Stop Spark if it runs, then end its JVM and wait until the process is gone.

    ``SparkSession.stop()`` leaves the JVM that PySpark launched running until the Python
    process exits (it watches its stdin and quits when that closes), so a command that
    returns right after ``stop()`` leaves a JVM behind for a moment. This closes the
    gateway and that stdin pipe and waits for the JVM (killed after ``timeout`` seconds).
    Call it at the end of a process's Spark use (a later session would launch a new JVM).

    Returns:
        The pid of the JVM waited for, or None when this process launched none.
    """
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        active.stop()
    gateway = SparkContext._gateway
    process = getattr(gateway, "proc", None)
    if gateway is not None:
        with contextlib.suppress(Exception):  # the JVM may be gone already
            gateway.shutdown()  # py4j's client side: connections and callback server
        SparkContext._gateway = None
        SparkContext._jvm = None
    if process is None:
        return None
    if process.stdin is not None:
        process.stdin.close()  # PySpark's launcher pipe: the JVM exits when it closes
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)
    return int(process.pid)
