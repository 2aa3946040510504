"""Spark fixtures shared with tests/integration/spark; the multilang example on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.integration.spark.conftest import cluster, spark  # noqa: F401 - shared fixtures

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "multilang"
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration/multilang" in str(item.fspath):
            item.add_marker(pytest.mark.spark)
