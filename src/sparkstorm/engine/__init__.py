"""The Spark data plane: plan, executor processes, wire, the window loop on Spark.

Layers outside the engine (the cluster daemons, the CLI, the testing tools, the web UI)
import what they use from here, never from the packages below; the packages are:

- ``driver``: the window loop and what it composes (scheduling, checkpoints, rebalances),
  the acker, the window sizer, the topology's statistics;
- ``executor``: executor processes (hosts of task instances), their collector, routing,
  input loop, the pool that starts and watches them;
- ``wire``: what crosses processes: framing, the typed protocol, messages, row batches;
- ``columnar``: the Arrow paths of batch bolts and batch spouts;
- ``spark``: the session, each window's job, its stages and their placement;
- ``plan``: the execution plan (tasks, executors, stages, chaining) and its regrouping.

Names are imported on first use (PEP 562), so a process that needs the plan does not
import PySpark with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "TopologyDriver": "driver.loop",
    "TopologyStats": "driver.topology_stats",
    "ExecutorRange": "driver.topology_stats",
    "ExecutorPool": "executor.pool",
    "TaskCollector": "executor.collector",
    "WindowOutput": "executor.collector",
    "build_routes": "executor.routing",
    "LogLevels": "executor.log_levels",
    "STORM_LEVELS": "executor.log_levels",
    "executor_stacks": "executor.stacks",
    "new_workdir": "executor.workdirs",
    "WORKDIR_PREFIX": "executor.workdirs",
    "workdirs_of": "executor.workdirs",
    "Endpoint": "wire.endpoint",
    "authenticated": "wire.endpoint",
    "AuthenticatedListener": "wire.gate",
    "send_frame": "wire.frames",
    "recv_frame": "wire.frames",
    "caller_context": "wire.secure",
    "listener_tls": "wire.secure",
    "wire_tls": "wire.secure",
    "HostingJob": "spark.hosting_job",
    "executor_cores": "spark.hosting_job",
    "local_master": "spark.hosting_job",
    "dynamic_allocation": "spark.hosting_job",
    "wait_for_hosts": "spark.hosting_job",
    "on_jvm_shutdown": "spark.shutdown_hook",
    "ComponentError": "wire.messages",
    "FAIL_CAUSES": "wire.failures",
    "get_spark": "spark.session",
    "stop_spark_jvm": "spark.session",
    "submitted_spark": "spark.session",
    "ExecutionPlan": "plan.execution",
    "plan_tag": "plan.execution",
    "number_tasks": "plan.execution",
    "split_tasks": "plan.execution",
    "plan_shares": "plan.shares",
    "executor_counts": "plan.regroup",
    "follow_driver_plan": "plan.regroup",
    "with_counts": "plan.regroup",
}

if TYPE_CHECKING:
    from sparkstorm.engine.driver.loop import TopologyDriver
    from sparkstorm.engine.driver.topology_stats import ExecutorRange, TopologyStats
    from sparkstorm.engine.executor.collector import TaskCollector, WindowOutput
    from sparkstorm.engine.executor.log_levels import STORM_LEVELS, LogLevels
    from sparkstorm.engine.executor.pool import ExecutorPool
    from sparkstorm.engine.executor.routing import build_routes
    from sparkstorm.engine.executor.stacks import executor_stacks
    from sparkstorm.engine.executor.workdirs import WORKDIR_PREFIX, new_workdir, workdirs_of
    from sparkstorm.engine.plan.execution import (
        ExecutionPlan,
        number_tasks,
        plan_tag,
        split_tasks,
    )
    from sparkstorm.engine.plan.regroup import executor_counts, follow_driver_plan, with_counts
    from sparkstorm.engine.plan.shares import plan_shares
    from sparkstorm.engine.spark.hosting_job import (
        HostingJob,
        dynamic_allocation,
        executor_cores,
        local_master,
        wait_for_hosts,
    )
    from sparkstorm.engine.spark.session import get_spark, stop_spark_jvm, submitted_spark
    from sparkstorm.engine.spark.shutdown_hook import on_jvm_shutdown
    from sparkstorm.engine.wire.endpoint import Endpoint, authenticated
    from sparkstorm.engine.wire.failures import FAIL_CAUSES
    from sparkstorm.engine.wire.frames import recv_frame, send_frame
    from sparkstorm.engine.wire.gate import AuthenticatedListener
    from sparkstorm.engine.wire.messages import ComponentError
    from sparkstorm.engine.wire.secure import caller_context, listener_tls, wire_tls


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        msg = f"module 'sparkstorm.engine' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"sparkstorm.engine.{where}"), name)
    globals()[name] = value
    return value


__all__ = [
    "AuthenticatedListener",
    "ComponentError",
    "Endpoint",
    "ExecutionPlan",
    "ExecutorPool",
    "ExecutorRange",
    "FAIL_CAUSES",
    "HostingJob",
    "LogLevels",
    "STORM_LEVELS",
    "TaskCollector",
    "TopologyDriver",
    "TopologyStats",
    "WORKDIR_PREFIX",
    "WindowOutput",
    "authenticated",
    "build_routes",
    "caller_context",
    "dynamic_allocation",
    "executor_cores",
    "executor_counts",
    "executor_stacks",
    "follow_driver_plan",
    "get_spark",
    "listener_tls",
    "local_master",
    "new_workdir",
    "number_tasks",
    "on_jvm_shutdown",
    "plan_shares",
    "plan_tag",
    "recv_frame",
    "send_frame",
    "split_tasks",
    "stop_spark_jvm",
    "submitted_spark",
    "wait_for_hosts",
    "wire_tls",
    "with_counts",
    "workdirs_of",
]
