"""streamparse's ``streamparse.dsl``: the topology DSL.

``Grouping``, ``Stream`` and ``Topology``, with the submodules ``stream`` and ``topology``.
"""

from sparkstorm.topology.grouping import Grouping
from sparkstorm.topology.stream import Stream
from sparkstorm.topology.topology import Topology

__all__ = ["Grouping", "Stream", "Topology"]
