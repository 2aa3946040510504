"""``sparkstorm submit [FILE]``: package the topology's code, upload it, submit it.

As Storm's StormSubmitter, it checks everything it can before uploading (name, topology,
conf locally, then Nimbus's ``name-allowed``), so a refused submission uploads nothing.

FILE is a Python topology file, a Storm Flux ``.yaml`` file, or nothing in a streamparse
project's root (see :mod:`sparkstorm.cli.target`). The zip holds the folder of FILE (its
``resources/`` too), or the whole streamparse project, without hidden entries,
``__pycache__`` and compiled files; components are found on the worker by the same module
names as here, because the folder's root (and a project's ``src/`` and topologies folder,
``topology.code.python.paths``) go first on the worker's ``sys.path``.

A project's ``virtualenvs/<topology name>.txt`` goes with the topology's conf
(``topology.virtualenv.requirements``, :mod:`sparkstorm.project.virtualenvs`): each worker
host builds that virtualenv (once per requirements) and runs the topology in it.
``--wait-start SECS`` then waits until the topology's workers run, and exits 1 with the
reason when they fail to start (``VIRTUALENV_INSTALL_FAILED``, a missing component, ...).
"""

from __future__ import annotations

import argparse
import getpass
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkstorm.cli.cluster_args import DEFAULT_TIMEOUT_MS
from sparkstorm.cli.streamparse_flags import add_streamparse_flags
from sparkstorm.cli.submit_replace import replace_running
from sparkstorm.cli.target import add_target_arguments, resolve_target
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.worker.virtualenv import VirtualenvSpec
from sparkstorm.config import (
    component_conf,
    conf_float,
    load_config,
    parse_cli_overrides,
    validate_conf,
)
from sparkstorm.project.virtualenvs import honoured_on_submit, virtualenv_conf
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
    add_streamparse_flags(parser)
    parser.add_argument("-f", "--force", action="store_true",
                        help="replace a running topology of the same name: kill it, wait "
                             "until it is gone, then submit (streamparse's --force)")
    parser.add_argument("--wait", type=int, default=None, metavar="SECS",
                        help="with --force: seconds between the old topology's deactivation "
                             "and its removal (default: its topology.message.timeout.secs)")
    parser.add_argument("-N", "--override_name", "--override-name", dest="override_name",
                        metavar="NAME",
                        help="deploy under NAME instead of the topology's own name "
                             "(streamparse's --override_name)")
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_MS, metavar="MS",
                        help="milliseconds to wait for each answer of Nimbus "
                             f"(default {DEFAULT_TIMEOUT_MS})")
    parser.add_argument("--wait-start", type=float, default=None, metavar="SECS",
                        help="wait up to SECS until the topology's workers run (its "
                             "virtualenv built, Spark started); exit 1 with the reason "
                             "when they fail to start, or are not running by then")
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
    VirtualenvSpec.from_conf(conf, name, Path())  # flags shlex can split


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
    spec, name = target.spec, args.override_name or target.name
    warnings = target.warnings
    if target.project is not None:  # config.json's conf is below the topology's
        spec = replace(spec, config={**virtualenv_conf(target.project, name), **spec.config})
        warnings = [w for w in warnings if not honoured_on_submit(w)]
    for warning in warnings:
        print(f"sparkstorm submit: warning: {warning}", file=sys.stderr)
    if spec.config.get("topology.virtualenv.requirements") is not None:
        print("sparkstorm submit: each worker host builds the topology's virtualenv from "
              "its requirements before the topology starts there (once; reused while "
              "they are unchanged)", file=sys.stderr)
    nimbus = target.project.nimbus_conf() if target.project is not None else {}
    conf = load_config(cli={**nimbus, **overrides})  # -c nimbus.host=... wins over config.json
    sent = {k: v for k, v in overrides.items() if k != "storm.cluster.token"}
    _check_locally(spec, name, sent)
    from_project = target.project is not None and not {"nimbus.host", "nimbus.port"} & set(
        overrides)
    client = NimbusClient.from_conf(conf, timeout=args.timeout / 1000.0,
                                    origin=target.project.nimbus_origin()
                                    if from_project and target.project is not None else None)
    try:
        if args.force:
            replace_running(client, name, args.wait, conf_float(
                load_config(cli=sent, topology=spec.config), "topology.message.timeout.secs"))
        _check_name_allowed(client, name)
        with tempfile.TemporaryDirectory(prefix="sparkstorm-submit-") as tmp:
            archive = package_folder(target.code_root, Path(tmp) / "topology.zip")
            upload_id = client.upload(archive)
        topology_id = client.submit(name, upload_id, spec.to_dict(), sent,
                                    active=not args.inactive, owner=getpass.getuser())
        print(topology_id, flush=True)
        if args.wait_start is not None:
            return wait_started(client, topology_id, args.wait_start)
    finally:
        client.close()
    return 0


def wait_started(client: NimbusClient, topology_id: str, secs: float,
                 sleep: Callable[[float], None] = time.sleep) -> int:
    """Wait until the topology's ``workerStatus`` is RUNNING (0) or FAILING (1).

    Polls the topology summary every second, up to ``secs``; 1 when its workers are not
    running by then. What went wrong goes to stderr.
    """
    deadline = time.monotonic() + secs
    status = "STARTING"
    while True:
        row = next((r for r in client.topologies() if r.get("id") == topology_id), None)
        status = str((row or {}).get("workerStatus") or status)
        if status == "RUNNING":
            print(f"sparkstorm submit: {topology_id} runs", file=sys.stderr)
            return 0
        if status == "FAILING" and row is not None:
            print(f"sparkstorm submit: error: {topology_id} failed to start: "
                  f"{row.get('workerStatusDetail')}; the whole error is in the worker's log "
                  "(worker.log on its supervisor, or the UI)", file=sys.stderr)
            return 1
        if time.monotonic() >= deadline:
            print(f"sparkstorm submit: error: {topology_id} is still {status} after "
                  f"{secs:g} s (--wait-start)", file=sys.stderr)
            return 1
        sleep(1.0)
