"""Tests of the key declarations in sparkstorm.config.keys."""

from __future__ import annotations

import pytest

from sparkstorm.config import KEYS, ConfigKey
from sparkstorm.config.keys import _declare, is_pass_through


@pytest.mark.parametrize("name", sorted(KEYS))
def test_every_default_has_the_declared_type(name: str) -> None:
    key = KEYS[name]
    assert key.accepts(key.default), f"{name}: default {key.default!r} is not {key.type_name}"


@pytest.mark.parametrize("name", sorted(KEYS))
def test_every_key_is_documented_and_in_range(name: str) -> None:
    key = KEYS[name]
    assert key.doc.strip()
    if key.choices is not None and key.default is not None:
        assert key.default in key.choices
    if key.minimum is not None and isinstance(key.default, int | float):
        assert key.default >= key.minimum


def test_env_var_names_are_unique() -> None:
    env_vars = [key.env_var for key in KEYS.values()]
    assert len(env_vars) == len(set(env_vars))
    assert KEYS["topology.workers"].env_var == "SPARKSTORM_TOPOLOGY_WORKERS"


@pytest.mark.parametrize(
    ("name", "default"),
    [
        ("topology.workers", 1),
        ("topology.message.timeout.secs", 30),
        ("topology.window.ms", 500),
        ("topology.spout.buffer.size", 20000),
        ("topology.executor.start.timeout.secs", 60),
        ("topology.shutdown.timeout.secs", 10),
        ("topology.stats.window.count", 120),
        ("storm.state.store", "embedded"),
        ("topology.spark.conf", {}),
        ("nimbus.host", "127.0.0.1"),
        ("nimbus.port", 6627),
        ("ui.host", "127.0.0.1"),
        ("storm.cluster.token", None),
        ("topology.acker.executors", None),
        ("topology.max.spout.pending", None),
        ("topology.tick.tuple.freq.secs", None),
        ("topology.tasks", None),
        ("supervisor.slots.ports", [6700, 6701, 6702, 6703]),
    ],
)
def test_selected_defaults(name: str, default: object) -> None:
    assert KEYS[name].default == default


def test_int_key_rejects_bool_and_float() -> None:
    key = KEYS["topology.workers"]
    assert key.accepts(3)
    assert not key.accepts(True)
    assert not key.accepts(3.0)
    assert not key.accepts(None)


def test_float_key_accepts_int_but_not_bool() -> None:
    key = KEYS["topology.stats.sample.rate"]
    assert key.accepts(0.5)
    assert key.accepts(1)
    assert not key.accepts(False)
    assert key.type_name == "float (int accepted)"


def test_bool_key_accepts_only_bool() -> None:
    key = KEYS["topology.debug"]
    assert key.accepts(True)
    assert not key.accepts(1)
    assert not key.accepts("true")


def test_unset_default_accepts_none() -> None:
    key = KEYS["topology.max.spout.pending"]
    assert key.accepts(None)
    assert key.accepts(10)
    assert "null" in key.type_name


def test_int_or_float_key() -> None:
    key = KEYS["topology.executor.start.timeout.secs"]
    assert key.accepts(60)
    assert key.accepts(0.5)
    assert not key.accepts("60")


def test_secret_values_are_masked() -> None:
    assert KEYS["storm.cluster.token"].show("hunter2") == "'***'"
    assert KEYS["topology.name"].show("wc") == "'wc'"


def test_a_key_declared_twice_is_refused() -> None:
    key = ConfigKey("x.y", int, 1, "doc")
    with pytest.raises(ValueError, match="'x.y' is declared twice"):
        _declare(key, ConfigKey("x.y", str, "a", "other doc"))


def test_pass_through_prefixes() -> None:
    assert is_pass_through("spark.executor.memory")
    assert is_pass_through("pystorm.log.path")
    assert not is_pass_through("topology.workers")
    assert not is_pass_through("sparkling.x")
