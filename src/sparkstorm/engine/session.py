"""The SparkSession a worker runs its windows on."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from typing import Any

from pyspark import SparkConf
from pyspark.sql import SparkSession

from sparkstorm.config import spark_settings


def get_spark(conf: dict[str, Any], app_name: str) -> tuple[SparkSession, bool]:
    """The active SparkSession, or a new one from the ``spark.*`` keys of ``conf``.

    PySpark's Python workers must run the interpreter sparkstorm is installed in, so
    ``PYSPARK_PYTHON`` is set to it unless the user chose one.

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
    for key, value in spark_settings(conf).items():
        spark_conf.set(key, value)
    spark = SparkSession.builder.config(conf=spark_conf).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark, True


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
