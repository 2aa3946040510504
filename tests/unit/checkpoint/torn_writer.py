"""Run as a script by the torn-checkpoint test: a writer stopped inside a checkpoint.

It commits checkpoint 1, then writes a part of checkpoint 2 and stops in the middle of it (says so
on stdout) until it is killed.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

from sparkstorm.checkpoint import CheckpointStore


def main(root: str, stage: str) -> None:
    store = CheckpointStore(root, "topo-1")
    store.commit(1, [store.write_part(1, "executor-0", b"one" * 1000),
                     store.write_part(1, "driver", b"ledger-1")])
    second = store.write_part(2, "executor-0", b"two" * 1000)

    def slow() -> Iterator[bytes]:
        yield b"x" * 65536
        print("mid-write", flush=True)
        while True:
            time.sleep(1)
            yield b""

    if stage == "part":
        store.write_part(2, "driver", slow())
    else:  # every part written, killed before the marker
        store.write_part(2, "driver", b"ledger-2")
        print("mid-write", flush=True)
        time.sleep(3600)
        store.commit(2, [second])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
