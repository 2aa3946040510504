"""Load, layer and validate configuration.

Layers, lowest first: declared defaults < YAML file (``sparkstorm.yaml``) < environment
(``SPARKSTORM_<KEY>``) < command line (``key=value``) < topology conf; a component's own
config then overlays the topology conf (:func:`component_conf`). Each layer is validated on
its own, so an error names the layer that holds the bad value.

Example:
    >>> conf = load_config(file=None, env={}, cli=parse_cli_overrides(["topology.workers=3"]))
    >>> conf["topology.workers"], conf["topology.message.timeout.secs"]
    (3, 30)
    >>> spark_settings({"spark.executor.cores": 2})
    {'spark.executor.cores': '2', 'spark.master': 'local[*]'}
"""

from __future__ import annotations

import copy
import difflib
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NoReturn

import yaml  # type: ignore[import-untyped,unused-ignore]

from sparkstorm.config.keys import KEYS, ConfigKey, is_pass_through
from sparkstorm.errors import ConfigError

logger = logging.getLogger(__name__)

DEFAULT_FILE = "sparkstorm.yaml"
"""Looked up in the current directory when no file is given."""

FILE_ENV_VAR = "SPARKSTORM_CONF_FILE"
"""Environment variable naming the configuration file."""

SPARK_CONF_KEY = "topology.spark.conf"
DEFAULT_SPARK_MASTER = "local[*]"
_SPARK_VALUE_TYPES = (str, int, float, bool)
_PLAIN_TYPES = (str, int, float, bool, list, dict)
# Unknown keys in these namespaces are always typos or unsupported settings, so warn.
_SYSTEM_NAMESPACES = ("topology.", "storm.", "nimbus.", "supervisor.", "worker.", "ui.",
                      "drpc.", "logviewer.", "task.", "transactional.", "dev.")


def parse_value(text: str) -> object:
    """Parse a command-line or environment value as a YAML scalar or flow collection.

    ``"10"`` gives ``10``, ``"true"`` gives ``True``, ``"[1,2]"`` gives ``[1, 2]`` and
    ``"abc"`` gives ``"abc"``. Text that is not valid YAML, or that YAML reads as something
    other than a string, number, boolean, null, list or mapping (a date, for instance), is
    returned unchanged.

    Args:
        text: the raw value.

    Returns:
        The parsed value.
    """
    try:
        value: object = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if value is None or isinstance(value, _PLAIN_TYPES) else text


def parse_cli_overrides(items: Sequence[str]) -> dict[str, object]:
    """Parse ``key=value`` command-line overrides; values go through :func:`parse_value`.

    Args:
        items: the overrides, e.g. ``["topology.workers=3", "topology.debug=true"]``.

    Returns:
        The overrides by key, later items winning. They are not validated here.

    Raises:
        ConfigError: ``CONFIG_BAD_OVERRIDE`` when an item has no ``=`` or an empty key.
    """
    overrides: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            msg = (
                f"bad config override {item!r} on the command line; "
                "expected the form key=value, e.g. topology.workers=3"
            )
            raise ConfigError(msg, code="CONFIG_BAD_OVERRIDE")
        overrides[key.strip()] = parse_value(raw)
    return overrides


def _wrong_type(
    key: str, value: object, expected: str, where: str, doc: str, show: str
) -> NoReturn:
    msg = (
        f"config key {key!r} in {where} must be {expected}, got {show} of type "
        f"{type(value).__name__}; {key}: {doc}; fix the value of {key!r} in {where}"
    )
    raise ConfigError(msg, code="CONFIG_WRONG_TYPE")


def _check_range(key: ConfigKey, value: object, where: str) -> None:
    if value is None:
        return
    if key.choices is not None and value not in key.choices:
        allowed = ", ".join(repr(c) for c in key.choices)
        msg = (
            f"config key {key.name!r} in {where} is {key.show(value)}, which is not one of "
            f"{allowed}; {key.name}: {key.doc}"
        )
        raise ConfigError(msg, code="CONFIG_OUT_OF_RANGE")
    if key.minimum is not None and isinstance(value, int | float) and value < key.minimum:
        msg = (
            f"config key {key.name!r} in {where} is {key.show(value)}, below the minimum "
            f"{key.minimum:g}; {key.name}: {key.doc}; set it to at least {key.minimum:g}"
        )
        raise ConfigError(msg, code="CONFIG_OUT_OF_RANGE")


def _check_spark_conf(value: Mapping[object, object], where: str) -> None:
    for name, setting in value.items():
        if not isinstance(name, str) or not isinstance(setting, _SPARK_VALUE_TYPES):
            _wrong_type(
                f"{SPARK_CONF_KEY}[{name!r}]",
                setting,
                "str, int, float or bool",
                where,
                "a Spark setting, passed to Spark as a string",
                repr(setting),
            )


def _check_entry(name: object, value: object, where: str) -> None:
    if not isinstance(name, str):
        msg = f"config key {name!r} in {where} is a {type(name).__name__}; keys must be strings"
        raise ConfigError(msg, code="CONFIG_WRONG_TYPE")
    key = KEYS.get(name)
    if key is not None:
        if not key.accepts(value):
            _wrong_type(name, value, key.type_name, where, key.doc, key.show(value))
        _check_range(key, value, where)
        if name == SPARK_CONF_KEY and isinstance(value, Mapping):
            _check_spark_conf(value, where)
    elif name.startswith("spark.") and not isinstance(value, _SPARK_VALUE_TYPES):
        _wrong_type(
            name,
            value,
            "str, int, float or bool",
            where,
            "a Spark setting, passed to Spark as a string",
            repr(value),
        )


def unknown_key_warnings(conf: Mapping[str, object], *, where: str = "config") -> list[str]:
    """List a warning for each undeclared key that is not ``spark.*`` or ``pystorm.*``.

    Each warning names the key and the nearest declared key. An application's own key (no
    close declared key, outside Storm's namespaces) is not warned about. Non-``spark.*`` entries of
    ``topology.spark.conf`` are warned about too, since they are not passed to Spark.

    Args:
        conf: the configuration to inspect.
        where: the layer or component the configuration comes from, for the message.

    Returns:
        The warnings, in key order; empty when every key is known.
    """
    warnings: list[str] = []
    for name in conf:
        if not isinstance(name, str) or name in KEYS or is_pass_through(name):
            continue
        near = difflib.get_close_matches(name, KEYS, n=1)
        if not near and not name.startswith(_SYSTEM_NAMESPACES):
            continue  # an application's own key (Storm lets components read any key)
        hint = f"did you mean {near[0]!r}?" if near else "no declared key is close"
        warnings.append(
            f"unknown config key {name!r} in {where}: {hint} (kept as is for components)"
        )
    spark_conf = conf.get(SPARK_CONF_KEY)
    if isinstance(spark_conf, Mapping):
        warnings.extend(
            f"{SPARK_CONF_KEY} entry {name!r} in {where} does not start with 'spark.' "
            "and is not passed to Spark"
            for name in spark_conf
            if not (isinstance(name, str) and name.startswith("spark."))
        )
    return warnings


def validate_conf(conf: Mapping[str, object], *, where: str) -> dict[str, object]:
    """Check types and ranges of a configuration and warn about unknown keys.

    Ints are accepted where a float is expected. Unknown keys are kept, and logged as
    warnings naming the nearest declared key (see :func:`unknown_key_warnings`).

    Args:
        conf: the configuration to check.
        where: where it comes from, for messages, e.g. ``"sparkstorm.yaml"``,
            ``"command line"`` or ``"component 'count' config"``.

    Returns:
        A deep copy of ``conf``.

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` when a declared key or a ``spark.*`` key has a
            value of the wrong type; ``CONFIG_OUT_OF_RANGE`` when a declared key's value is
            below its minimum or not one of its choices.
    """
    for name, value in conf.items():
        _check_entry(name, value, where)
    for warning in unknown_key_warnings(conf, where=where):
        logger.warning("%s", warning)
    return copy.deepcopy(dict(conf))


def _bad_file(path: Path, reason: str) -> ConfigError:
    msg = (
        f"config file {str(path)!r} cannot be used: {reason}; "
        f"it must be a YAML mapping of config keys, e.g. 'topology.workers: 2'"
    )
    return ConfigError(msg, code="CONFIG_BAD_FILE")


def read_config_file(path: str | Path) -> dict[str, object]:
    """Read a YAML configuration file (not validated); an empty file gives ``{}``.

    Args:
        path: the file to read.

    Returns:
        The mapping the file holds.

    Raises:
        ConfigError: ``CONFIG_BAD_FILE`` when the file cannot be read, does not parse, or
            does not hold a mapping.
    """
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as stream:  # a stream makes YAML name the file
            data: object = yaml.safe_load(stream)
    except OSError as exc:
        raise _bad_file(path, f"cannot read it ({exc.strerror or exc})") from exc
    except yaml.YAMLError as exc:
        raise _bad_file(path, f"it is not valid YAML ({exc})") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise _bad_file(path, f"it holds a {type(data).__name__}, not a mapping")
    return data


def _find_file(file: str | Path | None, env: Mapping[str, str]) -> Path | None:
    if file is not None:
        return Path(file)
    if env.get(FILE_ENV_VAR):
        return Path(env[FILE_ENV_VAR])
    local = Path(DEFAULT_FILE)
    return local if local.is_file() else None


def env_overrides(env: Mapping[str, str]) -> dict[str, object]:
    """Collect and validate the declared keys set by ``SPARKSTORM_*`` environment variables.

    Args:
        env: the environment, e.g. ``os.environ``.

    Returns:
        The values by key, parsed with :func:`parse_value`.

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` or ``CONFIG_OUT_OF_RANGE`` naming the variable.
    """
    found: dict[str, object] = {}
    for key in KEYS.values():
        if key.env_var in env:
            value = parse_value(env[key.env_var])
            found |= validate_conf({key.name: value}, where=f"environment variable {key.env_var}")
    return found


def load_config(
    *,
    file: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    cli: Mapping[str, object] | None = None,
    topology: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """Build the effective configuration from all layers.

    Args:
        file: YAML file; when None, the file named by ``SPARKSTORM_CONF_FILE`` in ``env``,
            else ``./sparkstorm.yaml`` if it exists, else no file.
        env: environment variables (default ``os.environ``); ``SPARKSTORM_<KEY>`` sets a
            declared key, e.g. ``SPARKSTORM_TOPOLOGY_WORKERS=3``.
        cli: command-line overrides, e.g. from :func:`parse_cli_overrides`.
        topology: the topology's own conf, the highest layer.

    Returns:
        A new dict with every declared key (defaults for unset ones) plus any
        ``spark.*``, ``pystorm.*`` and unknown extra keys.

    Raises:
        ConfigError: ``CONFIG_BAD_FILE`` for an unreadable, unparsable or non-mapping file;
            ``CONFIG_WRONG_TYPE`` or ``CONFIG_OUT_OF_RANGE`` for a bad value in any layer.
    """
    env = os.environ if env is None else env
    conf: dict[str, object] = {name: copy.deepcopy(key.default) for name, key in KEYS.items()}
    path = _find_file(file, env)
    if path is not None:
        conf |= validate_conf(read_config_file(path), where=f"config file {str(path)!r}")
    conf |= env_overrides(env)
    if cli:
        conf |= validate_conf(cli, where="command line")
    if topology:
        conf |= validate_conf(topology, where="topology conf")
    return conf


def component_conf(
    topology_conf: Mapping[str, object],
    component_config: Mapping[str, object],
    component_id: str,
) -> dict[str, object]:
    """Overlay a component's own config on the topology conf.

    Only the component's config is validated; the topology conf is taken as already valid.

    Args:
        topology_conf: the effective topology conf (from :func:`load_config`).
        component_config: the component's own settings, e.g. ``topology.tick.tuple.freq.secs``.
        component_id: the component's id, for messages.

    Returns:
        A new dict: the topology conf updated with the component's config.

    Raises:
        ConfigError: ``CONFIG_WRONG_TYPE`` or ``CONFIG_OUT_OF_RANGE`` naming the component.
    """
    own = validate_conf(component_config, where=f"component {component_id!r} config")
    return copy.deepcopy(dict(topology_conf)) | own


def _spark_str(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def spark_settings(conf: Mapping[str, object]) -> dict[str, str]:
    """Collect the Spark settings of a configuration, as strings.

    Top-level ``spark.*`` keys come first; ``spark.*`` entries of ``topology.spark.conf``
    override them. ``spark.master`` defaults to ``local[*]``. Booleans become
    ``"true"``/``"false"`` as Spark expects.

    Args:
        conf: an effective configuration.

    Returns:
        The settings by Spark key.
    """
    settings = {k: _spark_str(v) for k, v in conf.items() if k.startswith("spark.")}
    nested = conf.get(SPARK_CONF_KEY)
    if isinstance(nested, Mapping):
        settings |= {
            k: _spark_str(v)
            for k, v in nested.items()
            if isinstance(k, str) and k.startswith("spark.")
        }
    settings.setdefault("spark.master", DEFAULT_SPARK_MASTER)
    return settings
