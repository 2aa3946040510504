"""sparkstorm: Storm's programming model (spouts, bolts, groupings, acking) on Apache Spark."""

import logging

from sparkstorm.topology import (
    BasicBolt,
    BatchBolt,
    BatchSpout,
    Bolt,
    FailedException,
    Grouping,
    ReportedFailedException,
    Spout,
    StatefulBolt,
    Stream,
    Topology,
    TopologySpec,
    Tuple,
    WindowedBolt,
)

logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = ["BasicBolt", "BatchBolt", "BatchSpout", "BatchingBolt", "Bolt", "FailedException",
           "Grouping", "JavaBolt", "JavaSpout", "LocalCluster", "ReliableSpout",
           "ReportedFailedException", "ShellBolt", "ShellSpout", "Spout", "StatefulBolt",
           "Stream", "TicklessBatchingBolt", "Topology", "TopologySpec", "Tuple", "WindowedBolt"]

_LAZY = {
    # LocalCluster pulls in pyspark; executor processes import sparkstorm without it. The
    # others live in modules that import sparkstorm.topology, so they load on first use.
    "LocalCluster": "sparkstorm.testing.local_cluster",
    "ShellBolt": "sparkstorm.multilang.shell",
    "ShellSpout": "sparkstorm.multilang.shell",
    "BatchingBolt": "sparkstorm.topology.batching",
    "TicklessBatchingBolt": "sparkstorm.topology.batching",
    "ReliableSpout": "sparkstorm.topology.reliable_spout",
    "JavaBolt": "sparkstorm.topology.java",
    "JavaSpout": "sparkstorm.topology.java",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    msg = f"module 'sparkstorm' has no attribute {name!r}"
    raise AttributeError(msg)
__version__ = "0.1.0"
