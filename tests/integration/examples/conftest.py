"""Examples are imported by module name from examples/, as ``sparkstorm run`` does."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.integration.spark.conftest import cluster, spark  # noqa: F401 - shared fixtures

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))
