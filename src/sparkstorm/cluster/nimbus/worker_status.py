"""Whether a topology's workers run, start, fail to start or went silent (``workerStatus``).

The field is in the topology summary and page. Storm shows such a worker as failing; the
topology's ``status`` stays ACTIVE, which is the user's order, not the workers' state.

A worker heartbeats every second; one silent for :data:`LOST_AFTER_SECS` is LOST (its
process or its host may be gone) until its supervisor restarts it or Nimbus moves it
(``nimbus.task.timeout.secs``): the pages said RUNNING meanwhile, from its last heartbeat.

A worker that cannot start its topology (``EXECUTOR_START_FAILED``, a component whose class
is not found on that host...) sends a last heartbeat with ``start_failure``; Nimbus keeps it
while the supervisor's next attempts start (see :mod:`.umbilical`), until one runs windows.
"""

from __future__ import annotations

from typing import Any

from sparkstorm.cluster.nimbus.ui_stats import WorkerBeat

RUNNING, STARTING, FAILING, LOST = "RUNNING", "STARTING", "FAILING", "LOST"
LOST_AFTER_SECS = 15.0
"""Seconds without a heartbeat after which a worker is LOST: fifteen heartbeat periods, so
that a loaded machine's late beats are not taken for a loss; half Nimbus's default
``nimbus.task.timeout.secs``, so that the pages say it before Nimbus moves the worker."""


def worker_row_status(worker: WorkerBeat, now: float | None = None) -> str:
    """One worker's status: FAILING, LOST, RUNNING or STARTING.

    FAILING: its last start failed; LOST: its last heartbeat, at Nimbus's ``now``, is older
    than :data:`LOST_AFTER_SECS`; RUNNING: it runs windows (the driver's worker) or its
    executors serve (``serving``: a worker that hosts executors for another's driver);
    STARTING: no heartbeat yet, or Spark and the executors are starting.
    """
    if isinstance(worker.stats.get("start_failure"), dict):
        return FAILING
    if _silent_for(worker, now) > LOST_AFTER_SECS:
        return LOST
    return RUNNING if worker.stats.get("windows") or worker.stats.get("serving") else STARTING


def _silent_for(worker: WorkerBeat, now: float | None) -> float:
    """Seconds since the worker's last heartbeat reached Nimbus (0 without one)."""
    if worker.beat is None or now is None:
        return 0.0
    return now - worker.beat.time_secs


def topology_worker_status(beats: list[WorkerBeat], now: float | None = None) -> dict[str, Any]:
    """The topology's ``workerStatus`` and ``workerStatusDetail``.

    The status is the worst of the workers' (FAILING, LOST, STARTING, RUNNING; STARTING with
    no worker assigned yet); the detail says why, for FAILING and LOST.
    """
    statuses = [worker_row_status(worker, now) for worker in beats]
    if LOST in statuses and FAILING not in statuses:
        lost = [w for w, s in zip(beats, statuses, strict=True) if s == LOST]
        detail = "; ".join(
            f"worker {w.worker_id} (port {w.slot.port}) sent no heartbeat for "
            f"{_silent_for(w, now):.0f} s" for w in lost)
        return {"workerStatus": LOST, "workerStatusDetail": (
            f"{detail} (its process or host may be gone: its supervisor restarts it, or "
            "Nimbus moves it after nimbus.task.timeout.secs)")[:500]}
    if FAILING in statuses:
        worker = beats[statuses.index(FAILING)]
        failure = worker.stats["start_failure"]
        detail = (f"worker {worker.worker_id} failed to start "
                  f"{int(failure.get('failures') or 1)} time(s): component "
                  f"{failure.get('component')}: {failure.get('code')}: "
                  f"{_summary_line(failure)}")
        return {"workerStatus": FAILING, "workerStatusDetail": detail[:500]}
    status = RUNNING if statuses and all(s == RUNNING for s in statuses) else STARTING
    return {"workerStatus": status, "workerStatusDetail": ""}


def _summary_line(failure: dict[str, Any]) -> str:
    """The line of a start failure that says what went wrong.

    Our errors (an upper-case code) say it in their first line (the component, its task,
    its error and its log file), and end with the log or traceback they quote, whose last
    line is added unless the first says it already; a Python traceback in its last.
    """
    lines = [line.strip() for line in
             str(failure.get("error") or "").strip().splitlines()] or [""]
    code = str(failure.get("code") or "")
    if not code.isupper():
        return lines[-1]
    first = lines[0].removeprefix(f"[{code}] ")  # the code is in the detail already
    return first if lines[-1] in first else f"{first} | {lines[-1]}"
