"""Configuration: declared keys, layered loading and validation.

Layers, lowest first: defaults < ``sparkstorm.yaml`` < ``SPARKSTORM_*`` environment <
command line < topology conf < component config. ``spark.*`` keys pass through to Spark.
"""

from __future__ import annotations

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
    "load_config",
    "parse_cli_overrides",
    "spark_settings",
    "validate_conf",
]
