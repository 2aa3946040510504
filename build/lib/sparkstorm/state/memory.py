"""The default state: a dict kept in the task's memory and saved in the checkpoints.

Storm's ``InMemoryKeyValueState``, made durable by the checkpoint store.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sparkstorm.state.base import KeyValueState, StateProvider, check_prepared


class InMemoryKeyValueState(KeyValueState):
    """A dict with Storm's commit and rollback.

    Example:
        >>> state = InMemoryKeyValueState("count-3")
        >>> state.put("storm", 2); state.prepare_commit(1); state.commit(1)
        >>> state.put("storm", 5); state.rollback(); state.get("storm")
        2
    """

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.data: dict[Any, Any] = {}
        self.prepared: tuple[int, dict[Any, Any]] | None = None
        self.committed: dict[Any, Any] = {}
        self.committed_txid: int | None = None

    def put(self, key: Any, value: Any) -> None:
        """Set ``key`` to ``value`` in the live dict."""
        self.data[key] = value

    def get(self, key: Any, default: Any = None) -> Any:
        """The live value of ``key``, or ``default``."""
        return self.data.get(key, default)

    def delete(self, key: Any) -> Any:
        """Remove ``key`` from the live dict; return its value (None when it had none)."""
        return self.data.pop(key, None)

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return iter(list(self.data.items()))

    def __len__(self) -> int:
        return len(self.data)

    def prepare_commit(self, txid: int) -> None:
        """Keep a copy of the live dict as transaction ``txid``."""
        self.prepared = (txid, dict(self.data))

    def commit(self, txid: int) -> None:
        """Make the prepared copy of ``txid`` the committed one.

        Raises:
            StateError: ``STATE_NOT_PREPARED`` when ``txid`` was not prepared.
        """
        check_prepared(self.prepared[0] if self.prepared else None, txid, self.namespace)
        assert self.prepared is not None
        self.committed, self.committed_txid = self.prepared[1], txid
        self.prepared = None

    def rollback(self) -> None:
        """Go back to a copy of the committed dict, dropping any prepared one."""
        self.data, self.prepared = dict(self.committed), None

    def snapshot(self) -> dict[Any, Any]:
        """The prepared contents (the live contents when nothing is prepared)."""
        return self.prepared[1] if self.prepared else dict(self.data)

    def restore(self, snapshot: Any, committed_txid: int | None) -> None:
        """Start again from the checkpoint's ``snapshot`` as the committed dict."""
        self.committed = dict(snapshot or {})
        self.committed_txid = committed_txid
        self.data, self.prepared = dict(self.committed), None


class InMemoryStateProvider(StateProvider):
    """``topology.state.provider: memory``: states live in the tasks and their checkpoints."""

    def new_state(self, namespace: str) -> KeyValueState:
        """An empty :class:`InMemoryKeyValueState` for ``namespace``."""
        return InMemoryKeyValueState(namespace)
