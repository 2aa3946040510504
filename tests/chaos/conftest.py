"""Fixtures of the chaos suite: the cluster suite's report hook (logs of a failed run)."""

from tests.integration.cluster.conftest import pytest_runtest_makereport  # noqa: F401
