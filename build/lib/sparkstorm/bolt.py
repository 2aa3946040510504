"""streamparse's ``streamparse.bolt``: the bolt classes under streamparse's names.

``from streamparse.bolt import Bolt`` becomes ``from sparkstorm.bolt import Bolt``.
"""

from sparkstorm.multilang.shell import ShellBolt
from sparkstorm.topology.batch_bolt import BatchBolt
from sparkstorm.topology.batching import BatchingBolt, TicklessBatchingBolt
from sparkstorm.topology.component import BasicBolt, Bolt
from sparkstorm.topology.java import JavaBolt

__all__ = ["BasicBolt", "BatchBolt", "BatchingBolt", "Bolt", "JavaBolt", "ShellBolt",
           "TicklessBatchingBolt"]
