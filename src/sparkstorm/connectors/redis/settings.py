"""The settings of the Redis bolts (storm-redis's ``RedisDataTypeDescription`` and mappers).

Example:
    >>> s = RedisSettings.read({"data_type": "HASH", "additional_key": "counts"}, "store")
    >>> s.data_type, s.key_field, s.value_field, s.additional_key
    ('hash', 'key', 'value', 'counts')
    >>> RedisSettings.read({"data_type": "string"}, "lookup").output_fields
    ['key', 'value']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from sparkstorm.connectors.settings_check import SettingsReader

DATA_TYPES = {"string": "string", "hash": "hash", "set": "set", "sorted_set": "sorted_set",
              "sortedset": "sorted_set", "list": "list", "hyperloglog": "hyperloglog",
              "hyper_log_log": "hyperloglog"}
"""Accepted names of a data type (Storm's ``STRING``... ``HYPER_LOG_LOG`` too) and the one kept."""
NEEDS_ADDITIONAL_KEY = {
    "store": ("hash", "sorted_set"),
    "lookup": ("hash", "sorted_set"),
    "filter": ("hash", "set", "sorted_set", "list"),
}
"""Data types whose commands name a container (``additional_key``) and a member (the key)."""
KINDS = {"store": "RedisStoreBolt", "lookup": "RedisLookupBolt", "filter": "RedisFilterBolt"}
SETTINGS = ("url", "data_type", "key_field", "value_field", "additional_key", "ttl_seconds",
            "output_fields", "value_output", "timeout_ms")
DEFAULT_URL = "redis://127.0.0.1:6379/0"


@dataclass(frozen=True)
class RedisSettings:
    """One Redis bolt's settings, checked (see docs/connectors.md for each one)."""

    kind: str
    url: str
    data_type: str
    key_field: str
    value_field: str
    additional_key: str | None
    ttl_seconds: int | None
    output_fields: list[str]
    value_output: str
    timeout_ms: int

    @classmethod
    def read(cls, raw: Mapping[str, Any], kind: str) -> RedisSettings:
        """Check ``raw`` for a bolt of ``kind`` (store, lookup or filter).

        Raises:
            TopologyError: ``REDIS_CONFIG_INVALID`` naming the setting and how to fix it.
        """
        given = {k: v for k, v in raw.items() if k != "kind"}
        reader = SettingsReader(given, SETTINGS, KINDS[kind], "REDIS_CONFIG_INVALID")
        data_type = reader.choice("data_type", DATA_TYPES)
        key_field = reader.text("key_field", "key", required=True) or "key"
        value_field = reader.text("value_field", "value", required=True) or "value"
        additional_key = reader.text("additional_key")
        if data_type in NEEDS_ADDITIONAL_KEY[kind] and additional_key is None:
            reader.invalid(f"data_type {data_type!r} needs additional_key, the name of the "
                           f"{data_type.replace('_', ' ')} that the tuples' keys are members "
                           "of (Storm's additionalKey)")
        value_output = reader.text("value_output", "value", required=True) or "value"
        default_outputs = {"store": None, "lookup": [key_field, value_output],
                           "filter": [key_field]}[kind]
        outputs = reader.names("output_fields", default_outputs) or []
        if kind == "store" and outputs:
            reader.invalid("output_fields: the store bolt emits nothing but its errors stream")
        ttl = reader.whole("ttl_seconds", None, 1)
        if ttl is not None and kind != "store":
            reader.invalid("ttl_seconds applies to the store bolt only")
        url = reader.text("url", DEFAULT_URL, required=True)
        assert url is not None
        if not url.startswith(("redis://", "rediss://", "unix://")):
            reader.invalid(f"url must be redis://[[user]:password@]host:port/db (rediss:// "
                           f"with TLS, unix:// for a socket), got {url!r}")
        timeout = reader.whole("timeout_ms", 2000, 1)
        assert timeout is not None
        return cls(kind, url, data_type, key_field, value_field, additional_key, ttl, outputs,
                   value_output, timeout)

    def to_dict(self) -> dict[str, Any]:
        """The settings as the component config keeps them."""
        return {k: v for k, v in asdict(self).items()
                if k != "kind" and v is not None and v != []}
