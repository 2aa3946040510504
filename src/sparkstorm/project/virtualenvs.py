"""A streamparse project's virtualenv, as the topology conf ``sparkstorm submit`` sends.

streamparse's ``sparse submit`` builds a virtualenv on every worker host from
``<virtualenv_specs>/<topology name>.txt`` (``virtualenv_specs`` in ``config.json``,
default ``virtualenvs``) and runs the topology in it. ``sparkstorm submit`` sends the file's
text as ``topology.virtualenv.requirements``; each worker builds the virtualenv on its host
and runs in it (:mod:`sparkstorm.cluster.worker.virtualenv`). The environment's settings,
under streamparse's names:

- ``use_virtualenv`` (default true): false sends no virtualenv.
- ``install_virtualenv`` (default: ``use_virtualenv``): false runs the topology in the
  existing ``<virtualenv_root>/<virtualenv_name>`` (``topology.virtualenv.install``).
- ``virtualenv_name`` (default: the topology's name): ``topology.virtualenv.name``.
- ``virtualenv_root``: the virtualenvs' folder on the worker hosts
  (``topology.virtualenv.root``; default: each supervisor's ``virtualenvs/``).
- ``virtualenv_flags``: extra arguments of ``python -m venv`` (``topology.virtualenv.flags``).

Each is read from the environment, else from its ``options``, else from the top-level
``options``. ``sparkstorm run`` runs in the Python it is started with and builds nothing.

Example:
    >>> honoured_on_submit("config.json envs.prod.virtualenv_root is ignored: ...")
    True
    >>> honoured_on_submit("config.json envs.prod.user is ignored: ...")
    False
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from sparkstorm.project.layout import Project

ENV_KEYS = ("use_virtualenv", "install_virtualenv", "virtualenv_name", "virtualenv_root",
            "virtualenv_flags")
"""The environment keys of streamparse's virtualenvs, which ``submit`` honours."""
_IGNORED_WARNING = re.compile(r"^config\.json envs\.[^ ]*\.(" + "|".join(ENV_KEYS)
                              + r") is ignored")


def _setting(project: Project, key: str, default: object) -> object:
    """``key`` of the environment, else of its ``options``, else of the top-level ones."""
    env = project.env
    for where in (env, env.get("options") or {}, project.config.get("options") or {}):
        if isinstance(where, dict) and where.get(key) not in (None, ""):
            return where[key]
    return default


def requirements_file(project: Project, topology_name: str) -> Path:
    """``<virtualenv_specs>/<topology name>.txt`` in the project."""
    folder = str(project.config.get("virtualenv_specs") or "virtualenvs")
    return project.root / folder / f"{topology_name}.txt"


def virtualenv_conf(project: Project, topology_name: str) -> dict[str, Any]:
    """The ``topology.virtualenv.*`` conf of the project's topology (empty: none).

    Empty without a requirements file (unless ``install_virtualenv`` is false: then none
    is needed), or when ``use_virtualenv`` is false.
    """
    if not _truthy(_setting(project, "use_virtualenv", True)):
        return {}
    conf: dict[str, Any] = {}
    if _truthy(_setting(project, "install_virtualenv", True)):
        file = requirements_file(project, topology_name)
        if not file.is_file():
            return {}
        conf["topology.virtualenv.requirements"] = file.read_text(encoding="utf-8")
    else:
        conf["topology.virtualenv.install"] = False
    for key, conf_key in (("virtualenv_name", "topology.virtualenv.name"),
                          ("virtualenv_root", "topology.virtualenv.root")):
        value = _setting(project, key, None)
        if value is not None:
            conf[conf_key] = str(value)
    flags = _setting(project, "virtualenv_flags", None)
    if flags is not None:
        conf["topology.virtualenv.flags"] = (
            shlex.join(str(f) for f in flags) if isinstance(flags, list) else str(flags))
    return conf


def _truthy(value: object) -> bool:
    """A config.json flag: booleans, and the strings ``-o use_virtualenv=false`` gives."""
    if isinstance(value, str):
        return value.strip().lower() not in ("false", "0", "no", "off", "")
    return bool(value)


def honoured_on_submit(warning: str) -> bool:
    """Whether a project warning says a virtualenv key is ignored (``submit`` honours it)."""
    return bool(_IGNORED_WARNING.match(warning))
