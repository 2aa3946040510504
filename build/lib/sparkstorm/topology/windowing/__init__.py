"""Storm's windowed bolts (``BaseWindowedBolt``): see :mod:`.bolt` and :mod:`.options`."""

from sparkstorm.topology.windowing.bolt import TupleWindow, WindowedBolt
from sparkstorm.topology.windowing.manager import WindowManager
from sparkstorm.topology.windowing.options import Count, Duration, WindowOptions, window_conf

__all__ = ["Count", "Duration", "TupleWindow", "WindowManager", "WindowOptions", "WindowedBolt",
           "window_conf"]
