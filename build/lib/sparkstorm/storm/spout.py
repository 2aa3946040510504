"""streamparse's ``streamparse.storm.spout``."""

from sparkstorm.spout import JavaSpout, ReliableSpout, ShellSpout, Spout

__all__ = ["JavaSpout", "ReliableSpout", "ShellSpout", "Spout"]
