"""Nimbus's cleaner: expired inbox uploads, and what killed topologies left behind.

- Every ``nimbus.cleanup.inbox.freq.secs`` it deletes inbox uploads (finished ``.zip`` or
  partial ``.part``) older than ``nimbus.inbox.jar.expiration.secs`` (Storm's
  ``clean-inbox``); a submit naming such an upload then gets ``NO_SUCH_UPLOAD``.
- At start and at each round it removes the ``stormdist`` folders of topologies the store no
  longer has (a Nimbus that died between forgetting a killed topology and deleting its
  files), staging folders of interrupted submits, and heartbeats, task infos, errors and
  assignments left without a StormBase (Storm's ``do-cleanup``).
- The checkpoint folder of a killed topology (``<topology.checkpoint.dir>/<topology id>``) is
  noted when Nimbus forgets the topology (:meth:`Cleaner.topology_removed`, or a round that
  finds its leftovers) and deleted by the first round ``topology.checkpoint.retention.secs``
  later; the notes are kept in ``<storm.local.dir>/nimbus/checkpoint-removals.json``, so a
  restarted Nimbus still deletes them. A topology that names its checkpoints with
  ``topology.checkpoint.id`` keeps them (they are meant for a restart).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from sparkstorm.checkpoint.store import checkpoint_root, remove_checkpoints
from sparkstorm.cluster.nimbus.inbox import Inbox
from sparkstorm.cluster.nimbus.stormdist import StormDist
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.config import conf_float, conf_optional_str
from sparkstorm.config.reliability import checkpoint_every
from sparkstorm.periodic import PeriodicThread

logger = logging.getLogger(__name__)

MIN_PERIOD_SECS = 0.1
"""The cleaner's shortest period: a configured 0 must not spin a core."""
REMOVALS = "checkpoint-removals.json"
"""Checkpoint folders of killed topologies and when each may go (next to ``stormdist``)."""


class Cleaner:
    """Cleans one Nimbus's inbox, stormdist and leftover state.

    Args:
        state: the cluster state (what has a StormBase is alive).
        inbox: the upload folder.
        stormdist: the submitted topologies' folders.
        lock: Nimbus's lock (a submit writes its folder before its StormBase).
        expiration_secs: an upload older than this goes
            (``nimbus.inbox.jar.expiration.secs``).
        period_secs: how often a round runs (``nimbus.cleanup.inbox.freq.secs``).
        clock: epoch seconds (compared with the uploads' modification times).
    """

    def __init__(self, state: ClusterState, inbox: Inbox, stormdist: StormDist,
                 lock: threading.RLock, *, expiration_secs: float, period_secs: float,
                 clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self.inbox = inbox
        self.stormdist = stormdist
        self.lock = lock
        self.expiration_secs = expiration_secs
        self.clock = clock
        self.removals_file = stormdist.root.parent / REMOVALS
        self._timer = PeriodicThread("nimbus-cleaner", max(MIN_PERIOD_SECS, period_secs),
                                     self.clean_all, first_now=False)

    def start(self) -> None:
        """Clean once now, then every ``period_secs`` on a daemon thread."""
        self.clean_all()
        self._timer.start()

    def stop(self) -> None:
        """Stop the thread."""
        self._timer.stop(10)

    def clean_all(self) -> None:
        """One round; a failure is logged and the next round tries again."""
        try:
            self.clean_inbox()
            self.clean_dead_topologies()
            self.clean_checkpoints()
        except Exception:  # the cleaner must outlive one bad round
            logger.exception("nimbus cleanup failed; trying again next round")

    def clean_inbox(self) -> list[str]:
        """Delete uploads older than ``expiration_secs``; return their file names."""
        removed = self.inbox.remove_older_than(self.clock() - self.expiration_secs)
        if removed:
            logger.info("removed %d expired upload(s) from the inbox: %s", len(removed),
                        removed)
        return removed

    def clean_dead_topologies(self) -> list[str]:
        """Remove files and state of topologies that have no StormBase; return their ids."""
        state, stormdist = self.state, self.stormdist
        with self.lock:  # a submit writes its folder before its StormBase
            alive = set(state.active_storms())
            staged = stormdist.remove_staging()
            if staged:
                logger.info("removed interrupted submissions %s", staged)
            dead = {tid for tid in stormdist.topology_ids() if tid not in alive}
            dead |= {tid for tid in state.heartbeat_storms() if tid not in alive}
            dead |= {tid for tid in state.task_storms() if tid not in alive}
            dead |= {tid for tid in state.assignments() if tid not in alive}
            for topology_id in sorted(dead):
                logger.info("cleaning up topology %s, which is no longer alive", topology_id)
                state.teardown_topology(topology_id)
                self.topology_removed(topology_id)
                stormdist.remove(topology_id)
        return sorted(dead)

    def topology_removed(self, topology_id: str) -> None:
        """Nimbus forgets ``topology_id``: its checkpoint folder goes after the retention.

        Called before its ``stormdist`` folder is deleted (its conf says where the folder is
        and how long it stays), under Nimbus's lock.
        """
        try:
            conf = self.stormdist.conf(topology_id)
        except (OSError, ValueError):
            return  # no conf left: nothing says where its checkpoints went
        if checkpoint_every(conf) <= 0 or \
                conf_optional_str(conf, "topology.checkpoint.id"):
            return
        removals = self._removals()
        removals[topology_id] = {
            "root": checkpoint_root(conf),
            "remove_at": self.clock() + conf_float(conf, "topology.checkpoint.retention.secs")}
        self._save_removals(removals)

    def clean_checkpoints(self) -> list[str]:
        """Delete the checkpoint folders of killed topologies whose retention is over.

        Returns:
            The topology ids whose folders were deleted (or were gone already).
        """
        with self.lock:
            removals = self._removals()
            due = sorted(tid for tid, note in removals.items()
                         if float(note.get("remove_at", 0)) <= self.clock())
            done = []
            for topology_id in due:
                root = str(removals[topology_id].get("root"))
                try:
                    found = remove_checkpoints(root, topology_id)
                except Exception as exc:  # noqa: BLE001 - tried again next round
                    logger.warning("checkpoints of killed topology %s in %s not removed: %s",
                                   topology_id, root, exc)
                    continue
                if found:
                    logger.info("removed the checkpoints of killed topology %s from %s",
                                topology_id, root)
                del removals[topology_id]
                done.append(topology_id)
            if done:
                self._save_removals(removals)
        return done

    def _removals(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.removals_file.read_text())
        except (OSError, ValueError):
            return {}
        return {str(k): v for k, v in data.items() if isinstance(v, dict)} \
            if isinstance(data, dict) else {}

    def _save_removals(self, removals: dict[str, dict[str, Any]]) -> None:
        staging = self.removals_file.with_name(f".{REMOVALS}.tmp")
        staging.write_text(json.dumps(removals, indent=1, sort_keys=True))
        os.replace(staging, self.removals_file)
