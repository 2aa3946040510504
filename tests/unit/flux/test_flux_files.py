"""Flux files read into topologies (no Spark: nothing here starts).

Groupings, shell wrappers, includes, substitution, and every refusal with its code and line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sparkstorm import Bolt
from sparkstorm.errors import TopologyError
from sparkstorm.flux import load_flux_file
from sparkstorm.topology.spec import ComponentSpec

SPOUT = "sparkstorm.flux.storm_classes.TestWordSpout"
HEAD = f"""name: "t"
spouts:
  - id: "words"
    className: "{SPOUT}"
"""


def flux(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(path: Path, **kwargs: object) -> TopologyError:
    with pytest.raises(TopologyError) as error:
        load_flux_file(path, **kwargs)  # type: ignore[arg-type]
    return error.value


def bolt(grouping: str, bolt_id: str = "count") -> str:
    return f"""bolts:
  - id: "{bolt_id}"
    className: "org.apache.storm.testing.TestWordCounter"
    parallelism: 2
streams:
  - from: "words"
    to: "{bolt_id}"
    grouping: {grouping}
"""


@pytest.mark.parametrize(("grouping", "expected"), [
    ("{type: SHUFFLE}", ("SHUFFLE", ())),
    ("{type: FIELDS, args: [word]}", ("FIELDS", ("word",))),
    ("{type: ALL}", ("ALL", ())),
    ("{type: GLOBAL}", ("GLOBAL", ())),
    ("{type: NONE}", ("NONE", ())),
    ("{type: LOCAL_OR_SHUFFLE}", ("LOCAL_OR_SHUFFLE", ())),
    ("{type: CUSTOM, customClass: {className: org.apache.storm.grouping.PartialKeyGrouping,"
     " constructorArgs: [[word]]}}", ("PARTIAL_KEY", ("word",))),
])
def test_every_grouping(tmp_path: Path, grouping: str, expected: tuple[str, tuple[str, ...]]
                        ) -> None:
    spec = load_flux_file(flux(tmp_path, HEAD + bolt(grouping))).spec
    item = spec.component("count").inputs[0]
    assert (item.grouping.type, item.grouping.field_names) == expected
    assert (item.source, item.stream) == ("words", "default")
    assert spec.component("count").par == 2


def test_shell_wrappers_substitution_and_includes(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLUX_TEST_NODE", "nodejs")
    (tmp_path / "dev.properties").write_text("# comment\nsplit.par = 3\nfields: [\"a\", \"b\"]\n")
    flux(tmp_path, """config:
  topology.max.spout.pending: 7
  from.include: 1
bolts:
  - id: "extra"
    className: "org.apache.storm.flux.wrappers.bolts.LogInfoBolt"
streams:
  - from: "split"
    to: "extra"
    grouping: {type: SHUFFLE, streamId: "other"}
""", "more.yaml")
    path = flux(tmp_path, """name: "shells"
includes:
  - file: "more.yaml"
    override: false
config:
  topology.max.spout.pending: 5
spouts:
  - id: "sentences"
    className: "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
    constructorArgs:
      - ["${ENV-FLUX_TEST_NODE}", "sentences.js"]
      - ["sentence"]
bolts:
  - id: "split"
    className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
    parallelism: ${split.par}
    numTasks: 6
    constructorArgs:
      - ["python3", "split.py"]
    configMethods:
      - name: "setDefaultStream"
        args: [["word"]]
      - name: "setNamedStream"
        args: ["other", ["${fields[0]}", "${fields[1]}"]]
      - name: "addComponentConfig"
        args: ["split.lower", true]
streams:
  - from: "sentences"
    to: "split"
    grouping: {type: SHUFFLE}
""")
    loaded = load_flux_file(path, properties_file=str(tmp_path / "dev.properties"),
                            env_filter=True)
    spec = loaded.spec
    assert loaded.name == "shells"
    assert spec.config == {"topology.max.spout.pending": 5, "from.include": 1}, \
        "an include without override keeps the including file's values"
    sentences, split = spec.component("sentences"), spec.component("split")
    assert sentences.extra["command"] == ["nodejs", "sentences.js"]
    assert (split.par, split.num_tasks, split.config) == (3, 6, {"split.lower": True})
    assert {s.name: s.fields for s in split.outputs} == {"default": ("word",),
                                                         "other": ("a", "b")}
    assert spec.component("extra").inputs[0].stream == "other"


def test_include_with_override_replaces(tmp_path: Path) -> None:
    flux(tmp_path, "name: other\nconfig: {topology.debug: true}\n", "over.yaml")
    path = flux(tmp_path, HEAD + "includes: [{file: over.yaml, override: true}]\n"
                "config: {topology.debug: false}\n" + bolt("{type: SHUFFLE}"))
    loaded = load_flux_file(path)
    assert (loaded.name, loaded.spec.config) == ("other", {"topology.debug": True})


def test_storms_own_multilang_example_reads_unchanged(tmp_path: Path) -> None:
    """flux-examples' multilang.yaml: shell spout and bolt, LogInfoBolt, TestWordCounter."""
    path = flux(tmp_path, """---
name: "shell-topology"
config:
  topology.workers: 1
spouts:
  - id: "sentence-spout"
    className: "org.apache.storm.flux.wrappers.spouts.FluxShellSpout"
    constructorArgs:
      - ["node", "randomsentence.js"]
      - ["word"]
    parallelism: 1
bolts:
  - id: "splitsentence"
    className: "org.apache.storm.flux.wrappers.bolts.FluxShellBolt"
    constructorArgs:
      - ["python3", "splitsentence.py"]
      - ["word"]
    parallelism: 1
  - id: "log"
    className: "org.apache.storm.flux.wrappers.bolts.LogInfoBolt"
    parallelism: 1
  - id: "count"
    className: "org.apache.storm.testing.TestWordCounter"
    parallelism: 1
streams:
  - name: "spout --> split"
    from: "sentence-spout"
    to: "splitsentence"
    grouping:
      type: SHUFFLE
  - name: "split --> count"
    from: "splitsentence"
    to: "count"
    grouping:
      type: FIELDS
      args: ["word"]
  - name: "count --> log"
    from: "count"
    to: "log"
    grouping:
      type: SHUFFLE
""")
    spec = load_flux_file(path).spec
    assert [c.name for c in spec.components] == ["sentence-spout", "splitsentence", "log",
                                                 "count"]


@pytest.mark.parametrize(("text", "code", "line", "words"), [
    (HEAD + "  - id: x\n", "FLUX_INVALID_VALUE", 5, "className"),
    (HEAD + "    parallelizm: 2\n", "FLUX_UNKNOWN_KEY", 5, "parallelism"),
    (HEAD + "components:\n  - id: c\n    className: x.Y\n", "FLUX_UNSUPPORTED", 5,
     "components"),
    ("name: t\ntopologySource:\n  className: a.B\n", "FLUX_UNSUPPORTED", 2, "topologySource"),
    (HEAD + "bolts:\n  - id: b\n    className: org.apache.storm.kafka.KafkaBolt\n",
     "FLUX_CLASS_NOT_LOADABLE", 6, "Java class"),
    (HEAD + "bolts:\n  - id: b\n    className: " + SPOUT + "\n", "FLUX_WRONG_KIND", 6,
     "not a sparkstorm Bolt"),
    (HEAD + "    constructorArgs: [1]\n", "FLUX_UNSUPPORTED", 5, "config"),
    (HEAD + bolt("{type: CUSTOM, customClass: {className: my.Grouping}}"),
     "FLUX_CLASS_NOT_LOADABLE", 12, "PartialKeyGrouping"),
    (HEAD + bolt("{type: SHUFFLE}").replace('"words"\n    to', '"nope"\n    to'),
     "FLUX_UNKNOWN_COMPONENT", 10, "nope"),
    (HEAD + "    parallelism: two\n", "FLUX_INVALID_VALUE", 5, "parallelism"),
    (HEAD + "    parallelism: ${par}\n", "FLUX_UNRESOLVED_PROPERTY", 5, "--filter"),
    (HEAD + "    parallelism: ${ENV-PAR}\n", "FLUX_UNRESOLVED_PROPERTY", 5, "--env-filter"),
    (HEAD + "includes: [{file: missing.yaml}]\n", "FLUX_INCLUDE_NOT_FOUND", 5,
     "missing.yaml"),
    (HEAD + "includes: [{file: x.yaml, resource: true}]\n", "FLUX_UNSUPPORTED", 5,
     "classpath"),
    (HEAD + "  - id: [\n", "FLUX_YAML_INVALID", 6, "YAML"),
])
def test_refusals_name_the_line(tmp_path: Path, text: str, code: str, line: int,
                                words: str) -> None:
    error = refused(flux(tmp_path, text))
    assert error.code == code, error
    assert f"t.yaml:{line}:" in str(error) and words in str(error)


def test_invalid_topologies_are_refused_with_the_topology_codes(tmp_path: Path) -> None:
    error = refused(flux(tmp_path, HEAD + bolt("{type: FIELDS, args: [nope]}")))
    assert error.code == "UNKNOWN_GROUPING_FIELD"
    error = refused(flux(tmp_path, HEAD + bolt("{type: DIRECT}")))
    assert error.code == "DIRECT_GROUPING_ON_NON_DIRECT_STREAM"


def test_resource_hints_are_ignored_with_a_warning(tmp_path: Path) -> None:
    loaded = load_flux_file(flux(tmp_path, HEAD + "    cpuLoad: 20\n"))
    assert loaded.warnings and "t.yaml:5" in loaded.warnings[0] and "cpuLoad" in \
        loaded.warnings[0]


def test_to_flux_dict_reads_back(tmp_path: Path) -> None:
    import yaml

    from sparkstorm.flux.export import spec_to_flux_dict

    path = flux(tmp_path, HEAD + bolt("{type: FIELDS, args: [word]}"))
    spec = load_flux_file(path).spec
    again = flux(tmp_path, yaml.safe_dump(spec_to_flux_dict(spec, "t")), "again.yaml")
    assert load_flux_file(again).spec.to_dict() == spec.to_dict()


@pytest.mark.parametrize("name", ["topology.jar", "topology.json", "notes.txt"])
def test_cli_refuses_other_files_clearly(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("x")
    result = subprocess.run([sys.executable, "-m", "sparkstorm.cli.main", "run",
                             str(tmp_path / name)], capture_output=True, text=True,
                            timeout=60, cwd=tmp_path)
    assert result.returncode == 2
    assert "UNSUPPORTED_TOPOLOGY_FILE" in result.stderr and "Traceback" not in result.stderr


class FieldsFromConfigBolt(Bolt):
    """Declares the output fields its config names (as the Redis and SQL bolts do)."""

    @classmethod
    def flux_spec(cls, *, name: str, par: int, num_tasks: int | None,
                  config: dict[str, Any]) -> ComponentSpec:
        if not config.get("test.fields"):
            msg = "test.fields is required"
            raise TopologyError(msg, code="INVALID_COMPONENT_CONFIG")
        return cls.spec(name=name, par=par, num_tasks=num_tasks, config=config,
                        outputs=config["test.fields"])


def test_a_class_with_flux_spec_declares_itself(tmp_path: Path) -> None:
    text = HEAD + f"""bolts:
  - id: "look"
    className: "{__name__}.FieldsFromConfigBolt"
    parallelism: 2
    config: {{test.fields: [word, value]}}
streams:
  - from: "words"
    to: "look"
    grouping: {{type: SHUFFLE}}
"""
    look = load_flux_file(flux(tmp_path, text)).spec.component("look")
    assert look.outputs[0].fields == ("word", "value")
    assert (look.par, look.config) == (2, {"test.fields": ["word", "value"]})
    bad = text.replace("test.fields: [word, value]", "other: 1")
    error = refused(flux(tmp_path, bad, "b.yaml"))
    assert error.code == "INVALID_COMPONENT_CONFIG"
    assert "b.yaml:6: bolt 'look'" in str(error)  # the bolt's line
