r"""Instructions one split or count executor spends on one window: a timer-free comparison.

On a shared machine thread CPU times of the same code vary by 2x from run to run; the
instructions a window costs do not. This runs the word-count topology's executors
in-process (``profile_executor.Pipeline``), makes one window's input for a split and a count
executor, and then runs that executor's window ``K`` times inside ``sys.call_tracing``, so
that callgrind can count only those calls::

    PYTHONHASHSEED=0 PYTHONPATH=src valgrind --tool=callgrind \\
        --toggle-collect=sys_call_tracing --callgrind-out-file=/dev/null \\
        .venv/bin/python benchmarks/executor_instructions.py split 1

prints the window's sentences and the count executor's words on stderr; callgrind's
"Collected" line is the instructions of ``K`` windows (split: ``run_window`` +
``encode_rows``; count: ``run_window`` + ``window_meta().encode()``). Without valgrind it
runs as it is (a smoke test of the same code). Compare two trees with their own
``PYTHONPATH``; ``benchmarks/RESULTS.md`` (issue 12, executors' engine code) has figures.
"""

from __future__ import annotations

import gc
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from profile_executor import Pipeline

from sparkstorm.engine.wire.row_wire import unpack_rows as unpack

SENTENCES_PER_WINDOW = 4000
"""Spout buffer: each of the two split executors gets about half of it."""


def main(what: str, repeats: int) -> int:
    """Run ``what``'s window ``repeats`` times inside ``sys.call_tracing``."""
    pipe = Pipeline(SENTENCES_PER_WINDOW * 3, SENTENCES_PER_WINDOW, 42)
    gc.disable()  # as in executor processes
    pipe._produce()
    spout_blobs, _ = Pipeline._reply(pipe.spout, pipe.spout.run_window(pipe.control))
    split_gid, split = next(iter(pipe.splits.items()))
    count_gid, count = next(iter(pipe.counts.items()))
    split_input = Pipeline._request([spout_blobs[split_gid]])
    count_blobs = split.encode_rows(split.run_window(split_input))
    count_input = [count_blobs[count_gid]]

    def windows() -> None:
        for _ in range(repeats):
            if what == "split":
                split.encode_rows(split.run_window(split_input))
            else:
                count.window_meta(count.run_window(count_input)).encode()

    sys.call_tracing(windows, ())
    sys.stderr.write(f"sentences {len(unpack(spout_blobs[split_gid])[0][3])} "
                     f"words {len(unpack(count_blobs[count_gid])[0][3])}\n")
    pipe.close()
    return 0


if __name__ == "__main__":
    if len(sys.argv[1:]) != len(("what", "repeats")) or sys.argv[1] not in ("split", "count"):
        sys.exit("usage: executor_instructions.py split|count REPEATS")
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
