"""KafkaBolt and KafkaBatchBolt when no broker answers: librdkafka for real, on a closed port.

Nothing listens on the port, so the producer meets what an outage looks like (connections
refused, then "all brokers down") without any server: the bolt reports it
(``KAFKA_BROKER_ERROR``, ``kafkaProducer`` metrics), its undelivered records fail after the
topology's message timeout, under checkpoint reliability they raise (a rollback) at the
window's end or at a checkpoint's cut, and a batch stops waiting soon once the brokers are
known down. The outage and the broker's return on a running topology:
tests/integration/spark/test_kafka_bolt_outage.py (slow).
"""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest

from sparkstorm.connectors.kafka import KafkaBatchBolt, KafkaBolt, batch, bolt
from sparkstorm.connectors.kafka.errors import KafkaConnectorError
from sparkstorm.testing import BoltHarness
from sparkstorm.testing.polling import wait_for
from sparkstorm.topology.failed import ReportedFailedException

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def short_close(monkeypatch: pytest.MonkeyPatch) -> None:
    """``close`` waits for what is on its way; here nothing will ever arrive."""
    monkeypatch.setattr(bolt, "CLOSE_FLUSH_SECONDS", 0.1)

FAST_RECONNECTS = {"reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 200,
                   "log_level": 0}  # librdkafka's own log lines: the error_cb is what counts


def _nowhere() -> str:
    """A loopback address where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def _harness(conf: dict[str, Any], producer: dict[str, Any] | None = None,
             cls: type[KafkaBolt] = KafkaBolt) -> BoltHarness:
    spec = cls.spec(bootstrap_servers=_nowhere(), topic="out", key_field=None,
                    message_field="m", delivery_wait_ms=50,
                    producer_properties=FAST_RECONNECTS | (producer or {}))
    return BoltHarness(spec, conf=conf, inputs={"src": ["m"]})


class _Windows:
    """Ends windows of a harnessed bolt, keeping what each did."""

    def __init__(self, harness: BoltHarness) -> None:
        self.harness = harness
        self.errors: list[str] = []
        self.failed: list[str] = []

    def end(self) -> None:
        with self.harness._recording() as call:
            self.harness.instance.end_window()
        self.errors += call.result.errors
        self.failed += [str(f.reason) for f in call.result.failed]

    def metrics(self) -> dict[str, int]:
        found: dict[str, int] = self.harness.instance.component_metrics["kafkaProducer"]
        return found


def test_an_outage_is_reported_and_a_record_fails_after_the_topology_timeout() -> None:
    with _harness({"topology.message.timeout.secs": 1}) as harness:
        windows = _Windows(harness)
        first = harness.process(["a"])
        assert not first.acked  # acked on delivery, which does not come
        windows.errors += first.errors

        def reported() -> bool:
            windows.end()
            return any("KAFKA_BROKER_ERROR" in e for e in windows.errors) and \
                windows.metrics()["brokersDown"] == 1
        wait_for(reported, 10, message="the outage reported, and in the metrics",
                 interval=0.05)
        assert windows.metrics()["inFlight"] == 1
        # message.timeout.ms follows topology.message.timeout.secs (librdkafka's: 300 s)
        started = time.monotonic()
        wait_for(lambda: windows.end() or windows.failed, 10,
                 message="the record's delivery failed", interval=0.05)
        assert time.monotonic() - started < 5
        assert [r.split(":")[0] for r in windows.failed] == ["KAFKA_DELIVERY_FAILED"]
        assert windows.metrics() == {"inFlight": 0, "delivered": 0, "failed": 1,
                                     "brokersDown": 1}


def test_under_checkpoint_reliability_an_undelivered_record_raises_at_the_window_end() -> None:
    conf = {"topology.reliability": "checkpoint"}
    with _harness(conf, {"message.timeout.ms": 300}) as harness:
        harness.process(["a"])

        def raised() -> str | None:
            try:
                harness.instance.end_window()
            except KafkaConnectorError as exc:
                return exc.code
            return None
        assert wait_for(raised, 10, message="end_window raised", interval=0.05) \
            == "KAFKA_DELIVERY_FAILED"
        harness.instance.end_window()  # raised once: the rollback replays the window


def test_under_checkpoint_reliability_a_cut_waits_for_deliveries_and_raises_without(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bolt, "CUT_FLUSH_SECONDS", 0.3)
    with _harness({"topology.reliability": "checkpoint"}) as harness:
        harness.instance.pre_prepare(1)  # nothing on its way: nothing to wait for
        harness.process(["a"])
        with pytest.raises(KafkaConnectorError) as caught:
            harness.instance.pre_prepare(2)
        assert caught.value.code == "KAFKA_DELIVERY_FAILED"
    with _harness({"topology.checkpoint.windows": 2}) as harness:
        harness.process(["a"])
        harness.instance.pre_prepare(1)  # acking: the spout's offsets wait for the acks


def test_a_batch_stops_waiting_soon_once_the_brokers_are_known_down(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "OUTAGE_DELIVERY_SECONDS", 0.3)
    with _harness({}, cls=KafkaBatchBolt) as harness:
        instance = harness.instance
        instance.source = "src:default"
        started = time.monotonic()
        with pytest.raises(ReportedFailedException, match="KAFKA_DELIVERY_FAILED"):
            instance.process_batch({"m": ["a", "b"]})  # acking: fail the batch, no restart
        assert instance.brokers_down
        assert time.monotonic() - started < 5, "not BATCH_DELIVERY_SECONDS (30 s)"
        instance.end_window()
        metrics = instance.component_metrics["kafkaProducer"]
        # the batch failed; its records wait in the producer's queue for the brokers (they
        # count as failed once Kafka refuses them or their message.timeout.ms runs out)
        assert (metrics["inFlight"], metrics["delivered"], metrics["failed"]) == (2, 0, 0)


def test_under_checkpoint_reliability_an_undelivered_batch_raises_for_a_rollback(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "OUTAGE_DELIVERY_SECONDS", 0.3)
    monkeypatch.setattr(batch, "BATCH_DELIVERY_SECONDS", 0.3)
    with _harness({"topology.reliability": "checkpoint"}, cls=KafkaBatchBolt) as harness:
        harness.instance.source = "src:default"
        with pytest.raises(KafkaConnectorError) as caught:
            harness.instance.process_batch({"m": ["a"]})
        assert caught.value.code == "KAFKA_DELIVERY_FAILED"
        assert not isinstance(caught.value, ReportedFailedException), \
            "a failed batch is not replayed in checkpoint mode: only a rollback replays it"


def test_under_checkpoint_reliability_an_unmappable_tuple_is_reported_and_dropped() -> None:
    # a failed tuple rolls this mode back, and this one would roll it back every time
    spec = KafkaBolt.spec(bootstrap_servers=_nowhere(), topic="out", key_field=None,
                          message_field="absent", producer_properties=FAST_RECONNECTS)
    with BoltHarness(spec, conf={"topology.reliability": "checkpoint"},
                     inputs={"src": ["m"]}) as harness:
        result = harness.process(["a"])
        assert not result.failed and result.acked == [result.input]
        assert "KAFKA_TUPLE_UNMAPPABLE" in result.errors[0]
