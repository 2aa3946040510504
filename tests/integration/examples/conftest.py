"""Examples are imported by module name from examples/, as ``sparkstorm run`` does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.integration.spark.conftest import cluster, spark  # noqa: F401 - shared fixtures

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.fixture(autouse=True)
def examples_first() -> None:
    """``examples/`` first on ``sys.path`` when a test imports an example by name.

    benchmarks/ (put on the path by the benchmarks' tests, whichever ran first) has modules
    of the same names (``wordcount``): one of those, imported or cached, is not the example.
    """
    if str(EXAMPLES) in sys.path:
        sys.path.remove(str(EXAMPLES))
    sys.path.insert(0, str(EXAMPLES))
    for name in ("wordcount", "exclamation"):
        module = sys.modules.get(name)
        origin = getattr(module, "__file__", None) or ""
        if module is not None and Path(origin).parent != EXAMPLES:
            del sys.modules[name]
