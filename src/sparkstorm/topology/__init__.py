"""The user-facing topology API: components, streams, groupings, tuples and the DSL."""

from sparkstorm.topology.batch_bolt import BatchBolt, BatchSource
from sparkstorm.topology.batch_spout import BatchSpout
from sparkstorm.topology.component import BasicBolt, Bolt, Component, Spout
from sparkstorm.topology.failed import FailedException, ReportedFailedException
from sparkstorm.topology.grouping import Grouping
from sparkstorm.topology.spec import ComponentSpec, InputSpec, TopologySpec
from sparkstorm.topology.stateful import StatefulBolt
from sparkstorm.topology.stream import Stream
from sparkstorm.topology.topology import Topology
from sparkstorm.topology.tuple import Tuple
from sparkstorm.topology.windowed_bolts import Count, Duration, TupleWindow, WindowedBolt

__all__ = [
    "BasicBolt", "BatchBolt", "BatchSource", "BatchSpout", "Bolt", "Component", "ComponentSpec",
    "Count", "Duration", "FailedException", "Grouping", "InputSpec", "ReportedFailedException",
    "Spout", "StatefulBolt", "Stream", "Topology",
    "TopologySpec", "Tuple", "TupleWindow", "WindowedBolt",
]
