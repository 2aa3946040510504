"""Chained components: a bolt run in its upstream's Spark task, without a Spark shuffle.

A bolt is **chained** to its upstream component when executor ``i`` of the upstream can feed
executor ``i`` of the bolt and nothing else needs to reach the bolt through Spark:

- every input of the bolt is a stream of one and the same upstream component, on an edge
  that does not close a cycle;
- every input's grouping is ``local_or_shuffle``, ``shuffle`` or ``none`` (``fields``,
  ``all``, ``global``, ``direct`` and partial-key groupings choose tasks by value or by the
  emitter and need every executor reachable), on a stream that is not direct;
- both components have the same number of executors; for ``shuffle`` and ``none`` the
  bolt's tasks also split evenly over its executors, so every task still gets an equal
  share when the upstream executors emit equal amounts.

The upstream executor ``i``'s collector then routes those streams to the tasks of the bolt's
executor ``i`` only (``engine.executor.routing``), and the Spark task of executor ``i`` calls the
bolt's
executor ``i`` right after it, with that output (``engine.chained_stage``). For
``local_or_shuffle`` this is Storm's meaning exactly: the bolt's tasks in the same worker are
preferred. For ``shuffle`` it is what Storm 2's default load-aware shuffle does when the
local tasks keep up (it prefers tasks of the same worker); the per-task share stays equal as
long as the upstream executors are balanced, as they are under a shuffle or a spout's own
split. ``topology.window.chain: false`` turns chaining off (one stage per DAG level).

Chains may be longer than one edge (spout → a → b) and a component may have several
chained bolts; each chain is a tree rooted at an unchained component, and the whole tree runs
in the root's stage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkstorm.config import conf_bool
from sparkstorm.topology.spec import ComponentSpec, InputSpec, TopologySpec

CHAINABLE_GROUPINGS = frozenset({"LOCAL_OR_SHUFFLE", "SHUFFLE", "NONE"})
"""Groupings that let executor ``i`` feed executor ``i``."""

BALANCED_GROUPINGS = frozenset({"SHUFFLE", "NONE"})
"""Chainable groupings that also promise every target task an equal share."""


def chain_parents(spec: TopologySpec, conf: Mapping[str, Any],
                  back_edges: set[tuple[str, str]]) -> dict[str, str]:
    """Each chained bolt's upstream component (see the module docs); empty when off."""
    if not conf_bool(conf, "topology.window.chain"):
        return {}
    components = {c.name or "": c for c in spec.components}
    parents: dict[str, str] = {}
    for bolt in spec.bolts:
        source = chainable_source(bolt, components, back_edges)
        if source is not None:
            parents[bolt.name or ""] = source
    return parents


def chainable_source(bolt: ComponentSpec, components: Mapping[str, ComponentSpec],
                     back_edges: set[tuple[str, str]]) -> str | None:
    """The upstream component ``bolt`` can be chained to, or None (see the module docs)."""
    name = bolt.name or ""
    sources = {item.source for item in bolt.inputs}
    if len(sources) != 1:
        return None
    (source,) = sources
    upstream = components.get(source)
    if (upstream is None or source == name or (source, name) in back_edges
            or upstream.par != bolt.par):
        return None
    if all(_chainable_input(item, upstream, bolt) for item in bolt.inputs):
        return source
    return None


def _chainable_input(item: InputSpec, upstream: ComponentSpec, bolt: ComponentSpec) -> bool:
    """Whether input ``item`` of ``bolt`` lets executor ``i`` feed executor ``i``."""
    kind = item.grouping.type
    stream = upstream.stream(item.stream)
    if kind not in CHAINABLE_GROUPINGS or stream is None or stream.direct:
        return False
    return kind not in BALANCED_GROUPINGS or bolt.num_tasks % bolt.par == 0


def stage_levels(spec: TopologySpec, back_edges: set[tuple[str, str]],
                 parents: Mapping[str, str]) -> dict[str, int]:
    """Each component's Spark stage in a window: its chain root's, else after its inputs.

    The longest path over the forward edges where a chained edge weighs nothing; spouts are
    stage 0, and the stages are numbered without gaps.
    """
    levels: dict[str, int] = {c.name or "": 0 for c in spec.spouts}
    pending = list(spec.bolts)
    while pending:
        progressed = False
        for component in list(pending):
            name = component.name or ""
            parent = parents.get(name)
            if parent is not None:
                if parent in levels:
                    levels[name] = levels[parent]
                    pending.remove(component)
                    progressed = True
                continue
            sources = [i.source for i in component.inputs if (i.source, name) not in back_edges]
            if all(s in levels for s in sources):
                levels[name] = 1 + max((levels[s] for s in sources), default=0)
                pending.remove(component)
                progressed = True
        if not progressed:  # only unreachable pieces are left; as plan.component_levels
            for component in pending:
                levels[component.name or ""] = 1
            break
    numbered = {level: n for n, level in enumerate(sorted(set(levels.values())))}
    return {name: numbered[level] for name, level in levels.items()}
