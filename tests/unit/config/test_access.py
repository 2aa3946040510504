"""The typed conf accessors.

The declared default is the only default, a configured 0 stays 0, and a value of the wrong type is
an error that names the key and how to fix it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkstorm.config import (
    KEYS,
    conf_bool,
    conf_float,
    conf_int,
    conf_int_list,
    conf_optional_int,
    conf_optional_str,
    conf_str,
    conf_str_list,
    local_dir,
)
from sparkstorm.errors import ConfigError


def test_an_unset_or_none_key_reads_as_its_declared_default() -> None:
    assert conf_float({}, "nimbus.task.timeout.secs") == 30.0
    assert conf_int({"nimbus.port": None}, "nimbus.port") == KEYS["nimbus.port"].default
    assert conf_bool({}, "ui.actions.enabled") is True
    assert conf_str({}, "nimbus.host") == "127.0.0.1"
    assert conf_int_list({}, "supervisor.slots.ports") == [6700, 6701, 6702, 6703]
    assert conf_optional_int({}, "topology.max.spout.pending") is None
    assert conf_optional_str({}, "storm.cluster.token") is None


def test_a_configured_zero_or_false_stays_as_configured() -> None:
    assert conf_float({"nimbus.task.timeout.secs": 0}, "nimbus.task.timeout.secs") == 0.0
    assert conf_int({"topology.spout.buffer.size": 0}, "topology.spout.buffer.size") == 0
    assert conf_bool({"ui.actions.enabled": False}, "ui.actions.enabled") is False
    assert conf_optional_int({"topology.max.spout.pending": 0},
                             "topology.max.spout.pending") == 0


def test_a_single_string_is_a_one_item_list() -> None:
    assert conf_str_list({"storm.zookeeper.servers": "zk1"}, "storm.zookeeper.servers") == [
        "zk1"]


@pytest.mark.parametrize(("read", "key", "value"), [
    (conf_int, "nimbus.port", True),
    (conf_int, "nimbus.port", "6627"),
    (conf_float, "nimbus.task.timeout.secs", "30s"),
    (conf_bool, "ui.actions.enabled", "yes"),
    (conf_str, "nimbus.host", 127),
    (conf_str_list, "storm.zookeeper.servers", []),
    (conf_str_list, "storm.zookeeper.servers", ["zk1", ""]),
    (conf_int_list, "supervisor.slots.ports", [6700, "6701"]),
    (conf_int_list, "supervisor.slots.ports", []),
    (conf_optional_int, "topology.max.spout.pending", 1.5),
])
def test_a_wrong_type_names_the_key_the_value_its_meaning_and_the_fix(
        read: object, key: str, value: object) -> None:
    with pytest.raises(ConfigError) as caught:
        read({key: value}, key)  # type: ignore[operator]
    message = str(caught.value)
    assert caught.value.code == "CONFIG_WRONG_TYPE"
    assert repr(key) in message and repr(value) in message
    assert KEYS[key].doc in message and f"-c {key}=" in message


def test_local_dir_is_absolute_and_resolved_once_for_every_daemon(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert local_dir({}) == tmp_path.resolve() / "storm-local"
    assert local_dir({"storm.local.dir": "data/../state"}) == tmp_path.resolve() / "state"
