"""A topology whose window cannot complete in time is refused before it runs.

In time is within the message timeout (or the spouts' max pending), as Storm's WindowedBoltExecutor
refuses it.
"""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm import Spout, Topology
from sparkstorm.errors import TopologyError
from sparkstorm.topology.validate import validate_windowed_bolts
from sparkstorm.topology.windowed_bolts import Count, Duration, WindowedBolt


class Numbers(Spout):
    outputs = ["ts", "value"]


class Average(WindowedBolt):
    outputs = ["avg"]


def declare(conf: dict[str, Any], **window: Any) -> type[Topology]:
    class Averages(Topology):
        config = conf
        numbers = Numbers.spec()
        average = Average.spec(inputs=[numbers], **window)

    return Averages


def test_window_longer_than_message_timeout_is_refused_at_declaration() -> None:
    with pytest.raises(TopologyError) as caught:
        declare({"topology.message.timeout.secs": 30}, window=Duration.seconds(28),
                slide=Duration.seconds(5))
    assert caught.value.code == "WINDOW_EXCEEDS_MESSAGE_TIMEOUT"
    assert "'average'" in str(caught.value) and "topology.message.timeout.secs" in str(
        caught.value)


def test_default_timeout_applies_and_component_config_overrides_topology() -> None:
    with pytest.raises(TopologyError) as caught:
        declare({}, window=Duration.seconds(30), slide=Duration.seconds(1))  # default 30 s
    assert caught.value.code == "WINDOW_EXCEEDS_MESSAGE_TIMEOUT"
    declare({"topology.message.timeout.secs": 31}, window=Duration.seconds(30),
            slide=Duration.seconds(1))
    declare({}, window=Duration.seconds(30), slide=Duration.seconds(1),
            config={"topology.message.timeout.secs": 60})


def test_effective_conf_is_checked_at_submit() -> None:
    topology = declare({"topology.message.timeout.secs": 60}, window=Duration.seconds(40),
                       slide=Duration.seconds(10))
    validate_windowed_bolts(topology.topology_spec, {"topology.message.timeout.secs": 60})
    with pytest.raises(TopologyError) as caught:  # a -c override at submit shortens it
        validate_windowed_bolts(topology.topology_spec, {"topology.message.timeout.secs": 45})
    assert caught.value.code == "WINDOW_EXCEEDS_MESSAGE_TIMEOUT"
    validate_windowed_bolts(topology.topology_spec, {"topology.message.timeout.secs": 45,
                                                     "topology.enable.message.timeouts": False})


def test_count_window_larger_than_max_spout_pending_is_refused() -> None:
    with pytest.raises(TopologyError) as caught:
        declare({"topology.max.spout.pending": 100}, window=Count(90), slide=Count(20))
    assert caught.value.code == "WINDOW_EXCEEDS_MAX_SPOUT_PENDING"
    declare({"topology.max.spout.pending": 110}, window=Count(90), slide=Count(20))
