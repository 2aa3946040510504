"""How long the checkpoint building blocks take for one task with a large in-memory state.

For a StatefulBolt whose ``KeyValueState`` holds N keys (word -> count), times each step the
wired engine will run per checkpoint: ``prepare`` (pre_prepare + the state's
``prepare_commit``, a dict copy), ``task_snapshot`` (pickle), ``CheckpointStore.write_part``
(temp file, rename) and ``commit`` (marker), then ``latest_committed`` (verifies sizes and
SHA-256 of every part) and the restore (read, unpickle, ``restore``). The references, in the
same run: one plain ``dict.copy``, one ``pickle.dumps`` of the dict, one plain file write of
the same bytes.

Usage: python benchmarks/checkpoint_state.py [--keys 1000000] [--dir /tmp/...]
"""

from __future__ import annotations

import argparse
import pickle
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sparkstorm.checkpoint import CheckpointStore, restore_task, task_snapshot
from sparkstorm.state.lifecycle import StatefulTask
from sparkstorm.state.memory import InMemoryStateProvider


class Counts:
    """Stands for a StatefulBolt (the hooks do nothing)."""

    def init_state(self, state: Any) -> None:
        """Keep the state the task hands over."""
        self.state = state

    def pre_prepare(self, txid: int) -> None:
        """Do nothing before the prepare."""

    def pre_commit(self, txid: int) -> None:
        """Do nothing before the commit."""

    def pre_rollback(self) -> None:
        """Do nothing before the rollback."""


def timed(label: str, results: list[tuple[str, float]], call: Callable[[], Any]) -> Any:
    """Call ``call``, append ``(label, milliseconds)`` to ``results`` and return its value."""
    started = time.perf_counter()
    value = call()
    results.append((label, (time.perf_counter() - started) * 1000))
    return value


def main() -> None:
    """Parse the arguments and run the benchmark in a temporary directory, removed after."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="sparkstorm-ckpt-bench-"))
    try:
        run(args.keys, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(keys: int, root: Path) -> None:
    """Time the checkpoint steps and the references for ``keys`` keys under ``root``; print."""
    bolt = Counts()
    task = StatefulTask.start(bolt, InMemoryStateProvider(), "count-1")
    for i in range(keys):
        bolt.state.put(f"word-{i}", i)
    store = CheckpointStore(str(root), "bench-1-1")
    steps: list[tuple[str, float]] = []
    snapshot = timed("prepare (state.prepare_commit: dict copy)", steps, lambda: task.prepare(1))
    blob = timed("task_snapshot (pickle)", steps, lambda: task_snapshot(
        bolt, component="count", task=1, stateful=True, state_snapshot=snapshot))
    part = timed("write_part (temp file + rename)", steps,
                 lambda: store.write_part(1, "executor-0", blob))
    timed("commit (marker)", steps, lambda: store.commit(1, [part]))
    timed("state.commit", steps, lambda: task.commit(1))
    timed("latest_committed (verify sha256)", steps, store.latest_committed)

    def restore() -> None:
        data = restore_task(Counts(), store.read_part(1, "executor-0"), component="count",
                            task=1)
        StatefulTask.start(Counts(), InMemoryStateProvider(), "count-1", data, 1)

    timed("restore (read, unpickle, state.restore)", steps, restore)
    refs: list[tuple[str, float]] = []
    data = dict(bolt.state)
    timed("reference: dict.copy", refs, data.copy)
    raw = timed("reference: pickle.dumps(dict)", refs, lambda: pickle.dumps(data, protocol=5))
    timed("reference: plain file write", refs, lambda: (root / "plain").write_bytes(raw))
    print(f"checkpoint of one task with {keys:,} keys, snapshot {len(blob) / 2**20:.1f} MiB")
    for label, ms in steps + refs:
        print(f"  {label:<45} {ms:9.1f} ms")
    stall = sum(ms for label, ms in steps[:2])
    print(f"  on the window's critical path if not overlapped (prepare + pickle): {stall:.1f} ms")


if __name__ == "__main__":
    main()
