"""Declarations: what ``Component.spec()`` returns and the topology as a JSON document.

A :class:`TopologySpec` converts to JSON (Python components by import path
``module:QualName``) and back unchanged, so it can be uploaded, stored and run elsewhere.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

from sparkstorm.errors import TopologyError
from sparkstorm.topology.grouping import Grouping
from sparkstorm.topology.stream import DEFAULT_STREAM, Stream, normalize_outputs


@dataclass(frozen=True)
class InputSpec:
    """One subscription: ``source`` component's ``stream`` with ``grouping``."""

    source: str
    stream: str
    grouping: Grouping

    def to_dict(self) -> dict[str, Any]:
        """The subscription as the JSON spec shows it."""
        return {"source": self.source, "stream": self.stream, "grouping": self.grouping.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> InputSpec:
        """Inverse of :meth:`to_dict`."""
        return cls(data["source"], data.get("stream", DEFAULT_STREAM),
                   Grouping.from_dict(data["grouping"]))


@dataclass(frozen=True)
class StreamRef:
    """``spec["name"]``: a named stream of a component, used as a bolt input."""

    spec: ComponentSpec
    stream: str


@dataclass(frozen=True, eq=False)
class ComponentSpec:
    """A spout or bolt declaration.

    Before a :class:`Topology` resolves it, ``raw_inputs`` holds what the user passed and
    ``name`` may be None; afterwards ``inputs`` is set and ``name`` is the component id.
    """

    name: str | None
    kind: str
    component: str
    outputs: tuple[Stream, ...]
    inputs: tuple[InputSpec, ...] = ()
    par: int = 1
    num_tasks: int = 1
    config: dict[str, Any] = field(default_factory=dict)
    raw_inputs: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def declare(
        cls, component_cls: type, kind: str, *, name: str | None, inputs: Any, par: int,
        num_tasks: int | None, config: dict[str, Any] | None, outputs: Any,
    ) -> ComponentSpec:
        """Build a declaration for ``component_cls`` (used by ``Spout.spec``/``Bolt.spec``)."""
        return cls(
            name=name, kind=kind, component=class_path(component_cls),
            outputs=normalize_outputs(outputs), par=par,
            num_tasks=par if num_tasks is None else num_tasks,
            config=dict(config or {}), raw_inputs=inputs,
        )

    def __getitem__(self, stream: str) -> StreamRef:
        return StreamRef(self, stream)

    def stream(self, name: str) -> Stream | None:
        """The declared output stream ``name``, or None."""
        return next((s for s in self.outputs if s.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        """The component as the JSON spec shows it."""
        return {
            "name": self.name, "kind": self.kind, "component": self.component,
            "outputs": [s.to_dict() for s in self.outputs],
            "inputs": [i.to_dict() for i in self.inputs],
            "par": self.par, "num_tasks": self.num_tasks, "config": self.config,
            "extra": self.extra,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ComponentSpec:
        """Inverse of :meth:`to_dict`."""
        return cls(
            name=data["name"], kind=data["kind"], component=data["component"],
            outputs=tuple(Stream.from_dict(s) for s in data.get("outputs", ())),
            inputs=tuple(InputSpec.from_dict(i) for i in data.get("inputs", ())),
            par=data.get("par", 1), num_tasks=data.get("num_tasks", data.get("par", 1)),
            config=dict(data.get("config") or {}), extra=dict(data.get("extra") or {}),
        )

    def resolved(self, name: str, inputs: tuple[InputSpec, ...]) -> ComponentSpec:
        """A copy with its id and resolved inputs."""
        return replace(self, name=name, inputs=inputs, raw_inputs=None)


@dataclass(frozen=True)
class TopologySpec:
    """A whole topology: its components in declaration order."""

    components: tuple[ComponentSpec, ...]
    config: dict[str, Any] = field(default_factory=dict)

    def component(self, name: str) -> ComponentSpec:
        """The component ``name``; KeyError if there is none."""
        for spec in self.components:
            if spec.name == name:
                return spec
        raise KeyError(name)

    @property
    def spouts(self) -> tuple[ComponentSpec, ...]:
        """The spout declarations."""
        return tuple(c for c in self.components if c.kind == "spout")

    @property
    def bolts(self) -> tuple[ComponentSpec, ...]:
        """The bolt declarations."""
        return tuple(c for c in self.components if c.kind == "bolt")

    def to_dict(self) -> dict[str, Any]:
        """The topology as a JSON-able dict."""
        return {"components": [c.to_dict() for c in self.components], "config": self.config}

    def to_json(self) -> str:
        """The topology as a JSON document."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TopologySpec:
        """Inverse of :meth:`to_dict`."""
        return cls(tuple(ComponentSpec.from_dict(c) for c in data["components"]),
                   dict(data.get("config") or {}))

    @classmethod
    def from_json(cls, text: str) -> TopologySpec:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))


def input_spec_placeholder(inputs: Any) -> Any:
    """Keep a bolt's raw ``inputs`` until the topology knows every component's id."""
    return inputs


def class_path(component_cls: type) -> str:
    """``module:QualName`` of a component class, the form the JSON spec stores."""
    return f"{component_cls.__module__}:{component_cls.__qualname__}"


def load_class(path: str, *, component: str = "?") -> type:
    """Import the class at ``module:QualName``.

    Raises:
        TopologyError: ``COMPONENT_CLASS_NOT_FOUND`` when the module or attribute is missing.
    """
    module_name, _, qualname = path.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        msg = (
            f"component {component!r}: cannot import its class {path!r} ({exc}); "
            "define components at module level in an importable module "
            "(classes defined inside functions cannot be loaded by other processes)"
        )
        raise TopologyError(msg, code="COMPONENT_CLASS_NOT_FOUND") from exc
    if not isinstance(obj, type):
        msg = f"component {component!r}: {path!r} is not a class"
        raise TopologyError(msg, code="COMPONENT_CLASS_NOT_FOUND")
    return obj
