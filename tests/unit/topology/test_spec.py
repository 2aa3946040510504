"""Tests of the declaration layer: ComponentSpec/TopologySpec JSON, class paths and the DSL."""

from __future__ import annotations

import json

import pytest

from sparkstorm import Bolt, Grouping, Spout, Stream, Topology, TopologySpec, Tuple
from sparkstorm.errors import TopologyError
from sparkstorm.topology import ComponentSpec, InputSpec
from sparkstorm.topology.grouping import GROUPING_TYPES
from sparkstorm.topology.spec import class_path, load_class
from sparkstorm.topology.validate import validate_topology


class Sentences(Spout):
    outputs = ["sentence", Stream(["word", "n"], name="words"),
               Stream(["word"], name="picked", direct=True)]


class Split(Bolt):
    outputs = ["word"]


class Outer:
    class Inner(Bolt):
        outputs = ["x"]


def not_a_class() -> None:
    """A module-level function, for load_class's "not a class" case."""


def _every_grouping_topology() -> type[Topology]:
    class Everything(Topology):
        config = {"topology.workers": 2, "custom": {"nested": [1, "two"]}}
        sentences = Sentences.spec(par=2, num_tasks=4, config={"topology.tick.tuple.freq.secs": 5})
        shuffle = Split.spec(inputs={sentences: Grouping.SHUFFLE})
        fields = Split.spec(inputs={sentences["words"]: Grouping.fields("word", "n")}, par=3)
        all_ = Split.spec(name="all", inputs={sentences: Grouping.ALL})
        global_ = Split.spec(name="global", inputs={sentences: Grouping.GLOBAL})
        none = Split.spec(inputs={sentences: Grouping.NONE})
        direct = Split.spec(inputs={sentences["picked"]: Grouping.DIRECT}, num_tasks=3)
        local = Split.spec(inputs={sentences: Grouping.LOCAL_OR_SHUFFLE})
        partial = Split.spec(inputs={sentences["words"]: Grouping.partial_key("word")},
                             config={"k": "v"})

    return Everything


# --- JSON round trip ---------------------------------------------------------------------


def test_json_round_trip_keeps_everything() -> None:
    spec = _every_grouping_topology().topology_spec
    again = TopologySpec.from_json(spec.to_json())
    assert again.to_dict() == spec.to_dict()
    assert again.to_json() == spec.to_json()
    validate_topology(again, topology_name="again")


def test_round_trip_covers_every_grouping_type() -> None:
    spec = TopologySpec.from_json(_every_grouping_topology().topology_spec.to_json())
    used = {i.grouping.type for c in spec.components for i in c.inputs}
    assert used == set(GROUPING_TYPES)
    assert spec.component("fields").inputs == (
        InputSpec("sentences", "words", Grouping.fields("word", "n")),
    )
    assert spec.component("partial").inputs[0].grouping == Grouping.partial_key("word")
    assert spec.component("direct").inputs[0] == InputSpec("sentences", "picked", Grouping.DIRECT)


def test_round_trip_keeps_streams_parallelism_and_config() -> None:
    spec = TopologySpec.from_json(_every_grouping_topology().topology_spec.to_json())
    sentences = spec.component("sentences")
    assert sentences.kind == "spout"
    assert sentences.outputs == (
        Stream(["sentence"]),
        Stream(["word", "n"], name="words"),
        Stream(["word"], name="picked", direct=True),
    )
    picked, words = sentences.stream("picked"), sentences.stream("words")
    assert picked is not None and picked.direct is True
    assert words is not None and words.direct is False
    assert (sentences.par, sentences.num_tasks) == (2, 4)
    assert sentences.config == {"topology.tick.tuple.freq.secs": 5}
    assert (spec.component("fields").par, spec.component("fields").num_tasks) == (3, 3)
    assert spec.component("direct").num_tasks == 3
    assert spec.component("partial").config == {"k": "v"}
    assert spec.config == {"topology.workers": 2, "custom": {"nested": [1, "two"]}}
    assert [c.name for c in spec.components] == [
        "sentences", "shuffle", "fields", "all", "global", "none", "direct", "local", "partial",
    ]


def test_round_trip_keeps_extra() -> None:
    component = ComponentSpec(name="s", kind="spout", component="m:S",
                              outputs=(Stream(["a"]),), extra={"language": "java"})
    spec = TopologySpec((component,))
    assert TopologySpec.from_json(spec.to_json()).components[0].extra == {"language": "java"}


def test_to_json_is_plain_json_with_class_paths() -> None:
    data = json.loads(_every_grouping_topology().topology_spec.to_json())
    by_name = {c["name"]: c for c in data["components"]}
    assert by_name["sentences"]["component"] == f"{__name__}:Sentences"
    assert by_name["fields"]["inputs"] == [
        {"source": "sentences", "stream": "words",
         "grouping": {"type": "FIELDS", "fields": ["word", "n"]}},
    ]
    assert by_name["shuffle"]["inputs"][0]["grouping"] == {"type": "SHUFFLE"}


def test_from_dict_defaults() -> None:
    component = ComponentSpec.from_dict({
        "name": "b", "kind": "bolt", "component": "m:B", "outputs": [{"fields": ["x"]}],
        "inputs": [{"source": "s", "grouping": {"type": "SHUFFLE"}}], "par": 2,
    })
    assert component.outputs == (Stream(["x"]),)
    assert component.inputs == (InputSpec("s", "default", Grouping.SHUFFLE),)
    assert (component.par, component.num_tasks) == (2, 2)
    assert component.config == {}


# --- class paths -------------------------------------------------------------------------


def test_class_path_is_module_and_qualname() -> None:
    assert class_path(Sentences) == f"{__name__}:Sentences"
    assert class_path(Outer.Inner) == f"{__name__}:Outer.Inner"
    assert Split.spec().component == f"{__name__}:Split"


@pytest.mark.parametrize("cls", [Sentences, Split, Outer.Inner])
def test_load_class_round_trips_class_path(cls: type) -> None:
    assert load_class(class_path(cls)) is cls


@pytest.mark.parametrize(
    "path",
    [
        "sparkstorm_no_such_module_xyz:Thing",
        f"{__name__}:NoSuchClass",
        f"{__name__}:Outer.Missing",
        f"{__name__}",
        f"{__name__}:not_a_class",
    ],
    ids=["missing-module", "missing-attribute", "missing-nested", "no-colon", "not-a-class"],
)
def test_load_class_not_found(path: str) -> None:
    with pytest.raises(TopologyError) as excinfo:
        load_class(path, component="splitter")
    assert excinfo.value.code == "COMPONENT_CLASS_NOT_FOUND"
    assert "'splitter'" in str(excinfo.value)
    assert repr(path) in str(excinfo.value)


# --- the DSL -----------------------------------------------------------------------------


def test_name_defaults_to_the_attribute_and_name_overrides_it() -> None:
    class Names(Topology):
        source = Sentences.spec()
        splitter = Split.spec(name="split-words", inputs=[source])

    assert [c.name for c in Names.specs] == ["source", "split-words"]
    assert Names.source.name == "source"
    assert Names.splitter.inputs == (InputSpec("source", "default", Grouping.SHUFFLE),)
    assert Names.topology_spec.component("split-words") is Names.splitter


def test_unresolved_spec_has_no_name() -> None:
    spec = Sentences.spec()
    assert spec.name is None
    assert spec.num_tasks == spec.par == 1


@pytest.mark.parametrize("as_list", [True, False], ids=["list", "single"])
def test_list_inputs_mean_shuffle(as_list: bool) -> None:
    class Shuffled(Topology):
        source = Sentences.spec()
        other = Sentences.spec()
        splitter = Split.spec(inputs=[source, other] if as_list else source)

    expected = [InputSpec("source", "default", Grouping.SHUFFLE)]
    if as_list:
        expected.append(InputSpec("other", "default", Grouping.SHUFFLE))
    assert list(Shuffled.splitter.inputs) == expected


def test_stream_ref_selects_a_named_stream() -> None:
    class Refs(Topology):
        source = Sentences.spec()
        by_list = Split.spec(inputs=[source["words"]])
        by_dict = Split.spec(inputs={source["words"]: Grouping.fields("word"),
                                     source: Grouping.GLOBAL})

    assert Refs.by_list.inputs == (InputSpec("source", "words", Grouping.SHUFFLE),)
    assert Refs.by_dict.inputs == (
        InputSpec("source", "words", Grouping.fields("word")),
        InputSpec("source", "default", Grouping.GLOBAL),
    )


def test_stream_ref_to_a_renamed_component_uses_its_id() -> None:
    class Renamed(Topology):
        source = Sentences.spec(name="the-source")
        splitter = Split.spec(inputs=[source["words"]])

    assert Renamed.splitter.inputs == (InputSpec("the-source", "words", Grouping.SHUFFLE),)


def test_outputs_override_and_normalisation() -> None:
    spec = Split.spec(outputs=["a", "b", Stream(["c"], name="side")])
    assert spec.outputs == (Stream(["a", "b"]), Stream(["c"], name="side"))
    assert spec.stream("side") == Stream(["c"], name="side")
    assert spec.stream("nope") is None


def test_topology_to_json_matches_its_spec() -> None:
    cls = _every_grouping_topology()
    assert cls.to_json() == cls.topology_spec.to_json()


# --- tuples ------------------------------------------------------------------------------


def test_tuple_values_by_field_name() -> None:
    tup = Tuple(7, "split", "default", 3, ["storm", 2], ("word", "count"))
    assert tup.values.word == "storm"
    assert tup.values.count == 2
    assert tup.values[0] == "storm"
    assert tuple(tup.values) == ("storm", 2)
    assert not tup.is_tick()


def test_tuple_values_without_matching_fields_are_a_plain_tuple() -> None:
    assert Tuple(1, "c", "default", 1, ["a", "b"], ("only",)).values == ("a", "b")
    assert Tuple(1, "c", "default", 1, ["a"]).values == ("a",)


def test_tick_tuple() -> None:
    assert Tuple(1, "__system", "__tick", -1, [5]).is_tick()
    assert not Tuple(1, "spout", "__tick", 1, [5]).is_tick()
