"""glibc malloc settings for the processes that move a window's blobs: executors, Python workers.

Each window passes a few blobs of megabytes through every executor process and Spark Python
worker (a request frame, its unpacked copies, the reply). With glibc's defaults the first such
blob freed raises the mmap threshold to its size (up to 32 MiB), so later blobs come from the
heap, whose freed memory stays in the process; and each thread can get an arena of its own (up
to 8 per core), which executors, serving each request on a new thread, fill one after the other.
Measured on the batch word count (``benchmarks/RESULTS.md``, 2026-11-26): the Spark
Python workers' peak RSS fell from 332 to 220 MiB with these settings, the executors' did not
grow with larger windows.

- ``MALLOC_MMAP_THRESHOLD_``: blocks of 1 MiB or more are mmapped, so a blob's memory goes
  back to the system when it is freed (a fixed threshold also keeps glibc's trim threshold
  at 128 KiB);
- ``MALLOC_ARENA_MAX``: at most two arenas, however many threads served requests.

A value already in the environment wins (an operator's tuning).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

LEAN_MALLOC: Mapping[str, str] = {
    "MALLOC_MMAP_THRESHOLD_": str(1024 * 1024),
    "MALLOC_ARENA_MAX": "2",
}
"""The settings (environment variables read by glibc at process start)."""


def lean_malloc_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """:data:`LEAN_MALLOC` less what ``environ`` (default: ``os.environ``) already sets.

    Example:
        >>> sorted(lean_malloc_environment({"MALLOC_ARENA_MAX": "4"}))
        ['MALLOC_MMAP_THRESHOLD_']
    """
    environ = os.environ if environ is None else environ
    return {key: value for key, value in LEAN_MALLOC.items() if key not in environ}


__all__ = ["LEAN_MALLOC", "lean_malloc_environment"]
