"""Storm UI's dynamic log levels and debug sampling, kept by Nimbus for a topology's workers.

The levels come from ``/api/v1/topology/:id/logconfig`` and the sampling from
``/api/v1/topology/:id[/component/:c]/debug/enable|disable/:pct``. Nimbus keeps them in memory (a
restarted Nimbus starts without them, as the levels time out anyway) and hands them to the
topology's workers with every heartbeat answer as
``"log_control": {"levels": {logger: level}, "sampling": {component or "*": pct}}``; workers pass
them on to their executor processes (:mod:`sparkstorm.engine.executor.log_levels`).

Example:
    >>> now = [100.0]
    >>> control = LogControl(lambda: now[0])
    >>> control.set_levels("t-1-1", {"namedLoggerLevels": {"sparkstorm.component.count": {
    ...     "target_level": "DEBUG", "timeout": 30}}})["namedLoggerLevels"][
    ...     "sparkstorm.component.count"]["timeout_epoch"]
    130.0
    >>> control.orders("t-1-1")["levels"]
    {'sparkstorm.component.count': 'DEBUG'}
    >>> now[0] = 131.0; control.orders("t-1-1")["levels"]
    {}
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.engine import STORM_LEVELS

DEFAULT_SAMPLING_PCT = 10.0
"""Storm's ``samplingPct`` when debugging is off."""
MAX_SAMPLING_PCT = 100.0
"""Sampling every tuple."""
ALL = "*"


class LogControl:
    """Log levels and sampling per topology."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self._levels: dict[str, dict[str, dict[str, Any]]] = {}
        self._sampling: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()

    def levels(self, topology_id: str) -> dict[str, Any]:
        """Storm's ``{"namedLoggerLevels": {...}}`` of a topology (timed out ones gone)."""
        with self._lock:
            return {"namedLoggerLevels": {k: dict(v) for k, v in
                                          self._live(topology_id).items()}}

    def _live(self, topology_id: str) -> dict[str, dict[str, Any]]:
        now = self.clock()
        mine = self._levels.get(topology_id, {})
        for name in [n for n, entry in mine.items() if entry["timeout_epoch"] and
                     entry["timeout_epoch"] <= now]:
            del mine[name]
        return mine

    def set_levels(self, topology_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Apply Storm's logconfig body to the loggers it names.

        Each named logger gets its ``target_level`` for ``timeout`` seconds (0: until changed); a
        null or empty ``target_level`` removes it.

        Raises:
            NimbusError: ``BAD_REQUEST`` for a malformed body or an unknown level.
        """
        named = body.get("namedLoggerLevels") if isinstance(body, dict) else None
        if not isinstance(named, dict):
            msg = ('send {"namedLoggerLevels": {"<logger>": {"target_level": "DEBUG", '
                   '"timeout": 30}}}')
            raise NimbusError(msg, code="BAD_REQUEST")
        now = self.clock()
        with self._lock:
            mine = self._levels.setdefault(topology_id, {})
            for name, entry in named.items():
                entry = entry if isinstance(entry, dict) else {}
                level = str(entry.get("target_level") or "").upper()
                if not level:
                    mine.pop(str(name), None)
                    continue
                if level not in STORM_LEVELS:
                    msg = (f"unknown log level {level!r} for logger {name!r}; use one of "
                           f"{sorted(STORM_LEVELS)}")
                    raise NimbusError(msg, code="BAD_REQUEST")
                timeout = _number(entry.get("timeout"), f"timeout of logger {name!r}")
                mine[str(name)] = {"target_level": level,
                                   "reset_level": str(entry.get("reset_level") or "INFO"),
                                   "timeout": int(timeout),
                                   "timeout_epoch": now + timeout if timeout > 0 else 0}
        return self.levels(topology_id)

    def set_sampling(self, topology_id: str, component: str | None, enable: bool,
                     pct: float) -> None:
        """Enable (``pct`` percent) or disable debug sampling of one component or all."""
        if enable and not 0 < pct <= MAX_SAMPLING_PCT:
            msg = (f"the sampling percentage must be above 0 and at most {MAX_SAMPLING_PCT:g}, "
                   f"got {pct}")
            raise NimbusError(msg, code="BAD_REQUEST")
        with self._lock:
            mine = self._sampling.setdefault(topology_id, {})
            key = component or ALL
            if enable:
                mine[key] = float(pct)
            else:
                mine.pop(key, None)
                if key == ALL:
                    mine.clear()

    def sampling(self, topology_id: str, component: str | None) -> float | None:
        """The sampling percentage of a component (or of the whole topology).

        None when debugging is off for it.
        """
        with self._lock:
            mine = self._sampling.get(topology_id, {})
            return mine.get(component or ALL, mine.get(ALL))

    def orders(self, topology_id: str) -> dict[str, Any]:
        """What the topology's workers apply now."""
        with self._lock:
            return {"levels": {name: entry["target_level"]
                               for name, entry in self._live(topology_id).items()},
                    "sampling": dict(self._sampling.get(topology_id, {}))}

    def forget(self, topology_id: str) -> None:
        """Drop a killed topology's settings."""
        with self._lock:
            self._levels.pop(topology_id, None)
            self._sampling.pop(topology_id, None)


def _number(value: object, what: str) -> float:
    if value in (None, ""):
        return 0.0
    try:
        return max(0.0, float(str(value)))
    except ValueError as exc:
        msg = f"{what} must be a number of seconds, got {value!r}"
        raise NimbusError(msg, code="BAD_REQUEST") from exc
