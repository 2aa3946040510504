"""streamparse's ``streamparse.spout``: the spout classes under streamparse's names."""

from sparkstorm.multilang.shell import ShellSpout
from sparkstorm.topology.batch_spout import BatchSpout
from sparkstorm.topology.component import Spout
from sparkstorm.topology.java import JavaSpout
from sparkstorm.topology.reliable_spout import ReliableSpout

__all__ = ["BatchSpout", "JavaSpout", "ReliableSpout", "ShellSpout", "Spout"]
