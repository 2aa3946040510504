"""Declarations: what ``Component.spec()`` returns and the topology as a JSON document.

A :class:`TopologySpec` converts to JSON (Python components by import path
``module:QualName``) and back unchanged, so it can be uploaded, stored and run elsewhere.
"""

from __future__ import annotations

import difflib
import importlib
import json
import reprlib
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn, cast

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
    def from_dict(cls, data: object) -> TopologySpec:
        """Inverse of :meth:`to_dict`; ``data`` is checked first (:func:`check_spec_dict`).

        Raises:
            TopologyError: ``INVALID_TOPOLOGY_SPEC`` (or ``PARALLELISM_BELOW_ONE`` /
                ``TASKS_BELOW_ONE`` for a ``par`` / ``num_tasks`` that is not an integer)
                naming the path of the first value that does not have the spec's shape.
        """
        check_spec_dict(data)
        checked = cast(dict[str, Any], data)
        return cls(tuple(ComponentSpec.from_dict(c) for c in checked["components"]),
                   dict(checked.get("config") or {}))

    @classmethod
    def from_json(cls, text: str) -> TopologySpec:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))


# --- the JSON shape, checked before anything reads it -------------------------------------

SPEC_ERROR = "INVALID_TOPOLOGY_SPEC"
"""Code of a spec document that does not have the shape :meth:`TopologySpec.to_dict` writes."""

_TOPOLOGY_KEYS = {"components": True, "config": False}
_COMPONENT_KEYS = {"name": True, "kind": True, "component": True, "outputs": False,
                   "inputs": False, "par": False, "num_tasks": False, "config": False,
                   "extra": False}
_STREAM_KEYS = {"fields": True, "name": False, "direct": False}
_INPUT_KEYS = {"source": True, "stream": False, "grouping": True}
_GROUPING_KEYS = {"type": True, "fields": False}
"""Keys of each JSON object of a spec, True when required (keep in step with ``to_dict``)."""

_KINDS = ("spout", "bolt")
MAX_VALUE_DEPTH = 32
"""Deepest nesting of lists and objects allowed in a config or ``extra`` value: configs are
deep-copied and serialized recursively, and a received value must not exhaust the stack."""
_SHAPE_FIX = ("specs written by TopologySpec.to_dict(), as 'sparkstorm submit FILE.py' "
              "sends them, have the right shape")
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 80, 80
_REPR.maxlist = _REPR.maxdict = _REPR.maxtuple = _REPR.maxset = 6


def check_spec_dict(data: object) -> None:
    """Check that ``data`` has the JSON shape of :meth:`TopologySpec.to_dict`.

    Only shape and types are checked (objects, lists, strings, ints, bools, known keys);
    whether the topology makes sense (ids, streams, groupings, ranges) is
    :func:`~sparkstorm.topology.validate.validate_topology`'s job, which runs next.

    Raises:
        TopologyError: ``INVALID_TOPOLOGY_SPEC`` naming the path of the first bad value
            (e.g. ``components[2].outputs[0].fields[1]``), the component and the value;
            ``PARALLELISM_BELOW_ONE`` / ``TASKS_BELOW_ONE`` when ``par`` / ``num_tasks``
            is not an integer (booleans included), the codes validation uses for them.
    """
    top = _object(data, "", _TOPOLOGY_KEYS, None,
                  'a topology spec {"components": [...], "config": {...}}')
    components = _list(top["components"], "components", None, "a list of component objects")
    for index, component in enumerate(components):
        _check_component(component, f"components[{index}]")
    if "config" in top:
        _string_keyed(top["config"], "config", None, "the topology config")


def _check_component(data: object, path: str) -> None:
    name = data.get("name") if isinstance(data, dict) else None
    who = name if isinstance(name, str) else None
    component = _object(data, path, _COMPONENT_KEYS, who, "a component object")
    _string(component["name"], f"{path}.name", who, "a string, the component id")
    if not isinstance(component["kind"], str) or component["kind"] not in _KINDS:
        _fail(f"{path}.kind", who, f"must be one of {list(_KINDS)}, got "
              f"{_shown(component['kind'])}")
    _string(component["component"], f"{path}.component", who,
            "a string 'module:QualName', the import path of the component class")
    if ":" not in component["component"].strip(":"):
        _fail(f"{path}.component", who,
              "must be an import path 'module:QualName' (module and class name joined by "
              f"':'), got {_shown(component['component'])}")
    for index, stream in enumerate(_list(component.get("outputs", []), f"{path}.outputs", who,
                                         "a list of stream objects")):
        _check_stream(stream, f"{path}.outputs[{index}]", who)
    for index, item in enumerate(_list(component.get("inputs", []), f"{path}.inputs", who,
                                       "a list of input objects")):
        _check_input(item, f"{path}.inputs[{index}]", who)
    for key, code in (("par", "PARALLELISM_BELOW_ONE"), ("num_tasks", "TASKS_BELOW_ONE")):
        value = component.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int):
            _fail(f"{path}.{key}", who, "must be an integer of at least 1 (not a bool or a "
                  f"string), got {_shown(value)}", code=code)
    for key in ("config", "extra"):
        if key in component:
            _string_keyed(component[key], f"{path}.{key}", who, f"the component's {key}")


def _check_stream(data: object, path: str, who: str | None) -> None:
    stream = _object(data, path, _STREAM_KEYS, who,
                     'a stream object {"fields": [...], "name": str, "direct": bool}')
    _string_list(stream["fields"], f"{path}.fields", who, "field names")
    if "name" in stream:
        _string(stream["name"], f"{path}.name", who, "a string, the stream id")
    if "direct" in stream and not isinstance(stream["direct"], bool):
        _fail(f"{path}.direct", who, f"must be true or false, got {_shown(stream['direct'])}")


def _check_input(data: object, path: str, who: str | None) -> None:
    item = _object(data, path, _INPUT_KEYS, who,
                   'an input object {"source": str, "stream": str, "grouping": {...}}')
    _string(item["source"], f"{path}.source", who, "a string, the id of the source component")
    if "stream" in item:
        _string(item["stream"], f"{path}.stream", who, "a string, the source's stream id")
    grouping = _object(item["grouping"], f"{path}.grouping", _GROUPING_KEYS, who,
                       'a grouping object {"type": str, "fields": [...]}')
    _string(grouping["type"], f"{path}.grouping.type", who,
            "a string, the grouping type (e.g. 'SHUFFLE', 'FIELDS')")
    if "fields" in grouping:
        _string_list(grouping["fields"], f"{path}.grouping.fields", who, "field names")


def _object(value: object, path: str, keys: dict[str, bool], who: str | None,
            expected: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        _fail(path, who, f"must be {expected} (a JSON object), got {_shown(value)}")
    for key in value:
        if key not in keys:
            near = difflib.get_close_matches(str(key), list(keys), n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            _fail(_at(path, key), who,
                  f"is not a key of {expected}; {hint}the keys are {list(keys)}; remove or "
                  f"rename it (its value is {_shown(value[key])})")
    for key, required in keys.items():
        if required and key not in value:
            _fail(_at(path, key), who, f"is missing: {expected} needs the key {key!r}; add it")
    return value


def _at(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def _list(value: object, path: str, who: str | None, expected: str) -> list[Any]:
    if not isinstance(value, list):
        _fail(path, who, f"must be {expected} (a JSON array), got {_shown(value)}")
    return value


def _string(value: object, path: str, who: str | None, expected: str) -> None:
    if not isinstance(value, str):
        _fail(path, who, f"must be {expected}, got {_shown(value)}")


def _string_list(value: object, path: str, who: str | None, what: str) -> None:
    for index, item in enumerate(_list(value, path, who, f"a list of {what} (strings)")):
        _string(item, f"{path}[{index}]", who, f"a string (one of the {what})")


def _string_keyed(value: object, path: str, who: str | None, what: str) -> None:
    if not isinstance(value, dict):
        _fail(path, who, f"must be {what}, a JSON object of settings, got {_shown(value)}")
    for key, item in value.items():
        if not isinstance(key, str):
            _fail(path, who, f"has the key {_shown(key)}; keys of {what} must be strings")
        if value_depth(item) > MAX_VALUE_DEPTH:
            _fail(f"{path}[{key!r}]", who, f"is nested more than {MAX_VALUE_DEPTH} lists or "
                  f"objects deep, got {_shown(item)}; flatten the value")


def value_depth(value: object) -> int:
    """How deeply lists, tuples and dicts nest in ``value`` (0 for a scalar).

    Counted without recursion, and it stops one level past :data:`MAX_VALUE_DEPTH`, so any
    received document can be measured.
    """
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, list | tuple | dict):
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_VALUE_DEPTH:
            break
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _shown(value: object) -> str:
    """``value``'s repr, shortened (a received document can be large or deep), and type."""
    return f"{_REPR.repr(value)} ({type(value).__name__})"


def _fail(path: str, who: str | None, problem: str, *, code: str = SPEC_ERROR) -> NoReturn:
    where = (path or "the spec") + (f" (component {who!r})" if who is not None else "")
    msg = f"topology spec: {where} {problem}; {_SHAPE_FIX}"
    raise TopologyError(msg, code=code)


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
