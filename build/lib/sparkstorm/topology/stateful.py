"""Storm's stateful bolts: ``StatefulBolt`` and its hooks (Storm's ``IStatefulBolt``).

The hooks are ``init_state``, ``pre_prepare``, ``pre_commit`` and ``pre_rollback``.

The engine gives each task a :class:`~sparkstorm.state.KeyValueState` from the configured
provider (``topology.state.provider``) before its first tuple, and drives it with the
checkpoints: at every checkpoint ``pre_prepare(txid)`` then the state's
``prepare_commit(txid)``; once the checkpoint is committed ``pre_commit(txid)`` then
``commit(txid)``; on a rollback ``pre_rollback()`` then ``rollback()``. Only what is in the
state survives a failure exactly once; keep every count there.

Example:
    >>> from sparkstorm.topology.tuple import Tuple
    >>> class WordCount(StatefulBolt):
    ...     outputs = ["word", "count"]
    ...     def init_state(self, state):
    ...         self.counts = state
    ...     def process(self, tup):
    ...         word = tup.values[0]
    ...         self.counts.put(word, self.counts.get(word, 0) + 1)
    >>> bolt = WordCount()  # the engine sets storm_conf and context; here: the defaults
    >>> bolt.process(Tuple(1, "split", "default", 2, ["storm"])); bolt.counts.get("storm")
    1
    >>> type(bolt.counts).__name__, bolt.start_state is not None
    ('InMemoryKeyValueState', True)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from sparkstorm.topology.component import Bolt

if TYPE_CHECKING:
    from sparkstorm.state.base import KeyValueState
    from sparkstorm.state.lifecycle import StatefulTask


class StatefulBolt(Bolt):
    """A bolt whose state commits and rolls back with the topology's checkpoints.

    The state is a :class:`~sparkstorm.state.KeyValueState` (see the module docstring).
    """

    stateful: ClassVar[bool] = True
    """Marks the class for the engine: its tasks get a state before their first tuple."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in ("process", "process_tick"):
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "_starts_state", False):
                setattr(cls, name, _starting_state(method))

    def start_state(self, snapshot: Any = None, committed_txid: int | None = None
                    ) -> StatefulTask:
        """Make this task's state and hand it to :meth:`init_state`.

        The state comes from ``topology.state.provider``, restored at ``committed_txid`` from
        ``snapshot``. Called once, before the first tuple; the namespace is Storm's
        ``<component>-<task>``.

        Raises:
            ConfigError: ``STATE_PROVIDER_UNKNOWN`` for an unknown provider.
        """
        from sparkstorm.state.lifecycle import StatefulTask
        from sparkstorm.state.providers import state_provider

        provider = self.__dict__.get("_state_provider") or state_provider(self.storm_conf)
        self._state_provider = provider
        namespace = f"{self.component_name}-{self.context.get('taskid', 0)}"
        task = StatefulTask.start(self, provider, namespace, snapshot, committed_txid)
        self._stateful_task: StatefulTask = task
        return task

    def close(self) -> None:
        """Release the state provider's connections (the executor calls it at shutdown)."""
        provider = self.__dict__.get("_state_provider")
        if provider is not None:
            provider.close()

    def init_state(self, state: KeyValueState) -> None:
        """Receive the task's state, once, after ``initialize`` and before any tuple.

        Called again after a rollback, with the restored state.
        """

    def pre_prepare(self, txid: int) -> None:
        """A checkpoint ``txid`` is about to freeze the state: flush what you buffer."""

    def pre_commit(self, txid: int) -> None:
        """Checkpoint ``txid`` is committed; its state is about to become durable."""

    def pre_rollback(self) -> None:
        """The topology rolls back: the state returns to the last committed checkpoint."""


def _starting_state(method: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
    """Wrap ``process``/``process_tick`` so the task's state exists before its first tuple."""

    @functools.wraps(method)
    def with_state(self: StatefulBolt, tup: Any) -> None:
        if "_stateful_task" not in self.__dict__:
            self.start_state()
        method(self, tup)

    with_state._starts_state = True  # type: ignore[attr-defined]
    return with_state
