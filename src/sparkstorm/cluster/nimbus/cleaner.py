"""Nimbus's cleaner: expired inbox uploads, and what killed topologies left behind.

- Every ``nimbus.cleanup.inbox.freq.secs`` it deletes inbox uploads (finished ``.zip`` or
  partial ``.part``) older than ``nimbus.inbox.jar.expiration.secs`` (Storm's
  ``clean-inbox``); a submit naming such an upload then gets ``NO_SUCH_UPLOAD``.
- At start and at each round it removes the ``stormdist`` folders of topologies the store no
  longer has (a Nimbus that died between forgetting a killed topology and deleting its
  files), staging folders of interrupted submits, and heartbeats, task infos, errors and
  assignments left without a StormBase (Storm's ``do-cleanup``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sparkstorm.cluster.nimbus.inbox import Inbox
from sparkstorm.cluster.nimbus.stormdist import StormDist
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.periodic import PeriodicThread

logger = logging.getLogger(__name__)

MIN_PERIOD_SECS = 0.1
"""The cleaner's shortest period: a configured 0 must not spin a core."""


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
                stormdist.remove(topology_id)
        return sorted(dead)
