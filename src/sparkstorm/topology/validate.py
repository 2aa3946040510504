"""Whole-topology validation, run before anything starts (at class creation and submit).

Every failure is a :class:`TopologyError` with a stable code; the message names the
component, stream or field and says how to fix it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from sparkstorm.config.access import conf_int
from sparkstorm.errors import TopologyError
from sparkstorm.topology.grouping import GROUPING_TYPES
from sparkstorm.topology.spec import ComponentSpec, InputSpec, TopologySpec, check_spec_dict
from sparkstorm.topology.windowed_bolts.options import (
    WindowOptions,
    check_window_fits_timeouts,
    is_windowed,
)

_BAD_NAME_CHARS = re.compile(r"[/.:\\]")
MAX_TOPOLOGY_NAME_BYTES = 128
"""Longest topology name in UTF-8 bytes: the id ``<name>-<counter>-<secs>`` names folders."""


MAX_TASKS = 100_000
"""Tasks per component at most: a sanity bound, so a typo (num_tasks=10**9) is an error
instead of a submission that never finishes numbering its tasks."""


def validate_topology_name(name: str) -> None:
    r"""Check a topology name: Storm's rule, printable, and not too long.

    Storm's rule: a topology name is non-empty and has none of ``/ . : \``; it must also be
    printable (no control characters) and at most :data:`MAX_TOPOLOGY_NAME_BYTES` long, because the
    topology id names folders and store nodes.

    Raises:
        TopologyError: ``INVALID_TOPOLOGY_NAME``.
    """
    if not isinstance(name, str):
        msg = (
            f"topology name {name!r} is a {type(name).__name__}; it must be a string like "
            "'word-count'"
        )
        raise TopologyError(msg, code="INVALID_TOPOLOGY_NAME")
    if not name.isprintable():
        msg = (
            f"topology name {name!r} has control or other unprintable characters; use "
            "letters, digits, '-' and '_', like 'word-count'"
        )
        raise TopologyError(msg, code="INVALID_TOPOLOGY_NAME")
    if len(name.encode("utf-8")) > MAX_TOPOLOGY_NAME_BYTES:
        msg = (
            f"topology name {name[:40]!r}... is {len(name.encode('utf-8'))} bytes long (UTF-8); "
            f"at most {MAX_TOPOLOGY_NAME_BYTES} are allowed, because the topology id names "
            "folders; pick a shorter name"
        )
        raise TopologyError(msg, code="INVALID_TOPOLOGY_NAME")
    if not name or not name.strip() or _BAD_NAME_CHARS.search(name):
        msg = (
            f"topology name {name!r} is not allowed: it must be non-empty and contain none of "
            "'/', '.', ':', '\\'; pick a name like 'word-count'"
        )
        raise TopologyError(msg, code="INVALID_TOPOLOGY_NAME")


def executor_count_problem(topology: str, name: str, count: object,
                           tasks: Mapping[str, int]) -> tuple[str, str] | None:
    """Why ``count`` executors cannot run component ``name`` (``rebalance -e``), or None.

    Nimbus checks a rebalance with it before it records it, and the driver again before it
    regroups in place (``engine.plan.regroup``); each raises its own error with the code.

    Args:
        topology: the topology's id or name (in the message).
        name: the component.
        count: the executors asked for.
        tasks: every component's task count (fixed at submission).

    Returns:
        ``(code, message)``: ``REBALANCE_UNKNOWN_COMPONENT``, ``REBALANCE_INVALID`` (not a
        positive integer) or ``PARALLELISM_ABOVE_TASKS``; None when it can.

    Example:
        >>> executor_count_problem("wc", "split", 8, {"split": 4})[0]
        'PARALLELISM_ABOVE_TASKS'
    """
    if name not in tasks:
        return ("REBALANCE_UNKNOWN_COMPONENT",
                f"topology {topology!r} has no component {name!r}; its components are "
                f"{sorted(tasks)}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        return ("REBALANCE_INVALID",
                f"executors of component {name!r} must be a positive integer, got {count!r}")
    if count > tasks[name]:
        return ("PARALLELISM_ABOVE_TASKS",
                f"component {name!r} has {tasks[name]} tasks, so at most {tasks[name]} "
                f"executors, not {count}; tasks are fixed at submission (submit with a larger "
                "num_tasks to rebalance higher)")
    return None


def validate_topology(spec: TopologySpec, *, topology_name: str) -> None:
    """Check the structure of a whole topology.

    The types come first, with the checks of the JSON spec (:func:`check_spec_dict` on
    ``spec.to_dict()``): a component id that is not a string, or a ``par`` that is a bool,
    fails there whether the spec was declared in Python or received as JSON.

    Raises:
        TopologyError: with the code of the first rule broken.
    """
    check_spec_dict(spec.to_dict())
    _check_ids(spec, topology_name)
    if not spec.spouts:
        msg = (
            f"topology {topology_name!r} has no spout; every topology needs at least one "
            "spout to produce tuples; declare one with MySpout.spec()"
        )
        raise TopologyError(msg, code="NO_SPOUT")
    for component in spec.components:
        _check_parallelism(component)
        _check_outputs(component)
        for item in component.inputs:
            _check_input(spec, component, item)
        if component.kind == "bolt" and not component.inputs:
            msg = (
                f"bolt {component.name!r} in topology {topology_name!r} has no inputs; every "
                "bolt must subscribe to at least one stream; pass inputs=[<spout or bolt "
                "spec>] to .spec()"
            )
            raise TopologyError(msg, code="BOLT_WITHOUT_INPUTS")
    _check_windows(spec, spec.config)


def validate_windowed_bolts(spec: TopologySpec, conf: Mapping[str, object]) -> None:
    """Check a topology against its effective ``conf``: its windows, then its size.

    Each windowed bolt's window as Storm's ``WindowedBoltExecutor`` does (each bolt's own
    config overrides ``conf``), then :func:`check_topology_size`. Every submitter (``run``,
    ``submit``, ``spark-submit``, Nimbus) runs it once the effective conf is known;
    :func:`validate_topology` checks the windows alone against the class's config.

    Raises:
        TopologyError: ``WINDOW_BAD_OPTION``, ``WINDOW_EXCEEDS_MESSAGE_TIMEOUT``,
            ``WINDOW_EXCEEDS_MAX_SPOUT_PENDING``, ``COMPONENTS_ABOVE_LIMIT`` or
            ``EXECUTORS_ABOVE_LIMIT``.
    """
    _check_windows(spec, conf)
    check_topology_size(spec, conf)


def check_topology_size(spec: TopologySpec, conf: Mapping[str, object],
                        where: str = "the topology's conf") -> None:
    """Refuse a topology with more components or executors than ``conf`` allows.

    Every executor is a process of tens of MB, so a topology of thousands is refused at
    submit rather than exhausting the hosts that start it (``topology.max.components``,
    ``topology.max.executors``). Nimbus checks again against its own conf (``where`` says
    which conf set the limit, for the message).

    Raises:
        TopologyError: ``COMPONENTS_ABOVE_LIMIT`` or ``EXECUTORS_ABOVE_LIMIT``.

    Example:
        >>> from sparkstorm.topology.spec import ComponentSpec
        >>> spec = TopologySpec((ComponentSpec("s", "spout", "m:S", (), par=3),))
        >>> check_topology_size(spec, {"topology.max.executors": 2})
        Traceback (most recent call last):
        ...
        sparkstorm.errors.TopologyError: [EXECUTORS_ABOVE_LIMIT] topology '?' runs 3 executors ...
    """
    name = conf.get("topology.name") or "?"
    components = len(spec.components)
    most = conf_int(conf, "topology.max.components")
    if components > most:
        msg = (f"topology {name!r} declares {components} components; at most {most} are "
               f"allowed (topology.max.components in {where}): each runs at least one "
               "executor process; merge components, or raise topology.max.components")
        raise TopologyError(msg, code="COMPONENTS_ABOVE_LIMIT")
    executors = executor_total(spec)
    most = conf_int(conf, "topology.max.executors")
    if executors > most:
        msg = (f"topology {name!r} runs {executors} executors (the sum of its components' "
               f"par); at most {most} are allowed (topology.max.executors in {where}): each "
               "is a process of its own; lower par, or raise topology.max.executors")
        raise TopologyError(msg, code="EXECUTORS_ABOVE_LIMIT")


def check_worker_share(spec: TopologySpec, workers: int, conf: Mapping[str, object],
                       where: str = "Nimbus's conf") -> None:
    """Refuse a topology whose workers would each bring a supervisor too many executors.

    Nimbus deals a topology's executors round-robin over ``workers`` slots; each worker
    runs its share (up to ``ceil(executors / workers)`` executor processes) on one
    supervisor, which may take at most ``supervisor.max.executors`` of them.

    Raises:
        TopologyError: ``SUPERVISOR_EXECUTORS_ABOVE_LIMIT``.

    Example:
        >>> from sparkstorm.topology.spec import ComponentSpec
        >>> spec = TopologySpec((ComponentSpec("s", "spout", "m:S", (), par=3),))
        >>> check_worker_share(spec, 2, {"supervisor.max.executors": 2})
    """
    name = conf.get("topology.name") or "?"
    workers = max(1, workers)
    executors = executor_total(spec)
    share = -(-executors // workers)
    most = conf_int(conf, "supervisor.max.executors")
    if share > most:
        msg = (f"topology {name!r} runs {executors} executors on {workers} worker(s): a "
               f"worker brings up to {share} executor processes to its supervisor, which "
               f"hosts at most {most} per worker (supervisor.max.executors in {where}); "
               "raise topology.workers, lower par, or raise supervisor.max.executors")
        raise TopologyError(msg, code="SUPERVISOR_EXECUTORS_ABOVE_LIMIT")


def executor_total(spec: TopologySpec) -> int:
    """The executors a topology runs: the sum of its components' ``par``."""
    return sum(c.par for c in spec.components if isinstance(c.par, int))


def _check_windows(spec: TopologySpec, conf: Mapping[str, object]) -> None:
    for component in spec.bolts:
        if is_windowed(component.config):
            merged = {**conf, **component.config}
            name = component.name or "?"
            options = WindowOptions.from_conf(merged, component=name)
            check_window_fits_timeouts(options, merged, component=name)


def _check_ids(spec: TopologySpec, topology_name: str) -> None:
    counts = Counter(c.name for c in spec.components)
    for name, count in counts.items():
        if count > 1:
            msg = (
                f"component id {name!r} is declared {count} times in topology "
                f"{topology_name!r}; component ids must be unique; rename one with name=..."
            )
            raise TopologyError(msg, code="DUPLICATE_COMPONENT_ID")
    for component in spec.components:
        if not component.name or str(component.name).startswith("__"):
            msg = (
                f"component id {component.name!r} is reserved: ids starting with '__' belong "
                "to system components (__acker, __system); rename the component"
            )
            raise TopologyError(msg, code="RESERVED_COMPONENT_ID")
        if "/" in str(component.name) or "\\" in str(component.name):
            msg = (
                f"component id {component.name!r} contains a slash, which the REST API's and "
                "UI's paths (/api/v1/topology/:id/component/:component) cannot carry; "
                "rename the component without '/' or '\\'"
            )
            raise TopologyError(msg, code="COMPONENT_ID_WITH_SLASH")


def _check_parallelism(component: ComponentSpec) -> None:
    if not isinstance(component.par, int) or component.par < 1:
        msg = (
            f"component {component.name!r} has par={component.par!r}; par is the number of "
            "executors and must be an integer of at least 1"
        )
        raise TopologyError(msg, code="PARALLELISM_BELOW_ONE")
    if not isinstance(component.num_tasks, int) or component.num_tasks < 1:
        msg = (
            f"component {component.name!r} has num_tasks={component.num_tasks!r}; it must be "
            "an integer of at least 1 (or left out to default to par)"
        )
        raise TopologyError(msg, code="TASKS_BELOW_ONE")
    if component.num_tasks > MAX_TASKS:
        msg = (
            f"component {component.name!r} has num_tasks={component.num_tasks}; at most "
            f"{MAX_TASKS:,} tasks per component are allowed (each is an instance kept in "
            "memory by an executor process); lower num_tasks"
        )
        raise TopologyError(msg, code="TASKS_ABOVE_LIMIT")
    if component.par > component.num_tasks:
        msg = (
            f"component {component.name!r} has par={component.par} executors but only "
            f"num_tasks={component.num_tasks} tasks; every executor needs a task: lower par "
            "or raise num_tasks"
        )
        raise TopologyError(msg, code="PARALLELISM_ABOVE_TASKS")


def _check_outputs(component: ComponentSpec) -> None:
    stream_names = Counter(s.name for s in component.outputs)
    for name, count in stream_names.items():
        if count > 1:
            msg = (
                f"component {component.name!r} declares output stream {name!r} {count} times; "
                "merge the declarations or rename one"
            )
            raise TopologyError(msg, code="DUPLICATE_STREAM_ID")
    for stream in component.outputs:
        duplicates = [f for f, n in Counter(stream.fields).items() if n > 1]
        if duplicates:
            msg = (
                f"component {component.name!r} stream {stream.name!r} declares field "
                f"{duplicates[0]!r} more than once in {list(stream.fields)!r}; field names "
                "must be unique within a stream"
            )
            raise TopologyError(msg, code="DUPLICATE_FIELD_NAME")


def _check_input(spec: TopologySpec, bolt: ComponentSpec, item: InputSpec) -> None:
    try:
        source = spec.component(item.source)
    except KeyError:
        known = ", ".join(repr(c.name) for c in spec.components)
        msg = (
            f"bolt {bolt.name!r} subscribes to unknown component {item.source!r}; "
            f"known components: {known}"
        )
        raise TopologyError(msg, code="UNKNOWN_SOURCE_COMPONENT") from None
    stream = source.stream(item.stream)
    if stream is None:
        declared = [s.name for s in source.outputs]
        msg = (
            f"bolt {bolt.name!r} subscribes to stream {item.stream!r} of {source.name!r}, which "
            f"declares only {declared!r}; add Stream(..., name={item.stream!r}) to its outputs "
            "or subscribe to a declared stream"
        )
        raise TopologyError(msg, code="UNKNOWN_SOURCE_STREAM")
    grouping = item.grouping
    if grouping.type not in GROUPING_TYPES:
        msg = f"bolt {bolt.name!r}: unknown grouping type {grouping.type!r}; use {GROUPING_TYPES}"
        raise TopologyError(msg, code="INVALID_GROUPING")
    for field_name in grouping.field_names:
        if field_name not in stream.fields:
            msg = (
                f"bolt {bolt.name!r} groups stream {item.stream!r} of {source.name!r} by field "
                f"{field_name!r}, but that stream declares only {list(stream.fields)!r}; "
                "group by a declared field"
            )
            raise TopologyError(msg, code="UNKNOWN_GROUPING_FIELD")
    if grouping.type in ("FIELDS", "PARTIAL_KEY") and not grouping.field_names:
        msg = f"bolt {bolt.name!r}: a fields grouping needs at least one field name"
        raise TopologyError(msg, code="UNKNOWN_GROUPING_FIELD")
    if grouping.type == "DIRECT" and not stream.direct:
        msg = (
            f"bolt {bolt.name!r} uses a direct grouping on stream {item.stream!r} of "
            f"{source.name!r}, which is not direct; declare it Stream(..., direct=True)"
        )
        raise TopologyError(msg, code="DIRECT_GROUPING_ON_NON_DIRECT_STREAM")
    if grouping.type != "DIRECT" and stream.direct:
        msg = (
            f"bolt {bolt.name!r} subscribes to direct stream {item.stream!r} of "
            f"{source.name!r} with a {grouping.type} grouping; tuples of a direct stream go "
            "only to the task the emitter names: use Grouping.DIRECT"
        )
        raise TopologyError(msg, code="NON_DIRECT_GROUPING_ON_DIRECT_STREAM")
