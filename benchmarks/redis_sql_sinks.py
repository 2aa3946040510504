"""RedisStoreBolt and SqlInsertBolt against hand-written clients, in one process, same servers.

A real ``redis-server`` and a real PostgreSQL server (Debian's, as the tests start them: free
loopback ports, temporary folders) receive the same records four ways each:

- the bolt: ``process`` per tuple and ``end_window`` every ``--window`` tuples, as the engine
  calls them (the task made by the engine's ``start_task``, a collector that counts acks);
- per window by hand: redis-py's pipeline of the window's ``HSET``s, or psycopg's
  ``executemany`` of the window's rows in one transaction (what the bolt does, minus the bolt);
- per tuple: one ``HSET`` round trip per record, or one ``INSERT`` and commit per record
  (what a bolt that writes in ``process``, as storm-redis's and storm-jdbc's do, costs).

Printed: records per second of each, best of ``--rounds`` (interleaved, so each sees the same
machine), and the bolt against both references. The per-tuple references run on a tenth of
the records (``--records // 10``): they are slow.

Run: ``PYTHONPATH=src:. .venv/bin/python benchmarks/redis_sql_sinks.py --records 50000``
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.integration.postgresql.server import PostgresServer
from tests.integration.redis.conftest import RedisServer

from sparkstorm.connectors.redis import RedisStoreBolt
from sparkstorm.connectors.sql import SqlInsertBolt
from sparkstorm.topology.spec import ComponentSpec, load_class
from sparkstorm.topology.task import start_task
from sparkstorm.topology.tuple import Tuple

FIELDS = ("n", "word")


class CountingCollector:
    """Stands in for the engine's collector: counts acks, refuses anything else."""

    def __init__(self) -> None:
        self.acked = 0

    def ack(self, _tup: Any) -> None:
        """Count an ack."""
        self.acked += 1

    def fail(self, _tup: Any, reason: Any = None, cause: Any = None) -> None:
        """No failure is expected in a benchmark."""
        raise RuntimeError(reason)

    def report_error(self, text: str) -> None:
        """No error is expected in a benchmark."""
        raise RuntimeError(text)


def tuples(records: int) -> list[Tuple]:
    """``records`` tuples ``[n, word<n>]``."""
    return [Tuple(n, "words", "default", 1, [n, f"word{n}"], FIELDS, {n: n})
            for n in range(records)]


def bolt_run(spec: ComponentSpec, batch: list[Tuple], window: int) -> float:
    """Seconds the bolt of ``spec`` takes over ``batch``, a window every ``window`` tuples."""
    collector = CountingCollector()
    context = {"componentid": "sink", "taskid": 1,
               "source->stream->fields": {"words": {"default": list(FIELDS)}}}
    bolt = start_task(load_class(spec.component, component="sink"), collector,  # type: ignore[arg-type]
                      name="sink", conf=dict(spec.config), context=context)
    start = time.perf_counter()
    for i, tup in enumerate(batch, 1):
        bolt.process(tup)
        if i % window == 0:
            bolt.end_window()
    bolt.end_window()
    elapsed = time.perf_counter() - start
    assert collector.acked == len(batch), collector.acked
    bolt.cleanup()
    return elapsed


def redis_rounds(server: RedisServer, batch: list[Tuple], window: int) -> dict[str, float]:
    """Seconds of each way to write ``batch`` into a Redis hash (the hash emptied first)."""
    import redis

    client = redis.Redis(port=server.port)
    spec = RedisStoreBolt.spec(url=f"redis://127.0.0.1:{server.port}/0", data_type="hash",
                               additional_key="bench", key_field="n", value_field="word")
    seconds = {}
    client.delete("bench")
    seconds["bolt"] = bolt_run(spec, batch, window)
    client.delete("bench")
    start = time.perf_counter()
    for first in range(0, len(batch), window):
        pipe = client.pipeline(transaction=False)
        for tup in batch[first:first + window]:
            pipe.hset("bench", tup.values[0], tup.values[1])
        pipe.execute()
    seconds["per window"] = time.perf_counter() - start
    client.delete("bench")
    start = time.perf_counter()
    for tup in batch[:len(batch) // 10]:
        client.hset("bench", tup.values[0], tup.values[1])
    seconds["per tuple"] = (time.perf_counter() - start) * 10
    assert client.hlen("bench") == len(batch) // 10
    client.close()
    return seconds


def sql_rounds(server: PostgresServer, batch: list[Tuple], window: int) -> dict[str, float]:
    """Seconds of each way to insert ``batch`` into a PostgreSQL table (emptied first)."""
    import psycopg

    spec = SqlInsertBolt.spec(url=server.url, table="bench", columns=list(FIELDS))
    seconds = {}
    server.execute("truncate bench")
    seconds["bolt"] = bolt_run(spec, batch, window)
    server.execute("truncate bench")
    with psycopg.connect(host="127.0.0.1", port=server.port, user="postgres",
                         dbname="postgres") as conn:
        start = time.perf_counter()
        for first in range(0, len(batch), window):
            with conn.transaction(), conn.cursor() as cursor:
                cursor.executemany("insert into bench (n, word) values (%s, %s)",
                                   [tup.values for tup in batch[first:first + window]])
        seconds["per window"] = time.perf_counter() - start
        conn.execute("truncate bench")
        conn.commit()
        start = time.perf_counter()
        for tup in batch[:len(batch) // 10]:
            with conn.transaction():
                conn.execute("insert into bench (n, word) values (%s, %s)", tup.values)
        seconds["per tuple"] = (time.perf_counter() - start) * 10
    return seconds


def report(name: str, records: int, best: dict[str, float]) -> None:
    """One line per way, and the bolt against both references."""
    for way, seconds in best.items():
        print(f"{name:6} {way:11} {records / seconds:12,.0f} rec/s")
    print(f"{name:6} bolt / per window {best['per window'] / best['bolt']:.2f}, "
          f"bolt / per tuple {best['per tuple'] / best['bolt']:.2f}")


def main() -> None:
    """Start both servers, run the rounds, print the table, remove the servers."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--window", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    batch = tuples(args.records)
    print(f"{args.records:,} records, a window every {args.window}, best of {args.rounds}; "
          f"per tuple: {args.records // 10:,} records, scaled")
    with tempfile.TemporaryDirectory() as scratch:
        redis_server = RedisServer(Path(scratch))
        redis_server.start()
        postgres = PostgresServer()
        try:
            postgres.start()
            postgres.execute("create table bench (n int, word text)")
            for name, rounds in (("redis", lambda: redis_rounds(redis_server, batch,
                                                                 args.window)),
                                 ("sql", lambda: sql_rounds(postgres, batch, args.window))):
                best: dict[str, float] = {}
                for _ in range(args.rounds):
                    for way, seconds in rounds().items():
                        best[way] = min(best.get(way, float("inf")), seconds)
                report(name, args.records, best)
        finally:
            redis_server.stop()
            postgres.remove()


if __name__ == "__main__":
    main()
