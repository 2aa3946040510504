"""``topology.state.provider``: which :class:`StateProvider` a topology's stateful bolts use.

Example:
    >>> type(state_provider({})).__name__
    'InMemoryStateProvider'
    >>> state_provider({"topology.state.provider": "cassandra"})
    Traceback (most recent call last):
    ...
    sparkstorm.errors.ConfigError: [STATE_PROVIDER_UNKNOWN] ...
"""

from __future__ import annotations

from collections.abc import Mapping

from sparkstorm.config.access import conf_str
from sparkstorm.errors import ConfigError
from sparkstorm.state.base import StateProvider
from sparkstorm.state.memory import InMemoryStateProvider

ALIASES = {
    "memory": "memory",
    "org.apache.storm.state.InMemoryKeyValueStateProvider": "memory",
    "redis": "redis",
    "org.apache.storm.redis.state.RedisKeyValueStateProvider": "redis",
}
"""Our names and Storm's provider classes, so a Storm topology's conf works unchanged."""


def state_provider(conf: Mapping[str, object]) -> StateProvider:
    """The provider ``conf`` names; called once per executor of a stateful bolt.

    Raises:
        ConfigError: ``STATE_PROVIDER_UNKNOWN`` for a name that is not known.
    """
    name = conf_str(conf, "topology.state.provider")
    kind = ALIASES.get(name)
    if kind == "memory":
        return InMemoryStateProvider()
    if kind == "redis":
        from sparkstorm.state.redis_state import RedisStateProvider

        config = conf.get("topology.state.provider.config")
        return RedisStateProvider(config if isinstance(config, str | Mapping) else None)
    msg = (
        f"topology.state.provider is {name!r}, which is not a known state provider; use "
        f"one of {sorted(ALIASES)} (memory keeps the state in the checkpoints)"
    )
    raise ConfigError(msg, code="STATE_PROVIDER_UNKNOWN")
