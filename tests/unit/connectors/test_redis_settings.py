"""The Redis bolts' settings, commands and declarations (no server: see tests/integration/redis)."""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm.connectors.redis import RedisFilterBolt, RedisLookupBolt, RedisStoreBolt
from sparkstorm.connectors.redis.commands import (
    filter_command,
    found,
    lookup_command,
    lookup_value,
    store_commands,
)
from sparkstorm.connectors.redis.settings import RedisSettings
from sparkstorm.connectors.window_batch import ConnectorError
from sparkstorm.errors import TopologyError


def settings(kind: str, **raw: Any) -> RedisSettings:
    return RedisSettings.read(raw, kind)


@pytest.mark.parametrize(("data_type", "expected"), [
    ("string", [("SET", "k", "v")]),
    ("STRING", [("SET", "k", "v")]),
    ("hash", [("HSET", "box", "k", "v")]),
    ("list", [("RPUSH", "k", "v")]),
    ("set", [("SADD", "k", "v")]),
    ("hyper_log_log", [("PFADD", "k", "v")]),
])
def test_store_commands_follow_storm_redis(data_type: str, expected: list[Any]) -> None:
    s = settings("store", data_type=data_type, additional_key="box")
    assert store_commands(s, "k", "v") == expected


def test_a_sorted_set_stores_the_value_as_the_keys_score_and_a_ttl_expires_the_container(
        ) -> None:
    s = settings("store", data_type="sorted_set", additional_key="board", ttl_seconds=60)
    assert store_commands(s, "ann", "2.5") == [("ZADD", "board", 2.5, "ann"),
                                               ("EXPIRE", "board", 60)]
    s = settings("store", data_type="string", ttl_seconds=5)
    assert store_commands(s, "k", {"a": 1}) == [("SET", "k", '{"a": 1}', "EX", 5)]


@pytest.mark.parametrize(("key", "value"), [(None, "v"), ("", "v"), (1.5, "v"), ("k", None),
                                            (True, "v")])
def test_keys_and_values_redis_cannot_store_are_unmappable(key: Any, value: Any) -> None:
    with pytest.raises(ConnectorError) as caught:
        store_commands(settings("store", data_type="string"), key, value)
    assert caught.value.code == "REDIS_TUPLE_UNMAPPABLE"


def test_a_score_that_is_no_number_is_unmappable() -> None:
    s = settings("store", data_type="sorted_set", additional_key="board")
    with pytest.raises(ConnectorError) as caught:
        store_commands(s, "ann", "many")
    assert caught.value.code == "REDIS_TUPLE_UNMAPPABLE"


def test_lookup_and_filter_commands_and_replies() -> None:
    look = settings("lookup", data_type="list")
    assert lookup_command(look, "q") == ("LRANGE", "q", 0, -1)  # not LPOP: replays read alike
    assert lookup_value(look, [b"a", b"\xff"]) == ["a", b"\xff"]
    score = settings("lookup", data_type="sorted_set", additional_key="b")
    assert (lookup_command(score, "k"), lookup_value(score, b"2")) == (("ZSCORE", "b", "k"), 2.0)
    member = settings("filter", data_type="set", additional_key="seen")
    assert filter_command(member, 7) == ("SISMEMBER", "seen", 7)
    in_list = settings("filter", data_type="list", additional_key="l")
    assert (found(in_list, 0), found(in_list, None)) == (True, False)  # LPOS: position or nil
    assert (found(settings("filter", data_type="string"), 0),
            found(settings("filter", data_type="string"), 1)) == (False, True)


@pytest.mark.parametrize(("kind", "raw"), [
    ("store", {}),  # no data_type
    ("store", {"data_type": "geo"}),
    ("store", {"data_type": "hash"}),  # no additional_key
    ("filter", {"data_type": "set"}),  # SISMEMBER needs the set's name
    ("lookup", {"data_type": "string", "ttl_seconds": 5}),
    ("store", {"data_type": "string", "ttl_seconds": 0}),
    ("store", {"data_type": "string", "url": "127.0.0.1:6379"}),
    ("store", {"data_type": "string", "key_feld": "word"}),
    ("lookup", {"data_type": "string", "output_fields": []}),
    ("store", {"data_type": "string", "output_fields": ["key"]}),
])
def test_invalid_settings_are_refused_with_a_code(kind: str, raw: dict[str, Any]) -> None:
    with pytest.raises(TopologyError) as caught:
        RedisSettings.read(raw, kind)
    assert caught.value.code == "REDIS_CONFIG_INVALID"


def test_a_misspelt_setting_names_the_nearest_one() -> None:
    with pytest.raises(TopologyError) as caught:
        RedisStoreBolt.spec(data_type="string", key_feld="word")
    assert "did you mean 'key_field'?" in str(caught.value)


def test_specs_declare_the_output_fields_and_keep_the_settings_in_config() -> None:
    look = RedisLookupBolt.spec(data_type="hash", additional_key="counts", key_field="word")
    assert [(s.name, s.fields) for s in look.outputs] == [
        ("default", ("word", "value")), ("errors", ("code", "error", "values"))]
    assert look.config["topology.connector"]["additional_key"] == "counts"
    store = RedisStoreBolt.spec(data_type="string")
    assert [s.name for s in store.outputs] == ["errors"]
    again = RedisStoreBolt.spec(config=store.config)  # what Flux does: settings in config
    assert again.config == store.config
    kept = RedisFilterBolt.spec(data_type="string", output_fields=["id", "body"])
    assert kept.outputs[0].fields == ("id", "body")
