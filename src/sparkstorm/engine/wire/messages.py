"""The messages between the driver, the Spark stages and the executor processes, typed.

Each message is a small class with its wire form in this one module (as Storm has
``TupleInfo`` and ``AckObject``). Only per-window messages are objects: tuples themselves
travel as column batches (see ``engine.executor.collector.WindowOutput``) and are never wrapped.

- :class:`SpoutControl`: what a spout executor learns at the start of a window (the acker's
  verdicts for its tasks, whether to run, whether to fail everything in flight).
- :class:`WindowMeta`: what an executor reports at the end of a window besides its tuples
  (acker contributions, statistics, errors), read by the driver.
- :class:`~sparkstorm.engine.wire.failures.Failure`: why a tuple tree failed, from the failing
  executor to the spout.
- :class:`ComponentError`: one error of a component, as the UI shows it.

Wire forms are msgpack arrays in field order (both ends run the same code: an executor is
started from the driver's plan), so a message costs no key strings on the wire. A
``WindowMeta``'s per-root maps travel as packed arrays (``engine.wire.root_values``).

Example:
    >>> control = SpoutControl(ack=[7], fail=[9], fail_reasons={9: Failure("error", "boom")})
    >>> SpoutControl.from_wire(control.to_wire()) == control
    True
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sparkstorm.engine.wire.failures import Failure
from sparkstorm.engine.wire.frames import encodable_text, pack, unpack
from sparkstorm.engine.wire.root_values import RootValues
from sparkstorm.engine.wire.stats import ComponentCounters


@dataclass(frozen=True, slots=True)
class SpoutControl:
    """The driver's verdicts for one spout executor, applied at the start of a window.

    Attributes:
        ack: roots whose trees completed.
        fail: roots whose trees failed.
        fail_reasons: why each failed root failed (a root may lack one).
        reset: roots whose message timeout restarts now (``reset_timeout``).
        active: whether the spout tasks run (``activate``/``deactivate``).
        fail_all: fail every tree in flight (a window's job was lost).
        limit: tuples the executor may buffer for the next window (None:
            ``topology.spout.buffer.size``); set by the driver's
            ``engine.driver.window_sizer.WindowSizer``, at most ``topology.spout.buffer.max.size``.
        pending: un-acked tuples the executor may hold over all its tasks (None: only
            ``topology.max.spout.pending``); the sizer's Little's-law bound with
            ``topology.spout.pending.auto``.
        ended: under checkpoint reliability, the newest window that ended (None: none
            yet): the trees of its tuples, and of every window before it, are done, and
            they count in flight no more (``engine.executor.commit_acks``).
    """

    ack: list[int] = field(default_factory=list)
    fail: list[int] = field(default_factory=list)
    fail_reasons: dict[int, Failure] = field(default_factory=dict)
    reset: list[int] = field(default_factory=list)
    active: bool = True
    fail_all: bool = False
    limit: int | None = None
    pending: int | None = None
    ended: int | None = None

    def to_wire(self) -> list[Any]:
        """The msgpack-ready (and picklable) form."""
        return [self.ack, self.fail, self.fail_reasons, self.reset, self.active,
                self.fail_all, self.limit, self.pending, self.ended]

    @classmethod
    def from_wire(cls, data: list[Any]) -> SpoutControl:
        """Inverse of :meth:`to_wire` (after a msgpack round trip)."""
        ack, fail, reasons, reset, active, fail_all, limit, pending, ended = data
        return cls(ack, fail, {int(root): Failure(*why) for root, why in reasons.items()},
                   reset, bool(active), bool(fail_all), None if limit is None else int(limit),
                   None if pending is None else int(pending),
                   None if ended is None else int(ended))


@dataclass(frozen=True, slots=True)
class ComponentError:
    """One error of a component's task (``task`` is None for a start-up failure).

    Its wire form is a dict, the same one the driver hands to whoever reports errors
    (heartbeats, Nimbus, the UI) and writes for a failed start-up.
    """

    component: str
    task: int | None
    error: str
    time: float

    @classmethod
    def now(cls, component: str, task: int | None, text: str) -> ComponentError:
        """An error of ``task`` at the current time, its text made encodable."""
        return cls(component, task, encodable_text(text), time.time())

    def to_wire(self) -> dict[str, Any]:
        """``{"component", "task", "error", "time"}``."""
        return {"component": self.component, "task": self.task, "error": self.error,
                "time": self.time}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> ComponentError:
        """Inverse of :meth:`to_wire`."""
        task = data.get("task")
        return cls(str(data["component"]), None if task is None else int(task),
                   str(data["error"]), float(data.get("time") or 0.0))


@dataclass(frozen=True, slots=True)
class WindowMeta:
    """What one executor reports for one window besides its tuples.

    Attributes:
        gid: the executor.
        component: its component.
        xor: acker contributions, one XOR value per root (a dict where made, a packed
            :class:`~sparkstorm.engine.wire.root_values.RootValues` once decoded).
        inits: roots a spout task of this executor emitted, with that task (likewise).
        failed: failed roots and why.
        resets: roots whose timeout a bolt reset.
        stats: the window's counters (the errors count is the driver's to fill).
        errors: the tasks' errors of the window.
        lost: the executor did not answer (made by the Spark task that gave up on it,
            ``failed`` holding the roots of the input it never answered for).
        parts: checkpoint parts the executor wrote since its last window:
            (window, part name, size, SHA-256).
    """

    gid: int
    component: str
    xor: Mapping[int, int] = field(default_factory=dict)
    inits: Mapping[int, int] = field(default_factory=dict)
    failed: dict[int, Failure] = field(default_factory=dict)
    resets: list[int] = field(default_factory=list)
    stats: ComponentCounters = field(default_factory=ComponentCounters)
    errors: list[ComponentError] = field(default_factory=list)
    lost: bool = False
    parts: list[tuple[int, str, int, str]] = field(default_factory=list)

    def encode(self) -> bytes:
        """Serialize for the executor's reply (the driver decodes it; stages pass it on)."""
        return pack([self.gid, self.component, RootValues.of(self.xor).encode(),
                     RootValues.of(self.inits).encode(), self.failed,
                     self.resets, _counters_to_wire(self.stats),
                     [error.to_wire() for error in self.errors], self.lost,
                     [list(part) for part in self.parts]])

    @classmethod
    def decode(cls, blob: bytes) -> WindowMeta:
        """Inverse of :meth:`encode`."""
        gid, component, xor, inits, failed, resets, stats, errors, lost, parts = unpack(blob)
        return cls(gid, component, RootValues.decode(xor), RootValues.decode(inits),
                   {root: Failure(*why) for root, why in failed.items()}, resets,
                   _counters_from_wire(stats), [ComponentError.from_wire(e) for e in errors],
                   lost, [(int(w), str(n), int(size), str(sha)) for w, n, size, sha in parts])


_COUNTER_MAPS = ("emitted", "transferred", "executed", "acked", "failed", "execute_ms",
                 "process_ms", "complete_ms")


def _counters_to_wire(counters: ComponentCounters) -> list[Any]:
    """An executor's window counters: the keyed maps, then the scalars and the sample."""
    return [*(getattr(counters, name) for name in _COUNTER_MAPS), counters.busy_ms,
            counters.complete_count, counters.complete_total_ms, counters.complete_values,
            counters.timed_out, [[c, r, n] for (c, r), n in counters.fail_causes.items()],
            counters.buffered, counters.buffer_bound, counters.buffered_bytes,
            counters.metrics]


def _counters_from_wire(data: list[Any]) -> ComponentCounters:
    maps = dict(zip(_COUNTER_MAPS, data, strict=False))
    busy_ms, count, total, values, timed_out, causes, buffered, bound, buffered_bytes, \
        metrics = data[len(_COUNTER_MAPS):]
    return ComponentCounters(
        **maps, busy_ms=busy_ms, complete_count=count, complete_total_ms=total,
        complete_values=values, timed_out=timed_out,
        fail_causes={(cause, reason): n for cause, reason, n in causes},
        buffered=buffered, buffer_bound=bound, buffered_bytes=buffered_bytes, metrics=metrics)


__all__ = ["ComponentError", "Failure", "SpoutControl", "WindowMeta"]
