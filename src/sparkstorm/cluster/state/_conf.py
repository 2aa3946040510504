"""Reading the ``storm.*`` keys the state store needs from a (possibly partial) conf."""

from __future__ import annotations

from collections.abc import Mapping

from sparkstorm.config.keys import KEYS
from sparkstorm.errors import ConfigError


def _value(conf: Mapping[str, object], key: str, kind: type | tuple[type, ...],
           kind_name: str) -> object:
    value = conf.get(key, KEYS[key].default)
    if isinstance(value, bool) or not isinstance(value, kind):
        msg = (
            f"config key {key!r} must be {kind_name} to open the state store, got {value!r}; "
            f"{key}: {KEYS[key].doc}; fix it in sparkstorm.yaml or with -c {key}=..."
        )
        raise ConfigError(msg, code="CONFIG_WRONG_TYPE")
    return value


def conf_int(conf: Mapping[str, object], key: str) -> int:
    """Return an int key, the declared default when absent."""
    value = _value(conf, key, int, "an int")
    assert isinstance(value, int)
    return value


def conf_str(conf: Mapping[str, object], key: str) -> str:
    """Return a str key, the declared default when absent."""
    value = _value(conf, key, str, "a str")
    assert isinstance(value, str)
    return value


def conf_str_list(conf: Mapping[str, object], key: str) -> list[str]:
    """Return a list-of-str key (a single str is taken as a one-item list)."""
    value = _value(conf, key, (list, tuple, str), "a list of str")
    items = [value] if isinstance(value, str) else list(value)  # type: ignore[call-overload]
    if not items or not all(isinstance(item, str) and item for item in items):
        msg = (
            f"config key {key!r} must be a non-empty list of host names, got {value!r}; "
            f"{key}: {KEYS[key].doc}"
        )
        raise ConfigError(msg, code="CONFIG_WRONG_TYPE")
    return [str(item) for item in items]
