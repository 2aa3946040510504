"""``Topology.to_flux_dict``: a topology spec as a Storm Flux document.

Python components are written with their import path as ``className``
(``package.module:Class``, which :mod:`sparkstorm.flux` reads back); shell components
become Flux's multilang wrappers with their command and default-stream fields as
constructor arguments and ``setNamedStream`` for their other streams, as streamparse
writes them. ``num_tasks`` and component config are kept (``numTasks``, ``config``).
"""

from __future__ import annotations

from typing import Any

from sparkstorm.topology.spec import ComponentSpec, InputSpec, TopologySpec
from sparkstorm.topology.stream import DEFAULT_STREAM

FLUX_SHELL_BOLT = "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
FLUX_SHELL_SPOUT = "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"


def spec_to_flux_dict(spec: TopologySpec, name: str) -> dict[str, Any]:
    """The Flux document of ``spec`` named ``name`` (empty sections left out)."""
    flux: dict[str, Any] = {"name": name, "config": dict(spec.config), "spouts": [],
                            "bolts": [], "streams": []}
    for component in spec.components:
        section = "spouts" if component.kind == "spout" else "bolts"
        flux[section].append(_component(component))
        flux["streams"].extend(_stream(component, item) for item in component.inputs)
    return {key: value for key, value in flux.items() if value or key == "name"}


def _component(component: ComponentSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"id": component.name}
    command = component.extra.get("command")
    if command:
        out["className"] = FLUX_SHELL_SPOUT if component.kind == "spout" else FLUX_SHELL_BOLT
        default = component.stream(DEFAULT_STREAM)
        out["constructorArgs"] = [list(command), list(default.fields) if default else []]
        named = [s for s in component.outputs if s.name != DEFAULT_STREAM]
        if named:
            out["configMethods"] = [{"name": "setNamedStream", "args": [s.name, list(s.fields)]}
                                    for s in named]
    else:
        out["className"] = component.component
    out["parallelism"] = component.par
    if component.num_tasks != component.par:
        out["numTasks"] = component.num_tasks
    if component.config:
        out["config"] = dict(component.config)
    return out


def _stream(component: ComponentSpec, item: InputSpec) -> dict[str, Any]:
    grouping: dict[str, Any] = {"type": item.grouping.type, "streamId": item.stream}
    if item.grouping.type == "FIELDS":
        grouping["args"] = list(item.grouping.field_names)
    elif item.grouping.type == "PARTIAL_KEY":
        grouping = {"type": "CUSTOM", "streamId": item.stream, "customClass": {
            "className": "org.apache.storm.grouping.PartialKeyGrouping",
            "constructorArgs": [list(item.grouping.field_names)]}}
    return {"name": f"{item.source} --> {component.name}", "from": item.source,
            "to": component.name, "grouping": grouping}
