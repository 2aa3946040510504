"""``sparkstorm submit FILE.py``: package the topology's folder, upload it, submit it.

As Storm's StormSubmitter, it checks everything it can before uploading (name, topology,
conf locally, then Nimbus's ``name-allowed``), so a refused submission uploads nothing.

The zip holds the folder of FILE.py (its ``resources/`` too), without hidden entries,
``__pycache__`` and compiled files; components are found on the worker by the same module
names as here, because the folder's root goes first on the worker's ``sys.path``.
"""

from __future__ import annotations

import argparse
import getpass
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkstorm.cli.run import load_topology_file
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.config import component_conf, load_config, parse_cli_overrides, validate_conf
from sparkstorm.errors import TopologyError
from sparkstorm.topology.spec import TopologySpec
from sparkstorm.topology.validate import (
    validate_topology,
    validate_topology_name,
    validate_windowed_bolts,
)

if TYPE_CHECKING:
    from sparkstorm.cluster.nimbus.client import NimbusClient

SKIPPED_DIRS = {"__pycache__", "node_modules"}
SKIPPED_SUFFIXES = {".pyc", ".pyo"}


def register(commands: Any) -> None:
    """Add the ``submit`` subcommand."""
    parser = commands.add_parser("submit", help="submit a topology file to Nimbus")
    parser.add_argument("file", help="Python file that defines a Topology subclass")
    parser.add_argument("--topology", help="the Topology class, if the file has several")
    parser.add_argument("--name", help="topology name (default: the file's name)")
    parser.add_argument("-c", "--config", action="append", default=[], metavar="KEY=VALUE",
                        help="topology conf override, e.g. -c topology.message.timeout.secs=60")
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


def _spec_of(topology: type) -> TopologySpec:
    spec = getattr(topology, "topology_spec", None)
    if not isinstance(spec, TopologySpec):
        msg = f"{topology!r} declares no components; it is not a topology"
        raise TopologyError(msg, code="NOT_A_TOPOLOGY")
    return spec


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
    conf = load_config(cli=overrides)  # fail on bad values before uploading
    file = Path(args.file).resolve()
    spec = _spec_of(load_topology_file(str(file), args.topology))
    name = args.name or file.stem.replace("_", "-")
    sent = {k: v for k, v in overrides.items() if k != "storm.cluster.token"}
    _check_locally(spec, name, sent)
    client = NimbusClient.from_conf(conf)
    try:
        _check_name_allowed(client, name)
        with tempfile.TemporaryDirectory(prefix="sparkstorm-submit-") as tmp:
            archive = package_folder(file.parent, Path(tmp) / "topology.zip")
            upload_id = client.upload(archive)
        topology_id = client.submit(name, upload_id, spec.to_dict(), sent,
                                    active=not args.inactive, owner=getpass.getuser())
    finally:
        client.close()
    print(topology_id)
    return 0
