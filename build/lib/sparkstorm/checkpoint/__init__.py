"""Checkpoint building blocks (issue 11): task snapshots and the checkpoint store."""

from sparkstorm.checkpoint.errors import CheckpointError
from sparkstorm.checkpoint.snapshot import restore_task, task_snapshot
from sparkstorm.checkpoint.store import CheckpointStore, PartInfo, checkpoint_root

__all__ = ["CheckpointError", "CheckpointStore", "PartInfo", "checkpoint_root", "restore_task",
           "task_snapshot"]
