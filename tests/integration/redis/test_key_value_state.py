"""Storm's KeyValueState contract, run once per provider (in memory and a real Redis).

put/get/delete/iteration/len, prepare/commit/rollback, and recovery after a crash.
"""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm.errors import ConfigError
from sparkstorm.state import KeyValueState, StateError, state_provider
from sparkstorm.state.base import StateProvider

STORM_REDIS = "org.apache.storm.redis.state.RedisKeyValueStateProvider"


@pytest.fixture(params=["memory", "redis", STORM_REDIS])
def provider_conf(request: pytest.FixtureRequest) -> dict[str, Any]:
    conf: dict[str, Any] = {"topology.state.provider": request.param}
    if "redis" in request.param:
        conf["topology.state.provider.config"] = request.getfixturevalue("redis_config")
    return conf


@pytest.fixture
def provider(provider_conf: dict[str, Any]) -> Any:
    made = state_provider(provider_conf)
    yield made
    made.close()


def restart(provider_conf: dict[str, Any], old: KeyValueState, namespace: str,
            committed: int | None) -> tuple[StateProvider, KeyValueState]:
    """A new process's view: a new provider (a new connection).

    Restored at ``committed`` from what the checkpoint kept of ``old``.
    """
    fresh = state_provider(provider_conf)
    state = fresh.new_state(namespace)
    state.restore(old.snapshot() if committed is not None else None, committed)
    return fresh, state


def test_map_operations(provider: StateProvider) -> None:
    state = provider.new_state("count-1")
    assert state.get("storm") is None and state.get("storm", 0) == 0 and len(state) == 0
    state.put("storm", 1)
    state.put(("tuple", 2), {"nested": [1, 2]})
    state.put("spark", 3)
    assert state.get("storm") == 1 and state.get(("tuple", 2)) == {"nested": [1, 2]}
    assert state.delete("spark") == 3 and state.delete("spark") is None
    assert "spark" not in state and "storm" in state
    assert sorted(state, key=repr) == sorted([("storm", 1), (("tuple", 2), {"nested": [1, 2]})],
                                             key=repr)
    assert len(state) == 2


def test_commit_then_rollback_returns_to_the_commit(provider: StateProvider) -> None:
    state = provider.new_state("count-2")
    state.put("a", 1)
    state.put("gone", 0)
    state.prepare_commit(1)
    state.commit(1)
    state.put("a", 2)
    state.put("b", 3)
    state.delete("gone")
    state.prepare_commit(2)  # prepared, never committed
    state.put("c", 4)
    state.rollback()
    assert dict(state) == {"a": 1, "gone": 0}
    state.put("a", 5)
    state.delete("gone")
    state.prepare_commit(3)
    state.commit(3)
    assert dict(state) == {"a": 5}


def test_commit_without_prepare_is_refused(provider: StateProvider) -> None:
    state = provider.new_state("count-3")
    state.put("a", 1)
    state.prepare_commit(7)
    with pytest.raises(StateError) as caught:
        state.commit(8)
    assert caught.value.code == "STATE_NOT_PREPARED"


@pytest.mark.parametrize("checkpoint_committed", [True, False])
def test_restart_keeps_exactly_the_committed_transaction(
    provider_conf: dict[str, Any], provider: StateProvider, checkpoint_committed: bool
) -> None:
    state = provider.new_state("count-4")
    state.put("a", 1)
    state.prepare_commit(1)
    state.commit(1)
    state.put("a", 2)
    state.put("b", 2)
    state.prepare_commit(2)
    # the process dies here: checkpoint 2 is (or is not) committed, the state's commit(2)
    # never ran; what the checkpoint kept of the state is what snapshot() gave at prepare
    committed = 2 if checkpoint_committed else 1
    if not checkpoint_committed and provider_conf["topology.state.provider"] == "memory":
        old_snapshot = {"a": 1}  # the checkpoint of window 1 held the state as of 1
        fresh = state_provider(provider_conf)
        restored = fresh.new_state("count-4")
        restored.restore(old_snapshot, 1)
    else:
        fresh, restored = restart(provider_conf, state, "count-4", committed)
    try:
        expected = {"a": 2, "b": 2} if checkpoint_committed else {"a": 1}
        assert dict(restored) == expected
        restored.put("c", 3)
        restored.rollback()  # and a rollback now returns to the restored commit
        assert dict(restored) == expected
    finally:
        fresh.close()


def test_unknown_provider_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as caught:
        state_provider({"topology.state.provider": "org.example.Nope"})
    assert caught.value.code == "STATE_PROVIDER_UNKNOWN"


def test_unreachable_redis_is_a_clear_error(redis_server: Any) -> None:
    from tests.integration.redis.conftest import free_port

    provider = state_provider({"topology.state.provider": "redis",
                               "topology.state.provider.config":
                                   '{"jedisPoolConfig": {"port": %d, "timeout": 500}}'
                                   % free_port()})
    state = provider.new_state("count-5")
    state.put("a", 1)  # buffered: nothing reaches Redis before prepare
    with pytest.raises(StateError) as caught:
        state.prepare_commit(1)
    assert caught.value.code == "STATE_BACKEND_UNAVAILABLE"
    assert "count-5" in str(caught.value)
    provider.close()


def test_stateful_bolt_keeps_its_state_in_redis_under_storms_namespace(
    redis_config: dict[str, Any],
) -> None:
    import pickle

    import redis

    from tests.unit.topology.helpers import started
    from tests.unit.topology.windowed_bolts.fakes import Source

    bolt = started({"topology.state.provider": STORM_REDIS,
                    "topology.state.provider.config": redis_config})
    source = Source(fields=("n", "key"))
    for n in range(5):
        bolt.process(source.tuple(n, f"k{n % 2}"))
    bolt._stateful_task.prepare(1)
    bolt._stateful_task.commit(1)
    bolt.close()
    pool = redis_config["jedisPoolConfig"]
    client = redis.Redis(port=pool["port"], db=pool["database"])
    try:
        stored = {pickle.loads(k): pickle.loads(v) for k, v in client.hgetall("count-3").items()}
        assert stored == {"k0": 3, "k1": 2}
        assert client.get("count-3$txid") == b"1"
    finally:
        client.close()
