"""SQL: an insert bolt and a lookup bolt, storm-jdbc's with Python names, on SQLAlchemy.

Modules: ``settings`` (the checked settings), ``bolts`` (:class:`SqlInsertBolt`,
:class:`SqlLookupBolt`). Names are imported on first use (PEP 562), so importing the package
does not import SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "SqlInsertBolt": "bolts",
    "SqlLookupBolt": "bolts",
    "SqlSettings": "settings",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        msg = f"module 'sparkstorm.connectors.sql' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"sparkstorm.connectors.sql.{where}"), name)
    globals()[name] = value
    return value


__all__ = sorted(_WHERE)
