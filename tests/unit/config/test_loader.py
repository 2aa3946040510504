"""Tests of layered loading and validation in sparkstorm.config.loader."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sparkstorm.config import (
    KEYS,
    component_conf,
    load_config,
    parse_cli_overrides,
    spark_settings,
    validate_conf,
)
from sparkstorm.config.loader import parse_value, unknown_key_warnings
from sparkstorm.errors import ConfigError

LOADER_LOGGER = "sparkstorm.config.loader"


@pytest.fixture(autouse=True)
def _no_local_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run each test in an empty directory so a stray ./sparkstorm.yaml is never read."""
    monkeypatch.chdir(tmp_path)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- parse_value / parse_cli_overrides ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("10", 10),
        ("0.5", 0.5),
        ("true", True),
        ("false", False),
        ("[1,2]", [1, 2]),
        ("{a: 1}", {"a": 1}),
        ("abc", "abc"),
        ("local[*]", "local[*]"),
        ("null", None),
        ("[1,", "[1,"),
        ("2020-01-01", "2020-01-01"),
    ],
)
def test_parse_value(text: str, value: object) -> None:
    assert parse_value(text) == value


def test_parse_cli_overrides() -> None:
    got = parse_cli_overrides(["topology.workers=3", "spark.master=local[2]", "a.b=x=y"])
    assert got == {"topology.workers": 3, "spark.master": "local[2]", "a.b": "x=y"}


@pytest.mark.parametrize("item", ["topology.workers", "=3", ""])
def test_bad_override(item: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_cli_overrides([item])
    assert info.value.code == "CONFIG_BAD_OVERRIDE"
    assert repr(item) in str(info.value)
    assert "key=value" in str(info.value)


# --- validate_conf ----------------------------------------------------------------------------


def test_validate_returns_a_copy() -> None:
    conf: dict[str, object] = {"topology.spark.conf": {"spark.x": 1}, "topology.workers": 2}
    out = validate_conf(conf, where="test")
    assert out == conf
    assert out is not conf
    assert out["topology.spark.conf"] is not conf["topology.spark.conf"]


def test_wrong_type_names_key_where_value_and_doc() -> None:
    with pytest.raises(ConfigError) as info:
        validate_conf({"topology.workers": "three"}, where="sparkstorm.yaml")
    err = info.value
    assert err.code == "CONFIG_WRONG_TYPE"
    assert isinstance(err, ValueError)
    text = str(err)
    assert "'topology.workers'" in text
    assert "sparkstorm.yaml" in text
    assert "'three'" in text and "str" in text
    assert "int" in text
    assert KEYS["topology.workers"].doc in text


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("topology.workers", True),
        ("topology.workers", 1.5),
        ("topology.debug", 1),
        ("topology.debug", "true"),
        ("nimbus.seeds", "localhost"),
        ("topology.spark.conf", ["spark.x"]),
        ("topology.message.timeout.secs", None),
        ("spark.executor.memory", ["1g"]),
    ],
)
def test_wrong_types(key: str, value: object) -> None:
    with pytest.raises(ConfigError) as info:
        validate_conf({key: value}, where="command line")
    assert info.value.code == "CONFIG_WRONG_TYPE"
    assert repr(key) in str(info.value)
    assert "command line" in str(info.value)


def test_wrong_type_in_topology_spark_conf() -> None:
    with pytest.raises(ConfigError) as info:
        validate_conf({"topology.spark.conf": {"spark.x": [1]}}, where="topology conf")
    assert info.value.code == "CONFIG_WRONG_TYPE"
    assert "spark.x" in str(info.value)


def test_wrong_type_message_masks_secret() -> None:
    with pytest.raises(ConfigError) as info:
        validate_conf({"storm.cluster.token": 12345}, where="command line")
    assert info.value.code == "CONFIG_WRONG_TYPE"
    assert "12345" not in str(info.value)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("topology.stats.sample.rate", 1),
        ("topology.executor.start.timeout.secs", 2.5),
        ("topology.max.spout.pending", None),
        ("topology.acker.executors", 0),
        ("storm.cluster.token", "s3cret"),
        ("spark.executor.cores", 2),
        ("spark.ui.enabled", False),
        ("pystorm.log.path", "/tmp/logs"),
    ],
)
def test_accepted_values(key: str, value: object) -> None:
    assert validate_conf({key: value}, where="test") == {key: value}


def test_component_where_in_message() -> None:
    with pytest.raises(ConfigError) as info:
        component_conf({}, {"topology.tick.tuple.freq.secs": "often"}, "count")
    assert info.value.code == "CONFIG_WRONG_TYPE"
    assert "component 'count' config" in str(info.value)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("topology.window.ms", 0),
        ("topology.message.timeout.secs", 0),
        ("topology.max.spout.pending", 0),
        ("topology.acker.executors", -1),
        ("storm.state.store", "etcd"),
    ],
)
def test_out_of_range(key: str, value: object) -> None:
    with pytest.raises(ConfigError) as info:
        validate_conf({key: value}, where="topology conf")
    assert info.value.code == "CONFIG_OUT_OF_RANGE"
    assert repr(key) in str(info.value)
    assert repr(value) in str(info.value)


def test_unknown_key_warns_with_nearest(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOADER_LOGGER):
        out = validate_conf({"topology.worker": 2}, where="sparkstorm.yaml")
    assert out == {"topology.worker": 2}
    [record] = [r for r in caplog.records if r.name == LOADER_LOGGER]
    assert record.levelno == logging.WARNING
    assert "'topology.worker'" in record.getMessage()
    assert "'topology.workers'" in record.getMessage()
    assert "sparkstorm.yaml" in record.getMessage()


def test_unknown_system_key_without_near_match() -> None:
    [warning] = unknown_key_warnings({"topology.zzzzzzzzzzzz": 1})
    assert "'topology.zzzzzzzzzzzz'" in warning
    assert "no declared key is close" in warning


def test_application_keys_are_not_warned_about() -> None:
    assert unknown_key_warnings({"wordcount.sentences": 10, "zzzzzz": 1}) == []


def test_pass_through_keys_never_warn(caplog: pytest.LogCaptureFixture) -> None:
    conf = {"spark.executor.memory": "1g", "pystorm.log.level": "info", "topology.workers": 1}
    with caplog.at_level(logging.WARNING, logger=LOADER_LOGGER):
        validate_conf(conf, where="test")
    assert unknown_key_warnings(conf) == []
    assert not [r for r in caplog.records if r.name == LOADER_LOGGER]


def test_non_spark_entry_of_topology_spark_conf_warns() -> None:
    [warning] = unknown_key_warnings({"topology.spark.conf": {"executor.memory": "1g"}})
    assert "'executor.memory'" in warning


# --- load_config --------------------------------------------------------------------------------


def test_defaults_only() -> None:
    conf = load_config(env={})
    assert set(conf) == set(KEYS)
    assert all(conf[name] == key.default for name, key in KEYS.items())


def test_defaults_are_not_shared_between_loads() -> None:
    first = load_config(env={})
    spark_conf = first["topology.spark.conf"]
    assert isinstance(spark_conf, dict)
    spark_conf["spark.x"] = "1"
    assert load_config(env={})["topology.spark.conf"] == {}
    assert KEYS["topology.spark.conf"].default == {}


def test_precedence_of_all_layers(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "conf.yaml",
        "topology.workers: 2\n"
        "topology.debug: true\n"
        "topology.window.ms: 200\n"
        "topology.message.timeout.secs: 40\n"
        "nimbus.port: 7000\n"
        "spark.executor.cores: 4\n",
    )
    env = {
        "SPARKSTORM_TOPOLOGY_WORKERS": "3",
        "SPARKSTORM_TOPOLOGY_WINDOW_MS": "300",
        "SPARKSTORM_TOPOLOGY_MESSAGE_TIMEOUT_SECS": "50",
        "SPARKSTORM_NOT_A_KEY": "ignored",
    }
    cli = {"topology.window.ms": 400, "topology.message.timeout.secs": 60}
    topology = {"topology.message.timeout.secs": 70, "topology.name": "wc"}
    conf = load_config(file=path, env=env, cli=cli, topology=topology)
    assert conf["nimbus.port"] == 7000  # file over default
    assert conf["topology.debug"] is True  # file over default
    assert conf["topology.workers"] == 3  # env over file
    assert conf["topology.window.ms"] == 400  # cli over env
    assert conf["topology.message.timeout.secs"] == 70  # topology over cli
    assert conf["topology.name"] == "wc"
    assert conf["spark.executor.cores"] == 4  # extra keys kept
    assert conf["ui.port"] == 8080  # untouched default
    assert "SPARKSTORM_NOT_A_KEY" not in conf and "not.a.key" not in conf


def test_file_from_env_var(tmp_path: Path) -> None:
    path = _write(tmp_path / "elsewhere.yaml", "topology.workers: 5\n")
    conf = load_config(env={"SPARKSTORM_CONF_FILE": str(path)})
    assert conf["topology.workers"] == 5


def test_file_in_current_directory(tmp_path: Path) -> None:
    _write(tmp_path / "sparkstorm.yaml", "topology.workers: 6\n")
    assert load_config(env={})["topology.workers"] == 6


def test_explicit_file_wins_over_env_var_and_local_file(tmp_path: Path) -> None:
    _write(tmp_path / "sparkstorm.yaml", "topology.workers: 6\n")
    other = _write(tmp_path / "other.yaml", "topology.workers: 5\n")
    chosen = _write(tmp_path / "chosen.yaml", "topology.workers: 4\n")
    conf = load_config(file=chosen, env={"SPARKSTORM_CONF_FILE": str(other)})
    assert conf["topology.workers"] == 4


def test_empty_file_is_empty_layer(tmp_path: Path) -> None:
    path = _write(tmp_path / "empty.yaml", "")
    assert load_config(file=path, env={})["topology.workers"] == 1


def test_env_uses_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARKSTORM_TOPOLOGY_DEBUG", "true")
    assert load_config()["topology.debug"] is True


def test_wrong_type_in_file_names_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "conf.yaml", "topology.workers: many\n")
    with pytest.raises(ConfigError) as info:
        load_config(file=path, env={})
    assert info.value.code == "CONFIG_WRONG_TYPE"
    assert str(path) in str(info.value)


def test_wrong_type_in_env_names_variable() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(env={"SPARKSTORM_TOPOLOGY_WORKERS": "many"})
    assert info.value.code == "CONFIG_WRONG_TYPE"
    assert "SPARKSTORM_TOPOLOGY_WORKERS" in str(info.value)


def test_out_of_range_in_topology_layer() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(env={}, topology={"topology.window.ms": 0})
    assert info.value.code == "CONFIG_OUT_OF_RANGE"
    assert "topology conf" in str(info.value)


@pytest.mark.parametrize(
    "text",
    ["topology.workers: [1, 2\n", "- just\n- a list\n", "plain scalar\n", "a: b: c\n"],
)
def test_bad_yaml_file(tmp_path: Path, text: str) -> None:
    path = _write(tmp_path / "bad.yaml", text)
    with pytest.raises(ConfigError) as info:
        load_config(file=path, env={})
    assert info.value.code == "CONFIG_BAD_FILE"
    assert str(path) in str(info.value)


def test_missing_file_named_by_env_var(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as info:
        load_config(env={"SPARKSTORM_CONF_FILE": str(missing)})
    assert info.value.code == "CONFIG_BAD_FILE"
    assert str(missing) in str(info.value)


# --- component_conf -----------------------------------------------------------------------------


def test_component_conf_overlays_topology_conf() -> None:
    topo = load_config(env={}, topology={"topology.max.spout.pending": 100})
    conf = component_conf(topo, {"topology.tick.tuple.freq.secs": 5}, "count")
    assert conf["topology.tick.tuple.freq.secs"] == 5
    assert conf["topology.max.spout.pending"] == 100
    assert topo["topology.tick.tuple.freq.secs"] is None  # input untouched


def test_component_conf_overrides_topology_value() -> None:
    conf = component_conf({"topology.debug": False}, {"topology.debug": True}, "split")
    assert conf == {"topology.debug": True}


# --- spark_settings -----------------------------------------------------------------------------


def test_spark_master_defaults_to_local() -> None:
    assert spark_settings(load_config(env={})) == {"spark.master": "local[*]"}


def test_spark_settings_pass_through_as_strings() -> None:
    conf = load_config(
        env={},
        cli={"spark.executor.cores": 2, "spark.ui.enabled": False},
        topology={
            "topology.spark.conf": {"spark.master": "local[2]", "spark.executor.cores": 3},
            "topology.workers": 2,
        },
    )
    assert spark_settings(conf) == {
        "spark.master": "local[2]",
        "spark.executor.cores": "3",  # topology.spark.conf wins over top level
        "spark.ui.enabled": "false",
    }


def test_spark_master_from_top_level() -> None:
    settings = spark_settings({"spark.master": "spark://h:7077", "topology.workers": 1})
    assert settings == {"spark.master": "spark://h:7077"}
