"""Configuration: declared keys, layered loading and validation.

Layers, lowest first: defaults < ``sparkstorm.yaml`` < ``SPARKSTORM_*`` environment <
command line < topology conf < component config. ``spark.*`` keys pass through to Spark.
"""

from __future__ import annotations

from sparkstorm.config.access import (
    conf_bool,
    conf_float,
    conf_int,
    conf_int_list,
    conf_optional_int,
    conf_optional_str,
    conf_str,
    conf_str_list,
    local_dir,
)
from sparkstorm.config.keys import KEYS, ConfigKey
from sparkstorm.config.loader import (
    component_conf,
    load_config,
    parse_cli_overrides,
    spark_settings,
    validate_conf,
)

__all__ = [
    "KEYS",
    "ConfigKey",
    "component_conf",
    "conf_bool",
    "conf_float",
    "conf_int",
    "conf_int_list",
    "conf_optional_int",
    "conf_optional_str",
    "conf_str",
    "conf_str_list",
    "local_dir",
    "load_config",
    "parse_cli_overrides",
    "spark_settings",
    "validate_conf",
]
