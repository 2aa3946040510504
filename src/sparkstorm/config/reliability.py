"""How a topology guarantees its tuples: ``topology.reliability``.

- ``acking`` (Storm's way, the default): every spout tuple with a message id is a tuple tree
  that the ackers follow edge by edge; the spout hears ``ack`` when the tree completes and
  ``fail`` when it fails or times out, and replays.
- ``checkpoint`` (Apex's, Flink's and Structured Streaming's way): no edges, no acker work;
  the window-aligned checkpoints are the guarantee. A spout hears ``ack(msg_id)`` when the
  checkpoint that covers the tuple commits, and ``fail`` only for tuples a rollback
  discarded; any failure rolls the topology back to the committed window and the spouts go
  on from their restored positions. Checkpoints are always on in this mode.
- ``none``: no guarantee; a tuple is acked as soon as it is emitted (Storm with
  ``topology.acker.executors: 0``, which still selects this mode when the key is unset).

Example:
    >>> reliability_mode({})
    'acking'
    >>> reliability_mode({"topology.acker.executors": 0})
    'none'
    >>> reliability_mode({"topology.reliability": "checkpoint"})
    'checkpoint'
    >>> checkpoint_every({"topology.reliability": "checkpoint"})
    1
    >>> checkpoint_every({"topology.reliability": "checkpoint", "topology.checkpoint.windows": 4})
    4
    >>> checkpoint_every({})
    0
"""

from __future__ import annotations

from collections.abc import Mapping

from sparkstorm.config.access import conf_int, conf_optional_str

ACKING = "acking"
CHECKPOINT = "checkpoint"
NONE = "none"
MODES = (ACKING, CHECKPOINT, NONE)

CHECKPOINT_MODE_WINDOWS = 1
"""Checkpoint interval in ``checkpoint`` mode when ``topology.checkpoint.windows`` is 0:
every window, so a spout hears its acks one commit after its tuples' window."""


def reliability_mode(conf: Mapping[str, object]) -> str:
    """``topology.reliability``; unset: ``none`` when ``topology.acker.executors`` is 0."""
    mode = conf_optional_str(conf, "topology.reliability")
    if mode is not None:
        return mode
    ackers = conf.get("topology.acker.executors")  # as acker_task_count reads it
    return NONE if ackers is not None and int(ackers) == 0 else ACKING  # type: ignore[call-overload]


def checkpoint_every(conf: Mapping[str, object]) -> int:
    """Windows between two checkpoints (0: off); never off in ``checkpoint`` mode."""
    every = conf_int(conf, "topology.checkpoint.windows")
    if every == 0 and reliability_mode(conf) == CHECKPOINT:
        return CHECKPOINT_MODE_WINDOWS
    return every


__all__ = ["ACKING", "CHECKPOINT", "MODES", "NONE", "checkpoint_every", "reliability_mode"]
