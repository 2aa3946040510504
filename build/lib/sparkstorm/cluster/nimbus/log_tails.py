"""Workers' log tails on demand, for the UI's live log viewer.

This is Storm's logviewer, through the umbilical so that it works whatever host a worker runs on.

Reading ``GET /api/v1/topology/{id}/logs?worker=<id>&source=<name>`` marks that log as
wanted for :data:`INTEREST_SECS`; while it is, the worker's heartbeat answer carries
``"send_logs": ["<name>", ...]`` and the worker posts the tails of those logs
(``POST /api/v1/worker/{id}/logs``, ``{"topology_id", "sources": {"<name>": "<label>"},
"tails": {"<name>": "<text>"}}``). Sources are ``worker`` (the worker's own log) and
``executor-<id>`` (each executor process's). Tails are kept in memory only: they are a
debugging aid, not state.

Example:
    >>> now = [100.0]
    >>> tails = LogTails(lambda: now[0])
    >>> tails.want("w1", "worker"); tails.wanted("w1")
    ['worker']
    >>> now[0] += INTEREST_SECS + 1; tails.wanted("w1")
    []
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

INTEREST_SECS = 10.0
"""How long a read keeps a log wanted (the page reads it every second)."""
MAX_TAIL_CHARS = 64 * 1024
"""The most of one log's end a worker sends and Nimbus keeps."""
SOURCE = re.compile(r"^(worker|executor-\d{1,6})$")


class LogTails:
    """The wanted logs and the latest tails of each worker."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self._wanted: dict[str, dict[str, float]] = {}
        self._tails: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def want(self, worker_id: str, source: str) -> None:
        """Ask ``worker_id`` for ``source``'s tail at its next heartbeats."""
        with self._lock:
            self._wanted.setdefault(worker_id, {})[source] = self.clock() + INTEREST_SECS

    def wanted(self, worker_id: str) -> list[str]:
        """The sources of ``worker_id`` someone is reading now."""
        now = self.clock()
        with self._lock:
            sources = self._wanted.get(worker_id, {})
            for source in [s for s, until in sources.items() if until < now]:
                del sources[source]
            if not sources:
                self._wanted.pop(worker_id, None)
            return sorted(sources)

    def store(self, worker_id: str, body: dict[str, Any]) -> None:
        """Keep what a worker sent (its sources' labels and the tails asked for)."""
        labels, tails = body.get("sources"), body.get("tails")
        labels = labels if isinstance(labels, dict) else {}
        tails = tails if isinstance(tails, dict) else {}
        with self._lock:
            mine = self._tails.setdefault(worker_id, {"sources": {}, "tails": {}})
            mine["sources"] = {str(k): str(v) for k, v in labels.items()
                               if SOURCE.match(str(k))}
            for source, text in tails.items():
                if SOURCE.match(str(source)):
                    mine["tails"][str(source)] = {"text": str(text)[-MAX_TAIL_CHARS:],
                                                  "timeSecs": self.clock()}

    def read(self, worker_id: str, source: str) -> dict[str, Any]:
        """The latest tail of ``source`` and the worker's sources.

        The tail's ``text`` is None before the worker sent one.
        """
        with self._lock:
            mine = self._tails.get(worker_id, {"sources": {}, "tails": {}})
            tail = mine["tails"].get(source) or {}
            return {"sources": dict(mine["sources"]) or {"worker": "worker"},
                    "text": tail.get("text"), "timeSecs": tail.get("timeSecs")}

    def forget(self, worker_ids: set[str]) -> None:
        """Drop the tails of workers that are gone."""
        with self._lock:
            for worker_id in [w for w in self._tails if w not in worker_ids]:
                del self._tails[worker_id]
