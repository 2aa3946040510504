"""Files: ``FileBolt`` and ``FileSpout``, storm-hdfs's ideas on fsspec paths.

Modules: ``options`` (the settings, checked), ``formats`` (record writers and line
parsers), ``naming`` (file names), ``fs`` (fsspec helpers), ``sink`` (:class:`FileBolt`),
``locks`` (the spout's lock files), ``spout`` (:class:`FileSpout`). Names are imported on
first use (PEP 562), so ``from sparkstorm.connectors.files import FileBolt`` works and a Flux
file reaches ``sparkstorm.connectors.files.FileBolt``.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "FileBolt": "sink",
    "FileSpout": "spout",
    "BoltOptions": "options",
    "SpoutOptions": "options",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        msg = f"module 'sparkstorm.connectors.files' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"sparkstorm.connectors.files.{where}"), name)
    globals()[name] = value
    return value


__all__ = sorted(_WHERE)
