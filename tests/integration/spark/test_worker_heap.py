"""Spark's Python workers freeze their heap once they run a stage (``engine.spark.worker_heap``).

Real local Spark: the function runs in PySpark's own (daemon-forked, reused) workers. That
the driver process is not frozen is a unit test (``tests/unit/engine/test_worker_heap.py``).
"""

from __future__ import annotations

from typing import Any


def _worker_state(_: Any) -> list[tuple[bool, bool]]:
    import gc

    import sparkstorm.engine.spark.stage  # noqa: F401 - imported by every stage function
    from sparkstorm.engine.spark.worker_heap import in_spark_worker

    return [(in_spark_worker(), gc.get_freeze_count() > 0)]


def test_a_worker_that_imported_the_stages_has_frozen_its_heap(spark: Any) -> None:
    states = spark.sparkContext.parallelize(range(4), 4).mapPartitions(_worker_state).collect()
    assert states == [(True, True)] * 4

