"""``profile_executor.py`` with its phases timed in thread CPU time instead of wall time.

On a shared machine other processes stretch wall time; the executors' work in this
benchmark is single-threaded, so the thread's CPU time measures it without them. Use it to
compare two versions of the engine, runs interleaved, best of several:

    PYTHONPATH=src .venv/bin/python benchmarks/profile_executor_cpu.py --sentences 20000
"""

from __future__ import annotations

import os
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_executor

profile_executor.time = types.SimpleNamespace(perf_counter=time.thread_time)

if __name__ == "__main__":
    sys.exit(profile_executor.main())
