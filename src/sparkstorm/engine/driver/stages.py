"""What the Spark tasks of each stage of a window are given (rebuilt when an executor moves).

The plan's stages as :class:`~sparkstorm.engine.spark.stage.StageInfo`.
"""

from __future__ import annotations

from typing import Any

from sparkstorm.config import conf_float
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.spark.stage import StageInfo
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.secure import wire_tls


def stage_infos(plan: ExecutionPlan, conf: dict[str, Any], endpoints: dict[int, Endpoint],
                token: str, pids: dict[int, int], lookup: tuple[str, int] | None
                ) -> list[StageInfo]:
    """One :class:`StageInfo` per level of ``plan``'s DAG.

    Args:
        plan: the plan the window runs.
        conf: the topology's conf (the executors' start and answer bounds).
        endpoints: where each executor answers now.
        token: the topology's token (TCP calls).
        pids: the process ids of the executors other workers run (a refresh tells a
            moved executor from a restarted one).
        lookup: where Spark tasks ask the driver for a moved executor (None: nowhere).
    """
    levels = {e.gid: e.level for e in plan.executors}
    timeout = conf_float(conf, "topology.executor.start.timeout.secs")
    answer = conf_float(conf, "topology.executor.answer.timeout.secs")
    components = {e.gid: e.component for e in plan.executors}
    chained = plan.chained
    roots = {gid: plan.chain_root(gid) for gids in chained.values() for gid in gids}
    return [StageInfo(level, tuple(gids), levels, endpoints, token, timeout, answer,
                      components, lookup=lookup, pids=pids,
                      chained={g: chained[g] for g in chained if levels[g] == level},
                      roots={g: r for g, r in roots.items() if levels[g] == level},
                      tls=wire_tls(plan.conf))  # as the executors' pools decided
            for level, gids in enumerate(plan.stages)]


__all__ = ["stage_infos"]
