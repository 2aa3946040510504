"""The Redis store bolt and the SQL insert bolt in a running topology, servers stopped mid-run.

LocalCluster, a real redis-server and a real PostgreSQL server, both stopped and started again.

One topology feeds both bolts, so that one test covers both connectors' happy path, bad data and
outage: while a server is down its bolt fails each window's tuples (their spout replays them),
the topology keeps running, and the outage is the bolt's error in the stats (what the UI
shows). At the end every number is acked exactly once by the spout and written by both bolts
(the bad ones are on the bolts' errors streams instead, with their codes). Each data type,
lookups, filters and each failure on its own, one task in-process:
tests/integration/redis/test_redis_bolts.py and tests/integration/postgresql/test_sql_bolts.py.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from sparkstorm import Topology
from sparkstorm.connectors.redis import RedisStoreBolt
from sparkstorm.connectors.sql import SqlInsertBolt
from sparkstorm.flux import load_flux_file
from sparkstorm.testing import LocalCluster
from sparkstorm.testing.polling import wait_for
from tests.integration.postgresql.server import PostgresServer
from tests.integration.redis.conftest import RedisServer
from tests.integration.redis.test_redis_bolts import stop_keeping_data
from tests.integration.spark.components import RecordingBolt, read_events
from tests.integration.spark.connector_components import ValueSpout, is_bad

pytestmark = pytest.mark.timeout(300)
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "flux" / "redis_sql_pipeline.yaml"

UPSERT = ("insert into numbers (n, value) values (:n, :value) "
          "on conflict (n) do update set value = excluded.value")
"""A replayed tuple writes its row again: an upsert makes that harmless (at least once)."""


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed; run `make services`")
    folder = tmp_path / "redis"
    folder.mkdir()
    server = RedisServer(folder)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def postgres() -> Iterator[PostgresServer]:
    server = PostgresServer()
    try:
        server.start()
        server.execute("create table numbers (n int primary key, value text not null)")
        yield server
    finally:
        server.remove()


def events(directory: Path, component: str, event: str) -> list[int]:
    return [e["n"] for e in read_events(directory, component) if e["event"] == event]


# slow (CI budget: 25-40 s, both servers and a topology): each bolt's outage is in make test
# through tests/integration/redis/test_redis_bolts.py and
# tests/integration/postgresql/test_sql_bolts.py (test_a_stopped_server_fails_the_window_...)
@pytest.mark.slow
def test_both_sinks_survive_their_outage_and_write_every_number_acked_once(
        cluster: LocalCluster, redis_server: RedisServer, postgres: PostgresServer,
        tmp_path: Path) -> None:
    count = 200

    class ToRedisAndSql(Topology):
        numbers = ValueSpout.spec()
        cache = RedisStoreBolt.spec(inputs=[numbers], data_type="hash", additional_key="numbers",
                                    url=f"redis://127.0.0.1:{redis_server.port}/0",
                                    key_field="n", value_field="value", timeout_ms=500)
        table = SqlInsertBolt.spec(inputs=[numbers], url=postgres.url, query=UPSERT)
        rejected = RecordingBolt.spec(inputs=[cache["errors"], table["errors"]])

    runner = cluster.submit_topology("connector-outages", ToRedisAndSql, conf={
        "test.dir": str(tmp_path), "test.count": count, "test.rate": 100,
        "test.gate_at": count // 2})

    def acked() -> list[int]:
        return events(tmp_path, "numbers", "ack")

    def reported(component: str, code: str) -> bool:
        last = runner.stats.summary()["last_errors"].get(component, {})
        return code in last.get("error", "")

    # generous ceilings: a machine loaded 10 times over its cores once took a minute to ack
    # the first numbers (a quiet one takes seconds)
    wait_for(lambda: len(acked()) >= 30, timeout=120, message="the first numbers acked")
    stop_keeping_data(redis_server)
    postgres.stop()
    (tmp_path / "gate").touch()  # the second half of the numbers meets the outage
    try:
        wait_for(lambda: reported("cache", "REDIS_UNAVAILABLE"), timeout=60,
                 message="the Redis outage reported as the bolt's error")
        wait_for(lambda: reported("table", "SQL_UNAVAILABLE"), timeout=60,
                 message="the PostgreSQL outage reported as the bolt's error")
        assert events(tmp_path, "numbers", "fail"), "tuples failed while the servers are down"
    finally:
        redis_server.start()
        postgres.start()
    wait_for(lambda: len(set(acked())) == count, timeout=120, message="every number acked")
    cluster.kill_topology("connector-outages")

    assert max(Counter(acked()).values()) == 1
    bad = {n for n in range(count) if is_bad(n)}
    expected = {n: f"v{n}" for n in range(count) if n not in bad}
    client = redis.Redis(port=redis_server.port, decode_responses=True)
    assert {int(n): v for n, v in client.hgetall("numbers").items()} == expected
    client.close()
    assert dict(postgres.execute("select n, value from numbers")) == expected
    rejected = Counter((e["source"], e["values"][0], e["values"][2][0])
                       for e in read_events(tmp_path, "rejected"))
    assert set(rejected) == {("cache", "REDIS_TUPLE_UNMAPPABLE", n) for n in bad} | {
        ("table", "SQL_ROW_REJECTED", n) for n in bad}


# slow: the lookup bolt's emits through the engine and the Flux example end to end; the
# lookups themselves are covered fast by tests/integration/redis/test_redis_bolts.py, the
# Flux declaration by tests/unit/connectors/test_redis_sql_flux.py and the insert in a
# topology by the test above
@pytest.mark.slow
def test_the_flux_example_looks_words_up_in_redis_and_saves_them_in_sql(
        cluster: LocalCluster, redis_server: RedisServer, postgres: PostgresServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{redis_server.port}/0")
    monkeypatch.setenv("DATABASE_URL", postgres.url)
    client = redis.Redis(port=redis_server.port)
    client.hset("definitions", mapping={"nathan": "a name", "bertels": "a name too"})
    client.close()
    postgres.execute("create table word_definitions (word text, definition text)")
    flux = load_flux_file(EXAMPLE, env_filter=True)
    cluster.submit_topology(flux.name, flux.spec)

    def saved() -> set[tuple[str, str | None]]:
        return set(postgres.execute("select word, definition from word_definitions"))

    words = {"nathan": "a name", "mike": None, "jackson": None, "golda": None,
             "bertels": "a name too"}
    wait_for(lambda: saved() == set(words.items()), timeout=120,
             message="every word saved with its definition (None when Redis has none)")
    cluster.kill_topology(flux.name)


# slow: the same outage under topology.reliability: checkpoint, where a failed window rolls
# the topology back instead of failing tuples; the bolts' side of it is covered fast by
# tests/unit/connectors/test_sql_bolts.py (the window raises) and the outage by the first test
@pytest.mark.slow
def test_under_checkpoint_reliability_an_outage_rolls_back_and_loses_nothing(
        cluster: LocalCluster, redis_server: RedisServer, postgres: PostgresServer,
        tmp_path: Path) -> None:
    count = 200

    class ToRedisAndSql(Topology):
        numbers = ValueSpout.spec()
        cache = RedisStoreBolt.spec(inputs=[numbers], data_type="hash", additional_key="numbers",
                                    url=f"redis://127.0.0.1:{redis_server.port}/0",
                                    key_field="n", value_field="value", timeout_ms=500)
        table = SqlInsertBolt.spec(inputs=[numbers], url=postgres.url, query=UPSERT)

    runner = cluster.submit_topology("connector-rollbacks", ToRedisAndSql, conf={
        "test.dir": str(tmp_path), "test.count": count, "test.rate": 100,
        "test.gate_at": count // 2,
        "topology.reliability": "checkpoint", "topology.checkpoint.windows": 2,
        "topology.checkpoint.dir": str(tmp_path / "checkpoints")})

    def acked() -> list[int]:
        return events(tmp_path, "numbers", "ack")

    wait_for(lambda: len(acked()) >= 30, timeout=120, message="the first numbers acked")
    stop_keeping_data(redis_server)
    postgres.stop()
    (tmp_path / "gate").touch()
    try:
        wait_for(lambda: {"cache", "table"} & set(runner.stats.summary()["last_errors"]),
                 timeout=60, message="the outage reported as a bolt's error")
    finally:
        redis_server.start()
        postgres.start()
    wait_for(lambda: len(set(acked())) == count, timeout=120, message="every number acked")
    cluster.kill_topology("connector-rollbacks")
    assert runner.stats.rollbacks >= 1  # the failed window rolled the topology back
    # (a restored spout may hear an ack again for what its checkpoint held: the engine's
    # checkpoint mode, tests/integration/spark/test_checkpoints.py; the outputs are exact)
    expected = {n: f"v{n}" for n in range(count) if not is_bad(n)}
    client = redis.Redis(port=redis_server.port, decode_responses=True)
    assert {int(n): v for n, v in client.hgetall("numbers").items()} == expected
    client.close()
    assert dict(postgres.execute("select n, value from numbers")) == expected
