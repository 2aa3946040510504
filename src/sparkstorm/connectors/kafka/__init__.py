"""Kafka: ``KafkaSpout`` and ``KafkaBolt``, storm-kafka-client's with Python names.

Modules: ``config`` (:class:`KafkaSpoutConfig`, the enums, the retry back-off),
``translator`` (records to tuples), ``partitions`` (which task reads which partition),
``offsets`` (what may be committed), ``spout``, ``bolt``, ``batch`` (their columnar forms).
Names are imported on first use (PEP 562), so ``from sparkstorm.connectors.kafka import
KafkaSpout`` works and importing one module does not import the others.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "KafkaSpout": "spout",
    "KafkaBolt": "bolt",
    "KafkaBatchSpout": "batch",
    "KafkaBatchBolt": "batch",
    "KafkaSpoutConfig": "config",
    "FirstPollOffsetStrategy": "config",
    "ProcessingGuarantee": "config",
    "RetryBackoff": "config",
    "RecordTranslator": "translator",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        msg = f"module 'sparkstorm.connectors.kafka' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"sparkstorm.connectors.kafka.{where}"), name)
    globals()[name] = value
    return value


__all__ = sorted(_WHERE)
