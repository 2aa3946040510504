"""Masking secrets in the confs the open UI API serves.

A key is secret when any of the patterns of ``ui.conf.mask.patterns`` (regular expressions,
case-insensitive) is found in it: whole dotted keys (``spark.ssl.keyPassword``,
``aws.secret.access.key``) and the keys of nested values alike
(``topology.state.provider.config: {"password": ...}``), at any depth. A URL's password
(``redis://user:pw@host``) is masked in any value. Unset values stay as they are, so that
an operator still sees that a secret is not set.

Example:
    >>> mask_secrets({"storm.cluster.token": "s3cr3t", "nimbus.port": 6627})
    {'storm.cluster.token': '********', 'nimbus.port': 6627}
    >>> mask_secrets({"db": {"db_password": "pw", "url": "redis://u:pw@h:6379/0"}})
    {'db': {'db_password': '********', 'url': 'redis://u:********@h:6379/0'}}
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from sparkstorm.config.keys import MASK_PATTERNS

MASK = "********"
DEFAULT_PATTERNS = MASK_PATTERNS
"""``ui.conf.mask.patterns``' default."""
_URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^/\s:@]*:)(?P<password>[^/\s@]+)@",
                           re.IGNORECASE)
MAX_DEPTH = 32


def secret_matcher(patterns: Iterable[str] = DEFAULT_PATTERNS) -> re.Pattern[str]:
    """One regular expression that finds any of ``patterns`` in a key (none: never)."""
    joined = "|".join(f"(?:{p})" for p in patterns)
    return re.compile(joined or "(?!)", re.IGNORECASE)


_DEFAULT = secret_matcher()


def mask_secrets(conf: dict[str, Any], matcher: re.Pattern[str] | None = None) -> dict[str, Any]:
    """``conf`` with every secret value replaced by :data:`MASK` (see the module docs)."""
    masked = _mask(conf, matcher or _DEFAULT, 0)
    assert isinstance(masked, dict)
    return masked


def _mask(value: Any, matcher: re.Pattern[str], depth: int) -> Any:
    if depth > MAX_DEPTH:
        return MASK  # deeper than any conf we accept: show nothing rather than risk it
    if isinstance(value, dict):
        return {key: MASK if value_set(item) and not isinstance(item, bool)
                and matcher.search(str(key))
                else _mask(item, matcher, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_mask(item, matcher, depth + 1) for item in value]
    if isinstance(value, str) and "://" in value:
        return _URL_PASSWORD.sub(lambda m: f"{m['head']}{MASK}@", value)
    return value


def value_set(value: Any) -> bool:
    """Whether a secret has a value worth hiding (unset ones stay visible)."""
    return value not in (None, "")


__all__ = ["DEFAULT_PATTERNS", "MASK", "mask_secrets", "secret_matcher"]
