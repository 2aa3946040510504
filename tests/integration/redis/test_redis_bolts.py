"""The Redis bolts against a real redis-server, one task in this process (BoltHarness).

Every data type stored, looked up and filtered; one pipeline per window; refused commands and
unmappable tuples on the errors stream; a stopped server fails the window's tuples and the bolt
carries on once it is back. The bolts in a running topology: tests/integration/spark/
test_redis_bolts.py.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
import redis

from sparkstorm.connectors.redis import RedisFilterBolt, RedisLookupBolt, RedisStoreBolt
from sparkstorm.testing import BoltHarness
from sparkstorm.testing.harness import Result
from sparkstorm.topology.tuple import Tuple
from tests.integration.redis.conftest import RedisServer

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def url(redis_config: dict[str, Any]) -> str:
    pool = redis_config["jedisPoolConfig"]
    return f"redis://127.0.0.1:{pool['port']}/{pool['database']}"


def client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, decode_responses=True)


def window(harness: BoltHarness, batch: list[list[Any]]) -> Result:
    """Deliver ``batch`` as one streaming window: every tuple, then ``end_window`` once."""
    fields = harness.plan.fields_of("src", "default")
    tuples = [Tuple(100 + n, "src", "default", 0, values, fields, {100 + n: 100 + n})
              for n, values in enumerate(batch)]
    with harness._recording() as call:
        harness.loop.run(tuples)
        harness.instance.end_window()
    return call.result


def store(url: str, **settings: Any) -> BoltHarness:
    return BoltHarness(RedisStoreBolt.spec(url=url, key_field="k", value_field="v", **settings),
                       inputs={"src": ["k", "v"]})


def count_pipelines(harness: BoltHarness) -> list[dict[str, Any]]:
    """The pipelines the bolt's client makes from now on (its own, spied on)."""
    made: list[dict[str, Any]] = []
    real_pipeline = harness.instance.client.pipeline

    def pipeline(**options: Any) -> Any:
        made.append(options)
        return real_pipeline(**options)

    harness.instance.client.pipeline = pipeline
    return made


def test_every_data_type_is_stored_in_one_pipeline_per_window(url: str) -> None:
    for data_type, extra in (("string", {"ttl_seconds": 100}), ("hash", {}), ("list", {}),
                             ("set", {}), ("sorted_set", {}), ("hyperloglog", {})):
        harness = store(url, data_type=data_type, additional_key=f"{data_type}-box", **extra)
        pipelines = count_pipelines(harness)
        result = window(harness, [[f"{data_type}-a", 1], [f"{data_type}-b", 2],
                                  [f"{data_type}-a", 3]])
        assert (len(result.acked), result.failed, len(pipelines)) == (3, [], 1), data_type
    r = client(url)
    assert (r.get("string-a"), r.get("string-b")) == ("3", "2")
    assert 0 < r.ttl("string-a") <= 100
    assert r.hgetall("hash-box") == {"hash-a": "3", "hash-b": "2"}
    assert r.lrange("list-a", 0, -1) == ["1", "3"]
    assert r.smembers("set-a") == {"1", "3"}
    assert r.zrange("sorted_set-box", 0, -1, withscores=True) == [("sorted_set-b", 2.0),
                                                                 ("sorted_set-a", 3.0)]
    assert r.pfcount("hyperloglog-a") == 2


def test_lookups_of_every_data_type(url: str) -> None:
    r = client(url)
    r.set("s", "text")
    r.hset("h", "k", "v")
    r.rpush("l", "x", "y")
    r.sadd("set", "m1", "m2")
    r.zadd("z", {"k": 1.5})
    r.pfadd("hll", "a", "b", "c")
    expected = {"string": ("s", "text"), "hash": ("k", "v"), "list": ("l", ["x", "y"]),
                "set": ("set", 2), "sorted_set": ("k", 1.5), "hyperloglog": ("hll", 3)}
    container = {"hash": "h", "sorted_set": "z"}
    for data_type, (key, value) in expected.items():
        harness = BoltHarness(RedisLookupBolt.spec(
            url=url, data_type=data_type, additional_key=container.get(data_type),
            key_field="k", output_fields=["k", "id", "value"]), inputs={"src": ["id", "k"]})
        result = window(harness, [[1, key], [2, "missing"]])
        assert [e.values for e in result.emits] == [[key, 1, value], [
            "missing", 2, {"list": [], "set": 0, "hyperloglog": 0}.get(data_type)]], data_type
        assert len(result.acked) == 2
    assert r.lrange("l", 0, -1) == ["x", "y"]  # a lookup does not pop


def test_the_filter_passes_on_only_the_tuples_whose_key_is_there(url: str) -> None:
    r = client(url)
    r.set("s", "1")
    r.hset("h", "k", "v")
    r.rpush("l", "k")
    r.sadd("set", "k")
    r.zadd("z", {"k": 0})
    r.pfadd("hll", "x")
    keys = {"string": "s", "hash": "k", "list": "k", "set": "k", "sorted_set": "k",
            "hyperloglog": "hll"}
    container = {"hash": "h", "list": "l", "set": "set", "sorted_set": "z"}
    for data_type, key in keys.items():
        harness = BoltHarness(RedisFilterBolt.spec(
            url=url, data_type=data_type, additional_key=container.get(data_type),
            key_field="k", output_fields=["k", "body"]), inputs={"src": ["k", "body"]})
        result = window(harness, [[key, "kept"], ["absent", "dropped"]])
        assert [e.values for e in result.emits] == [[key, "kept"]], data_type
        assert len(result.acked) == 2


def test_bad_tuples_go_to_the_errors_stream_and_the_rest_is_written(url: str) -> None:
    client(url).set("not-a-hash", "x")
    harness = store(url, data_type="hash", additional_key="not-a-hash")
    result = window(harness, [["a", 1]])
    assert [e.values[0] for e in result.emits] == ["REDIS_COMMAND_REJECTED"]  # WRONGTYPE
    harness = store(url, data_type="hash", additional_key="box")
    result = window(harness, [["a", 1], [None, 2], ["b", None], ["c", 3]])
    errors = [(e.stream, e.values[0], e.values[2]) for e in result.emits]
    assert errors == [("errors", "REDIS_TUPLE_UNMAPPABLE", [None, 2]),
                      ("errors", "REDIS_TUPLE_UNMAPPABLE", ["b", None])]
    assert len(result.acked) == 4 and not result.failed
    assert "REDIS_TUPLE_UNMAPPABLE" in result.errors[0]
    assert client(url).hgetall("box") == {"a": "1", "c": "3"}


def stop_keeping_data(server: RedisServer) -> None:
    """Stop the server with SHUTDOWN SAVE, so that it starts again with what it held.

    It keeps nothing on disk by itself: a stop without the save would lose writes that the
    bolt had acked.
    """
    r = redis.Redis(port=server.port)
    with contextlib.suppress(redis.ConnectionError):
        r.shutdown(save=True)
    r.close()
    server.stop()


def test_a_stopped_server_fails_the_window_and_the_bolt_carries_on(tmp_path: Path) -> None:
    server = RedisServer(tmp_path)
    server.start()
    try:
        harness = store(f"redis://127.0.0.1:{server.port}/0", data_type="string")
        assert window(harness, [["a", 1]]).acked
        stop_keeping_data(server)
        down = window(harness, [["b", 2], ["c", 3]])
        assert [f.reason.split(":")[0] for f in down.failed] == ["REDIS_UNAVAILABLE"] * 2
        assert not down.acked and "REDIS_UNAVAILABLE" in down.errors[0]
        server.start()
        assert len(window(harness, [["b", 2], ["c", 3]]).acked) == 2
        r = redis.Redis(port=server.port, decode_responses=True)
        assert r.mget("a", "b", "c") == ["1", "2", "3"]
        r.close()
    finally:
        server.stop()
