"""Storm's state API: ``KeyValueState`` and the providers that store it, behind one ABC.

A :class:`KeyValueState` follows Storm's ``State`` life cycle, driven by the checkpoints:
updates go to the live state; ``prepare_commit(txid)`` freezes them as transaction ``txid``;
``commit(txid)`` makes ``txid`` the state a rollback returns to; ``rollback()`` drops
everything after the last commit. A :class:`StateProvider` makes one state per task
(``topology.state.provider`` picks it: see :mod:`sparkstorm.state.providers`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any

from sparkstorm.errors import SparkstormError


class StateError(SparkstormError, RuntimeError):
    """A state backend cannot be reached or is used out of its life cycle."""


class KeyValueState(ABC):
    """Storm's ``KeyValueState``: a map that commits and rolls back with the checkpoints.

    Keys and values must pickle (values are copied into checkpoints or sent to Redis).
    Iterating yields ``(key, value)`` pairs, as Storm's iterator yields map entries.
    """

    @abstractmethod
    def put(self, key: Any, value: Any) -> None:
        """Set ``key`` to ``value``."""

    @abstractmethod
    def get(self, key: Any, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when it has none."""

    @abstractmethod
    def delete(self, key: Any) -> Any:
        """Remove ``key``; return its value (None when it had none)."""

    @abstractmethod
    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        """Every ``(key, value)`` pair of the live state."""

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, key: object) -> bool:
        marker = object()
        return self.get(key, marker) is not marker

    @abstractmethod
    def prepare_commit(self, txid: int) -> None:
        """Freeze the live state as transaction ``txid`` (Storm's ``prepareCommit``)."""

    @abstractmethod
    def commit(self, txid: int) -> None:
        """Make the prepared transaction ``txid`` the state rollbacks return to.

        Raises:
            StateError: ``STATE_NOT_PREPARED`` when ``txid`` was not prepared.
        """

    @abstractmethod
    def rollback(self) -> None:
        """Return to the last committed transaction, dropping everything since."""

    def snapshot(self) -> Any:
        """What a checkpoint keeps of this state.

        The prepared contents for a state that lives in the checkpoint, None for one with its own
        store (Redis). Called after :meth:`prepare_commit`; the result must pickle.
        """
        return None

    def restore(self, snapshot: Any, committed_txid: int | None) -> None:
        """Come back after a restart at the committed checkpoint ``committed_txid``.

        Restore from ``snapshot`` (what :meth:`snapshot` returned then) or from the state's own
        store, completing or dropping a transaction left prepared by the crash.
        """
        return None


class StateProvider(ABC):
    """Makes the state of each task (Storm's ``StateProvider``)."""

    @abstractmethod
    def new_state(self, namespace: str) -> KeyValueState:
        """The state of ``namespace`` (Storm's ``<component>-<task>``)."""

    def close(self) -> None:
        """Release connections; called once when the executor shuts down."""
        return None


def check_prepared(prepared_txid: int | None, txid: int, where: str) -> None:
    """Refuse to commit a transaction that was not prepared.

    Raises:
        StateError: ``STATE_NOT_PREPARED``.
    """
    if prepared_txid != txid:
        msg = (
            f"state {where!r}: commit({txid}) without prepare_commit({txid}) (prepared: "
            f"{prepared_txid!r}); the checkpoint protocol prepares a transaction before "
            "committing it"
        )
        raise StateError(msg, code="STATE_NOT_PREPARED")
