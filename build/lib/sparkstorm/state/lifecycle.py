"""Drives one StatefulBolt task's state through Storm's protocol.

In the order Storm's ``StatefulBoltExecutor`` uses: the bolt's hook first, then the state.

The executor makes one :class:`StatefulTask` per stateful task, before the task's first
tuple, and calls :meth:`~StatefulTask.prepare` at each checkpoint, :meth:`~StatefulTask.commit`
once the checkpoint is committed and :meth:`~StatefulTask.rollback` on a rollback.

Example:
    >>> from sparkstorm.state.memory import InMemoryStateProvider
    >>> class Bolt:
    ...     calls = []
    ...     def init_state(self, state): self.state = state
    ...     def pre_prepare(self, txid): self.calls.append(("pre_prepare", txid))
    ...     def pre_commit(self, txid): self.calls.append(("pre_commit", txid))
    ...     def pre_rollback(self): self.calls.append(("pre_rollback",))
    >>> bolt = Bolt()
    >>> task = StatefulTask.start(bolt, InMemoryStateProvider(), "count-1")
    >>> bolt.state.put("a", 1); task.prepare(10)
    {'a': 1}
    >>> task.commit(10); bolt.state.put("a", 2); task.rollback(); bolt.state.get("a")
    1
    >>> bolt.calls
    [('pre_prepare', 10), ('pre_commit', 10), ('pre_rollback',)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sparkstorm.state.base import KeyValueState, StateProvider


@dataclass
class StatefulTask:
    """A stateful bolt task and its state."""

    bolt: Any
    state: KeyValueState

    @classmethod
    def start(cls, bolt: Any, provider: StateProvider, namespace: str,
              snapshot: Any = None, committed_txid: int | None = None) -> StatefulTask:
        """Give ``bolt`` its state (restored at ``committed_txid`` after a restart)."""
        state = provider.new_state(namespace)
        if committed_txid is not None:
            state.restore(snapshot, committed_txid)
        bolt.init_state(state)
        return cls(bolt, state)

    def prepare(self, txid: int) -> Any:
        """Checkpoint ``txid``: ``pre_prepare``, then freeze the state.

        Returns what the task's snapshot keeps of it.
        """
        self.bolt.pre_prepare(txid)
        self.state.prepare_commit(txid)
        return self.state.snapshot()

    def commit(self, txid: int) -> None:
        """Checkpoint ``txid`` is committed: ``pre_commit``, then make the state durable."""
        self.bolt.pre_commit(txid)
        self.state.commit(txid)

    def rollback(self) -> None:
        """``pre_rollback``, then return the state to its last commit."""
        self.bolt.pre_rollback()
        self.state.rollback()
