"""Redis: lookup, store and filter bolts, storm-redis's with Python names, pipelined per window.

Modules: ``settings`` (the checked settings), ``commands`` (the command of each data type),
``bolts`` (:class:`RedisStoreBolt`, :class:`RedisLookupBolt`, :class:`RedisFilterBolt`). Names
are imported on first use (PEP 562), so importing the package does not import ``redis``.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "RedisStoreBolt": "bolts",
    "RedisLookupBolt": "bolts",
    "RedisFilterBolt": "bolts",
    "RedisSettings": "settings",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        msg = f"module 'sparkstorm.connectors.redis' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"sparkstorm.connectors.redis.{where}"), name)
    globals()[name] = value
    return value


__all__ = sorted(_WHERE)
