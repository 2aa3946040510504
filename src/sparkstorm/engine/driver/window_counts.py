"""One window's executor counters, added up for the driver's statistics and spouts' verdicts.

Called by the driver once per absorbed window, on the window loop's thread.
"""

from __future__ import annotations

from collections.abc import Iterable

from sparkstorm.engine.wire.messages import WindowMeta
from sparkstorm.engine.wire.stats import ComponentCounters


def window_counters(metas: Iterable[WindowMeta]
                    ) -> tuple[dict[str, ComponentCounters], dict[int, ComponentCounters]]:
    """One window's executor counters added up per component and per executor.

    Each executor's errors are counted.
    """
    counters: dict[str, ComponentCounters] = {}
    executors: dict[int, ComponentCounters] = {}
    for meta in metas:
        one = meta.stats
        one.errors = len(meta.errors)
        executors.setdefault(meta.gid, ComponentCounters()).add(one)
        counters.setdefault(meta.component, ComponentCounters()).add(one)
    return counters, executors


def joined_roots(roots: dict[int, list[int]], tasks: Iterable[int]) -> list[int]:
    """The roots of ``tasks`` in one list (a spout executor's share of a verdict)."""
    joined: list[int] = []
    for task in tasks:
        joined.extend(roots.get(task, ()))
    return joined
