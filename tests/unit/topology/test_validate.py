"""Tests of topology validation: one test per TopologyError code (sparkstorm.topology.validate).

Every test matches on ``.code``, never on the prose, and checks that the message names the
offending component, stream or field (names are quoted with ``!r`` in every message).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

import sparkstorm
from sparkstorm import Bolt, Grouping, Spout, Stream, Topology
from sparkstorm.errors import TopologyError
from sparkstorm.topology import ComponentSpec, InputSpec, TopologySpec
from sparkstorm.topology.validate import (
    check_worker_share,
    validate_topology,
    validate_topology_name,
    validate_windowed_bolts,
)

SRC = Path(sparkstorm.__file__).resolve().parent
UPPER_SNAKE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$")
CODE_LITERAL = re.compile(r"""\bcode\s*=\s*(?:"([^"]*)"|'([^']*)')""")


class Words(Spout):
    outputs = ["word"]


class Count(Bolt):
    outputs = ["word", "count"]


class Sink(Bolt):
    outputs: ClassVar[list[Any]] = []


def assert_error(excinfo: pytest.ExceptionInfo[TopologyError], code: str, *names: str) -> None:
    """The error has ``code`` and its message quotes every one of ``names``."""
    err = excinfo.value
    assert err.code == code, str(err)
    message = str(err)
    for name in names:
        assert repr(name) in message, f"{name!r} not named in: {message}"


def spout_spec(name: str, outputs: tuple[Stream, ...] = (Stream(["word"]),)) -> ComponentSpec:
    return ComponentSpec(name=name, kind="spout", component="m:Words", outputs=outputs)


def bolt_spec(name: str, *inputs: InputSpec) -> ComponentSpec:
    return ComponentSpec(name=name, kind="bolt", component="m:Count",
                         outputs=(Stream(["word", "count"]),), inputs=inputs)


# --- component ids -----------------------------------------------------------------------


def test_duplicate_component_id() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class Dup(Topology):
            words = Words.spec(name="same")
            counter = Count.spec(name="same", inputs=[words])

    assert_error(excinfo, "DUPLICATE_COMPONENT_ID", "same", "Dup")


@pytest.mark.parametrize("name", ["__acker", "__mine"])
def test_reserved_component_id(name: str) -> None:
    with pytest.raises(TopologyError) as excinfo:

        class Reserved(Topology):
            words = Words.spec(name=name)
            counter = Count.spec(inputs=[words])

    assert_error(excinfo, "RESERVED_COMPONENT_ID", name)


def test_a_component_id_with_a_slash_is_refused() -> None:
    """The REST API's and UI's component paths cannot carry it (the page 404ed)."""
    with pytest.raises(TopologyError) as excinfo:

        class Slashed(Topology):
            words = Words.spec(name="words/en")
            counter = Count.spec(inputs=[words])

    assert_error(excinfo, "COMPONENT_ID_WITH_SLASH", "words/en")


def test_single_underscore_component_id_is_allowed() -> None:
    class Fine(Topology):
        words = Words.spec(name="_words")
        counter = Count.spec(inputs=[words])

    assert [c.name for c in Fine.specs] == ["_words", "counter"]


# --- topology names ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a/b", "a.b", "a:b", "a\\b", "", "   "])
def test_invalid_topology_name(name: str) -> None:
    with pytest.raises(TopologyError) as excinfo:
        validate_topology_name(name)
    assert_error(excinfo, "INVALID_TOPOLOGY_NAME", name)


@pytest.mark.parametrize("name", ["word-count", "wc_1", "WordCount"])
def test_valid_topology_name(name: str) -> None:
    validate_topology_name(name)


# --- structure ---------------------------------------------------------------------------


def test_no_spout_in_class() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class OnlyBolts(Topology):
            counter = Count.spec(inputs=["elsewhere"])

    assert_error(excinfo, "NO_SPOUT", "OnlyBolts")


def test_no_spout_in_spec() -> None:
    spec = TopologySpec((bolt_spec("counter", InputSpec("counter", "default", Grouping.SHUFFLE)),))
    with pytest.raises(TopologyError) as excinfo:
        validate_topology(spec, topology_name="empty-topo")
    assert_error(excinfo, "NO_SPOUT", "empty-topo")


@pytest.mark.parametrize("inputs", [None, []], ids=["left-out", "empty-list"])
def test_bolt_without_inputs(inputs: Any) -> None:
    with pytest.raises(TopologyError) as excinfo:

        class Orphan(Topology):
            words = Words.spec()
            lonely = Count.spec(inputs=inputs)

    assert_error(excinfo, "BOLT_WITHOUT_INPUTS", "lonely")


def test_unknown_source_component_by_name_in_class() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class Ghost(Topology):
            words = Words.spec()
            counter = Count.spec(inputs=["ghost"])

    assert_error(excinfo, "UNKNOWN_SOURCE_COMPONENT", "counter", "ghost")


def test_unknown_source_component_undeclared_spec_in_class() -> None:
    undeclared = Words.spec()
    with pytest.raises(TopologyError) as excinfo:

        class Undeclared(Topology):
            words = Words.spec()
            counter = Count.spec(inputs=[words, undeclared])

    assert excinfo.value.code == "UNKNOWN_SOURCE_COMPONENT"


def test_unknown_source_component_in_spec() -> None:
    spec = TopologySpec((
        spout_spec("words"),
        bolt_spec("counter", InputSpec("missing", "default", Grouping.SHUFFLE)),
    ))
    with pytest.raises(TopologyError) as excinfo:
        validate_topology(spec, topology_name="t")
    assert_error(excinfo, "UNKNOWN_SOURCE_COMPONENT", "counter", "missing")


def test_unknown_source_stream() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class NoSuchStream(Topology):
            words = Words.spec()
            counter = Count.spec(inputs=[words["nope"]])

    assert_error(excinfo, "UNKNOWN_SOURCE_STREAM", "counter", "nope", "words")


def test_unknown_source_stream_in_spec() -> None:
    spec = TopologySpec((
        spout_spec("words"),
        bolt_spec("counter", InputSpec("words", "other", Grouping.SHUFFLE)),
    ))
    with pytest.raises(TopologyError) as excinfo:
        validate_topology(spec, topology_name="t")
    assert_error(excinfo, "UNKNOWN_SOURCE_STREAM", "counter", "other", "words")


@pytest.mark.parametrize(
    "grouping", [Grouping.fields("nope"), Grouping.partial_key("word", "nope")],
    ids=["fields", "partial_key"],
)
def test_unknown_grouping_field(grouping: Grouping) -> None:
    with pytest.raises(TopologyError) as excinfo:

        class BadField(Topology):
            words = Words.spec()
            counter = Count.spec(inputs={words: grouping})

    assert_error(excinfo, "UNKNOWN_GROUPING_FIELD", "counter", "nope", "words")


def test_fields_grouping_without_field_names() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class NoFields(Topology):
            words = Words.spec()
            counter = Count.spec(inputs={words: Grouping.fields()})

    assert_error(excinfo, "UNKNOWN_GROUPING_FIELD", "counter")


def test_grouping_on_a_named_stream_checks_that_streams_fields() -> None:
    class Multi(Spout):
        outputs = ["word", Stream(["letter"], name="letters")]

    with pytest.raises(TopologyError) as excinfo:

        class WrongStreamField(Topology):
            src = Multi.spec()
            counter = Count.spec(inputs={src["letters"]: Grouping.fields("word")})

    assert_error(excinfo, "UNKNOWN_GROUPING_FIELD", "counter", "letters", "word")


# --- outputs -----------------------------------------------------------------------------


def test_duplicate_field_name() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class DupField(Topology):
            words = Words.spec(outputs=["word", "word"])
            counter = Count.spec(inputs=[words])

    assert_error(excinfo, "DUPLICATE_FIELD_NAME", "words", "default", "word")


def test_duplicate_field_name_in_named_stream() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class DupField(Topology):
            words = Words.spec(outputs=["word", Stream(["a", "b", "a"], name="pairs")])
            counter = Count.spec(inputs=[words])

    assert_error(excinfo, "DUPLICATE_FIELD_NAME", "words", "pairs", "a")


def test_duplicate_stream_id() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class DupStream(Topology):
            words = Words.spec(outputs=[Stream(["a"], name="s"), Stream(["b"], name="s")])
            counter = Count.spec(inputs=[words["s"]])

    assert_error(excinfo, "DUPLICATE_STREAM_ID", "words", "s")


def test_default_stream_declared_twice() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class DupDefault(Topology):
            words = Words.spec(outputs=["word", Stream(["other"])])
            counter = Count.spec(inputs=[words])

    assert_error(excinfo, "DUPLICATE_STREAM_ID", "words", "default")


# --- parallelism -------------------------------------------------------------------------


@pytest.mark.parametrize("par", [0, -1])
def test_parallelism_below_one(par: int) -> None:
    with pytest.raises(TopologyError) as excinfo:

        class NoExecutors(Topology):
            words = Words.spec()
            counter = Count.spec(inputs=[words], par=par)

    assert_error(excinfo, "PARALLELISM_BELOW_ONE", "counter")


def test_tasks_below_one() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class NoTasks(Topology):
            words = Words.spec(num_tasks=0)
            counter = Count.spec(inputs=[words])

    assert_error(excinfo, "TASKS_BELOW_ONE", "words")


def test_parallelism_above_tasks() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class TooMany(Topology):
            words = Words.spec()
            counter = Count.spec(inputs=[words], par=3, num_tasks=2)

    assert_error(excinfo, "PARALLELISM_ABOVE_TASKS", "counter")


def test_tasks_above_the_limit() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class Huge(Topology):
            words = Words.spec()
            counter = Count.spec(inputs=[words], par=10**9, num_tasks=10**9)

    assert_error(excinfo, "TASKS_ABOVE_LIMIT", "counter")


def test_more_tasks_than_executors_is_fine() -> None:
    class Many(Topology):
        words = Words.spec()
        counter = Count.spec(inputs=[words], par=2, num_tasks=5)

    assert (Many.counter.par, Many.counter.num_tasks) == (2, 5)


# --- direct streams ----------------------------------------------------------------------


def test_direct_grouping_on_non_direct_stream() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class DirectOnPlain(Topology):
            words = Words.spec()
            counter = Count.spec(inputs={words: Grouping.DIRECT})

    assert_error(excinfo, "DIRECT_GROUPING_ON_NON_DIRECT_STREAM", "counter", "default", "words")


@pytest.mark.parametrize("grouping", [Grouping.SHUFFLE, Grouping.ALL, Grouping.fields("word")],
                         ids=["shuffle", "all", "fields"])
def test_non_direct_grouping_on_direct_stream(grouping: Grouping) -> None:
    with pytest.raises(TopologyError) as excinfo:

        class PlainOnDirect(Topology):
            words = Words.spec(outputs=[Stream(["word"], name="picked", direct=True)])
            counter = Count.spec(inputs={words["picked"]: grouping})

    assert_error(excinfo, "NON_DIRECT_GROUPING_ON_DIRECT_STREAM", "counter", "picked", "words")


def test_direct_grouping_on_direct_stream_is_valid() -> None:
    class Direct(Topology):
        words = Words.spec(outputs=[Stream(["word"], name="picked", direct=True)])
        counter = Count.spec(inputs={words["picked"]: Grouping.DIRECT})

    assert Direct.counter.inputs == (InputSpec("words", "picked", Grouping.DIRECT),)


# --- malformed inputs --------------------------------------------------------------------


@pytest.mark.parametrize("grouping", ["shuffle", None, ("FIELDS", "word")],
                         ids=["string", "none", "tuple"])
def test_invalid_grouping_value(grouping: Any) -> None:
    with pytest.raises(TopologyError) as excinfo:

        class NotAGrouping(Topology):
            words = Words.spec()
            counter = Count.spec(inputs={words: grouping})

    assert_error(excinfo, "INVALID_GROUPING", "words")


def test_invalid_grouping_type() -> None:
    with pytest.raises(TopologyError) as excinfo:

        class UnknownType(Topology):
            words = Words.spec()
            counter = Count.spec(inputs={words: Grouping("ROUND_ROBIN")})

    assert_error(excinfo, "INVALID_GROUPING", "counter", "ROUND_ROBIN")


@pytest.mark.parametrize("source", [42, 3.5, object()], ids=["int", "float", "object"])
def test_invalid_input(source: Any) -> None:
    with pytest.raises(TopologyError) as excinfo:

        class NotASource(Topology):
            words = Words.spec()
            counter = Count.spec(inputs=[words, source])

    assert excinfo.value.code == "INVALID_INPUT"
    assert repr(source) in str(excinfo.value)


@pytest.mark.parametrize(
    ("inputs", "code"),
    [([42], "INVALID_INPUT"), ({"words": "shuffle"}, "INVALID_GROUPING"),
     ([Words.spec()], "UNKNOWN_SOURCE_COMPONENT")],
    ids=["invalid-input", "invalid-grouping", "undeclared-spec"],
)
def test_resolution_errors_name_the_bolt_id(inputs: Any, code: str) -> None:
    with pytest.raises(TopologyError) as excinfo:

        class Resolve(Topology):
            words = Words.spec()
            counter = Count.spec(inputs=inputs)

    assert_error(excinfo, code, "counter")


# --- valid topologies --------------------------------------------------------------------


def test_bolt_subscribing_to_itself_validates() -> None:
    class SelfLoop(Topology):
        words = Words.spec()
        counter = Count.spec(inputs=[words, "counter"])

    assert SelfLoop.counter.inputs == (
        InputSpec("words", "default", Grouping.SHUFFLE),
        InputSpec("counter", "default", Grouping.SHUFFLE),
    )


def test_bolt_subscribing_to_a_later_bolt_validates() -> None:
    class Cycle(Topology):
        words = Words.spec()
        counter = Count.spec(inputs={words: Grouping.fields("word"),
                                     "sink": Grouping.fields("word")})
        sink = Count.spec(inputs={counter: Grouping.GLOBAL})

    validate_topology(Cycle.topology_spec, topology_name="cycle")
    assert [i.source for i in Cycle.counter.inputs] == ["words", "sink"]


def test_valid_spec_validates() -> None:
    spec = TopologySpec((
        spout_spec("words"),
        bolt_spec("counter", InputSpec("words", "default", Grouping.fields("word"))),
    ))
    validate_topology(spec, topology_name="ok")


# --- the codes themselves ----------------------------------------------------------------


def _code_literals(path: Path) -> set[str]:
    return {a or b for a, b in CODE_LITERAL.findall(path.read_text(encoding="utf-8"))}


def test_every_error_code_literal_is_upper_snake() -> None:
    codes: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for code in _code_literals(path):
            codes.setdefault(code, set()).add(str(path.relative_to(SRC)))
    assert {"NO_SPOUT", "TUPLE_ARITY_MISMATCH", "COMPONENT_CLASS_NOT_FOUND"} <= set(codes)
    bad = {code: sorted(where) for code, where in codes.items() if not UPPER_SNAKE.match(code)}
    assert not bad, f"codes that are not UPPER_SNAKE: {bad}"


def test_every_validation_code_is_covered_here() -> None:
    raised = _code_literals(SRC / "topology" / "validate.py") | _code_literals(
        SRC / "topology" / "topology.py"
    )
    assert len(raised) >= 15
    this_file = Path(__file__).read_text(encoding="utf-8")
    missing = sorted(code for code in raised if f'"{code}"' not in this_file)
    assert not missing, f"validation codes without a test in {Path(__file__).name}: {missing}"


# --- size limits (issue 30): checked against the effective conf at every submit ---------------


def _wide(components: int, par: int = 1) -> TopologySpec:
    """A spout and ``components - 1`` bolts reading it, each with ``par`` executors."""
    words = replace(spout_spec("words"), par=par, num_tasks=par)
    bolts = [replace(bolt_spec(f"count{i}", InputSpec("words", "default", Grouping.SHUFFLE)),
                     par=par, num_tasks=par) for i in range(components - 1)]
    return TopologySpec((words, *bolts))


def test_components_above_limit() -> None:
    spec = _wide(5)
    validate_windowed_bolts(spec, {"topology.max.components": 5})
    with pytest.raises(TopologyError) as caught:
        validate_windowed_bolts(spec, {"topology.max.components": 4, "topology.name": "wide"})
    assert_error(caught, "COMPONENTS_ABOVE_LIMIT", "wide")
    assert "topology.max.components" in str(caught.value) and "5 components" in str(caught.value)


def test_executors_above_limit() -> None:
    spec = _wide(3, par=4)  # 12 executors
    validate_windowed_bolts(spec, {"topology.max.executors": 12})
    with pytest.raises(TopologyError) as caught:
        validate_windowed_bolts(spec, {"topology.max.executors": 11, "topology.name": "wide"})
    assert_error(caught, "EXECUTORS_ABOVE_LIMIT", "wide")
    assert "12 executors" in str(caught.value) and "topology.max.executors" in str(caught.value)


def test_supervisor_executors_above_limit() -> None:
    spec = _wide(3, par=4)  # 12 executors: 6 per worker on 2 workers
    check_worker_share(spec, 2, {"supervisor.max.executors": 6})
    with pytest.raises(TopologyError) as caught:
        check_worker_share(spec, 2, {"supervisor.max.executors": 5, "topology.name": "wide"})
    assert_error(caught, "SUPERVISOR_EXECUTORS_ABOVE_LIMIT", "wide")
    assert "supervisor.max.executors" in str(caught.value)
    check_worker_share(spec, 3, {"supervisor.max.executors": 4})


def test_the_class_check_leaves_the_size_limits_to_the_submitters() -> None:
    # validate_topology runs at class creation, before -o overrides: no size limit there
    validate_topology(_wide(300), topology_name="wide")
