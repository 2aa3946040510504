"""Storm's windowed bolts (``BaseWindowedBolt``): see :mod:`.bolt` and :mod:`.options`."""

from sparkstorm.topology.windowed_bolts.bolt import TupleWindow, WindowedBolt
from sparkstorm.topology.windowed_bolts.manager import WindowManager
from sparkstorm.topology.windowed_bolts.options import Count, Duration, WindowOptions, window_conf

__all__ = ["Count", "Duration", "TupleWindow", "WindowManager", "WindowOptions", "WindowedBolt",
           "window_conf"]
