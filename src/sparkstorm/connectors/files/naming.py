"""File names of the file sink: Storm's ``DefaultFileNameFormat``, and its pending files.

A file is named ``{prefix}{component}-{task}-{rotation}-{timestamp_ms}{extension}``; the
timestamp keeps names of a topology started again from clashing with the last run's. With
checkpoints on, a file is first written as ``.{name}.pending`` in the same folder (hidden, so
readers that skip dot files, Spark's and the file spout among them, never see it) and renamed
to its name when the checkpoint that covers it commits.

Example:
    >>> name = file_name("out-", "sink", 3, 7, 1700000000000, ".jsonl")
    >>> name
    'out-sink-3-7-1700000000000.jsonl'
    >>> pending_name(name)
    '.out-sink-3-7-1700000000000.jsonl.pending'
    >>> is_pending_of(pending_name(name), "out-", "sink", 3)
    True
    >>> is_pending_of(pending_name(name), "out-", "sink", 30)
    False
"""

from __future__ import annotations

PENDING_PREFIX = "."
PENDING_SUFFIX = ".pending"


def file_name(prefix: str, component: str, task: int, rotation: int, timestamp_ms: int,
              extension: str) -> str:
    """The name of a task's ``rotation``-th file, opened at ``timestamp_ms``."""
    return f"{prefix}{component}-{task}-{rotation}-{timestamp_ms}{extension}"


def pending_name(name: str) -> str:
    """The name a file has until the checkpoint that covers it commits."""
    return f"{PENDING_PREFIX}{name}{PENDING_SUFFIX}"


def is_pending_of(name: str, prefix: str, component: str, task: int) -> bool:
    """Whether ``name`` is a pending file of ``component``'s ``task``."""
    return (name.startswith(f"{PENDING_PREFIX}{prefix}{component}-{task}-")
            and name.endswith(PENDING_SUFFIX))


def base_name(path: str) -> str:
    """The last part of a ``/``-separated path (fsspec paths use ``/`` everywhere)."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def join(folder: str, name: str) -> str:
    """``folder/name`` with one slash."""
    return f"{folder.rstrip('/')}/{name}"
