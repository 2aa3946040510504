"""The heap of Spark's Python workers: frozen once, so that PySpark's GC after each task is cheap.

PySpark's daemon runs ``gc.collect()`` in a reused Python worker after every task, a full
collection over every object the worker holds: PySpark's modules, ours, everything they
imported (about 36,000 objects, ~10 ms on an idle core; measured 27 % of the workers' time
in a light-load word count under py-spy, ``benchmarks/RESULTS.md`` 2026-11-26 "the fixed
cost per window job"). The next task given to that worker waits for it, so it adds to every
stage of every window. ``gc.freeze()`` moves the objects alive now into a permanent
generation that collections skip; what tasks create later is still collected as before.
"""

from __future__ import annotations

import gc
import sys

SPARK_WORKER_MAINS = frozenset({"pyspark.daemon", "pyspark.worker"})
"""The modules a Spark Python worker process runs as ``__main__``."""

_frozen = False


def in_spark_worker() -> bool:
    """Whether this process is one of Spark's Python workers (forked by its daemon or not)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return getattr(spec, "name", None) in SPARK_WORKER_MAINS


def freeze_spark_worker_heap() -> bool:
    """Freeze this process's heap once if it is a Spark Python worker (else do nothing).

    Called when ``engine.spark.stage`` is imported, which in a Python worker happens while its first
    task of a window job unpickles the stage function: the modules are loaded by then, and
    what is frozen stays alive for the worker's life anyway. The driver and the executor
    processes import the same module and are left alone.

    Returns:
        Whether it froze the heap now.
    """
    global _frozen  # once per process
    if _frozen or not in_spark_worker():
        return False
    gc.collect()  # what is garbage already is not kept for ever
    gc.freeze()
    _frozen = True
    return True
