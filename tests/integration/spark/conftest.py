"""One Spark local session for all Spark tests, and a LocalCluster on it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from sparkstorm.engine.spark.session import engine_spark_defaults, overlap_master, stop_spark_jvm
from sparkstorm.testing import LocalCluster

TEST_CONF = {
    # as get_spark makes it for overlapping windows (the default): local[4]
    "spark.master": overlap_master("local[2]"),
    "spark.ui.enabled": False,
    "spark.ui.showConsoleProgress": False,
    "topology.window.ms": 100,
}


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    builder = SparkSession.builder.appName("sparkstorm-tests")
    # the JVM options a topology's own session gets (engine.spark.session)
    for key, value in (engine_spark_defaults() | TEST_CONF).items():
        if key.startswith("spark."):
            builder = builder.config(key, str(value).lower() if isinstance(value, bool)
                                     else str(value))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    stop_spark_jvm()  # and its JVM, which would otherwise outlive the test run a moment


@pytest.fixture
def cluster(spark: Any) -> Iterator[LocalCluster]:
    with LocalCluster(conf=dict(TEST_CONF), spark=spark) as local:
        yield local


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration/spark" in str(item.fspath):
            item.add_marker(pytest.mark.spark)
