"""A window job's cost as the window sizer learns it: a fixed part and a part per tuple.

Every window is one Spark job whose time is, to a first approximation, ``F + c * N`` for a
window of ``N`` tuples: ``F`` is the job's fixed cost (scheduling, one Python worker hop and
one JVM shuffle per stage, the acker's traffic: 0.2-0.3 s on the word-count benchmark's
2 cores even for an empty window) and ``c`` the job time each tuple adds. :class:`JobCost`
fits both from the windows the driver has run (least squares over their sizes and job
times, the older windows weighing less), so that the sizer can answer the two questions of
a queue with a fixed cost per batch:

- at an offered rate of ``r`` tuples per second, what is the shortest window period ``P``
  whose jobs keep up (:meth:`JobCost.shortest_period`): ``F + c * r * P <= capacity * P``,
  i.e. ``P >= F / (capacity - c * r)``, where ``capacity`` is the job seconds the loop can
  run per second of wall time (about 1.5 with two overlapping windows sharing the cores);
- how large a window must be for its fixed cost to be a small share of its job
  (:meth:`JobCost.amortising_size`).

Windows of one size only (a saturated topology at its limit) cannot separate ``F`` from
``c``; the fit then keeps what it learnt from windows of other sizes, and until it has seen
two sizes it takes an empty window's job time as ``F`` (Spark's early windows carry nothing
and measure it; the sizer does not feed it the very first, whose job carries the Python
workers' start) and the rest of a window of at least ``MIN_SPREAD_TUPLES`` as ``c``.

Example:
    >>> cost = JobCost()
    >>> for n in (0, 1000, 10_000, 20_000):
    ...     cost.observe(n, 0.25 + 40e-6 * n)
    >>> round(cost.fixed_seconds, 3), round(cost.seconds_per_tuple * 1e6, 1)
    (0.25, 40.0)
    >>> round(cost.shortest_period(rate=20_000, capacity=1.5), 3)  # 0.25 / (1.5 - 0.8)
    0.357
    >>> cost.shortest_period(rate=40_000, capacity=1.5) is None  # 1.6 > 1.5: cannot keep up
    True
"""

from __future__ import annotations

FORGETTING = 0.9
"""Weight left to the older windows at each new one (memory of about ten windows)."""

MIN_SPREAD = 0.2
"""Windows' sizes must spread by this share of their mean (coefficient of variation) before
the fit trusts the slope they give; below it the previous estimates stay."""

MIN_SPREAD_TUPLES = 1000
"""...and by at least this many tuples (standard deviation): the slope of windows of a few
dozen tuples is the job time's noise (an integration test's 20 tuples/s made it say
seconds per tuple, and the period grew to match)."""


class JobCost:
    """Fixed and per-tuple job seconds, fitted from (tuples, job seconds) of past windows.

    Fed by :class:`~sparkstorm.engine.driver.window_sizer.WindowSizer` once per window, in the
    driver's window loop thread; not thread-safe.
    """

    def __init__(self) -> None:
        self._w = self._n = self._j = self._nn = self._nj = 0.0
        self.fixed_seconds: float | None = None
        """Estimated job seconds of a window that carries nothing."""
        self.seconds_per_tuple: float | None = None
        """Estimated job seconds each tuple adds to its window's job."""

    @property
    def known(self) -> bool:
        """Whether both parts are estimated."""
        return self.fixed_seconds is not None and self.seconds_per_tuple is not None

    def observe(self, tuples: int, job_seconds: float) -> None:
        """Learn from one window of ``tuples`` tuples whose job took ``job_seconds``."""
        decay = FORGETTING
        self._w = decay * self._w + 1.0
        self._n = decay * self._n + tuples
        self._j = decay * self._j + job_seconds
        self._nn = decay * self._nn + float(tuples) * tuples
        self._nj = decay * self._nj + tuples * job_seconds
        if tuples == 0:
            self.fixed_seconds = _blend(self.fixed_seconds, job_seconds)
            return
        if (not self._fit() and self.fixed_seconds is not None
                and tuples >= MIN_SPREAD_TUPLES):  # a few tuples' share is the job's noise
            rest = max(0.0, job_seconds - self.fixed_seconds) / tuples
            self.seconds_per_tuple = _blend(self.seconds_per_tuple, rest)

    def _fit(self) -> bool:
        """Weighted least squares of job seconds on tuples; False when sizes barely vary."""
        mean_n = self._n / self._w
        variance = self._nn / self._w - mean_n * mean_n
        spread = max(MIN_SPREAD * mean_n, MIN_SPREAD_TUPLES)
        if mean_n <= 0 or variance <= spread**2:
            return False
        slope = (self._nj / self._w - mean_n * self._j / self._w) / variance
        if slope <= 0:
            return False
        self.seconds_per_tuple = slope
        self.fixed_seconds = max(0.0, self._j / self._w - slope * mean_n)
        return True

    def job_seconds(self, tuples: float) -> float | None:
        """Expected job seconds of a window of ``tuples`` tuples (None: not learnt yet)."""
        if self.fixed_seconds is None or self.seconds_per_tuple is None:
            return None
        return self.fixed_seconds + self.seconds_per_tuple * tuples

    def shortest_period(self, rate: float, capacity: float) -> float | None:
        """The shortest window period whose jobs keep up with ``rate`` tuples per second.

        Args:
            rate: tuples offered per second.
            capacity: job seconds the window loop runs per second of wall time.

        Returns:
            Seconds, 0.0 when nothing is learnt yet (no constraint known), None when no
            period keeps up (each tuple alone needs more than the capacity: saturated).
        """
        if self.fixed_seconds is None or self.seconds_per_tuple is None:
            return 0.0
        spare = capacity - self.seconds_per_tuple * rate
        if spare <= 0:
            return None
        return self.fixed_seconds / spare

    def amortising_size(self, fixed_share: float) -> float | None:
        """Tuples per window for the fixed cost to be ``fixed_share`` of the job's time."""
        if not self.fixed_seconds or not self.seconds_per_tuple:
            return None
        return self.fixed_seconds * (1.0 - fixed_share) / (fixed_share * self.seconds_per_tuple)


def _blend(previous: float | None, value: float) -> float:
    """Exponential smoothing with the fit's forgetting factor."""
    if previous is None:
        return value
    return FORGETTING * previous + (1.0 - FORGETTING) * value


__all__ = ["JobCost"]
