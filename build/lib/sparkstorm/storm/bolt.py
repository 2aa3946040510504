"""streamparse's ``streamparse.storm.bolt``."""

from sparkstorm.bolt import (
    BasicBolt,
    BatchingBolt,
    Bolt,
    JavaBolt,
    ShellBolt,
    TicklessBatchingBolt,
)

__all__ = ["BasicBolt", "BatchingBolt", "Bolt", "JavaBolt", "ShellBolt", "TicklessBatchingBolt"]
