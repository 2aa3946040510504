"""The ``Topology`` class DSL, as streamparse's.

Example:
    >>> from sparkstorm import Bolt, Grouping, Spout, Topology
    >>> class Words(Spout):
    ...     outputs = ["word"]
    >>> class Count(Bolt):
    ...     outputs = ["word", "count"]
    >>> class WordCount(Topology):
    ...     words = Words.spec(par=2)
    ...     count = Count.spec(inputs={words: Grouping.fields("word")}, par=2, num_tasks=4)
    >>> [c.name for c in WordCount.specs]
    ['words', 'count']
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from sparkstorm.errors import TopologyError
from sparkstorm.topology.grouping import Grouping
from sparkstorm.topology.spec import ComponentSpec, InputSpec, StreamRef, TopologySpec
from sparkstorm.topology.stream import DEFAULT_STREAM
from sparkstorm.topology.validate import validate_topology


class TopologyType(type):
    """Collects the ``ComponentSpec`` attributes of a topology class and validates them."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
        """Make the topology class, with ``topology_spec`` and ``specs`` when it declares any."""
        cls = super().__new__(mcs, name, bases, namespace)
        declared = [(attr, v) for attr, v in namespace.items() if isinstance(v, ComponentSpec)]
        if not declared:  # the Topology base class itself, or a mixin
            return cls
        names = {id(spec): spec.name or attr for attr, spec in declared}
        specs = tuple(
            spec.resolved(names[id(spec)], _resolve_inputs(spec, names[id(spec)], names))
            for _, spec in declared
        )
        topology_spec = TopologySpec(specs, dict(namespace.get("config", {}) or {}))
        setattr(cls, "topology_spec", topology_spec)  # noqa: B010 - declared on Topology
        setattr(cls, "specs", specs)  # noqa: B010
        for attr, spec in zip((a for a, _ in declared), specs, strict=True):
            setattr(cls, attr, spec)
        validate_topology(topology_spec, topology_name=name)
        return cls


class Topology(metaclass=TopologyType):
    """Subclass and declare components as class attributes (see the module example).

    Attributes:
        config: topology configuration, overridden by what is given at submit.
    """

    topology_spec: ClassVar[TopologySpec]
    specs: ClassVar[tuple[ComponentSpec, ...]]
    config: ClassVar[dict[str, Any]] = {}

    @classmethod
    def to_json(cls) -> str:
        """The topology as a JSON spec document."""
        return cls.topology_spec.to_json()

    @classmethod
    def to_flux_dict(cls, name: str) -> dict[str, Any]:
        """The topology as a Storm Flux document (a dict to dump as YAML), as streamparse's.

        Python components get their import path as ``className``; shell components become
        Flux's ``FluxShellSpout``/``FluxShellBolt`` with the command and output fields.
        ``sparkstorm run FILE.yaml`` reads it back (see :mod:`sparkstorm.flux`).
        """
        from sparkstorm.flux.export import spec_to_flux_dict  # the format lives in flux/

        return spec_to_flux_dict(cls.topology_spec, name)

    @classmethod
    def write(cls, stream: Any) -> None:
        """Write the topology to ``stream`` (a path or a text file object) as its JSON spec.

        :meth:`read` reads it back (streamparse writes Thrift; the role is the same).
        """
        text = cls.to_json()
        if isinstance(stream, str | os.PathLike):
            Path(stream).write_text(text, encoding="utf-8")
        else:
            stream.write(text)

    @classmethod
    def read(cls, stream: Any) -> type[Topology]:
        """Read a topology :meth:`write` wrote (a path or a text file object).

        Returns:
            A new ``Topology`` subclass with the same components and config (unlike
            streamparse's, the components are fully reconstructed).

        Raises:
            TopologyError: the document is not a valid topology spec.
        """
        if isinstance(stream, str | os.PathLike):
            text = Path(stream).read_text(encoding="utf-8")
        else:
            text = stream.read()
        return topology_from_spec(TopologySpec.from_json(text), "ReadTopology")


def topology_from_spec(spec: TopologySpec, class_name: str) -> type[Topology]:
    """A ``Topology`` subclass declaring exactly ``spec``'s components (validated)."""
    namespace: dict[str, Any] = {str(component.name): component for component in spec.components}
    namespace["config"] = dict(spec.config)
    return TopologyType(class_name, (Topology,), namespace)  # type: ignore[no-any-return]


def _resolve_inputs(
    spec: ComponentSpec, bolt: str, names: dict[int, str]
) -> tuple[InputSpec, ...]:
    raw = spec.raw_inputs
    if raw is None:
        return spec.inputs
    if isinstance(raw, dict):
        items = list(raw.items())
    elif isinstance(raw, (list, tuple)):
        items = [(source, _default_grouping(source)) for source in raw]
    else:
        items = [(raw, _default_grouping(raw))]
    return tuple(_resolve_one(bolt, source, grouping, names) for source, grouping in items)


def _default_grouping(source: Any) -> Grouping:
    """A bare input's grouping: DIRECT for a direct stream, as streamparse picks, else SHUFFLE."""
    if isinstance(source, StreamRef):
        stream = source.spec.stream(source.stream)
    elif isinstance(source, ComponentSpec):
        stream = source.stream(DEFAULT_STREAM)
    else:
        stream = None
    return Grouping.DIRECT if stream is not None and stream.direct else Grouping.SHUFFLE


def _resolve_one(bolt: str, source: Any, grouping: Any, names: dict[int, str]) -> InputSpec:
    stream = DEFAULT_STREAM
    if isinstance(source, StreamRef):
        source, stream = source.spec, source.stream
    if isinstance(source, str):
        source_name = source
    elif isinstance(source, ComponentSpec):
        source_name = names.get(id(source)) or source.name or "?"
        if id(source) not in names and source.name is None:
            msg = (
                f"bolt {bolt!r} subscribes to a component that is not "
                "declared in this topology; declare the source as a class attribute too"
            )
            raise TopologyError(msg, code="UNKNOWN_SOURCE_COMPONENT")
    else:
        msg = (
            f"bolt {bolt!r}: input {source!r} is not a component spec, "
            "a stream reference (spec['stream']) or a component id"
        )
        raise TopologyError(msg, code="INVALID_INPUT")
    if not isinstance(grouping, Grouping):
        msg = (
            f"bolt {bolt!r}: grouping for input {source_name!r} is "
            f"{grouping!r}; use Grouping.SHUFFLE, Grouping.fields('name'), ... "
        )
        raise TopologyError(msg, code="INVALID_GROUPING")
    return InputSpec(source_name, stream, grouping)
