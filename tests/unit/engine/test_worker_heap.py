"""Which processes freeze their heap (``engine.spark.worker_heap``).

The freeze itself is tested in a real Spark Python worker
(``tests/integration/spark/test_worker_heap.py``).
"""

from __future__ import annotations

import sys
import types

import pytest

from sparkstorm.engine.spark.worker_heap import freeze_spark_worker_heap, in_spark_worker


@pytest.mark.parametrize(("main", "expected"), [
    ("pyspark.daemon", True), ("pyspark.worker", True), ("sparkstorm.cli.main", False),
    (None, False)])
def test_spark_workers_are_told_by_their_main_module(
        monkeypatch: pytest.MonkeyPatch, main: str | None, expected: bool) -> None:
    module = types.ModuleType("__main__")
    module.__spec__ = (None if main is None  # type: ignore[assignment]
                       else types.SimpleNamespace(name=main))
    monkeypatch.setitem(sys.modules, "__main__", module)
    assert in_spark_worker() is expected


def test_pytest_is_not_frozen() -> None:
    assert freeze_spark_worker_heap() is False


def test_the_driver_process_is_not_frozen_by_importing_the_stages() -> None:
    import gc

    import sparkstorm.engine.spark.stage  # noqa: F401 - what every stage function imports

    assert not in_spark_worker()
    assert freeze_spark_worker_heap() is False
    assert gc.get_freeze_count() == 0
