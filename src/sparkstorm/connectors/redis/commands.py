"""The Redis commands of each data type, as storm-redis's bolts issue them.

A command is a tuple of arguments for ``execute_command``. Keys and members are str, bytes or
int (a float key is refused: its text is ambiguous); values are str, bytes, int or float as
they are, and anything else but None as JSON.

Example:
    >>> from sparkstorm.connectors.redis.settings import RedisSettings
    >>> s = RedisSettings.read({"data_type": "sorted_set", "additional_key": "board"}, "store")
    >>> store_commands(s, "ann", 3)
    [('ZADD', 'board', 3.0, 'ann')]
    >>> lookup_command(s.__class__.read({"data_type": "list"}, "lookup"), "queue")
    ('LRANGE', 'queue', 0, -1)
"""

from __future__ import annotations

import json
from typing import Any

from sparkstorm.connectors.redis.settings import RedisSettings
from sparkstorm.connectors.window_batch import ConnectorError

Command = tuple[Any, ...]


def unmappable(problem: str) -> ConnectorError:
    """The error of a tuple whose key or value cannot be written."""
    return ConnectorError(problem, code="REDIS_TUPLE_UNMAPPABLE")


def redis_key(value: Any, field: str) -> str | bytes | int:
    """``value`` (of the tuple's field ``field``) as a Redis key or member."""
    kind = type(value)
    if (kind is str or kind is bytes) and value:
        return value  # type: ignore[no-any-return]
    if kind is int:
        return value  # type: ignore[no-any-return]
    msg = f"the key (field {field!r}) must be a non-empty str, bytes or int, got {value!r}"
    raise unmappable(msg)


def redis_value(value: Any, field: str) -> str | bytes | int | float:
    """``value`` (of the tuple's field ``field``) as a Redis value: as it is, or as JSON."""
    kind = type(value)
    if kind is str or kind is bytes or kind is int or kind is float:
        return value  # type: ignore[no-any-return]
    if value is None:
        msg = f"the value (field {field!r}) is None; Redis stores no null"
        raise unmappable(msg)
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as exc:
        msg = f"the value (field {field!r}) {value!r} is not JSON-serializable ({exc})"
        raise unmappable(msg) from None


def score(value: Any) -> float:
    """A sorted set's score: a number, or a str holding one."""
    try:
        if isinstance(value, bool):
            raise ValueError
        return float(value)
    except (TypeError, ValueError):
        msg = f"a sorted set's score must be a number, got {value!r}"
        raise unmappable(msg) from None


def store_commands(s: RedisSettings, key: Any, value: Any) -> list[Command]:
    """What :class:`RedisStoreBolt` sends for one tuple (Storm's ``RedisStoreBolt``)."""
    key = redis_key(key, s.key_field)
    what = s.value_field
    container = s.additional_key
    commands: list[Command]
    if s.data_type == "string":
        stored = redis_value(value, what)
        return [("SET", key, stored) + (("EX", s.ttl_seconds) if s.ttl_seconds else ())]
    if s.data_type == "hash":
        commands, expiring = [("HSET", container, key, redis_value(value, what))], container
    elif s.data_type == "sorted_set":
        commands, expiring = [("ZADD", container, score(value), key)], container
    elif s.data_type == "list":
        commands, expiring = [("RPUSH", key, redis_value(value, what))], key
    elif s.data_type == "set":
        commands, expiring = [("SADD", key, redis_value(value, what))], key
    else:
        commands, expiring = [("PFADD", key, redis_value(value, what))], key
    if s.ttl_seconds:
        commands.append(("EXPIRE", expiring, s.ttl_seconds))
    return commands


def lookup_command(s: RedisSettings, key: Any) -> Command:
    """What :class:`RedisLookupBolt` sends for one tuple.

    Storm's ``RedisLookupBolt`` but for lists: the whole list (``LRANGE 0 -1``) rather than
    ``LPOP``, so that a replayed tuple reads what the first try read.
    """
    key = redis_key(key, s.key_field)
    return {
        "string": ("GET", key),
        "hash": ("HGET", s.additional_key, key),
        "list": ("LRANGE", key, 0, -1),
        "set": ("SCARD", key),
        "sorted_set": ("ZSCORE", s.additional_key, key),
        "hyperloglog": ("PFCOUNT", key),
    }[s.data_type]


def filter_command(s: RedisSettings, key: Any) -> Command:
    """What :class:`RedisFilterBolt` sends for one tuple: is the key there?

    Storm's ``RedisFilterBolt``, and lists too (``LPOS``: is the key an element of the list
    ``additional_key``).
    """
    key = redis_key(key, s.key_field)
    return {
        "string": ("EXISTS", key),
        "hash": ("HEXISTS", s.additional_key, key),
        "list": ("LPOS", s.additional_key, key),
        "set": ("SISMEMBER", s.additional_key, key),
        "sorted_set": ("ZRANK", s.additional_key, key),
        "hyperloglog": ("PFCOUNT", key),
    }[s.data_type]


def decoded(raw: Any) -> Any:
    """A reply as Python values: UTF-8 text as str (other bytes stay bytes), lists item-wise."""
    if isinstance(raw, bytes):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw
    if isinstance(raw, list):
        return [decoded(item) for item in raw]
    return raw


def lookup_value(s: RedisSettings, raw: Any) -> Any:
    """The looked-up value of a reply: str (bytes if not UTF-8), int, float, a list, or None."""
    if s.data_type == "sorted_set" and raw is not None:
        return float(raw)
    return decoded(raw)


def found(s: RedisSettings, raw: Any) -> bool:
    """Whether a filter reply says the key is there."""
    if s.data_type in ("string", "hyperloglog"):
        return bool(raw)  # EXISTS 0/1, PFCOUNT 0..n
    if s.data_type in ("list", "sorted_set"):
        return raw is not None  # LPOS, ZRANK: the position or nil
    return bool(raw)  # HEXISTS, SISMEMBER
