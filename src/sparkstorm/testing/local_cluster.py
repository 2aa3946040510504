"""``LocalCluster``: run topologies inside this Python process, as Storm's LocalCluster.

Example (not run by doctest: it starts Spark)::

    with LocalCluster() as cluster:
        cluster.submit_topology("word-count", WordCount, conf={"topology.workers": 1})
        ...
        print(cluster.get_topology_stats("word-count"))
        cluster.kill_topology("word-count")

Supported: any number of topologies at once on one SparkSession (the active one, or one
made from the ``spark.*`` keys), live statistics, activate/deactivate, kill, rebalance of
executor counts in place (Storm's ``rebalance -e``).
Not supported: Nimbus, supervisors, workers in other processes (see ``sparkstorm cluster``).
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from sparkstorm.config import component_conf, load_config
from sparkstorm.engine import TopologyDriver, get_spark
from sparkstorm.errors import EngineError, TopologyError
from sparkstorm.topology.spec import TopologySpec
from sparkstorm.topology.validate import (
    validate_topology,
    validate_topology_name,
    validate_windowed_bolts,
)


def topology_spec_of(topology: Any) -> TopologySpec:
    """The spec of a ``Topology`` subclass, or ``topology`` itself if it already is one."""
    if isinstance(topology, TopologySpec):
        return topology
    spec = getattr(topology, "topology_spec", None)
    if not isinstance(spec, TopologySpec):
        msg = (
            f"{topology!r} is not a topology: pass a Topology subclass that declares "
            "components, or a TopologySpec"
        )
        raise TopologyError(msg, code="NOT_A_TOPOLOGY")
    return spec


class LocalCluster:
    """Runs topologies in-process on Spark (``local[*]`` unless ``spark.master`` says else)."""

    def __init__(self, conf: dict[str, Any] | None = None, spark: Any = None) -> None:
        self.conf = dict(conf or {})
        self.runners: dict[str, TopologyDriver] = {}
        self._spark = spark
        self._owns_spark = False

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.shutdown()

    def submit_topology(self, name: str, topology: Any, conf: dict[str, Any] | None = None,
                        *, active: bool = True) -> TopologyDriver:
        """Validate and start ``topology`` under ``name``.

        Raises:
            TopologyError: an invalid topology or name, or a name already running.
            ConfigError: a configuration value of the wrong type.
        """
        validate_topology_name(name)
        if name in self.runners:
            msg = f"topology {name!r} is already running; kill it first or pick another name"
            raise TopologyError(msg, code="TOPOLOGY_ALREADY_ALIVE")
        spec = topology_spec_of(topology)
        validate_topology(spec, topology_name=name)
        merged = load_config(cli=self.conf, topology={**spec.config, **(conf or {}),
                                                      "topology.name": name})
        for component in spec.components:  # fail now on a bad component config value
            component_conf(merged, component.config, component.name or "?")
        validate_windowed_bolts(spec, merged)  # issue 11: windows against the effective conf
        runner = TopologyDriver(name, spec, merged)
        runner.active = active
        runner.start(self._session(merged))
        self.runners[name] = runner
        return runner

    def _session(self, conf: dict[str, Any]) -> Any:
        if self._spark is None:
            self._spark, self._owns_spark = get_spark(conf, "sparkstorm-local-cluster")
        return self._spark

    def get_topology_stats(self, name: str) -> dict[str, Any]:
        """Statistics per component (totals and recent windows) of a running topology."""
        return self._runner(name).stats.summary()

    def activate(self, name: str) -> None:
        """Let the topology's spouts produce again."""
        self._runner(name).set_active(True)

    def deactivate(self, name: str) -> None:
        """Stop calling the spouts' ``next_tuple``; in-flight tuples still complete."""
        self._runner(name).set_active(False)

    def rebalance(self, name: str, executors: dict[str, int]) -> None:
        """Change executor counts in place (``rebalance -e``) from the next window on.

        The executors of other components keep their processes (``engine.plan.regroup``).

        Raises:
            EngineError: ``REBALANCE_UNKNOWN_COMPONENT``, ``REBALANCE_INVALID`` or
                ``PARALLELISM_ABOVE_TASKS``; nothing changes then.
        """
        self._runner(name).replan(executors)

    def kill_topology(self, name: str, timeout: float | None = 60.0) -> None:
        """Shut the topology down cleanly and forget it.

        Raises:
            EngineError: ``TOPOLOGY_SHUTDOWN_TIMEOUT`` when it is still shutting down after
                ``timeout`` seconds; it stays listed, so a later call waits again.
        """
        runner = self._runner(name)
        runner.stop(timeout)
        if not runner.stopped.is_set():
            msg = (f"topology {name!r} is still shutting down after {timeout} s (in-flight "
                   "trees, executor processes or Spark); call kill_topology again to wait "
                   "longer")
            raise EngineError(msg, code="TOPOLOGY_SHUTDOWN_TIMEOUT")
        del self.runners[name]

    def _runner(self, name: str) -> TopologyDriver:
        try:
            return self.runners[name]
        except KeyError:
            msg = f"no topology named {name!r} runs here (running: {sorted(self.runners)})"
            raise TopologyError(msg, code="TOPOLOGY_NOT_FOUND") from None

    def shutdown(self) -> None:
        """Kill every topology and stop Spark if this cluster started it."""
        for name in list(self.runners):
            self.kill_topology(name)
        if self._owns_spark and self._spark is not None:
            self._spark.stop()
            self._spark = None
