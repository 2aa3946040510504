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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sparkstorm.cluster.nimbus.service import Nimbus

logger = logging.getLogger(__name__)


class Cleaner:
    """Cleans one Nimbus's inbox, stormdist and leftover state.

    Args:
        nimbus: the Nimbus (conf, clock, lock, state, inbox, stormdist).
    """

    def __init__(self, nimbus: Nimbus) -> None:
        self.nimbus = nimbus
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Clean once now, then every ``nimbus.cleanup.inbox.freq.secs`` on a daemon
        thread."""
        self.clean_all()
        self._thread = threading.Thread(target=self._loop, name="nimbus-cleaner", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def _loop(self) -> None:
        period = float(str(self.nimbus.conf.get("nimbus.cleanup.inbox.freq.secs") or 600))
        while not self._stop.wait(max(0.1, period)):
            self.clean_all()

    def clean_all(self) -> None:
        """One round; a failure is logged and the next round tries again."""
        try:
            self.clean_inbox()
            self.clean_dead_topologies()
        except Exception:  # noqa: BLE001 - the cleaner must outlive one bad round
            logger.exception("nimbus cleanup failed; trying again next round")

    def clean_inbox(self) -> list[str]:
        """Delete uploads older than ``nimbus.inbox.jar.expiration.secs``; return their
        file names."""
        expiration = float(str(self.nimbus.conf.get("nimbus.inbox.jar.expiration.secs")
                               or 3600))
        removed = self.nimbus.inbox.remove_older_than(self.nimbus.clock() - expiration)
        if removed:
            logger.info("removed %d expired upload(s) from the inbox: %s", len(removed),
                        removed)
        return removed

    def clean_dead_topologies(self) -> list[str]:
        """Remove files and state of topologies that have no StormBase; return their ids."""
        nimbus = self.nimbus
        with nimbus.lock:  # a submit writes its folder before its StormBase
            alive = set(nimbus.state.active_storms())
            staged = nimbus.stormdist.remove_staging()
            if staged:
                logger.info("removed interrupted submissions %s", staged)
            dead = {tid for tid in nimbus.stormdist.topology_ids() if tid not in alive}
            dead |= {tid for tid in nimbus.state.heartbeat_storms() if tid not in alive}
            dead |= {tid for tid in nimbus.state.task_storms() if tid not in alive}
            dead |= {tid for tid in nimbus.state.assignments() if tid not in alive}
            for topology_id in sorted(dead):
                logger.info("cleaning up topology %s, which is no longer alive", topology_id)
                nimbus.state.teardown_topology(topology_id)
                nimbus.stormdist.remove(topology_id)
        return sorted(dead)
