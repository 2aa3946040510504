"""A Flux document (read by :mod:`sparkstorm.flux.source`) turned into a topology spec.

What runs:

- ``spouts``/``bolts`` whose ``className`` is a Python import path (``pkg.module.Class``
  or ``pkg.module:Class``) of a sparkstorm ``Spout``/``Bolt``, with ``parallelism``,
  ``numTasks`` and ``config``; a class with a ``flux_spec(name=, par=, num_tasks=, config=)``
  classmethod is declared by it, so that its outputs can follow its config (the Redis and
  SQL connector bolts);
- Flux's multilang wrappers ``org.apache.storm.flux.wrappers.spouts.FluxShellSpout`` and
  ``...bolts.FluxShellBolt``: ``constructorArgs`` are the command line and the default
  stream's output fields; ``configMethods`` ``setDefaultStream``, ``setNamedStream`` and
  ``addComponentConfig`` work as on the Java classes;
- Storm's test components Flux's examples use, as Python stand-ins:
  ``org.apache.storm.flux.wrappers.bolts.LogInfoBolt``,
  ``org.apache.storm.testing.TestWordCounter``, ``org.apache.storm.testing.TestWordSpout``;
- ``streams`` with every Flux grouping: ``SHUFFLE``, ``FIELDS`` (``args``), ``ALL``,
  ``GLOBAL``, ``NONE``, ``DIRECT``, ``LOCAL_OR_SHUFFLE``, and ``CUSTOM`` with Storm's
  ``org.apache.storm.grouping.PartialKeyGrouping`` (fields as ``constructorArgs`` or
  ``args``); ``streamId`` picks the source's stream.

Refused before anything starts, naming the file and line: ``components`` and ``ref``
arguments (Java beans), ``topologySource``, ``workerHooks``, other Java classes
(``FLUX_CLASS_NOT_LOADABLE``), constructor arguments, properties or config methods on a
Python class (``FLUX_UNSUPPORTED``: use the component's ``config``), other ``CUSTOM``
groupings, unknown keys (``FLUX_UNKNOWN_KEY``) and values of the wrong type
(``FLUX_INVALID_VALUE``). Resource hints (``onHeapMemoryLoad``, ``offHeapMemoryLoad``,
``cpuLoad``) are ignored with a warning.
"""

from __future__ import annotations

import difflib
from typing import Any

from sparkstorm.errors import TopologyError
from sparkstorm.flux.source import LineDict, LineList, Where, fail
from sparkstorm.topology.component import Bolt, Spout
from sparkstorm.topology.grouping import Grouping
from sparkstorm.topology.spec import ComponentSpec, InputSpec, TopologySpec, load_class
from sparkstorm.topology.stream import DEFAULT_STREAM, Stream

FLUX_SHELL_SPOUT = "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
FLUX_SHELL_BOLT = "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
PARTIAL_KEY_GROUPING = "org.apache.storm.grouping.PartialKeyGrouping"
STORM_STAND_INS = {
    "org.apache.storm.flux.wrappers.bolts.LogInfoBolt": "sparkstorm.flux.storm_classes:LogInfoBolt",
    "org.apache.storm.testing.TestWordCounter": "sparkstorm.flux.storm_classes:TestWordCounter",
    "org.apache.storm.testing.TestWordSpout": "sparkstorm.flux.storm_classes:TestWordSpout",
}
"""Storm classes Flux's examples use, and the Python components that stand in for them."""

TOP_KEYS = ("name", "config", "components", "spouts", "bolts", "streams", "includes",
            "topologySource", "workerHooks")
VERTEX_KEYS = ("id", "className", "constructorArgs", "properties", "configMethods",
               "parallelism", "numTasks", "config", "onHeapMemoryLoad", "offHeapMemoryLoad",
               "cpuLoad", "factory", "factoryArgs")
STREAM_KEYS = ("name", "from", "to", "grouping")
GROUPING_KEYS = ("type", "streamId", "args", "customClass")
FLUX_GROUPINGS = ("ALL", "CUSTOM", "DIRECT", "SHUFFLE", "LOCAL_OR_SHUFFLE", "FIELDS", "GLOBAL",
                  "NONE")
_RESOURCE_HINTS = ("onHeapMemoryLoad", "offHeapMemoryLoad", "cpuLoad")


def build_spec(document: LineDict, warnings: list[str]) -> TopologySpec:
    """The topology ``document`` declares (not yet validated as a whole).

    Raises:
        FluxError: what cannot run, with its file and line (see the module docstring).
    """
    _check_keys(document, TOP_KEYS, "a Flux topology")
    for key, why in (("components", "Java beans for constructor arguments; sparkstorm "
                      "components take their settings from config"),
                     ("topologySource", "a Java class building a StormTopology; declare "
                      "spouts, bolts and streams instead"),
                     ("workerHooks", "Java worker hooks")):
        if document.get(key):
            fail(document.key_where[key], f"{key} is not supported: {why}", "FLUX_UNSUPPORTED")
    config = document.get("config") or {}
    if not isinstance(config, dict):
        fail(document.key_where["config"], "config must be a mapping of conf keys to values",
             "FLUX_INVALID_VALUE")
    components: dict[str, ComponentSpec] = {}
    wheres: dict[str, Where] = {}
    for kind, section in (("spout", "spouts"), ("bolt", "bolts")):
        for item, where in _items(document, section):
            spec = _vertex(item, where, kind, warnings)
            if spec.name in components:
                fail(where, f"id {spec.name!r} is declared twice; ids must be unique",
                     "FLUX_INVALID_VALUE")
            components[str(spec.name)] = spec
            wheres[str(spec.name)] = where
    inputs: dict[str, list[InputSpec]] = {name: [] for name in components}
    for item, where in _items(document, "streams"):
        target, subscription = _stream(item, where, components)
        inputs[target].append(subscription)
    return TopologySpec(tuple(spec.resolved(name, tuple(inputs[name]))
                              for name, spec in components.items()), _plain(config))


def _items(document: LineDict, section: str) -> list[tuple[Any, Where]]:
    items = document.get(section) or LineList()
    if not items:
        return []
    if not isinstance(items, LineList):
        fail(document.key_where[section], f"{section} must be a list", "FLUX_INVALID_VALUE")
    for item, where in zip(items, items.item_where, strict=True):
        if not isinstance(item, LineDict):
            fail(where, f"each entry of {section} must be a mapping", "FLUX_INVALID_VALUE")
    return list(zip(items, items.item_where, strict=True))


def _check_keys(item: LineDict, allowed: tuple[str, ...], what: str) -> None:
    for key in item:
        if key not in allowed:
            near = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            fail(item.key_where.get(key, item.where), f"{key!r} is not a key of {what}; "
                 f"{hint}the keys are {list(allowed)}", "FLUX_UNKNOWN_KEY")


def _int(item: LineDict, key: str, default: int) -> int:
    value = item.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        fail(item.key_where.get(key, item.where), f"{key} must be an integer of at least 1, "
             f"got {value!r}", "FLUX_INVALID_VALUE")
    return int(value)


def _vertex(item: LineDict, where: Where, kind: str, warnings: list[str]) -> ComponentSpec:
    _check_keys(item, VERTEX_KEYS, f"a Flux {kind}")
    name, class_name = item.get("id"), item.get("className")
    if not isinstance(name, str) or not name:
        fail(where, f"a {kind} needs an 'id' (a string)", "FLUX_INVALID_VALUE")
    if not isinstance(class_name, str) or not class_name:
        fail(where, f"{kind} {name!r} needs a 'className'", "FLUX_INVALID_VALUE")
    for key in _RESOURCE_HINTS:
        if key in item:
            warnings.append(f"{item.key_where[key]}: {kind} {name!r}: {key} is ignored "
                            "(sparkstorm has no resource-aware scheduler)")
    par = _int(item, "parallelism", 1)
    num_tasks = _int(item, "numTasks", par) if "numTasks" in item else None
    config = item.get("config") or {}
    if not isinstance(config, dict):
        fail(item.key_where["config"], "config must be a mapping", "FLUX_INVALID_VALUE")
    if class_name in (FLUX_SHELL_SPOUT, FLUX_SHELL_BOLT):
        return _shell(item, where, kind, name, class_name, par, num_tasks, _plain(config))
    for key in ("constructorArgs", "properties", "configMethods", "factory", "factoryArgs"):
        if item.get(key):
            fail(item.key_where[key], f"{kind} {name!r}: {key} cannot be applied to "
                 f"{class_name!r}: sparkstorm components are built without arguments; "
                 "pass settings in the component's config and read them in initialize()",
                 "FLUX_UNSUPPORTED")
    cls = _python_class(class_name, where, kind, name)
    flux_spec = getattr(cls, "flux_spec", None)
    if callable(flux_spec):  # its outputs follow its config (the Redis and SQL bolts)
        try:
            spec: ComponentSpec = flux_spec(name=name, par=par, num_tasks=num_tasks,
                                            config=_plain(config))
        except TopologyError as exc:
            fail(where, f"{kind} {name!r}: {exc.args[0]}", exc.code)
        return spec
    return ComponentSpec.declare(cls, kind, name=name, inputs=None, par=par,
                                 num_tasks=num_tasks, config=_plain(config),
                                 outputs=getattr(cls, "outputs", []))


def _python_class(class_name: str, where: Where, kind: str, name: str) -> type:
    path = STORM_STAND_INS.get(class_name) or (
        class_name if ":" in class_name else ":".join(class_name.rsplit(".", 1)))
    try:
        cls = load_class(path, component=name)
    except TopologyError as exc:
        java = class_name.startswith(("org.apache.storm.", "org.", "com.", "java."))
        what = "a Java class, which cannot run here" if java else "not importable"
        fail(where, f"{kind} {name!r}: className {class_name!r} is {what} ({exc}); "
                    "give the import path of a sparkstorm Spout/Bolt (package.module.Class), "
                    f"or run a program with {_shell_class(kind)}",
                    "FLUX_CLASS_NOT_LOADABLE")
    base = Spout if kind == "spout" else Bolt
    if not issubclass(cls, base):
        fail(where, f"{kind} {name!r}: {class_name!r} is not a sparkstorm {base.__name__}; "
             f"declare it under {'bolts' if kind == 'spout' else 'spouts'} if it is one, or "
             f"subclass sparkstorm.{base.__name__}", "FLUX_WRONG_KIND")
    return cls


def _shell_class(kind: str) -> str:
    return FLUX_SHELL_SPOUT if kind == "spout" else FLUX_SHELL_BOLT


def _string_list(value: Any, where: Where, what: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        fail(where, f"{what} must be a list of strings, got {value!r}", "FLUX_INVALID_VALUE")
    return [str(v) for v in value]


def _shell(item: LineDict, where: Where, kind: str, name: str, class_name: str, par: int,
           num_tasks: int | None, config: dict[str, Any]) -> ComponentSpec:
    from sparkstorm.multilang.shell import ShellBolt, ShellSpout

    streams: dict[str, list[str]] = {}
    match item.get("constructorArgs") or []:
        case [command_line]:
            pass
        case [command_line, fields]:
            streams[DEFAULT_STREAM] = _string_list(fields, where, "constructorArgs[1]")
        case _:
            fail(item.key_where.get("constructorArgs", where), f"{class_name} takes the command "
                 "line and, optionally, the output fields: constructorArgs: [[\"node\", "
                 "\"split.js\"], [\"word\"]]", "FLUX_INVALID_VALUE")
    command = _string_list(command_line, where, "the command line (constructorArgs[0])")
    for method in item.get("configMethods") or []:
        _shell_config_method(method, item, streams, config)
    if item.get("properties"):
        fail(item.key_where["properties"], f"{class_name} has no properties to set; use "
             "configMethods addComponentConfig", "FLUX_UNSUPPORTED")
    outputs = [Stream(fields, name=stream) for stream, fields in streams.items()]
    if kind == "spout":
        return ShellSpout.spec(name=name, par=par, num_tasks=num_tasks, config=config,
                               outputs=outputs, command=command)
    return ShellBolt.spec(name=name, par=par, num_tasks=num_tasks, config=config,
                          outputs=outputs, command=command)


def _shell_config_method(method: Any, item: LineDict, streams: dict[str, list[str]],
                         config: dict[str, Any]) -> None:
    where = getattr(method, "where", item.where)
    if not isinstance(method, dict) or "name" not in method:
        fail(where, "a config method is a mapping with 'name' and 'args'", "FLUX_INVALID_VALUE")
    args = list(method.get("args") or [])
    name = method["name"]
    match name, args:
        case "setDefaultStream", [fields]:
            streams[DEFAULT_STREAM] = _string_list(fields, where, "setDefaultStream's fields")
        case "setNamedStream", [stream, fields]:
            streams[str(stream)] = _string_list(fields, where, "setNamedStream's fields")
        case "addComponentConfig", [key, value]:
            config[str(key)] = _plain(value)
        case _:
            fail(where, f"config method {name!r} with {len(args)} arguments is not one of the "
                 "shell wrappers' setDefaultStream(fields), setNamedStream(name, fields), "
                 "addComponentConfig(key, value)", "FLUX_UNSUPPORTED")


def _stream(item: LineDict, where: Where, components: dict[str, ComponentSpec]
            ) -> tuple[str, InputSpec]:
    _check_keys(item, STREAM_KEYS, "a Flux stream")
    source, target = item.get("from"), item.get("to")
    for key, value in (("from", source), ("to", target)):
        if value not in components:
            fail(item.key_where.get(key, where), f"stream {key} {value!r} is not the id of a "
                 f"spout or bolt of this file (ids: {sorted(components)})",
                 "FLUX_UNKNOWN_COMPONENT")
    if components[str(target)].kind != "bolt":
        fail(item.key_where["to"], f"stream to {target!r}: only bolts subscribe to streams",
             "FLUX_INVALID_VALUE")
    grouping = item.get("grouping")
    if not isinstance(grouping, LineDict):
        fail(where, f"stream {source} --> {target} needs a grouping: {{type: SHUFFLE}}",
             "FLUX_INVALID_VALUE")
    _check_keys(grouping, GROUPING_KEYS, "a Flux grouping")
    stream = str(grouping.get("streamId") or DEFAULT_STREAM)
    return str(target), InputSpec(str(source), stream, _grouping(grouping))


def _grouping(grouping: LineDict) -> Grouping:
    kind = grouping.get("type")
    where = grouping.key_where.get("type", grouping.where)
    if kind not in FLUX_GROUPINGS:
        fail(where, f"grouping type {kind!r} is not one of Flux's {list(FLUX_GROUPINGS)}",
             "FLUX_INVALID_VALUE")
    if kind == "FIELDS":
        return Grouping.fields(*_string_list(grouping.get("args"), where, "FIELDS args"))
    if kind == "CUSTOM":
        return _custom(grouping, where)
    return Grouping(str(kind))


def _custom(grouping: LineDict, where: Where) -> Grouping:
    custom = grouping.get("customClass")
    class_name = custom.get("className") if isinstance(custom, dict) else None
    if not isinstance(custom, dict) or class_name != PARTIAL_KEY_GROUPING:
        fail(where, f"CUSTOM grouping {class_name!r} is a Java class, which cannot run here; "
             f"the one CUSTOM grouping supported is {PARTIAL_KEY_GROUPING}",
             "FLUX_CLASS_NOT_LOADABLE")
    args = list(custom.get("constructorArgs") or grouping.get("args") or [])
    if len(args) == 1 and isinstance(args[0], list):
        args = args[0]
    return Grouping.partial_key(*_string_list(args, where, "PartialKeyGrouping's fields"))


def _plain(value: Any) -> Any:
    """``value`` with the YAML line bookkeeping dropped (plain dicts and lists)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
