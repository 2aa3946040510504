"""What ``sparkstorm run``/``submit`` were asked to run.

A ``.py`` topology file, a Storm Flux ``.yaml`` file, or a streamparse project's topology (run from
the project's root).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, replace
from pathlib import Path

from sparkstorm.cli.topology_file import describe_unsupported, load_topology_file
from sparkstorm.config import parse_cli_overrides
from sparkstorm.errors import TopologyError
from sparkstorm.project.layout import RESOURCES_DIR_KEY, Project, find_project
from sparkstorm.topology.spec import TopologySpec

FLUX_SUFFIXES = (".yaml", ".yml")


@dataclass
class Target:
    """A topology ready to run or submit.

    Attributes:
        name: the topology's name (``--name``, Flux's ``name``, the project topology's
            name, else the file's name).
        spec: the topology, with the project's conf folded under its own config.
        label: what to call it in messages (the Topology class or the Flux file).
        code_root: the folder ``submit`` ships (the project root, else the file's folder).
        project: the streamparse project, if any.
        warnings: settings that were ignored, one line each.
    """

    name: str
    spec: TopologySpec
    label: str
    code_root: Path
    project: Project | None = None
    warnings: list[str] = field(default_factory=list)


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments ``run`` and ``submit`` share to name what they run."""
    parser.add_argument(
        "file", nargs="?",
        help="a Python file defining a Topology subclass, a Storm Flux .yaml file, or "
             "nothing inside a streamparse project (config.json) to run its topology")
    parser.add_argument("--topology", help="the Topology class, if the file has several")
    parser.add_argument("-n", "--name",
                        help="topology name (default: the file's); in a streamparse project "
                             "also picks topologies/NAME.py, as sparse run -n NAME")
    parser.add_argument("-e", "--environment",
                        help="the config.json environment of a streamparse project")
    parser.add_argument("--filter", metavar="FILE",
                        help="Flux: a .properties file whose values replace ${key}")
    parser.add_argument("--env-filter", action="store_true",
                        help="Flux: replace ${ENV-NAME} with the environment variable NAME")
    parser.add_argument("-c", "--config", "-o", "--option", action="append", default=[],
                        metavar="KEY=VALUE", dest="config",
                        help="configuration override, e.g. -c topology.workers=2 "
                             "(-o is streamparse's spelling)")


def resolve_target(args: argparse.Namespace, *, submitting: bool) -> Target:
    """The topology ``args`` name (see the module docstring).

    Raises:
        TopologyError: with the code of what is wrong (no file given outside a project, a
            file of an unsupported kind, a topology that does not import or validate, ...).
    """
    cwd = Path.cwd()
    path = Path(args.file) if args.file else None
    if path is not None and path.is_dir():
        project = find_project(path.resolve(), args.environment)
        path = None
    else:
        project = find_project(cwd, args.environment)
    if path is None:
        if project is None:
            msg = ("no topology given: name a Python topology file or a Flux .yaml file "
                   "(sparkstorm run FILE), or run from the root of a streamparse project "
                   "(the folder with config.json)")
            raise TopologyError(msg, code="NO_TOPOLOGY_GIVEN")
        name, path = project.topology_file(args.name)
        target = _python_target(path, args, name, project, submitting=submitting)
    elif path.suffix == ".py":
        target = _python_target(path, args, args.name, project, submitting=submitting)
    elif path.suffix.lower() in FLUX_SUFFIXES:
        target = _flux_target(path, args, project, submitting=submitting)
    else:
        raise TopologyError(describe_unsupported(path), code="UNSUPPORTED_TOPOLOGY_FILE")
    if project is not None:
        conf = project.topology_conf(submitting=submitting,
                                     env_named=args.environment is not None)
        target.spec = replace(target.spec, config={**conf, **target.spec.config})
        target.warnings = [*project.warnings, *target.warnings]
    # streamparse's order: command line > topology > config.json (the cluster's token is
    # the client's credential, never part of a topology's conf)
    overrides = {k: v for k, v in parse_cli_overrides(args.config).items()
                 if k != "storm.cluster.token"}
    target.spec = replace(target.spec, config={**target.spec.config, **overrides})
    return target


def _python_target(path: Path, args: argparse.Namespace, name: str | None,
                   project: Project | None, *, submitting: bool) -> Target:
    if project is not None:
        project.activate()
    topology = load_topology_file(str(path), args.topology)
    spec = getattr(topology, "topology_spec", None)
    if not isinstance(spec, TopologySpec):
        msg = f"{topology!r} declares no components; it is not a topology"
        raise TopologyError(msg, code="NOT_A_TOPOLOGY")
    if project is not None and name is None:
        name = path.stem
    chosen = name or args.name or path.stem.replace("_", "-")
    root = project.root if project is not None else path.resolve().parent
    return Target(chosen, spec, topology.__name__, root, project)


def _flux_target(path: Path, args: argparse.Namespace, project: Project | None, *,
                 submitting: bool) -> Target:
    from sparkstorm.flux import load_flux_file

    if project is not None:
        project.activate()
    flux = load_flux_file(path, properties_file=args.filter, env_filter=args.env_filter)
    root = project.root if project is not None else path.resolve().parent
    spec = flux.spec
    if project is None and not spec.config.get(RESOURCES_DIR_KEY):
        # Flux's shell commands run in the code's resources/ (Storm's jar layout), else
        # next to the file
        resources = path.resolve().parent / "resources"
        where = ("resources" if resources.is_dir() else ".") if submitting else str(
            resources if resources.is_dir() else path.resolve().parent)
        spec = replace(spec, config={**spec.config, RESOURCES_DIR_KEY: where})
    return Target(args.name or flux.name, spec, str(path), root, project, list(flux.warnings))
