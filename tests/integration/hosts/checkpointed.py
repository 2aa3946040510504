"""What the newest committed checkpoint of ``faults_topology/paced_count.py`` holds.

The spout's acked ids and the count bolt's counts per key, read back from the checkpoint
store as a restarted driver would (each part checked against its commit marker): a
checkpoint with every id acked and ``expected_counts`` is the proof that nothing acked was
lost and nothing was counted twice.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from sparkstorm.checkpoint import CheckpointError, CheckpointStore
from sparkstorm.checkpoint.snapshot import read_snapshot
from sparkstorm.engine.executor.checkpoint_part import ExecutorPart

KEYS = 7
"""``paced_count.KEYS``: id n is counted under key ``k{n % KEYS}``."""


def expected_counts(count: int) -> dict[str, int]:
    """The count bolt's counts once ids 0..count-1 were each counted once."""
    return dict(Counter(f"k{n % KEYS}" for n in range(count)))


def committed(store: CheckpointStore) -> tuple[int | None, set[int], dict[str, int]]:
    """The newest committed checkpoint's window, acked ids and counts."""
    try:
        window = store.latest_committed()
        if window is None:
            return None, set(), {}
        acked: set[int] = set()
        counts: dict[str, int] = {}
        for name in store.parts(window):
            if not name.startswith("executor-"):
                continue
            for blob in ExecutorPart.decode(store.read_part(window, name)).tasks.values():
                record = read_snapshot(blob)
                if record["component"] == "numbers":
                    acked |= record["data"]["acked"]
                else:
                    for key, n in record["data"].items():
                        counts[key] = counts.get(key, 0) + n
    except (CheckpointError, OSError, KeyError):  # purged by a newer commit while read
        return None, set(), {}
    return window, acked, counts


def topology_store(root: Path) -> CheckpointStore | None:
    """The store of the one topology checkpointing under ``root`` (None before its first).

    A cluster's workers keep checkpoints under Nimbus's topology id, which the test does
    not know in advance: the only folder under ``root``.
    """
    folders = [p for p in root.glob("*") if p.is_dir()] if root.is_dir() else []
    if len(folders) != 1:
        return None
    return CheckpointStore(str(root), folders[0].name)
