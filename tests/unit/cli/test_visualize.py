"""``sparkstorm visualize`` without a cluster: text, DOT, images through ``dot`` (no Spark).

Rendering an image is tested with a stand-in ``dot`` program on ``PATH`` (Graphviz itself is
not needed): the DOT text reaches it and its output is the file.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from sparkstorm.cli.main import main
from sparkstorm.cli.topology_graph import layers, render_dot, render_text
from sparkstorm.cli.visualize import output_format, output_path

ROOT = Path(__file__).resolve().parents[3]
EXCLAMATION = str(ROOT / "examples" / "exclamation.py")

DIAMOND = {"components": [
    {"name": "lines", "kind": "spout", "par": 1, "num_tasks": 1, "inputs": [],
     "outputs": [{"name": "default", "fields": ["line"]},
                 {"name": "errors", "fields": ["error"], "direct": True}]},
    {"name": "split", "kind": "bolt", "par": 3, "num_tasks": 6, "outputs": [
        {"name": "default", "fields": ["word"]}], "inputs": [
        {"source": "lines", "stream": "default", "grouping": {"type": "SHUFFLE"}}]},
    {"name": "count", "kind": "bolt", "par": 2, "num_tasks": 2, "outputs": [], "inputs": [
        {"source": "split", "stream": "default",
         "grouping": {"type": "FIELDS", "fields": ["word"]}},
        {"source": "lines", "stream": "errors", "grouping": {"type": "DIRECT"}}]},
    {"name": "loop", "kind": "bolt", "par": 1, "num_tasks": 1, "outputs": [], "inputs": [
        {"source": "loop", "stream": "default", "grouping": {"type": "ALL"}},
        {"source": "count", "stream": "default", "grouping": {"type": "GLOBAL"}}]},
]}


def test_layers_follow_the_longest_path_and_survive_a_self_loop() -> None:
    assert layers(DIAMOND) == [["lines"], ["split"], ["count"], ["loop"]]


def test_text_lists_layers_then_one_line_per_edge() -> None:
    text = render_text(DIAMOND, "diamond")
    assert text.splitlines()[0] == "diamond: 1 spout, 3 bolts, 5 edges"
    assert "  lines  spout  par 1  tasks 1  emits default(line), errors(error) direct" in text
    edges = text.split("edges (stream: grouping)\n")[1].splitlines()
    assert edges == ["  lines --[default: shuffle]--> split",
                     "  split --[default: fields(word)]--> count",
                     "  lines --[errors: direct]--> count",
                     "  loop  --[default: all]--> loop",
                     "  count --[default: global]--> loop"]
    flipped = render_text(DIAMOND, "diamond", flip=True)
    assert flipped.index("layer 3") < flipped.index("layer 0")
    assert "  split <--[default: shuffle]-- lines" in flipped


def test_dot_has_every_component_and_edge_and_flips_to_top_down() -> None:
    dot = render_dot(DIAMOND, 'my "topo"')
    assert dot.startswith('digraph "my \\"topo\\"" {\n  rankdir=LR;')
    assert '"lines" [shape=box, label="lines\\nspout x1"];' in dot
    assert '"count" [shape=ellipse, label="count\\nbolt x2"];' in dot
    assert '"split" -> "count" [label="default\\nfields(word)"];' in dot
    assert dot.count(" -> ") == 5 and dot.rstrip().endswith("}")
    assert "rankdir=TB;" in render_dot(DIAMOND, "d", flip=True)


@pytest.mark.parametrize(("fmt", "output", "expected", "path"), [
    (None, None, "text", None),
    ("dot", None, "dot", None),
    ("png", None, "png", "excl.png"),
    (None, "graph.svg", "svg", "graph.svg"),
    (None, "graph", "png", "graph.png"),
    ("svg", "graph.png", "svg", "graph.png.svg"),
    ("dot", "out/g.dot", "dot", "out/g.dot"),
])
def test_format_and_file_follow_streamparse(fmt: str | None, output: str | None,
                                            expected: str, path: str | None) -> None:
    assert output_format(fmt, output) == expected
    written = output_path(output, expected, "excl")
    assert (str(written) if written else None) == path


def test_the_command_prints_text_writes_dot_and_refuses_unknown_formats(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["visualize", EXCLAMATION]) == 0
    out = capsys.readouterr().out
    assert out.startswith("exclamation: 1 spout, 2 bolts, 2 edges")
    assert "  word     --[default: shuffle]--> exclaim1" in out
    assert main(["visualize", EXCLAMATION, "-f", "dot", "-o", str(tmp_path / "g")]) == 0
    assert (tmp_path / "g.dot").read_text().startswith('digraph "exclamation"')
    assert main(["visualize", EXCLAMATION, "-f", "bmp"]) == 2
    assert "[VISUALIZE_BAD_FORMAT]" in capsys.readouterr().err


def test_images_go_through_dot_or_say_how_to_get_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["visualize", EXCLAMATION, "-f", "png"]) == 2
    err = capsys.readouterr().err
    assert "[GRAPHVIZ_NOT_INSTALLED]" in err and "apt-get install graphviz" in err
    assert "-f dot" in err
    fake = tmp_path / "bin" / "dot"
    fake.parent.mkdir()
    fake.write_text(f"#!{sys.executable}\nimport sys\n"
                    "data = sys.stdin.read()\n"
                    "if 'exclaim2' not in data: sys.exit('no graph')\n"
                    "sys.stdout.write('IMAGE ' + sys.argv[1])\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(fake.parent) + os.pathsep + os.environ["PATH"])
    assert main(["visualize", EXCLAMATION, "-f", "svg"]) == 0
    assert (tmp_path / "exclamation.svg").read_text() == "IMAGE -Tsvg"
    fake.write_text("#!/bin/sh\necho 'Format: \"png\" not recognized' >&2\nexit 1\n")
    assert main(["visualize", EXCLAMATION, "-o", "x.png"]) == 2
    err = capsys.readouterr().err
    assert "[GRAPHVIZ_FAILED]" in err and "not recognized" in err
