"""streamparse's ``streamparse.dsl.topology``."""

from sparkstorm.topology.topology import Topology, TopologyType

__all__ = ["Topology", "TopologyType"]
