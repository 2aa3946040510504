"""Shell components in the Topology DSL and the JSON spec."""

from __future__ import annotations

from sparkstorm import Grouping, Topology, TopologySpec
from sparkstorm.multilang import ShellBolt, ShellSpout, python_command
from sparkstorm.multilang.shell_base import _child_cwd, subprocess_timeout


class Words(Topology):
    sentences = ShellSpout.spec(command=["node", "sentences.js"], outputs=["sentence"],
                                activate=False)
    split = ShellBolt.spec(command="python3 split.py --fast", outputs=["word"],
                           inputs=[sentences], par=2, env={"LANG": "C.UTF-8"},
                           serializer="msgpack", metrics={"words": "count"})
    count = ShellBolt.spec(command=python_command("pkg.count:Count"), outputs=["word", "n"],
                           inputs={split: Grouping.fields("word")}, cwd="bin")


def test_the_dsl_writes_shell_settings_into_extra() -> None:
    assert Words.sentences.extra == {"command": ["node", "sentences.js"], "activate": False}
    assert Words.split.extra == {"command": ["python3", "split.py", "--fast"],
                                 "env": {"LANG": "C.UTF-8"}, "serializer": "msgpack",
                                 "metrics": {"words": "count"}}
    assert Words.split.component == "sparkstorm.multilang.shell_bolt:ShellBolt"
    assert Words.count.inputs[0].grouping.field_names == ("word",)


def test_the_json_spec_round_trips_shell_components() -> None:
    spec = TopologySpec.from_json(Words.to_json())
    assert [c.extra for c in spec.components] == [c.extra for c in Words.specs]
    assert spec.component("split").par == 2


def test_working_directory_and_timeout_rules() -> None:
    assert _child_cwd(None, None) is None  # the worker's directory
    assert _child_cwd(None, "/res") == "/res"
    assert _child_cwd("bin", "/res") == "/res/bin"
    assert _child_cwd("/abs", "/res") == "/abs"
    assert subprocess_timeout({}) == 30
    assert subprocess_timeout({"supervisor.worker.timeout.secs": 12}) == 12
    assert subprocess_timeout({"topology.subprocess.timeout.secs": 5,
                               "supervisor.worker.timeout.secs": 12}) == 5


def test_specs_stored_with_the_old_module_path_still_load() -> None:
    from sparkstorm.multilang import ShellBolt, ShellSpout
    from sparkstorm.topology.spec import load_class

    assert load_class("sparkstorm.multilang.shell:ShellBolt") is ShellBolt
    assert load_class("sparkstorm.multilang.shell:ShellSpout") is ShellSpout
