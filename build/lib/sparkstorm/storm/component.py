"""streamparse's ``streamparse.storm.component``."""

from sparkstorm.topology.component import Component
from sparkstorm.topology.tuple import Tuple

__all__ = ["Component", "Tuple"]
