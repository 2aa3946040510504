"""Window size that follows load: how many tuples each spout hands over, and how often.

A tuple waits up to one period in its spout's buffer, then its window's job; the acker's
verdict reaches its spout right after that job (``engine.driver.verdict_push``), or, with that off
or checkpoints on, with the next window's spout stage (another period at most). Every
window is one Spark job with a large fixed cost, so short windows answer fast at light
load but cannot carry a heavy one, and long windows carry a heavy load at a latency of
seconds. With ``topology.window.target.latency.ms`` = T set, the
driver sizes windows as a queue with a fixed cost per batch (``engine.driver.window_cost``: the
sizer fits each job's time as ``F + c * N`` from the windows it has run):

- **Period.** A window starts ``period_seconds`` after the last at the earliest: the base
  ``min(topology.window.ms, T / 4)`` (at light load a tuple waits about 1.5 periods: p50
  about 0.4 T), or, when the offered rate ``r`` (tuples handed over per second, smoothed)
  needs longer windows to keep up, the shortest period whose jobs keep up:
  ``F / (capacity - c * r)`` (:meth:`JobCost.shortest_period`; ``capacity`` is
  ``CAPACITY_OVERLAP`` job seconds per second with overlapping windows, ``CAPACITY_SERIAL``
  without). A job longer than the period delays the next window by itself, so the period is
  a floor, never a wait for nothing. Windows full at their memory cap (below) can carry
  more only by coming more often: the period is then 0, and the scheduler starts the next
  window once this one's tuples are handed over and the one before it has ended.
- **Limit.** Each spout executor buffers at most ``limit`` tuples before the next window
  (the spout stops producing at it). After each window, per executor: if its buffer was
  full (it had to wait: demand exceeds the limit), the limit grows ``GROWTH`` (4) times, up
  to the **saturation bound**: the window size at which the job's fixed cost is
  ``FIXED_SHARE`` of its time (:meth:`JobCost.amortising_size`, shared among the spout
  executors; at least the tuples whose job fits the job budget, as the fit's fixed cost
  is its noisiest part) and whose expected job takes at most ``TIMEOUT_SHARE`` of the
  message timeout, at least ``topology.spout.buffer.size`` and at most
  ``topology.spout.buffer.max.size`` (the memory cap: a window's tuples are held by the
  spout, the executors and Spark at once) and at most ``topology.spout.buffer.max.bytes``
  of the spout executor's encoded tuples (its bytes per tuple are learnt from the windows
  it handed over, smoothed; :meth:`byte_bound`). So a saturated topology grows its windows
  until the fixed cost is amortised and keeps its throughput, and large tuples do not
  grow windows to gigabytes. Otherwise the limit becomes the
  larger of twice the smoothed number of tuples it handed over, twice what the period
  brings at its rate, and its share of the tuples whose job fits T / 2 (at least
  ``MIN_LIMIT``), and it falls by at most half per window; a window that carried nothing
  leaves it as it is. Before any window carried tuples the limit is
  ``topology.spout.buffer.size`` (``INITIAL_LIMIT``).
- **Pending (on by default).** With ``topology.spout.pending.auto`` and no
  ``topology.max.spout.pending``, each spout executor also keeps at most ``pending(gid)``
  tuples un-acked: its smoothed throughput times ``PENDING_SHARE`` * T (Little's law: what
  is in flight is throughput times latency, so the mean complete latency settles near that
  share of T), moving by at most x2 or /2 per window, at most ``PENDING_WINDOWS`` times the
  saturation bound and at least the window size whose job's fixed cost is half its time
  (``PENDING_FIXED_SHARE``: a target the machine cannot meet costs at most about half the
  throughput, instead of driving the bound to nothing); a spout that filled its window
  may also keep ``PENDING_WINDOWS`` windows of its share of the job budget in flight (its
  rate is what the bound let through, so Little's law alone ramps a saturated spout about
  x1.25 a window). Floor and cap move with the cost fit, and the bound follows them by the
  same steps. A saturated unthrottled spout then
  holds its latency near the target at the throughput windows of that size give, instead of
  growing its windows for throughput. One window's limit is then at most
  ``1 / PENDING_WINDOWS`` of the bound, so the window filling beside a running one still
  finds tuples to take.
- **Overlap.** With overlapping windows (``topology.window.overlap``) the next window may
  start while this one's job still runs, but then this window's verdicts miss the next
  window and wait for the one after it. :meth:`overlap_wait` says when waiting for the
  running job is cheaper: when the smoothed job time says it ends within
  ``OVERLAP_WAIT_SHARE`` of a period. (Not needed, and not done, while verdicts are pushed
  to the spouts as soon as a window ends.)

Stability: rates, counts and job times are exponentially smoothed (``SMOOTHING``), each
step is bounded (x4 up, /2 down), the period at most doubles per window, and the limit at
steady load sits at twice what a window carries, so it is not binding and does not feed
back on itself.

``T = 0`` turns all of this off: every window may carry ``topology.spout.buffer.size`` tuples
and starts ``topology.window.ms`` after the last at the earliest (the fixed behaviour).

Example:
    >>> sizer = WindowSizer(target_ms=1000, window_ms=500, buffer_bound=20_000, spouts=[0],
    ...                     max_bound=100_000)
    >>> sizer.period_seconds, sizer.limit(0)  # nothing learnt yet: the buffer size
    (0.25, 20000)
    >>> sizer.observe(job_seconds=0.2, handed={0: 200}, started=0.0)  # light: falls by half
    >>> sizer.limit(0)
    10000
    >>> sizer.observe(job_seconds=0.3, handed={0: 10_000}, full={0}, started=0.25)
    >>> sizer.limit(0)  # it waited: grows x4 (past the buffer size: saturated)
    40000
    >>> sizer.overlap_wait(running_seconds=0.2)  # smoothed job 0.23 s: ends in 0.03 s
    0.03
    >>> WindowSizer(0, 500, 20_000, [0]).limit(0) is None  # off: the buffer bound rules
    True
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sparkstorm.config import conf_bool, conf_float, conf_int, conf_optional_int
from sparkstorm.engine.driver.window_cost import JobCost
from sparkstorm.engine.plan.execution import ExecutionPlan

SMOOTHING = 0.3
"""Weight of the newest window in the smoothed estimates (the rest is their history)."""

PERIOD_SHARE = 0.25
"""The base period, as a share of the latency target (a tuple waits about 1.5 to 2 periods)."""

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
(None: ``topology.spout.buffer.size``, as fixed windows). Starting at 1,000 and growing x4
per full window, the ramp lagged three windows behind with overlapping windows and left a
backlog that a topology at 80 % of its maximum caught up at a fifth of its rate
(benchmarks/RESULTS.md, "Issue 12 §4: latency at 80 % load")."""

OVERLAP_WAIT_SHARE = 0.5
"""Wait for the running window's job instead of overlapping it when it is expected to end
within this share of a period."""

MIN_LIMIT = 1000
"""The limit never goes below this (measured: from 100, a step to 9,000 tuples/s took six
windows of ramp and left a backlog that the rest of a 15 s run spent catching up)."""

FIXED_SHARE = 0.1
"""A saturated topology's windows grow until the job's fixed cost is this share of its time
(then throughput is within about 10 % of what unbounded windows would give)."""

CAPACITY_OVERLAP = 1.5
"""Job seconds the window loop runs per second of wall time when windows overlap (two jobs
in flight on shared cores: less than 2, as the second job slows the first)."""

CAPACITY_SERIAL = 0.9
"""The same when windows run one after the other (a margin under 1 for the driver's own
work between windows and the job time's noise)."""

MAX_PERIOD_TARGETS = 4.0
"""The period the cost model may ask for is at most this many latency targets (beyond, the
load is treated as saturating: the limits grow on full buffers instead)."""

TIMEOUT_SHARE = 0.1
"""A saturated window's expected job time stays under this share of
``topology.message.timeout.secs``, and windows fall back towards
``topology.spout.buffer.size`` (by halves) while the smoothed job time seen is above it:
windows grown for throughput on a slowed machine must not time their own tuples out
(at load average 30-35 on 2 cores, the fit's prediction alone let windows grow to 60,000
sentences in 14 s jobs, p50 37 s). Measured at load average 22 on 2 cores with a quarter:
30,000-sentence windows, 11 s periods, p50 24 s against a 30 s timeout (a tuple waits
about a period, a job and the verdict's window: two to three jobs)."""

PENDING_SHARE = 0.9
"""With ``topology.spout.pending.auto``: the mean complete latency the in-flight bound aims
at, as a share of the target (p50 sits near the mean, p99 about 1.5-2 times it). At 0.6 the
demo's topology ran p50 482 / p99 769 ms at 67 % of its unbounded throughput (RESULTS.md,
issue 12): well inside a 1 s / 2 s target, so the default aims closer to it and keeps more
throughput (larger windows amortise each Spark job's fixed cost). Measured again with
fused windows (``engine.spark.fused_window``; RESULTS.md, issue 32), three alternated
rounds each: at 0.9 the demo carried 93-101 % of its throughput-first rate at p50
0.62-0.66 s, p99 0.93-1.04 s, and at 1.05 93-98 % at p50 0.70-0.79 s, while the
benchmark's worst-window p99 went past 2 s in two of three runs at 1.05 (one barely at 0.9):
so 0.9 stays. (Those tails were mostly the first window's job fitted as the fixed cost,
since left out: nine ``make bench`` runs at 0.9 then kept p99 at 1.09-1.58 s.)"""

PENDING_WINDOWS = 2
"""With the automatic in-flight bound, one window takes at most this share of it: the window
running and the one filling beside it (overlapping windows) each get their part. With the
whole bound in one window, the next window found its spout held by the bound and carried
nothing at a full job's fixed cost: an unthrottled word count alternated windows of 14,000
and 0-1,000 sentences (RESULTS.md, issue 32). Halved, two alternating runs each at load
20-27 (``benchmarks/sizer_trace.py --maximum 30000 --load 0``): 21,959 and 24,506
sentences/s at p50 752 / 730 ms, p99 1,169 / 1,637 ms, against 23,231 and 23,329/s at p50
971 / 768 ms, p99 2,686 / 1,498 ms with the whole bound. The bound itself is capped at this
many saturation bounds, so that each window may still reach one when Little's law asks for
that much in flight: capped at one, a Kafka pass-through (cheap records, 0.25 s periods) had
windows of half a saturation bound and a throughput of half a bound per period, 120,000
records/s, under its reference loop (RESULTS.md, issue 33)."""

PENDING_FIXED_SHARE = 0.5
"""The in-flight bound never goes below the window size at which the job's fixed cost is
this share of its time, so that it keeps at least about half the throughput of unbounded
windows. Without this floor a target the machine cannot meet (jobs slower than the target
even when nearly empty) drove the bound down by Little's law window after window: on the
demo at load average 16, 565 sentences/s at p50 2.6 s against 5,791 at 9.2 s unbounded."""


@dataclass
class _SpoutState:
    """One spout executor's limit, smoothed hand-over and (opt-in) in-flight bound."""

    limit: int
    handed: float = 0.0
    pending: int | None = None
    bytes_per_tuple: float | None = None
    """Smoothed bytes of encoded tuples per tuple handed over (None: not learnt yet)."""


class WindowSizer:
    """Decides each window's period and each spout executor's hand-over limit.

    The driver makes one per topology, reads :attr:`period_seconds` before each window's
    wait, asks :meth:`limit` and :meth:`pending` for every spout executor when it builds a
    window's controls, and calls :meth:`observe` once per window, in window order, with the
    window's job time, start time and what each spout executor handed over. Not
    thread-safe: the window loop's thread is its only user.

    Args:
        target_ms: ``topology.window.target.latency.ms``; 0 turns the controller off.
        window_ms: ``topology.window.ms``, the longest base period.
        buffer_bound: ``topology.spout.buffer.size``, the limit before any window carried
            tuples and the least saturation bound.
        spouts: the spout executors' ids.
        max_bound: ``topology.spout.buffer.max.size``, the largest limit (None or below
            ``buffer_bound``: ``buffer_bound``).
        auto_pending: bound each spout executor's un-acked tuples by Little's law
            (``topology.spout.pending.auto`` with ``topology.max.spout.pending`` unset).
        timeout_seconds: ``topology.message.timeout.secs`` when timeouts are on (0: none);
            a saturated window's expected job stays under ``TIMEOUT_SHARE`` of it.
        max_bytes: ``topology.spout.buffer.max.bytes``, the most bytes of encoded tuples a
            saturated spout executor's window grows to (0: no byte cap).
    """

    @classmethod
    def for_topology(cls, plan: ExecutionPlan, conf: dict[str, Any]) -> WindowSizer:
        """The sizer of ``plan``'s spouts, as the topology's conf sets it."""
        spouts = [e.gid for e in plan.executors if plan.components[e.component].kind == "spout"]
        auto_pending = (conf_bool(conf, "topology.spout.pending.auto")
                        and conf_optional_int(conf, "topology.max.spout.pending") is None)
        timeout = (conf_float(conf, "topology.message.timeout.secs")
                   if conf_bool(conf, "topology.enable.message.timeouts") else 0.0)
        return cls(conf_int(conf, "topology.window.target.latency.ms"),
                   conf_int(conf, "topology.window.ms"),
                   conf_int(conf, "topology.spout.buffer.size"), spouts,
                   conf_int(conf, "topology.spout.buffer.max.size"), auto_pending,
                   timeout, conf_int(conf, "topology.spout.buffer.max.bytes"))

    def __init__(self, target_ms: int, window_ms: int, buffer_bound: int,
                 spouts: Iterable[int], max_bound: int | None = None,
                 auto_pending: bool = False, timeout_seconds: float = 0.0,
                 max_bytes: int = 0) -> None:
        self.enabled = target_ms > 0
        self.target_seconds = target_ms / 1000.0
        self.buffer_bound = buffer_bound
        self.max_bound = max(buffer_bound, max_bound or buffer_bound)
        self.auto_pending = auto_pending and self.enabled
        self.timeout_seconds = timeout_seconds
        self.max_bytes = max_bytes
        period_ms = min(window_ms, target_ms * PERIOD_SHARE) if self.enabled else window_ms
        self.base_period = period_ms / 1000.0
        self.period_seconds = self.base_period
        """The minimum time from one window's start to the next's (set after each window)."""
        self.overlapping = False
        """Whether windows overlap (set by the driver once it decided)."""
        self.chained_overlap = False
        """Whether windows of a chained spout stage overlap (``driver.hand_over_wait``; set
        by the driver): a job then also waits for the chained bolts of the window before
        it, and the cost fit takes only its time after that window's job ended."""
        self._last_end: float | None = None
        start = max(1, min(buffer_bound, INITIAL_LIMIT or buffer_bound))
        self._spouts = {gid: _SpoutState(start) for gid in spouts}
        self.spouts = frozenset(self._spouts)
        """The spout executors' ids."""
        self.cost = JobCost()
        """The fitted job cost (fixed and per tuple)."""
        self._warmed_up = False
        """Whether a window has run: the first one's job is not fitted (see ``observe``)."""
        self.seconds_per_tuple: float | None = None
        """Smoothed job seconds per tuple handed over (fixed cost included: conservative)."""
        self.job_seconds: float | None = None
        """Smoothed job time of the recent windows, whatever they carried."""
        self._rate_tuples: dict[int, float] = {gid: 0.0 for gid in self._spouts}
        self._rate_seconds = 0.0
        self._last_start: float | None = None

    # -- what the driver reads ----------------------------------------------------------
    def limit(self, gid: int) -> int | None:
        """Tuples spout executor ``gid`` may buffer for the next window (None: the bound).

        None too for an executor the sizer was not made with (it has not learnt its load).
        """
        state = self._spouts.get(gid)
        if not self.enabled or state is None:
            return None
        if self.auto_pending and state.pending:
            return min(state.limit, max(MIN_LIMIT, state.pending // PENDING_WINDOWS))
        return state.limit

    def pending(self, gid: int) -> int | None:
        """Un-acked tuples spout executor ``gid`` may hold (None: no automatic bound)."""
        state = self._spouts.get(gid)
        return state.pending if self.auto_pending and state is not None else None

    def rate(self, gid: int | None = None) -> float | None:
        """Smoothed tuples per second handed over by ``gid`` (None: all spout executors).

        None before two windows' start times were seen.
        """
        if self._rate_seconds <= 0:
            return None
        tuples = (sum(self._rate_tuples.values()) if gid is None
                  else self._rate_tuples.get(gid, 0.0))
        return tuples / self._rate_seconds

    @property
    def saturation_bound(self) -> int:
        """The largest limit of one spout executor: where the fixed cost is amortised."""
        longest = TIMEOUT_SHARE * self.timeout_seconds
        if self.timeout_seconds and (self.job_seconds or 0.0) > longest:
            return self.buffer_bound  # seen, not predicted: jobs already too long
        size = self.cost.amortising_size(FIXED_SHARE)
        if size is None:
            return self.max_bound
        # at least the job budget's tuples: the fit's fixed cost is the noisiest part of it
        # (0.000-0.08 s from one window to the next on the batch word count), and windows
        # whose jobs fit the budget never cost the latency aimed at
        size = max(size, self._budget_share() * len(self._spouts))
        if self.timeout_seconds and self.cost.seconds_per_tuple:
            fits = longest - (self.cost.fixed_seconds or 0.0)
            size = min(size, max(0.0, fits) / self.cost.seconds_per_tuple)
        share = int(size / max(1, len(self._spouts)))
        return max(self.buffer_bound, min(self.max_bound, share))

    def byte_bound(self, gid: int) -> int | None:
        """The most tuples of spout executor ``gid`` whose bytes fit ``max_bytes``.

        At least ``buffer_bound`` (the cap is on growth: the fixed windows' size stays the
        user's); None when there is no byte cap or its bytes per tuple are not learnt yet.
        """
        state = self._spouts.get(gid)
        if not self.max_bytes or state is None or not state.bytes_per_tuple:
            return None
        return max(self.buffer_bound, int(self.max_bytes / state.bytes_per_tuple))

    def _growth_bound(self, gid: int) -> int:
        """The saturation bound of ``gid``, capped by its byte bound."""
        bound = self.saturation_bound
        by_bytes = self.byte_bound(gid)
        return bound if by_bytes is None else min(bound, by_bytes)

    # -- learning -----------------------------------------------------------------------
    def observe(self, job_seconds: float, handed: Mapping[int, int],
                full: Collection[int] = (), started: float | None = None,
                handed_bytes: Mapping[int, int] | None = None,
                finished: float | None = None) -> None:
        """Learn from one finished window; set the period and limits of the next windows.

        The first window is left out of the cost fit and of the rate: its job carries
        Spark's and the Python workers' start (2.5 s for an empty window on the benchmark's
        word count, against 0.05-0.2 s later). Fitted as the fixed cost, it made the fit's
        slope nearly nothing (1.4 us a sentence against 29 us) once windows of several
        sizes had run, the in-flight bound's floor jumped to 160,000 sentences, and windows
        of 40,000 ran 1.7 s jobs that put the benchmark's p99 near 3 s; counted in the
        rate, its 2.4 s between window starts held the smoothed rate, and with it the
        in-flight bound, at a fraction of the spout's for ten windows.

        Args:
            job_seconds: how long the window's Spark job took.
            handed: tuples each spout executor handed over in the window (its buffer's
                fill when the window came); executors absent from it handed over none.
            full: the spout executors whose buffer had reached the limit it was filled
                under (they waited for the window: their demand exceeds their limit).
            started: the window's start time (seconds, any clock the driver keeps using;
                the rate is what windows hand over per second between their starts).
            handed_bytes: the bytes of encoded tuples each spout executor handed over
                (its ``buffered_bytes``), for the byte cap.
            finished: when the job ended (the clock of ``started``): with
                :attr:`chained_overlap`, the cost fit takes the job's time from ``started``
                or the previous job's end, whichever is later.
        """
        if not self.enabled:
            return
        self.job_seconds = _smooth(self.job_seconds, job_seconds)
        total = sum(handed.values())
        own_seconds = self._own_seconds(job_seconds, started, finished)
        warm, self._warmed_up = self._warmed_up, True
        if warm:
            self.cost.observe(total, own_seconds)
        if total > 0:
            self.seconds_per_tuple = _smooth(self.seconds_per_tuple, job_seconds / total)
        if warm:
            self._learn_rate(handed, started)
        for gid, state in self._spouts.items():
            self._learn_bytes(state, handed.get(gid, 0), (handed_bytes or {}).get(gid, 0))
            self._adjust(gid, state, handed.get(gid, 0), gid in full)
            self._adjust_pending(gid, state, gid in full)
        capped = bool(full) and all(self._at_memory_cap(gid) for gid in full)
        self.period_seconds = 0.0 if capped else self._next_period(saturated=bool(full))

    def _own_seconds(self, job_seconds: float, started: float | None,
                     finished: float | None) -> float:
        """The job's time without its wait for the window before (:attr:`chained_overlap`).

        Measured on a chained Kafka pass-through and word count, the whole job time of
        overlapped chained windows made the fit's fixed cost the previous window's
        remaining time: the saturation bound and the in-flight bound's floor grew with it,
        and the word count ran at p50 2.6 s (RESULTS.md, issue 33).
        """
        last, self._last_end = self._last_end, finished
        if not self.chained_overlap or started is None or finished is None or last is None:
            return job_seconds
        return max(0.0, finished - max(started, last))

    @staticmethod
    def _learn_bytes(state: _SpoutState, handed: int, handed_bytes: int) -> None:
        """Smoothed bytes per tuple, from a window that handed over tuples and said its bytes."""
        if handed > 0 and handed_bytes > 0:
            state.bytes_per_tuple = _smooth(state.bytes_per_tuple, handed_bytes / handed)

    def _learn_rate(self, handed: Mapping[int, int], started: float | None) -> None:
        """Smoothed hand-over rate: tuples over seconds between window starts, both decayed."""
        last, self._last_start = self._last_start, started
        if started is None or last is None or started <= last:
            return
        keep = 1.0 - SMOOTHING
        self._rate_seconds = keep * self._rate_seconds + (started - last)
        for gid in self._rate_tuples:
            self._rate_tuples[gid] = keep * self._rate_tuples[gid] + handed.get(gid, 0)

    def _at_memory_cap(self, gid: int) -> bool:
        """Whether ``gid``'s next window may carry no more than its memory cap allows.

        Windows that are full at that cap can carry more only by coming more often: the
        period then falls to nothing, and the next window starts once the one before has
        handed its tuples over and the one before that has ended (at most two in flight).
        Measured on the batch word count in checkpoint mode (100,000 sentences a window):
        with a 0.25 s period the cores were 68-73 % busy at 235,000-301,000 sentences/s;
        with 0.125 s, 91-93 % at 333,000-399,000.
        """
        limit = self.limit(gid)
        by_bytes = self.byte_bound(gid)
        cap = self.max_bound if by_bytes is None else min(self.max_bound, by_bytes)
        return limit is not None and limit >= cap

    def _next_period(self, saturated: bool) -> float:
        """The base period, or the shortest that keeps up with the offered rate."""
        rate = self.rate()
        capacity = CAPACITY_OVERLAP if self.overlapping else CAPACITY_SERIAL
        if saturated or rate is None or self.job_seconds is None:
            return self.base_period
        if self.job_seconds <= capacity * self.base_period and self.period_seconds <= \
                self.base_period:
            return self.base_period  # the jobs keep up at the base period: nothing to fix
        needed = self.cost.shortest_period(rate, capacity)
        if needed is None or needed > MAX_PERIOD_TARGETS * self.target_seconds:
            return self.base_period  # saturating: the limits grow on full buffers instead
        return min(max(self.base_period, needed), 2.0 * max(self.base_period, self.period_seconds))

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

    def _adjust(self, gid: int, state: _SpoutState, handed: int, full: bool) -> None:
        """One spout executor's next limit, from what it handed over in a window."""
        if handed == 0 and not full:
            return  # an idle window says nothing about the next burst: keep the limit
        state.handed = _smooth(state.handed, float(handed))
        # a bound that moved down (the fit changed) is followed by halves too
        top = min(self.max_bound, max(self._growth_bound(gid), (state.limit + 1) // 2))
        if full:
            wanted = GROWTH * state.limit
        else:
            wanted = max(round(HEADROOM * state.handed), self._budget_share(),
                         self._period_share(gid), (state.limit + 1) // 2)
        state.limit = min(top, max(MIN_LIMIT, min(GROWTH * state.limit, wanted)))

    def _budget_share(self) -> int:
        """One spout executor's share of the tuples whose job fits the job budget."""
        if not self.seconds_per_tuple:
            return 0
        budget = JOB_SHARE * self.target_seconds / self.seconds_per_tuple
        return int(budget / max(1, len(self._spouts)))

    def _period_share(self, gid: int) -> int:
        """Twice what the current period brings spout executor ``gid`` at its rate."""
        rate = self.rate(gid)
        return 0 if rate is None else round(HEADROOM * rate * self.period_seconds)

    def _adjust_pending(self, gid: int, state: _SpoutState, full: bool) -> None:
        """Little's law: in flight = throughput x the latency aimed at.

        A spout that filled its window may also keep ``PENDING_WINDOWS`` windows of its
        share of the job budget in flight: its rate is what the bound let through, so
        Little's law alone grows the bound only as fast as the smoothed rate follows it (the
        batch word count took 20 windows, 5 s, from 20,000 sentences a window to 100,000,
        at p50 0.4 s), while windows whose jobs fit the budget keep the latency aimed at.
        """
        rate = self.rate(gid)
        if not self.auto_pending or rate is None or rate <= 0:
            return
        wanted = min(PENDING_WINDOWS * self._growth_bound(gid),
                     max(self._pending_floor(), rate * PENDING_SHARE * self.target_seconds,
                         PENDING_WINDOWS * self._budget_share() if full else 0))
        if state.pending is not None:  # floor and cap move by steps too: they follow the fit
            wanted = min(2.0 * state.pending, max(state.pending / 2.0, wanted))
        state.pending = int(wanted)

    def _pending_floor(self) -> int:
        """The least in-flight bound: windows whose fixed cost is half their job."""
        size = self.cost.amortising_size(PENDING_FIXED_SHARE)
        share = 0 if size is None else int(size / max(1, len(self._spouts)))
        return max(MIN_LIMIT, share)


def _smooth(previous: float | None, value: float) -> float:
    """Exponential smoothing; the first value is taken as it is."""
    if previous is None:
        return value
    return SMOOTHING * value + (1.0 - SMOOTHING) * previous


__all__ = ["WindowSizer"]
