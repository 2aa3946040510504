"""pystorm's ``BatchingBolt`` and ``TicklessBatchingBolt``, in-process, on the public Bolt API.

Tuples are grouped by ``group_key(tup)`` as they arrive; ``process_batch(key, tups)`` is
called for every group, after which (``auto_ack``) every tuple of the group is acked. Emits
inside ``process_batch`` anchor to the group's tuples (``auto_anchor``). When
``process_batch`` raises (``auto_fail``), the tuples of every pending group are failed so
they replay at once, and the error stops the executor, which restarts, as pystorm's
process exits.

- ``BatchingBolt`` processes its batches on tick tuples: after more than
  ``ticks_between_batches`` ticks, as pystorm counts. Its ``.spec()`` sets
  ``topology.tick.tuple.freq.secs`` to 1 in the component's config unless that config sets
  it, so a batching bolt never waits forever for ticks nobody configured.
- ``TicklessBatchingBolt`` processes them every ``secs_between_batches`` seconds without
  ticks. pystorm runs a timer thread; here the executor's end-of-window hook checks the
  time, so batches are processed on the executor's own thread (never concurrently with
  ``process``), at the latest one streaming window (``topology.window.ms``) late.

``auto_ack``, ``auto_fail`` and ``auto_anchor`` keep pystorm's meaning for batches; the
engine itself sees them turned off (``batch_auto_*`` hold the user's values), because the
tuples are acked by the batch, not when ``process`` returns.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any, ClassVar

from sparkstorm.topology.component import Bolt
from sparkstorm.topology.spec import ComponentSpec
from sparkstorm.topology.tuple import Tuple

TICK_FREQ_KEY = "topology.tick.tuple.freq.secs"


def _move_auto_flags(cls: type) -> None:
    """Keep a subclass's ``auto_*`` as ``batch_auto_*`` and turn the engine's off.

    Batch tuples are acked, failed and anchored by the batch, not around ``process``.
    """
    for flag in ("auto_anchor", "auto_ack", "auto_fail"):
        if flag in cls.__dict__:
            setattr(cls, f"batch_{flag}", bool(cls.__dict__[flag]))
        setattr(cls, flag, False)


class BatchingBolt(Bolt):
    """Groups tuples between tick tuples and processes them in batches (pystorm's).

    Attributes:
        ticks_between_batches: batches are processed on the tick after this many ticks.
        exit_on_exception: kept for pystorm compatibility; an error always fails every
            pending batch here, because the executor restarts and would lose them.

    Example:
        >>> class WordCounter(BatchingBolt):
        ...     outputs = ["word", "count"]
        ...     def group_key(self, tup):
        ...         return tup.values[0]
        ...     def process_batch(self, key, tups):
        ...         self.emit([key, len(tups)])
        >>> WordCounter.auto_ack, WordCounter.batch_auto_ack
        (False, True)
    """

    auto_anchor: ClassVar[bool] = True
    auto_ack: ClassVar[bool] = True
    auto_fail: ClassVar[bool] = True
    batch_auto_anchor: ClassVar[bool] = True
    batch_auto_ack: ClassVar[bool] = True
    batch_auto_fail: ClassVar[bool] = True
    ticks_between_batches: ClassVar[int] = 1
    exit_on_exception: ClassVar[bool] = True
    uses_ticks: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _move_auto_flags(cls)

    @classmethod
    def spec(cls, name: str | None = None, inputs: Any = None, par: Any = None,
             num_tasks: int | None = None, config: dict[str, Any] | None = None,
             outputs: list[Any] | None = None) -> ComponentSpec:
        """As :meth:`Bolt.spec`, with tick tuples for a tick-driven bolt.

        A tick-driven bolt's config gets ``topology.tick.tuple.freq.secs: 1`` unless it sets the
        key.
        """
        spec = super().spec(name=name, inputs=inputs, par=par, num_tasks=num_tasks,
                            config=config, outputs=outputs)
        if cls.uses_ticks:
            spec.config.setdefault(TICK_FREQ_KEY, 1)
        return spec

    def __init__(self) -> None:
        super().__init__()
        self._batches: defaultdict[Any, list[Tuple]] = defaultdict(list)
        self._tick_counter = 0
        self._current_batch: list[Tuple] | None = None

    def group_key(self, tup: Tuple) -> Any:
        """The key ``tup`` is batched under (default None: one batch of everything)."""
        return None

    def process_batch(self, key: Any, tups: list[Tuple]) -> None:
        """Process one group of tuples; override this."""
        msg = f"{type(self).__name__} must implement process_batch(key, tups)"
        raise NotImplementedError(msg)

    def process(self, tup: Tuple) -> None:
        """Add ``tup`` to its group (do not override: override ``group_key``)."""
        self._batches[self.group_key(tup)].append(tup)

    def process_tick(self, tup: Tuple) -> None:
        """Ack and count the tick, and process the batches when due (do not override).

        The batches are due after more than ``ticks_between_batches`` ticks.
        """
        self.ack(tup)
        self._tick_counter += 1
        if self._tick_counter > self.ticks_between_batches and self._batches:
            self.process_batches()
            self._tick_counter = 0

    def emit(self, values: Any, stream: str | None = None, anchors: Any = None,
             direct_task: int | None = None, need_task_ids: bool = False) -> list[int] | None:
        """As :meth:`Bolt.emit`, anchored to the batch inside ``process_batch``.

        Inside ``process_batch`` the default anchors are the batch's tuples (``auto_anchor``).
        """
        if anchors is None and self._current_batch is not None:
            anchors = self._current_batch if self.batch_auto_anchor else []
        return super().emit(values, stream=stream, anchors=anchors, direct_task=direct_task,
                            need_task_ids=need_task_ids)

    def process_batches(self) -> None:
        """Call ``process_batch`` for every group, acking each after it (``auto_ack``)."""
        batches, self._batches = self._batches, defaultdict(list)
        try:
            for key in list(batches):
                batch = batches[key]
                self._current_batch = batch
                self.process_batch(key, batch)
                if self.batch_auto_ack:
                    for tup in batch:
                        self.ack(tup)
                del batches[key]
        except Exception as exc:
            if self.batch_auto_fail:
                reason = f"{type(exc).__name__} in process_batch: {exc}"
                for batch in (*batches.values(), *self._batches.values()):
                    for tup in batch:
                        self.fail(tup, reason)
                self._batches.clear()
            raise
        finally:
            self._current_batch = None


class TicklessBatchingBolt(BatchingBolt):
    """A ``BatchingBolt`` that processes its batches every ``secs_between_batches`` seconds.

    It does so instead of on ticks, as pystorm's does; tick tuples, if configured, are ignored.

    Attributes:
        secs_between_batches: seconds between batch runs (fractions allowed).
    """

    secs_between_batches: ClassVar[float] = 2
    uses_ticks: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        self._last_batch_time = time.monotonic()

    def process_tick(self, tup: Tuple) -> None:
        """Ticks are acked and ignored."""
        self.ack(tup)

    def end_window(self) -> None:
        """Called by the executor after each streaming window.

        Processes the batches when ``secs_between_batches`` passed since the last time.
        """
        now = time.monotonic()
        if now - self._last_batch_time >= self.secs_between_batches:
            self._last_batch_time = now
            if self._batches:
                self.process_batches()


_move_auto_flags(BatchingBolt)  # its own auto_* are the engine's: off
