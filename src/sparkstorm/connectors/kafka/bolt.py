"""``KafkaBolt``: storm-kafka-client's bolt on confluent-kafka's producer.

A tuple becomes one record: its topic is fixed (``topic=``) or read from a field
(``topic_field=``, ``topic`` then the default when the field is missing or None), its key and
value come from the fields ``key_field`` and ``message_field`` (Storm's
``FieldNameBasedTupleToKafkaMapper`` names, ``key`` and ``message``). A str is sent as UTF-8,
bytes as they are, None as null, anything else as JSON.

The tuple is acked when Kafka confirms the record's delivery and failed (reason
``KAFKA_DELIVERY_FAILED: ...``) when the producer gives up on it (after its
``message.timeout.ms``), so its spout replays it. Delivery reports are read after each tuple
and at the end of each window, which waits up to ``delivery_wait_ms`` for the window's
records; those still unconfirmed then are acked or failed in a later window. With
``fire_and_forget=True`` a tuple is acked as soon as the record is handed to the producer.

Outages: when the producer loses its brokers (librdkafka's ``error_cb``) the bolt reports
``KAFKA_BROKER_ERROR`` as its error and goes on; its records wait in the producer's queue and
are delivered once the brokers are back. Unless ``message.timeout.ms`` is set, it is the
topology's ``topology.message.timeout.secs`` under acking: a record the producer still holds
when its tuple tree times out is dropped with the tree, not sent beside the spout's replay.
The metrics ``kafkaProducer`` (``inFlight``, ``delivered``, ``failed``, ``brokersDown``) show
it on the component page and in the REST API's ``componentMetrics``.

Under ``topology.reliability: checkpoint`` a failed tuple is replayed only by a rollback: a
record not delivered makes ``end_window`` raise ``KAFKA_DELIVERY_FAILED`` (the topology
rolls back to its last committed checkpoint), and each checkpoint's cut (``pre_prepare``)
first waits for every record still on its way, and raises when one is not delivered, so that
no checkpoint commits a tuple whose record Kafka did not get. Records are thus at least once
in Kafka, and a stateful bolt beside the sink counts each tuple exactly once.

Usage::

    from sparkstorm.connectors.kafka import KafkaBolt

    out = KafkaBolt.spec(inputs=[parse], bootstrap_servers="broker:9092", topic="parsed",
                         producer_properties={"linger.ms": 20})
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from functools import partial
from typing import Any, ClassVar

from sparkstorm.config.access import conf_int
from sparkstorm.config.reliability import ACKING, CHECKPOINT, reliability_mode
from sparkstorm.connectors.kafka.errors import KafkaConnectorError
from sparkstorm.errors import TopologyError
from sparkstorm.topology.component import Bolt
from sparkstorm.topology.spec import ComponentSpec, input_spec_placeholder
from sparkstorm.topology.spec_args import resolve_config, resolve_par
from sparkstorm.topology.tuple import Tuple

FLUX_KEY = "topology.connector"
"""The component config key a Flux file gives a connector's settings under."""
ERROR_REPORT_SECONDS = 30.0
"""A failed delivery is reported as the component's error at most this often (logged always)."""
FULL_QUEUE_WAIT_SECONDS = 1.0
"""How long ``process`` serves delivery reports when the producer's queue is full before it
fails the tuple."""
CLOSE_FLUSH_SECONDS = 5.0
"""How long ``close`` waits for the records still on their way."""
CUT_FLUSH_SECONDS = 10.0
"""Under checkpoint reliability, how long a checkpoint's cut waits for the records on their
way before it gives up (and the topology rolls back)."""
BROKERS_DOWN = frozenset({"_ALL_BROKERS_DOWN", "_TRANSPORT", "_RESOLVE", "_AUTHENTICATION"})
"""librdkafka's error names that mean the brokers cannot be reached."""


class KafkaBolt(Bolt):
    """Writes each tuple to Kafka; see the module docstring and docs/connectors.md."""

    outputs: ClassVar[list[Any]] = []
    auto_ack: ClassVar[bool] = False
    transient = ("producer",)

    @classmethod
    def spec(  # type: ignore[override]  # noqa: PLR0913 - Storm's KafkaBolt settings, by keyword
        cls, name: str | None = None, inputs: Any = None,
        par: int | dict[str, int] | None = None, num_tasks: int | None = None,
        config: dict[str, Any] | None = None, *, bootstrap_servers: str,
        topic: str | None = None, topic_field: str | None = None,
        key_field: str | None = "key", message_field: str = "message",
        producer_properties: dict[str, Any] | None = None, fire_and_forget: bool = False,
        delivery_wait_ms: int = 200,
    ) -> ComponentSpec:
        """Declare a Kafka bolt (the settings are those of the module docstring).

        Raises:
            TopologyError: ``KAFKA_CONFIG_INVALID`` without a topic or topic field, or
                without brokers.
        """
        if topic is None and topic_field is None:
            _invalid("give topic='name' or topic_field='field' (or both: the field, else the "
                     "topic)")
        if not bootstrap_servers:
            _invalid("bootstrap_servers is empty; give 'host:port' of a broker")
        if isinstance(delivery_wait_ms, bool) or not isinstance(delivery_wait_ms, int) \
                or delivery_wait_ms < 0:
            _invalid(f"delivery_wait_ms must be an integer >= 0, got {delivery_wait_ms!r}")
        base = ComponentSpec.declare(
            cls, "bolt", name=name, inputs=input_spec_placeholder(inputs),
            par=resolve_par(cls, par, name), num_tasks=num_tasks,
            config=resolve_config(cls, config, name), outputs=[])
        return replace(base, extra={"kafka": {
            "bootstrap_servers": bootstrap_servers, "topic": topic, "topic_field": topic_field,
            "key_field": key_field, "message_field": message_field,
            "producer_properties": dict(producer_properties or {}),
            "fire_and_forget": bool(fire_and_forget), "delivery_wait_ms": delivery_wait_ms}})

    @classmethod
    def flux_spec(cls, *, name: str, par: int, num_tasks: int | None,
                  config: dict[str, Any]) -> ComponentSpec:
        """Declared from a Flux file, from the config's ``topology.connector`` mapping.

        Its keys are :meth:`spec`'s settings.

        Raises:
            TopologyError: ``KAFKA_CONFIG_INVALID`` for a missing or unknown setting.
        """
        settings = dict(config.get(FLUX_KEY) or {})
        rest = {k: v for k, v in config.items() if k != FLUX_KEY}
        try:
            return cls.spec(name=name, par=par, num_tasks=num_tasks, config=rest, **settings)
        except TypeError as exc:  # a setting spec() does not know, or none of its required
            msg = (f"{cls.__name__} {name!r}: {FLUX_KEY} has a bad setting ({exc}); give "
                   "bootstrap_servers, topic or topic_field, and optionally key_field, "
                   "message_field, producer_properties, fire_and_forget, delivery_wait_ms")
            raise TopologyError(msg, code="KAFKA_CONFIG_INVALID") from exc

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Make the producer."""
        from confluent_kafka import Producer

        extra = getattr(getattr(self, "component_spec", None), "extra", None) or {}
        settings = dict(extra["kafka"])
        self.topic: str | None = settings["topic"]
        self.topic_field: str | None = settings["topic_field"]
        self.key_field: str | None = settings["key_field"]
        self.message_field: str = settings["message_field"]
        self.fire_and_forget: bool = settings["fire_and_forget"]
        self.delivery_wait = settings["delivery_wait_ms"] / 1000
        self.servers = settings["bootstrap_servers"]
        mode = reliability_mode(storm_conf)
        self.rolls_back = mode == CHECKPOINT
        """``topology.reliability: checkpoint``: an undelivered record raises (rollback)."""
        properties = dict(settings["producer_properties"])
        if mode == ACKING and not {"message.timeout.ms", "delivery.timeout.ms"} & set(properties):
            properties["message.timeout.ms"] = \
                conf_int(storm_conf, "topology.message.timeout.secs") * 1000
        self.producer: Any = Producer(properties | {
            "bootstrap.servers": self.servers, "error_cb": self._producer_error})
        self.fields: dict[tuple[str, str], list[str]] = {
            (source, stream): list(names)
            for source, streams in context.get("source->stream->fields", {}).items()
            for stream, names in streams.items()}
        self.in_flight = 0
        self.delivered = self.undelivered = 0
        self.brokers_down = False
        """The producer said it lost its brokers; the next delivery says they are back."""
        self.failed_in_window: list[str] = []
        """Under checkpoint reliability: what failed since the last ``end_window``."""
        self.last_report: dict[str, float] = {}

    def process(self, tup: Tuple) -> None:
        """Hand ``tup``'s record to the producer; it is acked or failed on its delivery."""
        try:
            topic, key, value = self._record(tup)
        except KafkaConnectorError as exc:
            self.raise_exception(exc, tup)
            if self.rolls_back:  # a rollback would bring it back every time: reported, dropped
                self.ack(tup)
            else:
                self.fail(tup, reason=str(exc))
            return
        callback = None if self.fire_and_forget else partial(self._delivered, tup)
        if self._produce(tup, topic, key, value, callback):
            if self.fire_and_forget:
                self.ack(tup)
            else:
                self.in_flight += 1
        self.producer.poll(0)

    def end_window(self) -> None:
        """Wait up to ``delivery_wait_ms`` for the records on their way; ack or fail them.

        Raises:
            KafkaConnectorError: ``KAFKA_DELIVERY_FAILED`` under checkpoint reliability when
                a record was not delivered (the topology rolls back).
        """
        if self.in_flight and self.delivery_wait:
            self.producer.flush(self.delivery_wait)
        else:
            self.producer.poll(0)
        self.component_metrics = {"kafkaProducer": {
            "inFlight": self.in_flight, "delivered": self.delivered,
            "failed": self.undelivered, "brokersDown": int(self.brokers_down)}}
        if self.failed_in_window:
            self._roll_back(self.failed_in_window)

    def pre_prepare(self, txid: int) -> None:
        """At a checkpoint's cut under checkpoint reliability: every record is delivered.

        Raises:
            KafkaConnectorError: ``KAFKA_DELIVERY_FAILED`` when a record failed or is still
                on its way after ``CUT_FLUSH_SECONDS`` (no checkpoint commits without it).
        """
        if not self.rolls_back or not self.in_flight:
            return
        left = self.producer.flush(CUT_FLUSH_SECONDS)
        if left or self.failed_in_window:
            self._roll_back(self.failed_in_window or [
                f"{left} records still undelivered at checkpoint {txid}'s cut after "
                f"{CUT_FLUSH_SECONDS:.0f} s"])

    def close(self) -> None:
        """Wait a moment for the records still on their way."""
        producer = getattr(self, "producer", None)
        if producer is not None:
            producer.flush(CLOSE_FLUSH_SECONDS)

    cleanup = close

    def __getstate__(self) -> dict[str, Any]:
        """A checkpoint keeps nothing of the bolt: its tuples in flight are the trees'."""
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Nothing to restore (see :meth:`__getstate__`)."""
        self.__dict__.update(state)

    # -- internals -----------------------------------------------------------------------------
    def _produce(self, tup: Tuple, topic: str, key: bytes | None, value: bytes | None,
                 callback: Any) -> bool:
        from confluent_kafka import KafkaException

        ends = time.monotonic() + FULL_QUEUE_WAIT_SECONDS
        while True:
            try:
                self.producer.produce(topic, value=value, key=key, on_delivery=callback)
                return True
            except BufferError:  # the producer's queue is full: serve reports, then again
                if time.monotonic() >= ends:
                    self._failed(tup, "the producer's queue stayed full (queue.buffering.max."
                                      "messages); the brokers are slow or unreachable")
                    return False
                self.producer.poll(0.05)
            except KafkaException as exc:
                self._failed(tup, f"the producer refused the record ({exc})")
                return False

    def _delivered(self, tup: Tuple, error: Any, _message: Any) -> None:
        self.in_flight -= 1
        if error is None:
            self.delivered += 1
            self.brokers_down = False
            self.ack(tup)
        else:
            self._failed(tup, f"delivery failed ({error})")

    def _failed(self, tup: Tuple, problem: str) -> None:
        self.undelivered += 1
        reason = f"KAFKA_DELIVERY_FAILED: {problem}"
        self.fail(tup, reason=reason)
        self.logger.warning("%s", reason)
        if self.rolls_back:
            self.failed_in_window.append(problem)
        self._report("KAFKA_DELIVERY_FAILED", f"{problem}; " + (
            "the topology rolls back at the window's end and replays" if self.rolls_back
            else "the tuple was failed so that its spout replays it"))

    def _producer_error(self, error: Any) -> None:
        """The producer's ``error_cb`` (served by ``poll``/``flush``): brokers lost, and so on."""
        name = error.name() if hasattr(error, "name") else str(error)
        if name in BROKERS_DOWN:
            self.brokers_down = True
        self.logger.warning("KAFKA_BROKER_ERROR: producer error %s", error)
        self._report("KAFKA_BROKER_ERROR", f"the producer reports {error}; its records wait "
                     "in its queue and are delivered once the brokers are back")

    def _report(self, code: str, problem: str) -> None:
        """Report ``problem`` as the component's error, each code at most every 30 s."""
        now = time.monotonic()
        if now - self.last_report.get(code, -ERROR_REPORT_SECONDS) < ERROR_REPORT_SECONDS:
            return
        self.last_report[code] = now
        msg = (f"{type(self).__name__} {self.context.get('componentid')!r}: {problem}; "
               f"check the brokers at {self.servers!r} and the producer properties")
        self.raise_exception(KafkaConnectorError(
            msg, code="KAFKA_BROKER_ERROR" if code == "KAFKA_BROKER_ERROR"
            else "KAFKA_DELIVERY_FAILED"))

    def _roll_back(self, problems: list[str]) -> None:
        self.failed_in_window = []
        msg = (f"{type(self).__name__} {self.context.get('componentid')!r}: "
               f"{len(problems)} records not delivered (first: {problems[0]}); under "
               "topology.reliability: checkpoint the topology rolls back to its last "
               f"committed checkpoint and replays; check the brokers at {self.servers!r}")
        raise KafkaConnectorError(msg, code="KAFKA_DELIVERY_FAILED")

    def _record(self, tup: Tuple) -> tuple[str, bytes | None, bytes | None]:
        names = self.fields.get((tup.component, tup.stream))
        if names is None:
            names = list(getattr(tup.values, "_fields", ()))

        def field(name: str) -> Any:
            if name not in names:
                msg = (f"KafkaBolt {self.context.get('componentid')!r}: stream "
                       f"{tup.component}:{tup.stream} has no field {name!r} (fields {names}); "
                       "the tuple was failed; set key_field / message_field / topic_field "
                       "to fields the stream declares")
                raise KafkaConnectorError(msg, code="KAFKA_TUPLE_UNMAPPABLE")
            return tup.values[names.index(name)]

        topic = self.topic
        if self.topic_field is not None and (self.topic is None or self.topic_field in names):
            topic = field(self.topic_field) or self.topic
        if not topic:
            msg = (f"KafkaBolt {self.context.get('componentid')!r}: tuple {tup.values!r} has "
                   f"no topic in field {self.topic_field!r} and no default topic is set; "
                   "give topic= as the default")
            raise KafkaConnectorError(msg, code="KAFKA_TUPLE_UNMAPPABLE")
        key = encode_value(field(self.key_field)) if self.key_field is not None else None
        return str(topic), key, encode_value(field(self.message_field))


def encode_value(value: Any) -> bytes | None:
    """A value as a record's bytes: str as UTF-8, bytes as is, None as null, else JSON."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value).encode("utf-8")


def _invalid(problem: str) -> None:
    msg = f"KafkaBolt.spec: {problem}"
    raise TopologyError(msg, code="KAFKA_CONFIG_INVALID")
