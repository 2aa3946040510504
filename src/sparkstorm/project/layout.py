"""A streamparse project as it is laid out, run with ``sparkstorm run``/``submit`` from its root.

The layout (``sparse quickstart``'s)::

    config.json            {"topology_specs": "topologies/", "virtualenv_specs": ..., "envs": ...}
    topologies/NAME.py     a Topology subclass; NAME names the topology (sparse run -n NAME)
    src/                   bolts and spouts, importable as top-level modules (bolts.wordcount)
    virtualenvs/NAME.txt   requirements: ``submit`` runs the topology in a virtualenv of them

What ``config.json`` means here (the environment is ``-e NAME``, or the only one):

- ``options`` (top level, then the environment's): topology conf, below the topology's own
  ``config`` and the command line, as streamparse resolves them.
- ``envs.<env>.nimbus`` (``host[:port]``): where ``sparkstorm submit`` sends the topology.
- ``envs.<env>.workers``: when not empty, ``topology.workers`` is its length, as streamparse
  sets it (recorded: a topology runs in one worker here).
- ``envs.<env>.log.path``: the folder of the executors' logs (``topology.executor.log.dir``).
- ``serializer``: the wire format of shell components (``topology.multilang.serializer``).
- The virtualenv keys (``use_virtualenv``, ``virtualenv_root``, ...) are ``submit``'s
  (:mod:`sparkstorm.project.virtualenvs`); ``run`` uses the Python it runs in and warns.
- Any other environment key with a value (``user``, ``log.level``, ...) is ignored with a
  warning naming it: sparkstorm does not ssh into machines.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparkstorm.errors import TopologyError
from sparkstorm.topology.spec_args import ENVIRONMENT_VAR

CONFIG_FILE = "config.json"
SOURCE_DIR = "src"
LOG_DIR_KEY = "topology.executor.log.dir"
RESOURCES_DIR_KEY = "topology.multilang.resources.dir"
PYTHON_PATHS_KEY = "topology.code.python.paths"

_HONOURED_ENV_KEYS = {"nimbus", "workers", "options", "log"}
_IGNORED_WHY = ("sparkstorm does not ssh into machines; virtualenvs/*.txt and the virtualenv "
                "keys are used by sparkstorm submit (each worker host builds the virtualenv), "
                "while sparkstorm run uses the Python it runs in")
_LOG_IGNORED_WHY = ("component logs go to the run's console and the executors' log files "
                    "(see the README); only log.path is used")


@dataclass
class Project:
    """A streamparse project found at ``root``.

    Attributes:
        root: the folder holding ``config.json``.
        config: ``config.json`` as read.
        env_name: the environment picked, or None when the file declares none.
        warnings: what ``config.json`` sets that sparkstorm ignores, one line each.
    """

    root: Path
    config: dict[str, Any]
    env_name: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def env(self) -> dict[str, Any]:
        """The picked environment's settings (empty when none)."""
        envs = self.config.get("envs") or {}
        return dict(envs.get(self.env_name) or {}) if self.env_name else {}

    @property
    def topologies_dir(self) -> Path:
        """``topology_specs`` (default ``topologies/``)."""
        return self.root / str(self.config.get("topology_specs") or "topologies")

    @property
    def source_dir(self) -> Path:
        """``src/``: put first on ``sys.path`` so its modules import as streamparse's do."""
        return self.root / SOURCE_DIR

    def topology_file(self, name: str | None) -> tuple[str, Path]:
        """The topology ``name`` (``sparse run -n NAME``) and its file.

        With no name, the only topology of ``topology_specs``.

        Raises:
            TopologyError: ``PROJECT_TOPOLOGY_NOT_FOUND`` or ``PROJECT_TOPOLOGY_AMBIGUOUS``.
        """
        folder = self.topologies_dir
        found = sorted(p for p in folder.glob("*.py") if p.stem != "__init__")
        if name is None:
            if len(found) == 1:
                return found[0].stem, found[0]
            problem = "has no topology file" if not found else (
                f"has several topologies {[p.stem for p in found]}")
            msg = (f"{folder} {problem}; name the one to run with -n NAME "
                   "(the file topologies/NAME.py), as with sparse run -n NAME")
            code = "PROJECT_TOPOLOGY_NOT_FOUND" if not found else "PROJECT_TOPOLOGY_AMBIGUOUS"
            raise TopologyError(msg, code=code)
        file = folder / f"{name}.py"
        if not file.is_file():
            msg = (f"topology {name!r} not found: {file} does not exist; the project's "
                   f"topologies are {[p.stem for p in found]}")
            raise TopologyError(msg, code="PROJECT_TOPOLOGY_NOT_FOUND")
        return name, file

    def activate(self) -> None:
        """Make ``src/`` importable and publish the environment for ``par`` dicts.

        The environment picks the value of per-environment ``par`` dicts. Called before the topology
        file is imported.
        """
        import sys

        source = str(self.source_dir.resolve())
        if self.source_dir.is_dir() and source not in sys.path:
            sys.path.insert(0, source)
        if self.env_name:
            os.environ[ENVIRONMENT_VAR] = self.env_name

    def topology_conf(self, *, submitting: bool, env_named: bool = True) -> dict[str, Any]:
        """The topology conf ``config.json`` gives (see the module docstring).

        ``env_named``: the environment was named with ``-e``. A local ``run`` that did not
        name it keeps its logs in the project (``storm-local/logs``) instead of the
        environment's ``log.path``, a production folder it may not write to.
        """
        conf: dict[str, Any] = dict(self.config.get("options") or {})
        env = self.env
        conf.update(env.get("options") or {})
        serializer = self.config.get("serializer")
        if serializer:
            conf.setdefault("topology.multilang.serializer", serializer)
        workers = env.get("workers") or []
        if workers and "topology.workers" not in conf:
            conf["topology.workers"] = len(workers)
        log_path = (env.get("log") or {}).get("path") or env.get("log_path")
        if log_path and (submitting or env_named):
            conf.setdefault(LOG_DIR_KEY, str(log_path))
        if submitting:  # on the worker, relative to the extracted code
            conf.setdefault(RESOURCES_DIR_KEY, SOURCE_DIR)
            conf.setdefault(PYTHON_PATHS_KEY, [SOURCE_DIR, self._relative_topologies()])
        else:
            conf.setdefault(RESOURCES_DIR_KEY, str(self.source_dir.resolve()))
        return conf

    def _relative_topologies(self) -> str:
        try:
            return self.topologies_dir.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return "topologies"

    def nimbus_origin(self) -> str | None:
        """Where :meth:`nimbus_conf` comes from, for errors (None: no ``nimbus`` set)."""
        nimbus = str(self.env.get("nimbus") or "")
        return f"config.json envs.{self.env_name}.nimbus = {nimbus!r}" if nimbus else None

    def nimbus_conf(self) -> dict[str, Any]:
        """``nimbus.host``/``nimbus.port`` from the environment's ``nimbus`` (host[:port])."""
        nimbus = str(self.env.get("nimbus") or "")
        if not nimbus:
            return {}
        host, _, port = nimbus.partition(":")
        conf: dict[str, Any] = {"nimbus.host": host}
        if port.isdigit():
            conf["nimbus.port"] = int(port)
        return conf


def find_project(folder: Path, env_name: str | None) -> Project | None:
    """The streamparse project whose root is ``folder`` (it has ``config.json``), or None.

    Raises:
        TopologyError: ``PROJECT_CONFIG_INVALID`` for an unreadable ``config.json``;
            ``PROJECT_ENVIRONMENT_UNKNOWN`` when ``env_name`` is not one of its ``envs``
            or it has several and none was named.
    """
    path = folder / CONFIG_FILE
    if not path.is_file():
        return None
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        msg = f"{path}: cannot read it as JSON ({exc}); fix the file (streamparse's layout)"
        raise TopologyError(msg, code="PROJECT_CONFIG_INVALID") from exc
    if not isinstance(config, dict) or not isinstance(config.get("envs") or {}, dict):
        msg = (f"{path}: must be a JSON object whose 'envs' is an object of environments, "
               f"as streamparse writes it")
        raise TopologyError(msg, code="PROJECT_CONFIG_INVALID")
    project = Project(folder, config, _pick_env(path, config.get("envs") or {}, env_name))
    project.warnings = _ignored_keys(project)
    return project


def _pick_env(path: Path, envs: dict[str, Any], env_name: str | None) -> str | None:
    if env_name is None:
        if len(envs) <= 1:
            return next(iter(envs), None)
        msg = (f"{path} declares several environments {sorted(envs)}; pick one with "
               "-e NAME, as with sparse run -e NAME")
        raise TopologyError(msg, code="PROJECT_ENVIRONMENT_UNKNOWN")
    if env_name not in envs:
        msg = f"{path} has no environment {env_name!r}; its environments are {sorted(envs)}"
        raise TopologyError(msg, code="PROJECT_ENVIRONMENT_UNKNOWN")
    return env_name


def _ignored_keys(project: Project) -> list[str]:
    """One warning per environment key that is set and means nothing here."""
    warnings = []
    where = f"config.json envs.{project.env_name}"
    for key, value in project.env.items():
        if key in _HONOURED_ENV_KEYS or value in ("", [], {}, None):
            continue
        if key == "log_path":
            continue
        warnings.append(f"{where}.{key} is ignored: {_IGNORED_WHY}")
    for key, value in (project.env.get("log") or {}).items():
        if key != "path" and value not in ("", None):
            warnings.append(f"{where}.log.{key} is ignored: {_LOG_IGNORED_WHY}")
    return warnings
