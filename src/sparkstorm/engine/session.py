"""The SparkSession a worker runs its windows on."""

from __future__ import annotations

import os
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
