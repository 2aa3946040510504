"""Harnesses we ship to users.

:class:`BoltHarness` and :class:`SpoutHarness` drive one component in this process (no Spark);
:class:`LocalCluster` runs whole topologies.
"""

from sparkstorm.testing.harness import BoltHarness, Emit, Fail, Result, SpoutHarness
from sparkstorm.testing.local_cluster import LocalCluster

__all__ = ["BoltHarness", "Emit", "Fail", "LocalCluster", "Result", "SpoutHarness"]
