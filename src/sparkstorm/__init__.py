"""sparkstorm: Storm's programming model (spouts, bolts, groupings, acking) on Apache Spark."""

import logging

from sparkstorm.topology import (
    BasicBolt,
    Bolt,
    Grouping,
    Spout,
    StatefulBolt,
    Stream,
    Topology,
    TopologySpec,
    Tuple,
    WindowedBolt,
)

logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = ["BasicBolt", "Bolt", "Grouping", "LocalCluster", "Spout", "StatefulBolt", "Stream",
           "Topology", "TopologySpec", "Tuple", "WindowedBolt"]


def __getattr__(name: str) -> object:
    # LocalCluster pulls in pyspark; executor processes import sparkstorm without it.
    if name == "LocalCluster":
        from sparkstorm.testing.local_cluster import LocalCluster

        return LocalCluster
    msg = f"module 'sparkstorm' has no attribute {name!r}"
    raise AttributeError(msg)
__version__ = "0.1.0"
