"""Storm's Flux: topologies declared in YAML (being written; see load_flux_file)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sparkstorm.errors import TopologyError
from sparkstorm.topology.spec import TopologySpec


@dataclass
class FluxTopology:
    """A Flux file read into a topology: its ``name``, spec and warnings."""

    name: str
    spec: TopologySpec
    warnings: list[str] = field(default_factory=list)


def load_flux_file(path: Path, *, properties_file: str | None = None,
                   env_filter: bool = False) -> FluxTopology:
    """Not yet: refused with a code."""
    msg = f"{path}: Flux files are not supported yet"
    raise TopologyError(msg, code="FLUX_UNSUPPORTED")
