"""Window size that follows load: how many tuples each spout hands over, and how often.

A tuple waits about two window periods from its emit to its ack: up to one period in its
spout's buffer, then its window's job, then until the next window's spout stage brings the
acker's verdict back (latency p50 about 1.5 periods, p99 about 2). A fixed spout buffer of
20,000 tuples and a fixed minimum period make a saturated topology run 1 s jobs (p50 2.2 s on
the word-count benchmark) and an idle one wait the full minimum period (p50 about 0.75 s at
``topology.window.ms`` 500). With ``topology.window.target.latency.ms`` = T set, the driver
sizes windows instead:

- **Period.** A window starts ``min(topology.window.ms, T / 4)`` after the last at the
  earliest, so that at light load a tuple waits about 1.5 periods (p50 about 0.4 T, p99
  about T / 2; measured on the word-count benchmark at 20-40 % load: p50 430-509 ms against
  750 ms with fixed 500 ms windows). When a job takes longer than the period, the next
  starts when it ends, so the period grows with the load by itself (at 80 % of the maximum
  throughput it is set by the job time, not by T). T / 4 rather than shorter: every window
  costs a Spark job (0.2-0.3 s of fixed cost here) even when it carries nothing.
- **Limit.** Each spout executor buffers at most ``limit`` tuples before the next window (the
  spout stops producing at it, as at the buffer bound). After each window, per executor:
  if its buffer was full (it had to wait: demand exceeds the limit), the limit grows
  ``GROWTH`` (4) times, up to
  ``topology.spout.buffer.size`` (a saturated topology keeps its throughput: its windows grow
  to the bound, as without the controller); otherwise the limit becomes the larger of twice
  the smoothed number of tuples it handed over and its share of the tuples whose job fits
  T / 2 at the smoothed job seconds per tuple (and at least ``MIN_LIMIT``), and it falls by
  at most half per window; a window that carried nothing leaves it as it is. So a step up
  in load is followed within a few windows (1,000 to 20,000 in three), a step down slowly,
  and a burst after a quiet spell runs smaller windows first instead of one 20,000-tuple
  window. Before any window carried tuples the limit is the bound (``INITIAL_LIMIT``): a
  ramp from a small start leaves a backlog at high load that outlasts the ramp.
- **Overlap.** With overlapping windows (``topology.window.overlap``) the next window may
  start while this one's job still runs, but then this window's verdicts miss the next
  window and wait for the one after it, at least a period later. :meth:`overlap_wait` says
  when waiting for the running job is cheaper: when the smoothed job time says it ends
  within ``OVERLAP_WAIT_SHARE`` of a period (the next window's tuples wait that long more,
  the running window's tuples get their verdicts a period minus that sooner, and the two
  jobs do not share the cores). At high load jobs run for several periods and windows
  overlap as before; at moderate load (jobs a little longer than the period) they no
  longer overlap for a few milliseconds' gain in start time.

Stability: the per-tuple cost and the handed-over counts are exponentially smoothed
(``SMOOTHING``), each step is bounded (x4 up, /2 down), and the limit at steady load sits at
twice what a window carries, so it is not binding and does not feed back on itself.

``T = 0`` turns all of this off: every window may carry ``topology.spout.buffer.size`` tuples
and starts ``topology.window.ms`` after the last at the earliest (the fixed behaviour before
the controller).

Example:
    >>> sizer = WindowSizer(target_ms=1000, window_ms=500, buffer_bound=20_000, spouts=[0])
    >>> sizer.period_seconds, sizer.limit(0)  # nothing learnt yet: the bound
    (0.25, 20000)
    >>> sizer.observe(job_seconds=0.2, handed={0: 200})  # light load: falls by half
    >>> sizer.limit(0)
    10000
    >>> sizer.observe(job_seconds=0.3, handed={0: 10_000}, full={0})  # it waited: grows
    >>> sizer.limit(0)
    20000
    >>> sizer.overlap_wait(running_seconds=0.2)  # smoothed job 0.23 s: ends in 0.03 s
    0.03
    >>> WindowSizer(0, 500, 20_000, [0]).limit(0) is None  # off: the buffer bound rules
    True
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

SMOOTHING = 0.3
"""Weight of the newest window in the smoothed estimates (the rest is their history)."""

PERIOD_SHARE = 0.25
"""The period, as a share of the latency target (a tuple waits about 1.5 to 2 periods)."""

JOB_SHARE = 0.5
"""The job time a window's tuples may take, as a share of the latency target."""

GROWTH = 4
"""Factor the limit grows by after a window whose spout had to wait (measured: with 2, the
ramp from 1,000 left a backlog that made the 80 % load of the benchmark's curve run
windows of 18,600 sentences at p50 1.2 s against 15,400 at 0.96 s with fixed windows)."""

HEADROOM = 2.0
"""The limit at steady load, in tuples handed over per window: not binding, room to grow."""

INITIAL_LIMIT: int | None = None
"""Tuples a spout executor may buffer before the sizer has seen a window that carried some
(None: the buffer bound, as fixed windows). Starting at 1,000 and growing x4 per full
window, the ramp lagged three windows behind with overlapping windows (a window's control
sets the fill the window after it hands over, and the control of ``w+1`` leaves before
``w``'s result is in): in a word-count run offered 20,000 sentences/s from the start, three
windows in 1.5 s handed over 1,000 sentences each, leaving about 27,000 behind, which a
topology at 80 % of its maximum catches up at a fifth of its rate, over most of the
benchmark's steady state (benchmarks/RESULTS.md, "Issue 12 §4: latency at 80 % load").
Once a window carried tuples, the limit follows the load as the module says."""

OVERLAP_WAIT_SHARE = 0.5
"""Wait for the running window's job instead of overlapping it when it is expected to end
within this share of a period (waiting ``d`` delays the next window's tuples by ``d`` and
brings the running window's verdicts a period minus ``d`` sooner: it pays while ``d`` is
under half a period)."""

MIN_LIMIT = 1000
"""The limit never goes below this (measured: from 100, a step to 9,000 tuples/s took six
windows of ramp and left a backlog that the rest of a 15 s run spent catching up)."""


@dataclass
class _SpoutState:
    """One spout executor's limit and smoothed hand-over."""

    limit: int
    handed: float = 0.0


class WindowSizer:
    """Decides each window's period and each spout executor's hand-over limit.

    The driver makes one per topology, reads :attr:`period_seconds` for its window loop,
    asks :meth:`limit` for every spout executor when it builds a window's controls, and calls
    :meth:`observe` once per window with the window's job time and what each spout executor
    handed over. Not thread-safe: the window loop's thread is its only user.

    Args:
        target_ms: ``topology.window.target.latency.ms``; 0 turns the controller off.
        window_ms: ``topology.window.ms``, the longest minimum period.
        buffer_bound: ``topology.spout.buffer.size``, the largest limit.
        spouts: the spout executors' ids.
    """

    def __init__(self, target_ms: int, window_ms: int, buffer_bound: int,
                 spouts: Iterable[int]) -> None:
        self.enabled = target_ms > 0
        self.target_seconds = target_ms / 1000.0
        self.buffer_bound = buffer_bound
        period_ms = min(window_ms, target_ms * PERIOD_SHARE) if self.enabled else window_ms
        self.period_seconds = period_ms / 1000.0
        """The minimum time from one window's start to the next's."""
        start = max(1, min(buffer_bound, INITIAL_LIMIT or buffer_bound))
        self._spouts = {gid: _SpoutState(start) for gid in spouts}
        self.spouts = frozenset(self._spouts)
        """The spout executors' ids."""
        self.seconds_per_tuple: float | None = None
        """Smoothed job seconds per tuple handed over (fixed cost included: conservative)."""
        self.job_seconds: float | None = None
        """Smoothed job time of the recent windows, whatever they carried."""

    def limit(self, gid: int) -> int | None:
        """Tuples spout executor ``gid`` may buffer for the next window (None: the bound).

        None too for an executor the sizer was not made with (it has not learnt its load).
        """
        state = self._spouts.get(gid)
        return state.limit if self.enabled and state is not None else None

    def observe(self, job_seconds: float, handed: Mapping[int, int],
                full: Collection[int] = ()) -> None:
        """Learn from one finished window; set the limits the next windows' controls carry.

        Args:
            job_seconds: how long the window's Spark job took.
            handed: tuples each spout executor handed over in the window (its buffer's
                fill when the window came); executors absent from it handed over none.
            full: the spout executors whose buffer had reached the limit it was filled
                under (they waited for the window: their demand exceeds their limit).
        """
        if not self.enabled:
            return
        self.job_seconds = _smooth(self.job_seconds, job_seconds)
        total = sum(handed.values())
        if total > 0:
            self.seconds_per_tuple = _smooth(self.seconds_per_tuple, job_seconds / total)
        for gid, state in self._spouts.items():
            self._adjust(state, handed.get(gid, 0), gid in full)

    def overlap_wait(self, running_seconds: float) -> float:
        """Seconds to wait for the running window's job before the next window starts.

        0: start the next window now (overlapping the running job if it still runs): the
        sizer is off, has no job time yet, or the job is expected to run on for more than
        ``OVERLAP_WAIT_SHARE`` of a period (or should have ended already: it is late, and
        how late it will be is unknown).

        Args:
            running_seconds: how long the running window's job has run.
        """
        if not self.enabled or self.job_seconds is None:
            return 0.0
        remaining = self.job_seconds - running_seconds
        if 0.0 < remaining <= OVERLAP_WAIT_SHARE * self.period_seconds:
            return round(remaining, 6)
        return 0.0

    def _adjust(self, state: _SpoutState, handed: int, full: bool) -> None:
        """One spout executor's next limit, from what it handed over in a window."""
        if handed == 0 and not full:
            return  # an idle window says nothing about the next burst: keep the limit
        state.handed = _smooth(state.handed, float(handed))
        if full:
            wanted = GROWTH * state.limit
        else:
            wanted = max(round(HEADROOM * state.handed), self._budget_share(),
                         state.limit // 2)
        state.limit = min(self.buffer_bound,
                          max(MIN_LIMIT, min(GROWTH * state.limit, wanted)))

    def _budget_share(self) -> int:
        """One spout executor's share of the tuples whose job fits the job budget."""
        if not self.seconds_per_tuple:
            return 0
        budget = JOB_SHARE * self.target_seconds / self.seconds_per_tuple
        return int(budget / max(1, len(self._spouts)))


def _smooth(previous: float | None, value: float) -> float:
    """Exponential smoothing; the first value is taken as it is."""
    if previous is None:
        return value
    return SMOOTHING * value + (1.0 - SMOOTHING) * previous


__all__ = ["WindowSizer"]
