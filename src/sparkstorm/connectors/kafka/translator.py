"""``RecordTranslator``: which values a Kafka record becomes, and on which stream.

Storm's ``RecordTranslator`` as data: the fields to emit (any of :data:`RECORD_FIELDS`), the
stream per topic (the rest go to ``default_stream``), how keys and values are decoded, and
optionally a function ``"module:function"`` that makes the values itself.

Example:
    >>> record = KafkaRecord("events", 2, 41, b"k", b'{"n": 1}', 1700000000000, [])
    >>> RecordTranslator(fields=["offset", "value"], value_format="json").translate(record)
    ('default', [41, {'n': 1}])
    >>> RecordTranslator(streams={"events": "ev"}).translate(record)
    ('ev', ['events', 2, 41, 'k', '{"n": 1}'])
"""

from __future__ import annotations

import importlib
import json
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sparkstorm.connectors.kafka.errors import KafkaConnectorError
from sparkstorm.errors import TopologyError

RECORD_FIELDS = ("topic", "partition", "offset", "key", "value", "timestamp", "headers")
"""What a record offers; Storm's default translator emits the first five."""
DEFAULT_FIELDS = RECORD_FIELDS[:5]
FORMATS = ("str", "bytes", "json")
"""How keys and values are decoded: UTF-8 text, the raw bytes, or JSON."""


@dataclass(frozen=True)
class KafkaRecord:
    """One consumed record, as the translator and a custom function see it.

    ``timestamp`` is in ms (None when the broker gave none); ``headers`` a list of
    ``[name, bytes]`` pairs.
    """

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int | None
    headers: list[Any]

    @classmethod
    def of_message(cls, message: Any) -> KafkaRecord:
        """The record of a message confluent-kafka's consumer polled."""
        return cls(message.topic(), message.partition(), message.offset(), message.key(),
                   message.value(), _timestamp(message), _headers(message))


@dataclass(frozen=True)
class RecordTranslator:
    """Turns a :class:`KafkaRecord` into ``(stream, values)``.

    Args:
        fields: the output fields, in order (names from :data:`RECORD_FIELDS`; with
            ``func``, any names: the function returns values for them).
        streams: topic -> stream id; topics not listed go to ``default_stream``.
        default_stream: the stream of the other topics.
        key_format: ``str``, ``bytes`` or ``json``.
        value_format: the same, for the value.
        func: ``"module:function"`` called with the :class:`KafkaRecord` (decoded
            ``key``/``value``), returning the values or None to skip the record.
    """

    fields: list[str] = field(default_factory=lambda: list(DEFAULT_FIELDS))
    streams: dict[str, str] = field(default_factory=dict)
    default_stream: str = "default"
    key_format: str = "str"
    value_format: str = "str"
    func: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", list(self.fields))
        for name, fmt in (("key_format", self.key_format), ("value_format", self.value_format)):
            if fmt not in FORMATS:
                _invalid(f"{name} must be one of {list(FORMATS)}, got {fmt!r}")
        if not self.fields or len(set(self.fields)) != len(self.fields):
            _invalid(f"fields must be distinct names, at least one, got {self.fields!r}")
        if self.func is None:
            unknown = [f for f in self.fields if f not in RECORD_FIELDS]
            if unknown:
                _invalid(f"fields {unknown} are not record fields; pick from "
                         f"{list(RECORD_FIELDS)} or give func='module:function'")
        elif ":" not in self.func:
            _invalid(f"func must be 'module:function', got {self.func!r}")

    def output_streams(self) -> list[str]:
        """Every stream the translator emits on, default stream first."""
        out = [self.default_stream]
        out.extend(s for s in dict.fromkeys(self.streams.values()) if s not in out)
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able form."""
        return {"fields": list(self.fields), "streams": dict(self.streams),
                "default_stream": self.default_stream, "key_format": self.key_format,
                "value_format": self.value_format, "func": self.func}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RecordTranslator:
        """Inverse of :meth:`to_dict`."""
        return cls(**data)

    def translate(self, record: KafkaRecord) -> tuple[str, list[Any] | None]:
        """The stream and values of ``record`` (values None: skip it).

        Raises:
            KafkaConnectorError: ``KAFKA_RECORD_UNTRANSLATABLE`` when the key or value does
                not decode, or ``func`` raises or returns the wrong number of values.
        """
        stream = self.streams.get(record.topic, self.default_stream)
        try:
            decoded = KafkaRecord(record.topic, record.partition, record.offset,
                                  _decode(record.key, self.key_format),
                                  _decode(record.value, self.value_format),
                                  record.timestamp, record.headers)
            if self.func is None:
                return stream, [getattr(decoded, name) for name in self.fields]
            values = _function(self.func)(decoded)
        except Exception as exc:  # any failure is the record's: reported, the record skipped
            msg = (f"record {record.topic}/{record.partition}@{record.offset} cannot be "
                   f"translated ({type(exc).__name__}: {exc}); it is skipped and counted as "
                   "processed; fix the producer, the key/value format or the translator")
            raise KafkaConnectorError(msg, code="KAFKA_RECORD_UNTRANSLATABLE") from exc
        if values is not None and len(values) != len(self.fields):
            msg = (f"translator {self.func} returned {len(values)} values for record "
                   f"{record.topic}/{record.partition}@{record.offset}, but fields are "
                   f"{self.fields}; it is skipped and counted as processed")
            raise KafkaConnectorError(msg, code="KAFKA_RECORD_UNTRANSLATABLE")
        return stream, None if values is None else list(values)


    def message_reader(self) -> Callable[[Any], tuple[str, list[Any]]] | None:
        """A function from a polled confluent-kafka message straight to ``(stream, values)``.

        What :meth:`translate` gives for the same record, without a :class:`KafkaRecord`
        per record (two of them per record were a sixth of a batch spout's time). None with
        ``func``: the function is given a :class:`KafkaRecord`.

        The function raises ``KAFKA_RECORD_UNTRANSLATABLE`` as :meth:`translate` does.
        """
        getters = self.column_getters()
        if getters is None:
            return None
        streams, default = self.streams, self.default_stream

        def read(message: Any) -> tuple[str, list[Any]]:
            try:
                values = [get(message) for get in getters]
            except Exception as exc:  # as translate: the record's failure, reported
                msg = (f"record {message.topic()}/{message.partition()}@{message.offset()} "
                       f"cannot be translated ({type(exc).__name__}: {exc}); it is skipped "
                       "and counted as processed; fix the producer, the key/value format or "
                       "the translator")
                raise KafkaConnectorError(msg, code="KAFKA_RECORD_UNTRANSLATABLE") from exc
            return streams.get(message.topic(), default), values
        return read

    def column_getters(self) -> list[Callable[[Any], Any]] | None:
        """Per field, the function from a polled message to its value (None with ``func``).

        For a batch spout that reads a whole partition's messages field by field: one list
        comprehension per field instead of a row per message. A getter raises where
        :meth:`message_reader`'s function would raise ``KAFKA_RECORD_UNTRANSLATABLE``; the
        caller then reads those messages one by one, to skip just the bad one.
        """
        if self.func is not None:
            return None
        return [_field_getter(name, self.key_format, self.value_format)
                for name in self.fields]


def _field_getter(name: str, key_format: str, value_format: str) -> Callable[[Any], Any]:
    """How :meth:`RecordTranslator.message_reader` reads field ``name`` of a message."""
    if name in ("key", "value"):
        fmt = key_format if name == "key" else value_format
        raw = operator.methodcaller(name)
        if fmt == "bytes":
            return raw
        return lambda message: _decode(raw(message), fmt)
    if name == "timestamp":
        return _timestamp
    if name == "headers":
        return _headers
    return operator.methodcaller(name)  # topic, partition, offset


def _timestamp(message: Any) -> int | None:
    kind, stamp = message.timestamp()
    return stamp if kind else None


def _headers(message: Any) -> list[Any]:
    return [list(h) for h in message.headers() or []]


def _decode(data: bytes | None, fmt: str) -> Any:
    if data is None or fmt == "bytes":
        return data
    if fmt == "json":
        return json.loads(data)
    return data.decode("utf-8")


_FUNCTIONS: dict[str, Any] = {}


def _function(path: str) -> Any:
    found = _FUNCTIONS.get(path)
    if found is None:
        module, _, name = path.partition(":")
        found = _FUNCTIONS[path] = getattr(importlib.import_module(module), name)
    return found


def _invalid(problem: str) -> None:
    msg = f"RecordTranslator: {problem}"
    raise TopologyError(msg, code="KAFKA_CONFIG_INVALID")
