"""Typed reads of configuration keys: the declared default is the only default.

Call sites read ``conf_float(conf, "nimbus.task.timeout.secs")`` instead of restating the
default (``float(conf.get(...) or 30)``, which also turned a configured 0 into 30). A key
that is absent, or present as ``None`` while its declared default is not ``None``, reads as
its declared default. A value of the wrong type is a ``CONFIG_WRONG_TYPE`` error naming the
key, what it got and how to fix it.

Example:
    >>> conf_float({}, "nimbus.task.timeout.secs")
    30.0
    >>> conf_int({"topology.spout.buffer.size": 0}, "topology.spout.buffer.size")
    0
    >>> conf_optional_int({}, "topology.max.spout.pending") is None
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from sparkstorm.config.keys import KEYS
from sparkstorm.errors import ConfigError


def _raw(conf: Mapping[str, object], key: str) -> object:
    value = conf.get(key)
    return KEYS[key].default if value is None else value


def _wrong_type(key: str, value: object, expected: str) -> ConfigError:
    msg = (
        f"config key {key!r} must be {expected}, got {value!r} ({type(value).__name__}); "
        f"{key}: {KEYS[key].doc}; fix it in sparkstorm.yaml, the topology's conf or with "
        f"-c {key}=..."
    )
    return ConfigError(msg, code="CONFIG_WRONG_TYPE")


def conf_int(conf: Mapping[str, object], key: str) -> int:
    """Return an int key (the declared default when unset).

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` when the value is not an int (bools are refused).
    """
    value = _raw(conf, key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong_type(key, value, "an int")
    return value


def conf_optional_int(conf: Mapping[str, object], key: str) -> int | None:
    """Return an int key whose declared default is ``None`` (unset), or ``None``.

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` when set to anything but an int.
    """
    return None if _raw(conf, key) is None else conf_int(conf, key)


def conf_float(conf: Mapping[str, object], key: str) -> float:
    """Return a float key (ints accepted; the declared default when unset).

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` when the value is not a number.
    """
    value = _raw(conf, key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong_type(key, value, "a number")
    return float(value)


def conf_bool(conf: Mapping[str, object], key: str) -> bool:
    """Return a bool key (the declared default when unset).

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` when the value is not ``true``/``false``.
    """
    value = _raw(conf, key)
    if not isinstance(value, bool):
        raise _wrong_type(key, value, "true or false")
    return value


def conf_str(conf: Mapping[str, object], key: str) -> str:
    """Return a str key (the declared default when unset).

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` when the value is not a string.
    """
    value = _raw(conf, key)
    if not isinstance(value, str):
        raise _wrong_type(key, value, "a string")
    return value


def conf_optional_str(conf: Mapping[str, object], key: str) -> str | None:
    """Return a str key whose declared default is ``None`` (unset), or ``None``.

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` when set to anything but a string.
    """
    return None if _raw(conf, key) is None else conf_str(conf, key)


def conf_str_list(conf: Mapping[str, object], key: str) -> list[str]:
    """Return a list-of-strings key; a single string is a one-item list.

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` when the value is empty or holds a non-string.
    """
    value = _raw(conf, key)
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items or not all(
            isinstance(item, str) and item for item in items):
        raise _wrong_type(key, value, "a non-empty list of strings")
    return [str(item) for item in items]


def conf_int_list(conf: Mapping[str, object], key: str) -> list[int]:
    """Return a list-of-ints key (the declared default when unset).

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` when the value is empty or holds a non-int.
    """
    value = _raw(conf, key)
    if not isinstance(value, list | tuple) or not value or not all(
            isinstance(item, int) and not isinstance(item, bool) for item in value):
        raise _wrong_type(key, value, "a non-empty list of ints")
    return [int(item) for item in value]


def local_dir(conf: Mapping[str, object]) -> Path:
    """``storm.local.dir`` as an absolute path: every daemon's state lives under it.

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` when the key is not a string.
    """
    return Path(conf_str(conf, "storm.local.dir")).resolve()
