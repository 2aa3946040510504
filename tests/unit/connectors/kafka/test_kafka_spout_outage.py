"""KafkaSpout when no broker answers: librdkafka for real, on a port where nothing listens.

The spout reports the outage as its error (``KAFKA_BROKER_ERROR``, what the UI shows), goes
on calling ``next_tuple`` without blocking the window long, and emits nothing. A broker lost
and back under a running topology: tests/integration/spark/test_kafka_outage.py (slow).
"""

from __future__ import annotations

import socket
import time

import pytest

from sparkstorm.connectors.kafka import KafkaSpout, KafkaSpoutConfig, spout
from sparkstorm.testing import SpoutHarness

pytestmark = pytest.mark.timeout(60)


def _nowhere() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def test_an_unreachable_broker_is_the_spouts_error_and_next_tuple_goes_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spout, "METADATA_TIMEOUT_SECONDS", 0.3)  # the spout's: 10 s
    config = KafkaSpoutConfig(_nowhere(), topics=["events"],
                              consumer_properties={"log_level": 0})
    with SpoutHarness(KafkaSpout.spec(kafka=config)) as harness:
        first = harness.next_tuple()
        assert not first.emits
        assert len(first.errors) == 1 and "KAFKA_BROKER_ERROR" in first.errors[0]
        assert "listing partitions failed" in first.errors[0]
        # known down: later listings wait OUTAGE_TIMEOUT_SECONDS, and the error is not
        # repeated in the UI more than every 30 s
        harness.instance.next_refresh = 0.0  # the next call lists the partitions again
        started = time.monotonic()
        later = harness.next_tuple()
        assert time.monotonic() - started < spout.OUTAGE_TIMEOUT_SECONDS + 0.5
        assert not later.emits and not later.errors
        assert any("KAFKA_BROKER_ERROR" in line for line in later.logs)
