"""pystorm's ``ReliableSpout``: failed tuples are replayed up to ``max_fails`` times.

Example:
    >>> class Numbers(ReliableSpout):
    ...     outputs = ["n"]
    >>> Numbers.max_fails
    3
"""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

from sparkstorm.errors import TopologyError
from sparkstorm.topology.component import Spout


class ReliableSpout(Spout):
    """A spout that remembers what it emitted and replays it on ``fail``.

    As pystorm's: ``emit`` needs a ``tup_id`` and keeps the tuple in ``unacked_tuples``;
    ``fail`` re-emits it with the same id while ``failed_tuples[tup_id] < max_fails`` and
    counts the replay, and otherwise logs and acks it (gives up); ``ack`` forgets it.
    Subclasses overriding ``ack``/``fail`` call ``super()`` to keep the bookkeeping.

    Attributes:
        max_fails: replays per tuple before it is given up (acked).
    """

    max_fails: ClassVar[int] = 3

    def __init__(self) -> None:
        super().__init__()
        self.failed_tuples: Counter[Any] = Counter()
        self.unacked_tuples: dict[Any, tuple[Any, str | None, int | None, bool]] = {}

    def ack(self, tup_id: Any) -> None:
        """Forget ``tup_id``: its tree completed."""
        self.failed_tuples.pop(tup_id, None)
        if self.unacked_tuples.pop(tup_id, None) is None:
            self.logger.error("Received ack for unknown tuple ID: %r", tup_id)

    def fail(self, tup_id: Any) -> None:
        """Replay ``tup_id`` unless it failed ``max_fails`` times already (then ack it)."""
        saved = self.unacked_tuples.get(tup_id)
        if saved is None:
            self.logger.error("Received fail for unknown tuple ID: %r", tup_id)
            return
        values, stream, direct_task, need_task_ids = saved
        if self.failed_tuples[tup_id] < self.max_fails:
            self.emit(values, tup_id=tup_id, stream=stream, direct_task=direct_task,
                      need_task_ids=need_task_ids)
            self.failed_tuples[tup_id] += 1
        else:
            self.logger.info("Acking tuple ID %r after it exceeded retry limit (%r)", tup_id,
                             self.max_fails)
            self.ack(tup_id)

    def emit(self, values: Any, tup_id: Any = None, stream: str | None = None,
             direct_task: int | None = None, need_task_ids: bool = False
             ) -> list[int] | None:
        """Emit and remember a tracked tuple.

        Raises:
            TopologyError: ``RELIABLE_SPOUT_WITHOUT_ID`` when ``tup_id`` is None.
        """
        if tup_id is None:
            msg = (f"{type(self).__name__}.emit({values!r}) has no tup_id; a ReliableSpout "
                   "replays failed tuples by id, so every emit needs one: "
                   "self.emit(values, tup_id=...)")
            raise TopologyError(msg, code="RELIABLE_SPOUT_WITHOUT_ID")
        self.unacked_tuples[tup_id] = (values, stream, direct_task, need_task_ids)
        return super().emit(values, tup_id=tup_id, stream=stream, direct_task=direct_task,
                            need_task_ids=need_task_ids)
