"""streamparse's ``streamparse.dsl.stream``."""

from sparkstorm.topology.grouping import Grouping
from sparkstorm.topology.stream import Stream

__all__ = ["Grouping", "Stream"]
