"""Where a tuple's complete latency goes, from the driver's window records (issue 12 §4).

A spout's tuple is emitted into its executor's buffer, handed over at its window's spout
stage, processed by that window's job, and acked when the driver pushes the acker's verdict
to its spout once that job has ended (``engine.driver.verdict_push``), or, with the push off, when
a later window's spout stage brings the verdict back. From the window records of a run
(``started``: the job's submit, ``seconds``: submit to job end, the spout's ``buffered``:
tuples it handed over), per window ``w`` weighted by the tuples it carried:

- **buffer wait**: the mean time a tuple waited in the spout's buffer before ``w``'s spout
  stage, half the gap from ``w-1``'s submit to ``w``'s (the spout offers at a steady rate, so
  emit times spread evenly over the gap);
- **job**: ``w``'s job, submit to end (Spark's scheduling of the spout stage included);
- **verdict wait**: from ``w``'s end to the submit of the first window started after it,
  the one whose spout stage carries ``w``'s verdicts (with overlapping windows, the one
  submitted while ``w`` ran does not: it left before ``w``'s verdicts existed); 0 when the
  driver pushes the verdicts as soon as it absorbs ``w`` (``engine.driver.verdict_push``,
  ``pushed``), which it does when ``w``'s job ends;
- **rest**: the measured mean complete latency minus these three: the verdict window's
  submit-to-spout-stage delay (pushed: the absorb and the push) and the spout's ack
  handling.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass
class LatencyBreakdown:
    """Tuple-weighted mean milliseconds per part of the complete latency."""

    buffer_wait_ms: float
    job_ms: float
    verdict_wait_ms: float
    measured_mean_ms: float | None
    windows: int
    overlapped: int
    """Windows submitted while the previous window's job still ran."""

    @property
    def rest_ms(self) -> float | None:
        """The measured mean not explained by the three parts."""
        if self.measured_mean_ms is None:
            return None
        return self.measured_mean_ms - self.buffer_wait_ms - self.job_ms - self.verdict_wait_ms

    def line(self) -> str:
        """One printable line."""
        rest = self.rest_ms
        return (f"buffer wait {self.buffer_wait_ms:,.0f} + job {self.job_ms:,.0f} + verdict "
                f"wait {self.verdict_wait_ms:,.0f} + rest "
                f"{'n/a' if rest is None else f'{rest:,.0f}'} = mean "
                f"{self.measured_mean_ms or 0:,.0f} ms over {self.windows} windows "
                f"({self.overlapped} overlapped)")


def breakdown(windows: Mapping[int, Mapping[str, Any]], spout: str,
              first: int, last: int, pushed: bool = True) -> LatencyBreakdown | None:
    """The breakdown over windows ``first..last`` (ids in ``windows``, the records by id).

    ``pushed``: the run's driver pushed verdicts (``topology.window.verdicts.push``, the
    default, and no checkpoints).

    None when the range holds no window that carried tuples.
    """
    ids = sorted(w for w in windows if first <= w <= last)
    starts = sorted((r["started"], w) for w, r in windows.items())
    weight = wait = job = verdict = 0.0
    acked = complete = 0.0
    overlapped = 0
    for w in ids:
        record = windows[w]
        counters = record["components"].get(spout) or {}
        previous = windows.get(w - 1)
        if previous is not None and previous["started"] + previous["seconds"] > record["started"]:
            overlapped += 1
        n_acked = float(counters.get("acked", 0))
        if n_acked and counters.get("complete_latency_ms"):
            acked += n_acked
            complete += n_acked * counters["complete_latency_ms"]
        handed = float(counters.get("buffered", 0))
        if not handed or previous is None:
            continue
        end = record["started"] + record["seconds"]
        carrier = end if pushed else next((s for s, _ in starts if s >= end), None)
        if carrier is None:
            continue
        weight += handed
        wait += handed * (record["started"] - previous["started"]) / 2.0
        job += handed * record["seconds"]
        verdict += handed * (carrier - end)
    if not weight:
        return None
    return LatencyBreakdown(1000 * wait / weight, 1000 * job / weight,
                            1000 * verdict / weight, complete / acked if acked else None,
                            len(ids), overlapped)


__all__ = ["LatencyBreakdown", "breakdown"]
