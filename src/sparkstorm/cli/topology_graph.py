"""A topology's DAG as text for the terminal, or as Graphviz DOT (``sparkstorm visualize``).

Both read the spec's dict form (:meth:`~sparkstorm.topology.spec.TopologySpec.to_dict`),
whatever the topology came from (a Python file, a Flux file, a streamparse project).
Components are placed in layers: spouts (and any component without inputs) first, then each
bolt one layer after the furthest of its inputs. The text form lists the layers, then one
line per edge with its stream and grouping; ``flip`` lists them from the last layer back.

Example:
    >>> spec = {"components": [
    ...     {"name": "words", "kind": "spout", "par": 1, "num_tasks": 1, "inputs": [],
    ...      "outputs": [{"name": "default", "fields": ["word"]}]},
    ...     {"name": "count", "kind": "bolt", "par": 2, "num_tasks": 2, "outputs": [],
    ...      "inputs": [{"source": "words", "stream": "default",
    ...                  "grouping": {"type": "FIELDS", "fields": ["word"]}}]}]}
    >>> print(render_text(spec, "wordcount"))
    wordcount: 1 spout, 1 bolt, 1 edge
    <BLANKLINE>
    layer 0
      words  spout  par 1  tasks 1  emits default(word)
    layer 1
      count  bolt   par 2  tasks 2
    <BLANKLINE>
    edges (stream: grouping)
      words --[default: fields(word)]--> count
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Edge:
    """One subscription: ``target`` reads ``source``'s ``stream`` with ``grouping``."""

    source: str
    target: str
    stream: str
    grouping: str


def grouping_label(grouping: dict[str, Any]) -> str:
    """``shuffle``, ``fields(a, b)``, ``partial_key(a)``, ... (Storm's names, lower case)."""
    kind = str(grouping.get("type") or "shuffle").lower()
    fields = grouping.get("fields")
    return f"{kind}({', '.join(str(f) for f in fields)})" if fields else kind


def edges(spec: dict[str, Any]) -> list[Edge]:
    """Every input of every component, in declaration order."""
    return [Edge(str(i["source"]), str(c["name"]), str(i.get("stream") or "default"),
                 grouping_label(i.get("grouping") or {}))
            for c in spec["components"] for i in c.get("inputs", [])]


def layers(spec: dict[str, Any]) -> list[list[str]]:
    """Components by layer (see the module docstring); a cycle does not loop forever."""
    names = [str(c["name"]) for c in spec["components"]]
    sources = {str(c["name"]): {str(i["source"]) for i in c.get("inputs", [])
                                if str(i["source"]) in names and i["source"] != c["name"]}
               for c in spec["components"]}
    layer = dict.fromkeys(names, 0)
    for _ in names:  # longest path, relaxed at most once per component
        changed = False
        for name in names:
            deepest = max((layer[s] + 1 for s in sources[name]), default=0)
            if deepest > layer[name] and deepest < len(names):
                layer[name], changed = deepest, True
        if not changed:
            break
    return [[n for n in names if layer[n] == depth] for depth in range(max(layer.values(),
                                                                         default=-1) + 1)]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _emits(component: dict[str, Any]) -> str:
    outputs = [f"{o.get('name', 'default')}({', '.join(o.get('fields', []))})"
               + (" direct" if o.get("direct") else "") for o in component.get("outputs", [])]
    return f"  emits {', '.join(outputs)}" if outputs else ""


def render_text(spec: dict[str, Any], name: str, *, flip: bool = False) -> str:
    """The terminal form: the layers, then one line per edge."""
    components = {str(c["name"]): c for c in spec["components"]}
    kinds = [str(c["kind"]) for c in spec["components"]]
    links = edges(spec)
    lines = [f"{name}: {_plural(kinds.count('spout'), 'spout')}, "
             f"{_plural(kinds.count('bolt'), 'bolt')}, {_plural(len(links), 'edge')}", ""]
    width = max((len(n) for n in components), default=0)
    ordered = list(enumerate(layers(spec)))
    for depth, names in reversed(ordered) if flip else ordered:
        lines.append(f"layer {depth}")
        for component in (components[n] for n in names):
            lines.append(f"  {str(component['name']).ljust(width)}  "
                         f"{str(component['kind']).ljust(5)}  par {component.get('par', 1)}  "
                         f"tasks {component.get('num_tasks', 1)}{_emits(component)}")
    lines += ["", "edges (stream: grouping)"]
    source_width = max((len(e.source) for e in links), default=0)
    target_width = max((len(e.target) for e in links), default=0)
    for edge in reversed(links) if flip else links:
        label = f"[{edge.stream}: {edge.grouping}]"
        lines.append(f"  {edge.target.ljust(target_width)} <--{label}-- {edge.source}" if flip
                     else f"  {edge.source.ljust(source_width)} --{label}--> {edge.target}")
    return "\n".join(line.rstrip() for line in lines)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def render_dot(spec: dict[str, Any], name: str, *, flip: bool = False) -> str:
    """Graphviz DOT: spouts as boxes, bolts as ellipses, edges labelled stream and grouping.

    Left to right, or top to bottom with ``flip``.
    """
    lines = [f"digraph {_quote(name)} {{",
             f"  rankdir={'TB' if flip else 'LR'};",
             f"  label={_quote(name)}; labelloc=t; fontname=\"Helvetica\";",
             '  node [fontname="Helvetica", style=filled, fillcolor="#006699", '
             'fontcolor=white, color=white];',
             '  edge [fontname="Helvetica", fontsize=10, arrowhead=open];']
    for component in spec["components"]:
        shape = "box" if component["kind"] == "spout" else "ellipse"
        label = f"{component['name']}\n{component['kind']} x{component.get('par', 1)}"
        lines.append(f"  {_quote(str(component['name']))} [shape={shape}, "
                     f"label={_quote(label)}];")
    for edge in edges(spec):
        label = _quote(edge.stream + "\n" + edge.grouping)
        lines.append(f"  {_quote(edge.source)} -> {_quote(edge.target)} [label={label}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
