"""An executor's part of a checkpoint: its tasks' snapshots and the spout trees it owns.

At a checkpoint window the executor takes its part at the window's cut (a spout when it
hands over its buffer, a bolt once its input is processed), under its lock: the generic
instance states are pickled there, a stateful bolt's state is only copied
(``prepare_commit``). Pickling that copy and writing the part happen in
:class:`PartWriter`'s background thread, so a large state does not stall windows
(``benchmarks/checkpoint_state.py``: pickling 1M keys takes about 0.4 s, a dict copy 0.06 s).
The parts written are reported with the next window's meta; the driver commits the
checkpoint once every executor's part and its own are durable.

Spout trees in flight are kept with their age, not their emit time, so that a restored
spout times them out as it would have (the clock of another process or host differs).
Under checkpoint reliability a spout has no trees; its part keeps the message ids its
windows up to the cut took and it has not acked yet, a list per task (a restore from the
checkpoint acks them): a dictionary entry and a tuple per id were half of what the part
cost the spout (``benchmarks/RESULTS.md``, "checkpoint reliability: in-flight bounds, emits
routed as they come, lean parts").

Example:
    >>> part = ExecutorPart({3: b"task 3"}, {3: {77: ("id-1", 1.5, "default")}}, {4: [8, 9]})
    >>> ExecutorPart.decode(part.encode()) == part
    True
"""

from __future__ import annotations

import logging
import queue
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sparkstorm.checkpoint import CheckpointError, CheckpointStore, PartInfo
from sparkstorm.checkpoint.versioned import dump_versioned, load_any_version

logger = logging.getLogger(__name__)

PART_FORMAT = 2
"""Format 2 added :attr:`ExecutorPart.handed`; format 1 parts (without it) still read."""
PART_FIELDS = {2: 3, 1: 2}


def part_name(gid: int) -> str:
    """The name of executor ``gid``'s part in a checkpoint folder."""
    return f"executor-{gid}"


@dataclass(frozen=True)
class ExecutorPart:
    """One executor's part of a checkpoint.

    Attributes:
        tasks: task id -> its snapshot (``checkpoint.task_snapshot``).
        pending: spout task -> root id -> (message id, age in seconds, stream).
        handed: under checkpoint reliability, spout task -> the message ids of its tuples
            that windows up to the cut took and that it has not acked yet.
    """

    tasks: dict[int, bytes] = field(default_factory=dict)
    pending: dict[int, dict[int, tuple[Any, float, str]]] = field(default_factory=dict)
    handed: dict[int, list[Any]] = field(default_factory=dict)

    def encode(self) -> bytes:
        """The bytes written to the checkpoint."""
        return dump_versioned(PART_FORMAT, self.tasks, self.pending, self.handed)

    @classmethod
    def decode(cls, blob: bytes) -> ExecutorPart:
        """Inverse of :meth:`encode`.

        Raises:
            CheckpointError: ``CHECKPOINT_CORRUPT`` for bytes of another kind.
        """
        _, fields = load_any_version(blob, PART_FIELDS, "an executor's checkpoint part")
        return cls(*fields)


@dataclass(frozen=True)
class RestorePoint:
    """What a (re)built executor starts from: the committed window and its part there."""

    window: int
    part: ExecutorPart


PartBuilder = Callable[[], ExecutorPart]
"""Finishes a part taken at the cut (pickles stateful bolts' state copies)."""


class PartWriter:
    """Builds and writes an executor's parts in one background thread, in window order.

    Args:
        open_store: opens the topology's checkpoint store (called once, in the thread).
        gid: the executor.
    """

    def __init__(self, open_store: Callable[[], CheckpointStore], gid: int) -> None:
        self._open_store = open_store
        self._store: CheckpointStore | None = None
        self.gid = gid
        self._queue: queue.Queue[tuple[int, PartBuilder] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._written: list[tuple[int, PartInfo]] = []
        self._errors: list[str] = []
        self._thread = threading.Thread(target=self._run, name="checkpoint-writer",
                                        daemon=True)
        self._thread.start()

    def submit(self, window: int, build: PartBuilder) -> None:
        """Queue the part of checkpoint ``window``."""
        self._queue.put((window, build))

    def take_written(self) -> list[tuple[int, PartInfo]]:
        """Parts durable since the last call: (window, what was written)."""
        with self._lock:
            written, self._written = self._written, []
        return written

    def take_errors(self) -> list[str]:
        """Why parts could not be written since the last call (a message per part)."""
        with self._lock:
            errors, self._errors = self._errors, []
        return errors

    def store(self) -> CheckpointStore:
        """The checkpoint store (opened on first use)."""
        if self._store is None:
            self._store = self._open_store()
        return self._store

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued (up to ``timeout``), then stop the thread."""
        self._queue.put(None)
        self._thread.join(timeout)

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            window, build = item
            try:
                info = self.store().write_part(window, part_name(self.gid), build().encode())
            except CheckpointError as exc:
                self._error(window, str(exc))
            except Exception as exc:  # noqa: BLE001 - reported as the component's error
                self._error(window, "".join(traceback.format_exception(exc)))
            else:
                with self._lock:
                    self._written.append((window, info))

    def _error(self, window: int, text: str) -> None:
        logger.error("executor %d: checkpoint %d not written: %s", self.gid, window, text)
        with self._lock:
            self._errors.append(text)
