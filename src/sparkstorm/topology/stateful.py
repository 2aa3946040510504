"""Storm's stateful bolts: ``StatefulBolt`` with ``init_state``, ``pre_prepare``,
``pre_commit`` and ``pre_rollback`` (Storm's ``IStatefulBolt``).

The engine gives each task a :class:`~sparkstorm.state.KeyValueState` from the configured
provider (``topology.state.provider``) before its first tuple, and drives it with the
checkpoints: at every checkpoint ``pre_prepare(txid)`` then the state's
``prepare_commit(txid)``; once the checkpoint is committed ``pre_commit(txid)`` then
``commit(txid)``; on a rollback ``pre_rollback()`` then ``rollback()``. Only what is in the
state survives a failure exactly once; keep every count there.

Example:
    >>> from sparkstorm.state import InMemoryKeyValueState
    >>> from sparkstorm.topology.tuple import Tuple
    >>> class WordCount(StatefulBolt):
    ...     outputs = ["word", "count"]
    ...     def init_state(self, state):
    ...         self.counts = state
    ...     def process(self, tup):
    ...         word = tup.values[0]
    ...         self.counts.put(word, self.counts.get(word, 0) + 1)
    >>> bolt = WordCount()
    >>> bolt.init_state(InMemoryKeyValueState("count-1"))
    >>> bolt.process(Tuple(1, "split", "default", 2, ["storm"])); bolt.counts.get("storm")
    1
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from sparkstorm.topology.component import Bolt

if TYPE_CHECKING:
    from sparkstorm.state.base import KeyValueState


class StatefulBolt(Bolt):
    """A bolt whose state is a :class:`~sparkstorm.state.KeyValueState` that commits and
    rolls back with the topology's checkpoints (see the module docstring)."""

    stateful: ClassVar[bool] = True
    """Marks the class for the engine: its tasks get a state before their first tuple."""

    def init_state(self, state: KeyValueState) -> None:
        """Receive the task's state, once, after ``initialize`` and before any tuple (and
        again after a rollback, with the restored state)."""

    def pre_prepare(self, txid: int) -> None:
        """A checkpoint ``txid`` is about to freeze the state: flush what you buffer."""

    def pre_commit(self, txid: int) -> None:
        """Checkpoint ``txid`` is committed; its state is about to become durable."""

    def pre_rollback(self) -> None:
        """The topology rolls back: the state returns to the last committed checkpoint."""
