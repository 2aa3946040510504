"""Storm's Flux: a topology declared in YAML, run with ``sparkstorm run FILE.yaml``/``submit``.

:func:`load_flux_file` reads the file (substitution and includes:
:mod:`sparkstorm.flux.source`), builds the topology (what runs and what is refused:
:mod:`sparkstorm.flux.build`) and validates it, all before anything starts; every refusal
is a :class:`~sparkstorm.flux.source.FluxError` with a code, naming the file and line.
:mod:`sparkstorm.flux.export` writes a topology back as Flux (``Topology.to_flux_dict``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from sparkstorm.flux.build import build_spec
from sparkstorm.flux.source import FluxError, load_with_includes, read_properties
from sparkstorm.topology.spec import TopologySpec
from sparkstorm.topology.validate import validate_topology, validate_topology_name


@dataclass
class FluxTopology:
    """A Flux file read into a topology.

    Attributes:
        name: Flux's ``name`` (the file's name when it has none).
        spec: the topology; its config is Flux's ``config``.
        warnings: what was ignored, with file and line, one line each.
    """

    name: str
    spec: TopologySpec
    warnings: list[str] = field(default_factory=list)


def load_flux_file(path: str | Path, *, properties_file: str | None = None,
                   env_filter: bool = False) -> FluxTopology:
    """Read, check and build the Flux file ``path``.

    The file's folder goes first on ``sys.path`` (as a ``.py`` topology file's does), so
    ``className: mymodule.MyBolt`` finds modules next to it, in executors too.

    Args:
        path: the ``.yaml`` file.
        properties_file: ``--filter``: values for ``${key}`` placeholders.
        env_filter: ``--env-filter``: replace ``${ENV-NAME}`` with environment variables.

    Raises:
        FluxError: anything in the file that cannot run, with its code, file and line.
        TopologyError: the topology it declares is invalid (unknown stream, ...).
    """
    file = Path(path).resolve()
    if not file.is_file():
        msg = f"Flux file {path!s} does not exist; give the path of a .yaml file"
        raise FluxError(msg, code="TOPOLOGY_FILE_NOT_FOUND")
    folder = str(file.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    properties = read_properties(properties_file) if properties_file else {}
    document = load_with_includes(file, properties, env_filter)
    warnings: list[str] = []
    spec = build_spec(document, warnings)
    name = document.get("name") or file.stem.replace("_", "-")
    if not isinstance(name, str):
        msg = f"{file}: name must be a string, got {name!r}"
        raise FluxError(msg, code="FLUX_INVALID_VALUE")
    validate_topology_name(name)
    validate_topology(spec, topology_name=name)
    return FluxTopology(name, spec, warnings)


__all__ = ["FluxError", "FluxTopology", "load_flux_file"]
