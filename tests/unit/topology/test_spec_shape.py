"""The JSON shape of a topology spec is checked before validation (``check_spec_dict``).

Every malformed document is a TopologyError with a stable code whose message names the exact path
(``components[1].outputs[0].fields[1]``), the component and the value received; nothing raises a
bare TypeError/KeyError, and every spec ``to_dict`` writes still loads unchanged.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from sparkstorm import Bolt, Spout, Stream, Topology
from sparkstorm.errors import TopologyError
from sparkstorm.topology import ComponentSpec, InputSpec, TopologySpec
from sparkstorm.topology.grouping import Grouping
from sparkstorm.topology.spec import MAX_VALUE_DEPTH, check_spec_dict, value_depth
from sparkstorm.topology.validate import validate_topology, validate_topology_name

SPEC = "INVALID_TOPOLOGY_SPEC"


def _valid() -> dict[str, Any]:
    return {
        "components": [
            {"name": "word", "kind": "spout", "component": "topo:Words",
             "outputs": [{"fields": ["w", "n"], "name": "default", "direct": False}],
             "inputs": [], "par": 1, "num_tasks": 1, "config": {}, "extra": {}},
            {"name": "split", "kind": "bolt", "component": "topo:Split",
             "outputs": [{"fields": ["w"], "name": "default", "direct": False}],
             "inputs": [{"source": "word", "stream": "default",
                         "grouping": {"type": "FIELDS", "fields": ["w"]}}],
             "par": 2, "num_tasks": 4, "config": {"k": 1}, "extra": {}},
        ],
        "config": {"topology.workers": 1},
    }


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], Any]:
    """A change putting ``value`` at ``path`` of the valid spec."""

    def change(spec: dict[str, Any]) -> Any:
        target: Any = spec
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
        return spec

    return change


def _drop(*path: Any) -> Callable[[dict[str, Any]], Any]:
    def change(spec: dict[str, Any]) -> Any:
        target: Any = spec
        for step in path[:-1]:
            target = target[step]
        del target[path[-1]]
        return spec

    return change


C0, C1 = ("components", 0), ("components", 1)
OUT = (*C0, "outputs", 0)
IN = (*C1, "inputs", 0)
DEEP: Any = "leaf"
for _ in range(MAX_VALUE_DEPTH + 1):
    DEEP = [DEEP]

# (code, path the message must name, change to the valid spec)
CASES: list[tuple[str, str, Callable[[dict[str, Any]], Any]]] = [
    # the document and its top level
    (SPEC, "the spec", lambda s: ["not", "an", "object"]),
    (SPEC, "the spec", lambda s: None),
    (SPEC, "the spec", lambda s: "components"),
    (SPEC, "components", _drop("components")),
    (SPEC, "componets", lambda s: {"componets": s["components"]}),
    (SPEC, "components", _set(("components",), {"word": {}})),
    (SPEC, "components", _set(("components",), None)),
    (SPEC, "components[1]", _set(C1, "split")),
    (SPEC, "components[0]", _set(C0, ["word", "spout"])),
    (SPEC, "config", _set(("config",), ["topology.workers", 1])),
    (SPEC, "config", _set(("config",), None)),
    (SPEC, "config", _set(("config",), {1: "int key"})),
    (SPEC, "config['deep']", _set(("config", "deep"), DEEP)),
    (SPEC, "version", _set(("version",), 2)),
    # a component's own keys
    (SPEC, "components[0].name", _set((*C0, "name"), 5)),
    (SPEC, "components[0].name", _set((*C0, "name"), None)),
    (SPEC, "components[1].name", _set((*C1, "name"), ["split"])),
    (SPEC, "components[1].name", _drop(*C1, "name")),
    (SPEC, "components[0].kind", _set((*C0, "kind"), "sink")),
    (SPEC, "components[0].kind", _set((*C0, "kind"), ["spout"])),
    (SPEC, "components[1].kind", _drop(*C1, "kind")),
    (SPEC, "components[0].component", _set((*C0, "component"), 3)),
    (SPEC, "components[0].component", _set((*C0, "component"), "topo.Words")),
    (SPEC, "components[0].component", _set((*C0, "component"), "topo:")),
    (SPEC, "components[1].component", _drop(*C1, "component")),
    (SPEC, "components[1].parallelism", _set((*C1, "parallelism"), 2)),
    (SPEC, "components[0].config", _set((*C0, "config"), [1])),
    (SPEC, "components[0].config", _set((*C0, "config"), None)),
    (SPEC, "components[1].config", _set((*C1, "config"), {None: 1})),
    (SPEC, "components[1].config['x']", _set((*C1, "config", "x"), DEEP)),
    (SPEC, "components[0].extra", _set((*C0, "extra"), "command")),
    (SPEC, "components[0].extra['command']", _set((*C0, "extra", "command"), DEEP)),
    # par and num_tasks keep validation's codes for a value that is not an integer
    ("PARALLELISM_BELOW_ONE", "components[0].par", _set((*C0, "par"), True)),
    ("PARALLELISM_BELOW_ONE", "components[1].par", _set((*C1, "par"), "2")),
    ("PARALLELISM_BELOW_ONE", "components[1].par", _set((*C1, "par"), 2.0)),
    ("PARALLELISM_BELOW_ONE", "components[1].par", _set((*C1, "par"), None)),
    ("TASKS_BELOW_ONE", "components[1].num_tasks", _set((*C1, "num_tasks"), False)),
    ("TASKS_BELOW_ONE", "components[1].num_tasks", _set((*C1, "num_tasks"), [4])),
    # outputs
    (SPEC, "components[0].outputs", _set((*C0, "outputs"), {"default": ["w"]})),
    (SPEC, "components[0].outputs", _set((*C0, "outputs"), "w")),
    (SPEC, "components[0].outputs[0]", _set(OUT, ["w"])),
    (SPEC, "components[0].outputs[0].fields", _drop(*OUT, "fields")),
    (SPEC, "components[0].outputs[0].fields", _set((*OUT, "fields"), "w")),
    (SPEC, "components[0].outputs[0].fields[1]", _set((*OUT, "fields"), ["w", ["n"]])),
    (SPEC, "components[0].outputs[0].fields[0]", _set((*OUT, "fields"), [1, "n"])),
    (SPEC, "components[0].outputs[0].name", _set((*OUT, "name"), ["default"])),
    (SPEC, "components[0].outputs[0].name", _set((*OUT, "name"), None)),
    (SPEC, "components[0].outputs[0].direct", _set((*OUT, "direct"), "false")),
    (SPEC, "components[0].outputs[0].direct", _set((*OUT, "direct"), 0)),
    (SPEC, "components[0].outputs[0].id", _set((*OUT, "id"), "default")),
    # inputs and groupings
    (SPEC, "components[1].inputs", _set((*C1, "inputs"), "word")),
    (SPEC, "components[1].inputs", _set((*C1, "inputs"), {"word": "SHUFFLE"})),
    (SPEC, "components[1].inputs[0]", _set(IN, "word")),
    (SPEC, "components[1].inputs[0].source", _drop(*IN, "source")),
    (SPEC, "components[1].inputs[0].source", _set((*IN, "source"), ["word"])),
    (SPEC, "components[1].inputs[0].source", _set((*IN, "source"), 0)),
    (SPEC, "components[1].inputs[0].stream", _set((*IN, "stream"), ["default"])),
    (SPEC, "components[1].inputs[0].streams", _set((*IN, "streams"), ["default"])),
    (SPEC, "components[1].inputs[0].grouping", _drop(*IN, "grouping")),
    (SPEC, "components[1].inputs[0].grouping", _set((*IN, "grouping"), "SHUFFLE")),
    (SPEC, "components[1].inputs[0].grouping.type", _drop(*IN, "grouping", "type")),
    (SPEC, "components[1].inputs[0].grouping.type", _set((*IN, "grouping", "type"), ["FIELDS"])),
    (SPEC, "components[1].inputs[0].grouping.type", _set((*IN, "grouping", "type"), None)),
    (SPEC, "components[1].inputs[0].grouping.fields",
     _set((*IN, "grouping", "fields"), "w")),
    (SPEC, "components[1].inputs[0].grouping.fields[0]",
     _set((*IN, "grouping", "fields"), [["w"]])),
    (SPEC, "components[1].inputs[0].grouping.field_names",
     _set((*IN, "grouping", "field_names"), ["w"])),
]


@pytest.mark.parametrize(("code", "path", "change"), CASES,
                         ids=[f"{i}-{path}" for i, (_, path, _) in enumerate(CASES)])
def test_a_malformed_spec_names_the_path_and_value(
        code: str, path: str, change: Callable[[dict[str, Any]], Any]) -> None:
    data = change(copy.deepcopy(_valid()))
    with pytest.raises(TopologyError) as caught:
        TopologySpec.from_dict(data)
    message = str(caught.value)
    assert caught.value.code == code, message
    assert f"topology spec: {path} " in message, message
    shows = ("got ", "has the key ", "is missing", "is not a key")
    assert any(part in message for part in shows), f"no value or key named: {message}"
    assert "TopologySpec.to_dict()" in message, "the message says how to get a right spec"


def test_the_component_is_named_when_its_name_is_a_string() -> None:
    data = _set((*OUT, "fields"), ["w", ["n"]])(copy.deepcopy(_valid()))
    with pytest.raises(TopologyError) as caught:
        check_spec_dict(data)
    assert "components[0].outputs[0].fields[1] (component 'word')" in str(caught.value)
    assert "['n'] (list)" in str(caught.value), "the value received and its type"


def test_a_typo_in_a_key_gets_a_suggestion() -> None:
    data = _set((*C1, "num_task"), 4)(copy.deepcopy(_valid()))
    with pytest.raises(TopologyError) as caught:
        check_spec_dict(data)
    assert "did you mean 'num_tasks'?" in str(caught.value)


def test_a_huge_or_deep_value_is_shown_short() -> None:
    data = _set((*C0, "name"), list(range(10_000)))(copy.deepcopy(_valid()))
    with pytest.raises(TopologyError) as caught:
        check_spec_dict(data)
    assert len(str(caught.value)) < 500
    data = _set(("components",), DEEP)(copy.deepcopy(_valid()))
    with pytest.raises(TopologyError) as caught:
        check_spec_dict(data)
    assert len(str(caught.value)) < 500


def test_the_valid_spec_and_optional_keys_load() -> None:
    spec = TopologySpec.from_dict(_valid())
    assert spec.to_dict()["components"][1]["num_tasks"] == 4
    minimal = {"components": [{"name": "w", "kind": "spout", "component": "m:W",
                               "outputs": [{"fields": ["x"]}]}]}
    loaded = TopologySpec.from_dict(minimal)
    assert loaded.components[0].outputs == (Stream(["x"]),)
    assert (loaded.components[0].par, loaded.components[0].num_tasks) == (1, 1)
    assert TopologySpec.from_dict(loaded.to_dict()).to_dict() == loaded.to_dict()


class Words(Spout):
    outputs = ["w", Stream(["a", "b"], name="pairs", direct=True)]


class Split(Bolt):
    outputs = ["w"]


def test_every_spec_to_dict_writes_passes_the_check() -> None:
    class Everything(Topology):
        config = {"topology.workers": 1, "nested": {"a": [1, {"b": None}]}}
        words = Words.spec(par=2, num_tasks=3, config={"k": [1, 2]})
        split = Split.spec(inputs={words: Grouping.fields("w")}, par=2)
        direct = Split.spec(inputs={words["pairs"]: Grouping.DIRECT})

    data = Everything.topology_spec.to_dict()
    check_spec_dict(data)
    assert TopologySpec.from_dict(data).to_dict() == data


@pytest.mark.parametrize(("code", "path", "component"), [
    (SPEC, "components[0].name", ComponentSpec(5, "spout", "m:W", (Stream(["w"]),))),  # type: ignore[arg-type]
    ("PARALLELISM_BELOW_ONE", "components[0].par",
     ComponentSpec("w", "spout", "m:W", (Stream(["w"]),), par=True)),
    ("TASKS_BELOW_ONE", "components[0].num_tasks",
     ComponentSpec("w", "spout", "m:W", (Stream(["w"]),), num_tasks=True)),
    (SPEC, "components[0].outputs[0].name",
     ComponentSpec("w", "spout", "m:W", (Stream(["w"], name=7),))),  # type: ignore[arg-type]
    (SPEC, "components[0].kind", ComponentSpec("w", "sink", "m:W", (Stream(["w"]),))),
])
def test_the_validator_refuses_wrong_types_in_declared_specs(
        code: str, path: str, component: ComponentSpec) -> None:
    """A spec built in Python (not parsed) gets the same type checks from validation."""
    with pytest.raises(TopologyError) as caught:
        validate_topology(TopologySpec((component,)), topology_name="t")
    assert caught.value.code == code
    assert f"topology spec: {path} " in str(caught.value)


def test_a_declared_bolt_with_an_int_source_is_refused() -> None:
    spout = ComponentSpec("w", "spout", "m:W", (Stream(["w"]),))
    bolt = ComponentSpec("b", "bolt", "m:B", (), inputs=(InputSpec(1, "default",  # type: ignore[arg-type]
                                                                   Grouping.SHUFFLE),))
    with pytest.raises(TopologyError) as caught:
        validate_topology(TopologySpec((spout, bolt)), topology_name="t")
    assert caught.value.code == SPEC
    assert "components[1].inputs[0].source (component 'b')" in str(caught.value)


@pytest.mark.parametrize("name", [5, None, "a\x00b", "a\nb", "tab\there", "a\ud800",
                                  "x" * 129, "é" * 65])
def test_topology_names_that_cannot_name_a_folder_are_refused(name: Any) -> None:
    with pytest.raises(TopologyError) as caught:
        validate_topology_name(name)
    assert caught.value.code == "INVALID_TOPOLOGY_NAME"


@pytest.mark.parametrize("name", ["word-count", "x" * 128, "é" * 64, "with space", "日本"])
def test_ordinary_topology_names_are_allowed(name: str) -> None:
    validate_topology_name(name)


def test_value_depth_counts_without_recursion() -> None:
    assert value_depth("x") == 0
    assert value_depth([]) == 1
    assert value_depth({"a": [1, {"b": ()}]}) == 4
    very_deep: Any = []
    for _ in range(100_000):
        very_deep = [very_deep]
    assert value_depth(very_deep) == MAX_VALUE_DEPTH + 1, "stops one level past the limit"
