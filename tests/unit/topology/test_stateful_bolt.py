"""StatefulBolt: its state comes from topology.state.provider before the first tuple.

It comes once, under Storm's namespace, and follows prepare/commit/rollback with the bolt's hooks.
"""

from __future__ import annotations

import pytest

from sparkstorm.errors import ConfigError
from sparkstorm.state import InMemoryKeyValueState
from tests.unit.topology.helpers import started
from tests.unit.topology.windowed_bolts.fakes import Source, tick


def test_state_starts_once_before_the_first_tuple() -> None:
    bolt = started()
    assert bolt.states == []
    bolt.process_tick(tick())
    source = Source(fields=("n", "key"))
    for n in range(6):
        bolt.process(source.tuple(n, f"k{n % 2}"))
    assert len(bolt.states) == 1 and isinstance(bolt.states[0], InMemoryKeyValueState)
    assert bolt.states[0].namespace == "count-3"  # Storm's <component>-<task>
    assert dict(bolt.counts) == {"k0": 3, "k1": 3}


def test_checkpoint_protocol_calls_hooks_before_the_state() -> None:
    bolt = started()
    source = Source(fields=("n", "key"))
    bolt.process(source.tuple(0, "a"))
    task = bolt._stateful_task
    assert task.prepare(5) == {"a": 1}
    task.commit(5)
    bolt.process(source.tuple(1, "a"))
    task.rollback()
    assert dict(bolt.counts) == {"a": 1}
    assert bolt.hooks == [("pre_prepare", 5, {"a": 1}), ("pre_commit", 5), "pre_rollback"]


def test_engine_started_state_is_not_replaced() -> None:
    bolt = started()
    bolt.start_state({"a": 41}, committed_txid=9)  # as a restore from checkpoint 9 would
    bolt.process(Source(fields=("n", "key")).tuple(0, "a"))
    assert len(bolt.states) == 1 and dict(bolt.counts) == {"a": 42}


def test_unknown_provider_fails_at_the_first_tuple_with_its_code() -> None:
    bolt = started({"topology.state.provider": "rocksdb"})
    with pytest.raises(ConfigError) as caught:
        bolt.process(Source(fields=("n", "key")).tuple(0, "a"))
    assert caught.value.code == "STATE_PROVIDER_UNKNOWN"
