"""Where the cluster commands find Nimbus, and which topology they act on.

Every command that talks to Nimbus (``list``, ``kill``, ``stats``, ``tail``, ...) takes
``-c KEY=VALUE`` overrides, streamparse's ``-e ENV`` and ``--timeout MS``. Nimbus's address
comes, highest first, from ``--nimbus http://HOST:PORT`` (a spark-submitted topology's
driver serves the REST API there), ``-c nimbus.host=...``/``-c nimbus.port=...``, from the
``nimbus`` (``host[:port]``) of the streamparse project's environment (``config.json`` in
the current folder: ``-e ENV``, or its only environment), then from the configuration
(``sparkstorm.yaml``, ``SPARKSTORM_NIMBUS_HOST``, the defaults). An unreachable Nimbus named
by ``config.json`` is reported with the environment and key, as ``submit`` does::

    [NIMBUS_UNAVAILABLE] cannot reach Nimbus at http://badhost:6627 (...); is 'sparkstorm
    nimbus' running, and the address is config.json envs.prod.nimbus = 'badhost:6627': ...

A command given no topology name takes the project's only topology (``topologies/NAME.py``),
as streamparse does.

Example:
    >>> split_nimbus("nimbus.example.com:6627", "config.json envs.prod.nimbus")
    {'nimbus.host': 'nimbus.example.com', 'nimbus.port': 6627}
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkstorm.cli.errors import CliError
from sparkstorm.config import load_config, parse_cli_overrides
from sparkstorm.errors import TopologyError
from sparkstorm.project.layout import CONFIG_FILE, Project, find_project

if TYPE_CHECKING:
    from sparkstorm.cluster.nimbus.client import NimbusClient

DEFAULT_TIMEOUT_MS = 30_000
NIMBUS_KEYS = ("nimbus.host", "nimbus.port")


def add_cluster_arguments(parser: argparse.ArgumentParser, *,
                          config_flags: tuple[str, ...] = ("-c", "--config"),
                          environment_flags: tuple[str, ...] = ("-e", "--environment"),
                          ) -> None:
    """Add ``-c KEY=VALUE``, ``-e ENV`` and ``--timeout MS`` (flags renamed where they clash).

    ``stats`` keeps ``-c`` for streamparse's ``--component``, ``rebalance`` keeps ``-e`` for
    Storm's ``--executor``: they pass the long flags only.
    """
    parser.add_argument(*config_flags, dest="config", action="append", default=[],
                        metavar="KEY=VALUE",
                        help="configuration override (nimbus.host, nimbus.port, "
                             "storm.cluster.token, ...)")
    parser.add_argument(*environment_flags, dest="environment", metavar="ENV",
                        help="environment of the streamparse project in this folder: "
                             "Nimbus is its config.json envs.ENV.nimbus (host[:port])")
    parser.add_argument("--nimbus", metavar="URL",
                        help="Nimbus's address (http://HOST:PORT or HOST:PORT), e.g. the REST "
                             "API a spark-submitted topology's driver serves (it logs it at "
                             "start); above nimbus.host and nimbus.port")
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_MS, metavar="MS",
                        help="milliseconds to wait for each answer of Nimbus "
                             f"(default {DEFAULT_TIMEOUT_MS})")


@dataclass(frozen=True)
class NimbusTarget:
    """The conf that points at Nimbus, and where its address came from.

    Attributes:
        conf: the effective configuration (``nimbus.host``, ``nimbus.port``, the token).
        origin: the ``config.json`` setting that named Nimbus, quoted in errors (None: the
            command line or the configuration did).
        project: the streamparse project of the current folder, if any.
    """

    conf: dict[str, Any]
    origin: str | None
    project: Project | None


def nimbus_target(args: argparse.Namespace, cwd: Path | None = None) -> NimbusTarget:
    """Nimbus's conf from ``args`` and the project in ``cwd`` (see the module docstring).

    Raises:
        CliError: ``ENVIRONMENT_WITHOUT_PROJECT`` (``-e`` with no ``config.json`` here),
            ``ENVIRONMENT_NIMBUS_UNSET`` (``-e`` names an environment without ``nimbus``),
            ``ENVIRONMENT_NIMBUS_INVALID`` (a ``nimbus`` that is not ``host[:port]``).
        TopologyError: ``PROJECT_ENVIRONMENT_UNKNOWN`` for an ``-e`` that
            ``config.json`` does not declare, ``PROJECT_CONFIG_INVALID``.
        ConfigError: a bad ``-c`` override.
    """
    folder = cwd or Path.cwd()
    overrides = parse_cli_overrides(args.config)
    environment = getattr(args, "environment", None)
    project = _project(folder, environment)
    given = [k for k in NIMBUS_KEYS if k in overrides]
    nimbus: dict[str, Any] = {}
    scheme: dict[str, Any] = {}
    origin = None
    if environment is not None and project is None:
        msg = (f"-e {environment}: there is no {CONFIG_FILE} in {folder}; run from the "
               "streamparse project's root, or leave -e out and point at Nimbus with "
               "-c nimbus.host=HOST -c nimbus.port=PORT")
        raise CliError(msg, code="ENVIRONMENT_WITHOUT_PROJECT")
    if project is not None and project.env_name is not None:
        where = f"{CONFIG_FILE} envs.{project.env_name}.nimbus"
        value = project.env.get("nimbus")
        if value:
            nimbus = split_nimbus(str(value), where)
            origin = None if given else project.nimbus_origin()
        elif environment is not None and not given:
            msg = (f"{CONFIG_FILE} envs.{project.env_name} has no nimbus: set "
                   f'"nimbus": "HOST:PORT" there ({project.root / CONFIG_FILE}), or pass '
                   "-c nimbus.host=HOST -c nimbus.port=PORT")
            raise CliError(msg, code="ENVIRONMENT_NIMBUS_UNSET")
    address = getattr(args, "nimbus", None)
    if address:
        nimbus, origin = split_nimbus(address.split("://", 1)[-1].rstrip("/"), "--nimbus"), None
        overrides = {k: v for k, v in overrides.items() if k not in NIMBUS_KEYS}
        if "://" in address:  # the scheme given says whether it speaks TLS
            scheme = {"storm.tls.enabled": address.startswith("https://")}
    conf = load_config(cli={**nimbus, **overrides, **scheme})
    return NimbusTarget(conf, origin, project)


def _project(folder: Path, environment: str | None) -> Project | None:
    """The project of ``folder``; without ``-e``, one with several environments has none picked."""
    try:
        return find_project(folder, environment)
    except TopologyError as exc:
        if environment is not None or exc.code != "PROJECT_ENVIRONMENT_UNKNOWN":
            raise
    config = json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    return Project(folder, config)  # names its topologies; Nimbus comes from the conf


def split_nimbus(value: str, where: str) -> dict[str, Any]:
    """``host[:port]`` as ``nimbus.host``/``nimbus.port`` conf.

    Raises:
        CliError: ``ENVIRONMENT_NIMBUS_INVALID`` naming ``where`` for an empty host or a
            port that is not a number.
    """
    host, sep, port = value.strip().partition(":")
    if not host or (sep and not port.isdigit()):
        msg = (f"{where} = {value!r}: expected HOST or HOST:PORT with PORT the port of "
               "Nimbus's API (nimbus.port), e.g. 'nimbus.example.com:6627'")
        raise CliError(msg, code="ENVIRONMENT_NIMBUS_INVALID")
    conf: dict[str, Any] = {"nimbus.host": host}
    if sep:
        conf["nimbus.port"] = int(port)
    return conf


@contextmanager
def nimbus_client(args: argparse.Namespace,
                  target: NimbusTarget | None = None) -> Iterator[NimbusClient]:
    """A client of the Nimbus ``args`` name (``--timeout``), closed on exit.

    An unreachable Nimbus is ``NIMBUS_UNAVAILABLE`` naming the ``config.json`` setting that
    gave its address (:attr:`NimbusTarget.origin`).
    """
    from sparkstorm.cluster.nimbus.client import NimbusClient

    target = target or nimbus_target(args)
    timeout = max(1, int(getattr(args, "timeout", None) or DEFAULT_TIMEOUT_MS)) / 1000
    client = NimbusClient.from_conf(target.conf, timeout=timeout, origin=target.origin)
    try:
        yield client
    finally:
        client.close()


def topology_name(args: argparse.Namespace, project: Project | None,
                  command: str) -> str:
    """The topology a command acts on: ``-n NAME`` (or the positional name), else the project's.

    Raises:
        CliError: ``TOPOLOGY_NAME_REQUIRED`` outside a project without a name.
        TopologyError: ``PROJECT_TOPOLOGY_AMBIGUOUS``/``PROJECT_TOPOLOGY_NOT_FOUND`` for a
            project with several topologies or none.
    """
    name = getattr(args, "name", None) or getattr(args, "topology_name", None)
    if name:
        return str(name)
    if project is None:
        msg = (f"name the topology: sparkstorm {command} -n NAME (or run from a streamparse "
               "project's root, where the only topology of topologies/ is the default)")
        raise CliError(msg, code="TOPOLOGY_NAME_REQUIRED")
    return project.topology_file(None)[0]
