"""``sparkstorm submit [FILE]``: package the topology's code, upload it, submit it.

As Storm's StormSubmitter, it checks everything it can before uploading (name, topology,
conf locally, then Nimbus's ``name-allowed``), so a refused submission uploads nothing.

FILE is a Python topology file, a Storm Flux ``.yaml`` file, or nothing in a streamparse
project's root (see :mod:`sparkstorm.cli.target`). The zip holds the folder of FILE (its
``resources/`` too), or the whole streamparse project, without hidden entries,
``__pycache__`` and compiled files; components are found on the worker by the same module
names as here, because the folder's root (and a project's ``src/`` and topologies folder,
``topology.code.python.paths``) go first on the worker's ``sys.path``.
"""

from __future__ import annotations

import argparse
import getpass
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkstorm.cli.target import add_target_arguments, resolve_target
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.config import component_conf, load_config, parse_cli_overrides, validate_conf
from sparkstorm.topology.spec import TopologySpec
from sparkstorm.topology.validate import (
    validate_topology,
    validate_topology_name,
    validate_windowed_bolts,
)

if TYPE_CHECKING:
    from sparkstorm.cluster.nimbus.client import NimbusClient

SKIPPED_DIRS = {"__pycache__", "node_modules", "storm-local", "_build", "_resources"}
"""Never shipped: caches, and the run folders and build output of streamparse projects."""
SKIPPED_SUFFIXES = {".pyc", ".pyo"}


def register(commands: Any) -> None:
    """Add the ``submit`` subcommand."""
    parser = commands.add_parser("submit", help="submit a topology to Nimbus")
    add_target_arguments(parser)
    parser.add_argument("--inactive", action="store_true",
                        help="submit deactivated (activate later with 'sparkstorm activate')")
    parser.set_defaults(handler=submit_command)


def package_folder(folder: Path, dest: Path) -> Path:
    """Zip ``folder``'s files with paths relative to it; return ``dest``."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if any(p.startswith(".") or p in SKIPPED_DIRS for p in relative.parts):
                continue
            if path.is_file() and path.suffix not in SKIPPED_SUFFIXES:
                archive.write(path, relative.as_posix())
    return dest


def _check_locally(spec: TopologySpec, name: str, overrides: dict[str, object]) -> None:
    """Nimbus's own checks of the name, the topology and its conf, run before uploading."""
    validate_topology_name(name)
    validate_topology(spec, topology_name=name)
    conf = validate_conf({**spec.config, **overrides}, where=f"topology {name!r} conf")
    for component in spec.components:
        component_conf(conf, component.config, component.name or "?")
    validate_windowed_bolts(spec, conf)  # issue 11: windows against the effective conf


def _check_name_allowed(client: NimbusClient, name: str) -> None:
    """Storm's StormSubmitter asks ``isTopologyNameAllowed`` before uploading the jar.

    Raises:
        NimbusError: the refusal's code (``TOPOLOGY_ALREADY_ALIVE``, ...) and reason.
    """
    answer = client.name_allowed(name)
    if not answer["allowed"]:
        msg = f"{answer['reason']}; nothing was uploaded"
        raise NimbusError(msg, code=str(answer["code"]))


def submit_command(args: argparse.Namespace) -> int:
    """Validate, check the name, upload, submit and print the topology id.

    Validation runs locally and Nimbus says whether the name is free; a refusal before the upload
    leaves Nimbus's disk untouched.
    """
    from sparkstorm.cluster.nimbus.client import NimbusClient  # httpx: only when submitting

    overrides = parse_cli_overrides(args.config)
    load_config(cli=overrides)  # fail on bad values before importing anything
    target = resolve_target(args, submitting=True)
    for warning in target.warnings:
        print(f"sparkstorm submit: warning: {warning}", file=sys.stderr)
    spec, name = target.spec, target.name
    nimbus = target.project.nimbus_conf() if target.project is not None else {}
    conf = load_config(cli={**nimbus, **overrides})  # -c nimbus.host=... wins over config.json
    sent = {k: v for k, v in overrides.items() if k != "storm.cluster.token"}
    _check_locally(spec, name, sent)
    client = NimbusClient.from_conf(conf)
    try:
        _check_name_allowed(client, name)
        with tempfile.TemporaryDirectory(prefix="sparkstorm-submit-") as tmp:
            archive = package_folder(target.code_root, Path(tmp) / "topology.zip")
            upload_id = client.upload(archive)
        topology_id = client.submit(name, upload_id, spec.to_dict(), sent,
                                    active=not args.inactive, owner=getpass.getuser())
    finally:
        client.close()
    print(topology_id)
    return 0
