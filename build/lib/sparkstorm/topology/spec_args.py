"""streamparse's forms of ``par`` and ``config`` in ``.spec()``, resolved to plain values.

- ``par=None`` / ``config=None``: the component class's ``par`` / ``config`` attributes.
- ``par={"prod": 4, "beta": 1}``: the entry of the environment being run. The environment is
  the one ``sparkstorm run``/``submit`` picked from a streamparse project's ``config.json``
  (``-e NAME``, or its only environment), published in :data:`ENVIRONMENT_VAR` before the
  topology file is imported; Python code may set that variable itself.

Example:
    >>> class Counter:
    ...     par = {"prod": 4, "dev": 1}
    ...     config = {"topology.tick.tuple.freq.secs": 1}
    >>> import os
    >>> os.environ[ENVIRONMENT_VAR] = "prod"
    >>> resolve_par(Counter, None, "count"), resolve_config(Counter, None, "count")
    (4, {'topology.tick.tuple.freq.secs': 1})
    >>> del os.environ[ENVIRONMENT_VAR]
"""

from __future__ import annotations

import os
from typing import Any

from sparkstorm.errors import TopologyError

ENVIRONMENT_VAR = "SPARKSTORM_ENVIRONMENT"
"""Names the environment (a key of ``config.json``'s ``envs``) a per-environment ``par``
dict is resolved for."""


def current_environment() -> str | None:
    """The environment being run (:data:`ENVIRONMENT_VAR`), or None."""
    return os.environ.get(ENVIRONMENT_VAR) or None


def _who(cls: type, name: str | None) -> str:
    return f"component {name!r} ({cls.__name__})" if name else f"component {cls.__name__}"


def resolve_par(cls: type, par: Any, name: str | None) -> Any:
    """The executor count ``par`` stands for (see the module docstring).

    Values that are not a dict are returned as they are: validation reports a bad ``par``
    (``PARALLELISM_BELOW_ONE``) with the topology's other checks.

    Raises:
        TopologyError: ``PAR_ENVIRONMENT_UNKNOWN`` when ``par`` is a dict and no environment
            is being run or the dict has no entry for it.
    """
    if par is None:
        par = getattr(cls, "par", 1)
    if par is None:
        return 1
    if not isinstance(par, dict):
        return par
    environment = current_environment()
    if environment is None and len(par) == 1:
        return next(iter(par.values()))
    if environment is None or environment not in par:
        where = (f"environment {environment!r}" if environment
                 else f"no environment ({ENVIRONMENT_VAR} is unset)")
        msg = (
            f"{_who(cls, name)} gives par per environment {sorted(par)} but this run is for "
            f"{where}; add an entry for it, run from a project whose config.json names the "
            f"environment (sparkstorm run -e NAME), or set {ENVIRONMENT_VAR}"
        )
        raise TopologyError(msg, code="PAR_ENVIRONMENT_UNKNOWN")
    return par[environment]


def resolve_config(cls: type, config: Any, name: str | None) -> dict[str, Any]:
    """``config``, or the class's ``config`` attribute when None, as a new dict.

    Raises:
        TopologyError: ``INVALID_COMPONENT_CONFIG`` when it is not a dict.
    """
    if config is None:
        config = getattr(cls, "config", None)
    if config is None:
        return {}
    if not isinstance(config, dict):
        msg = (f"{_who(cls, name)}: config must be a dict of conf keys to values, got "
               f"{config!r} ({type(config).__name__})")
        raise TopologyError(msg, code="INVALID_COMPONENT_CONFIG")
    return dict(config)
