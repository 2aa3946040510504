"""sparkstorm: Storm's programming model (spouts, bolts, groupings, acking) on Apache Spark."""

import logging

from sparkstorm.topology import (
    BasicBolt,
    Bolt,
    Grouping,
    Spout,
    Stream,
    Topology,
    TopologySpec,
    Tuple,
)

logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = ["BasicBolt", "Bolt", "Grouping", "Spout", "Stream", "Topology", "TopologySpec", "Tuple"]
__version__ = "0.1.0"
