"""The topology's driver: the window loop and what it composes (see ``loop``)."""

from sparkstorm.engine.driver.loop import TopologyDriver

__all__ = ["TopologyDriver"]
