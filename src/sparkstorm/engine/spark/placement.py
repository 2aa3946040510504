"""Where a window's Spark tasks run: on their executor's host, wherever Spark allows.

On a Spark cluster, the task for executor ``p`` should run on ``p``'s host, where it reaches
``p`` over its Unix socket and nothing crosses the network (``docs/multi-host.md``).
Spark takes preferred locations only from the RDDs it is given, so:

- the spout stage is a **located RDD**: one record per spout executor, made with the JVM's
  ``SparkContext.makeRDD(Seq[(T, Seq[String])])``, each partition preferring its executor's
  host. It is built once per placement and reused by every window: the window's controls
  ride in the stage function's closure, because building such an RDD through py4j costs
  about 100 ms;
- a later stage's data comes out of a shuffle, whose reduce tasks Spark places where their
  input was written. An **anchor** steers them: a located RDD of one record per partition,
  partitioned with the same partitioner object as the data, joins the data twice in a
  partitioner-aware union, which prefers the host most of its parents prefer. The anchor's
  shuffle runs once per placement; later windows reuse its map output.

Preferences are Spark's own executor host strings, filtered every window to executors that
are alive, so a vanished host never holds a task back by ``spark.locality.wait``. A changed
set of live hosts or a moved executor makes a new placement. With a ``local`` master (one
host) there is nothing to place: :meth:`Placement.for_window` returns None, and the window
is one Spark task (``engine.spark.fused_window``) unless ``topology.window.fuse`` is off.

Correctness never depends on placement: a task that runs elsewhere reaches its executor
over TCP.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from sparkstorm.engine.spark.fused_window import run_fused_window
from sparkstorm.engine.spark.stage import (
    ANCHOR,
    StageInfo,
    run_located_spout_stage,
    run_spout_stage,
    run_stage,
)
from sparkstorm.engine.wire.protocol import WindowFlags

logger = logging.getLogger(__name__)

Hosts = tuple[str | None, ...]
"""The preferred host of each partition of a stage (None: no preference)."""


@dataclass(frozen=True)
class WindowPlacement:
    """The reusable RDDs of one placement (valid while the live hosts and endpoints hold).

    Attributes:
        spout: the located spout-stage RDD: partition ``i`` holds the record ``i``.
        partitioners: one partition function per later stage, the same object for the data
            and its anchor (Spark's partitioner equality goes by the function's id).
        anchors: one partitioned anchor RDD per later stage.
        hosts: the preferred host of each stage's partitions.
    """

    spout: Any
    partitioners: tuple[Callable[[int], int], ...]
    anchors: tuple[Any, ...]
    hosts: tuple[Hosts, ...]

    def steer(self, sc: Any, later_stage: int, data: Any) -> Any:
        """``data`` (a later stage's partitioned input) united with its anchor, twice."""
        anchor = self.anchors[later_stage]
        return sc.union([data, anchor, anchor])


class Placement:
    """Builds and keeps the located RDDs of a topology's window job (see the module docs).

    Called by the driver once per window, from the window loop's thread.

    Args:
        master: the Spark master URL (``local...``: nothing is placed).
        fuse: on a ``local`` master, run each window as one Spark task
            (``topology.window.fuse``).
    """

    def __init__(self, master: str, fuse: bool = False) -> None:
        self.enabled = not master.startswith("local")
        self._fuse = fuse
        self._current: WindowPlacement | None = None
        self._key: tuple[Hosts, ...] | None = None
        self._layout: tuple[Any, ...] | None = None
        """The stages' gids and chain roots the placement was built for."""
        self._resolved: dict[str, str | None] = {}
        self.builds = 0
        """How many placements were built (a new one per change of hosts)."""

    def window_rdd(self, sc: Any, stages: Sequence[StageInfo], payloads: list[Any],
                   window: int, flags: WindowFlags,
                   wrap_spout: Callable[[Any], Any] | None = None) -> Any:
        """The RDD whose ``collect()`` runs window ``window`` (one job over every stage).

        ``payloads`` hold each spout partition's control and injected records
        (:func:`~sparkstorm.engine.spark.stage.run_spout_stage`); ``flags`` go into every
        executor's request. ``wrap_spout`` wraps the spout stage's partition function, or a
        fused window's one function (the driver counts that stage's finished tasks with it
        when windows overlap: :meth:`spout_tasks` of them).
        """
        first = stages[0]
        wrap = wrap_spout or (lambda function: function)
        if self.fused:
            return sc.parallelize([None], 1).mapPartitionsWithIndex(wrap(partial(
                run_fused_window, tuple(stages), window, flags, payloads)))
        placed = self.for_window(sc, stages)
        if placed is None:
            rdd = sc.parallelize(payloads, len(first.gids))
            rdd = rdd.mapPartitionsWithIndex(wrap(partial(run_spout_stage, first, window,
                                                          flags)))
        else:
            rdd = placed.spout.mapPartitionsWithIndex(wrap(
                partial(run_located_spout_stage, first, window, flags, payloads)))
        for n, stage in enumerate(stages[1:]):
            if placed is None:
                rdd = rdd.partitionBy(len(stage.gids), stage.partition_of)
            else:
                rdd = placed.steer(sc, n, rdd.partitionBy(len(stage.gids),
                                                          placed.partitioners[n]))
            rdd = rdd.mapPartitionsWithIndex(partial(run_stage, stage, window, flags))
        return rdd

    @property
    def fused(self) -> bool:
        """Each window is one Spark task (``engine.spark.fused_window``): a local master's."""
        return self._fuse and not self.enabled

    def spout_tasks(self, stages: Sequence[StageInfo]) -> int:
        """How many Spark tasks run a window's spout stage (a fused window: its one task)."""
        return 1 if self.fused else len(stages[0].gids)

    def for_window(self, sc: Any, stages: Sequence[StageInfo]) -> WindowPlacement | None:
        """The placement for this window's ``stages`` (None: place nothing).

        Reuses the last one while every executor's preferred host is the same and alive,
        and the stages are the same: a replan (``rebalance -e``) renumbers and chains the
        executors anew, and the anchors hold the old stages' gids and partitioners, which
        would mix records of the old layout into the new one's stages.
        """
        if not self.enabled:
            return None
        live = live_executor_hosts(sc)
        key = tuple(tuple(self._host_of(stage, gid, live) for gid in stage.gids)
                    for stage in stages)
        if all(host is None for hosts in key for host in hosts):
            self._current, self._key = None, None
            return None
        layout = tuple((stage.gids, tuple(sorted(stage.roots.items()))) for stage in stages)
        if key != self._key or layout != self._layout or self._current is None:
            self._current = _build(sc, stages, key)
            self._key, self._layout = key, layout
            self.builds += 1
            logger.info("window placement: %s (live Spark executor hosts %s)",
                        key, sorted(live))
        return self._current

    def _host_of(self, stage: StageInfo, gid: int, live: set[str]) -> str | None:
        """The Spark executor host that runs on executor ``gid``'s host, if one is alive."""
        host = stage.endpoints[gid].host if gid in stage.endpoints else None
        if host is None:
            return None
        if host in live:
            return host
        # Spark may name a host by its address and the executor by its name, or the reverse
        address = self._address(host)
        for spark_host in live:
            if address is not None and self._address(spark_host) == address:
                return spark_host
        return None

    def _address(self, host: str) -> str | None:
        """``host``'s IPv4 address (asked once per host name)."""
        if host not in self._resolved:
            try:
                self._resolved[host] = socket.gethostbyname(host)
            except OSError:
                self._resolved[host] = None
        return self._resolved[host]


def live_executor_hosts(sc: Any) -> set[str]:
    """The hosts of the application's live Spark executors (the driver's own is left out).

    Asked of the JVM every window (a few milliseconds): a host whose executors were lost
    drops out at once.
    """
    store = sc._jsc.sc().statusStore()
    hosts = set()
    for summary in _scala_list(store.executorList(True)):
        if summary.id() != "driver" and summary.isActive():
            hosts.add(str(summary.hostPort()).rsplit(":", 1)[0])
    return hosts


def _scala_list(seq: Any) -> list[Any]:
    """A Scala ``Seq`` as a Python list (through its iterator)."""
    items = []
    iterator = seq.iterator()
    while iterator.hasNext():
        items.append(iterator.next())
    return items


def _build(sc: Any, stages: Sequence[StageInfo], key: tuple[Hosts, ...]) -> WindowPlacement:
    """Make the located spout RDD and one partitioned anchor per later stage."""
    spout = located_rdd(sc, list(range(len(key[0]))), key[0])
    partitioners: list[Callable[[int], int]] = []
    anchors = []
    for stage, hosts in zip(stages[1:], key[1:], strict=True):
        partition_of = stage.partition_of  # one object: Spark compares partitioners by id
        records = [(gid, ANCHOR) for gid in stage.gids]
        anchor = located_rdd(sc, records, hosts).partitionBy(len(stage.gids), partition_of)
        partitioners.append(partition_of)
        anchors.append(anchor)
    return WindowPlacement(spout, tuple(partitioners), tuple(anchors), key)


def located_rdd(sc: Any, records: Sequence[Any], hosts: Hosts) -> Any:
    """An RDD whose partition ``i`` holds ``records[i]`` and prefers ``hosts[i]``.

    Through the JVM's ``SparkContext.makeRDD(Seq[(T, Seq[String])])``: PySpark has no API
    for preferred locations.
    """
    from pyspark import RDD
    from pyspark.serializers import CPickleSerializer

    jvm = sc._jvm
    serializer = CPickleSerializer()
    pairs = jvm.java.util.ArrayList()
    for record, host in zip(records, hosts, strict=True):
        preferred = jvm.java.util.ArrayList()
        if host is not None:
            preferred.add(host)
        pairs.add(jvm.scala.Tuple2(bytearray(serializer.dumps(record)),  # type: ignore[no-untyped-call]
                                   jvm.PythonUtils.toSeq(preferred)))
    byte_array = jvm.java.lang.Class.forName("[B")
    class_tag = getattr(jvm.scala.reflect, "ClassTag$").__getattr__("MODULE$").apply(byte_array)
    jrdd = sc._jsc.sc().makeRDD(jvm.PythonUtils.toSeq(pairs), class_tag)
    return RDD(jrdd.toJavaRDD(), sc, serializer)
