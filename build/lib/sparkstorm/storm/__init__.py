"""streamparse's ``streamparse.storm``: every component class.

With the submodules ``bolt``, ``spout`` and ``component``.
"""

from sparkstorm.storm.bolt import (
    BasicBolt,
    BatchingBolt,
    Bolt,
    JavaBolt,
    ShellBolt,
    TicklessBatchingBolt,
)
from sparkstorm.storm.component import Component, Tuple
from sparkstorm.storm.spout import JavaSpout, ReliableSpout, ShellSpout, Spout

__all__ = ["BasicBolt", "BatchingBolt", "Bolt", "Component", "JavaBolt", "JavaSpout",
           "ReliableSpout", "ShellBolt", "ShellSpout", "Spout", "TicklessBatchingBolt",
           "Tuple"]
