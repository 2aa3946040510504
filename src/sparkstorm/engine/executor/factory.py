"""The executor class each component kind gets: spout, batch spout, bolt, batch bolt."""

from __future__ import annotations

from sparkstorm.engine.executor.batch_bolt import BatchBoltExecutor, is_batch_bolt
from sparkstorm.engine.executor.batch_spout import BatchSpoutExecutor
from sparkstorm.engine.executor.checkpoint_part import RestorePoint
from sparkstorm.engine.executor.host import BoltExecutor, ExecutorHost
from sparkstorm.engine.executor.spout import SpoutExecutor
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.topology.batch_spout import is_batch_spout
from sparkstorm.topology.spec import load_class


def make_executor(plan: ExecutionPlan, gid: int, topology_name: str,
                  restore: RestorePoint | None = None) -> ExecutorHost:
    """The right executor class for ``gid``'s component kind.

    Its tasks are restored from ``restore`` when given.
    """
    name = plan.executors[gid].component
    spec = plan.components[name]
    cls = load_class(spec.component, component=name)
    if spec.kind == "spout":
        if is_batch_spout(cls):
            return BatchSpoutExecutor(plan, gid, topology_name, restore)
        return SpoutExecutor(plan, gid, topology_name, restore)

    if is_batch_bolt(cls):
        return BatchBoltExecutor(plan, gid, topology_name, restore)
    return BoltExecutor(plan, gid, topology_name, restore)


__all__ = ["make_executor"]
