"""The driver's part of a checkpoint when windows overlap: what rode past the window's cut.

A checkpoint taken at window ``w``'s cut keeps what no executor had heard by that cut: the
verdicts and the cycle deliveries the driver still holds when ``w`` ends, and, when the
next window started before ``w`` ended (``engine.driver.scheduling``), what that window
carried to its executors, since they hear it after the cut. Restored by a rollback to
``w``, all of it goes out again with the first window after the rollback; without the
carried part a rollback would lose verdicts (a spout's tuple neither acked nor failed)
and rows on a cycle.

Example:
    >>> from sparkstorm.engine.driver.acker import Acker, Verdicts
    >>> carried = CarriedAhead()
    >>> carried.carried(8, Verdicts(ack={1: [42]}), {3: [b"row"]})  # window 8 started
    >>> state = carried.state_at_cut(7, Acker([], 30.0), Verdicts(ack={1: [43]}), {})
    >>> dict(state.verdicts.ack), state.deliveries
    ({1: [42, 43]}, {3: [b'row']})
    >>> carried.ended(8)
    >>> carried.state_at_cut(8, Acker([], 30.0), Verdicts(), {}).deliveries
    {}
"""

from __future__ import annotations

from sparkstorm.engine.driver.acker import Acker, Verdicts
from sparkstorm.engine.driver.checkpoint_coordinator import EngineState


class CarriedAhead:
    """The verdicts and deliveries each window in flight carried, until it ends."""

    def __init__(self) -> None:
        self._by_window: dict[int, tuple[Verdicts, dict[int, list[bytes]]]] = {}

    def carried(self, window: int, verdicts: Verdicts,
                deliveries: dict[int, list[bytes]]) -> None:
        """``window``'s requests carry ``verdicts`` and ``deliveries`` (executor -> rows)."""
        if verdicts.ack or verdicts.fail or verdicts.reset or deliveries:
            self._by_window[window] = (verdicts, deliveries)

    def ended(self, window: int) -> None:
        """``window`` was absorbed (or failed): its executors heard what it carried."""
        self._by_window.pop(window, None)

    def clear(self) -> None:
        """A rollback: the windows in flight were cancelled, their carriage restored."""
        self._by_window.clear()

    def state_at_cut(self, window: int, acker: Acker, verdicts: Verdicts,
                     deliveries: dict[int, list[bytes]]) -> EngineState:
        """The driver's part of checkpoint ``window``, taken when ``window`` ends.

        ``acker``'s ledger, and what no executor had heard at the cut: what later windows
        carried first, then what the driver holds (``verdicts`` and ``deliveries``).
        """
        later = sorted(w for w in self._by_window if w > window)
        if not later:  # windows one at a time, or the next one carried nothing
            return EngineState.of(acker, verdicts, deliveries)
        unheard, rows = Verdicts(), dict[int, list[bytes]]()
        for more_verdicts, more_rows in [*(self._by_window[w] for w in later),
                                         (verdicts, deliveries)]:
            unheard.merge(more_verdicts)
            for gid, blobs in more_rows.items():
                rows.setdefault(gid, []).extend(blobs)
        return EngineState.of(acker, unheard, rows)


__all__ = ["CarriedAhead"]
