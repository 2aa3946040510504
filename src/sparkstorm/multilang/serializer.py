"""Wire serializers of the multilang protocol: JSON (Storm's default) and msgpack (pystorm's).

JSON frames each message as ``<json>\\nend\\n``; msgpack concatenates bare msgpack values.
Both directions are byte streams: a decoder is fed whatever one read returned (a piece of a
message, or several messages) and hands back every message completed so far.

Wire examples (JSON)::

    host  -> child  {"id":"-6955786537413359385","comp":"split","stream":"default","task":4,"tuple":["caf\\u00e9"]}\\nend\\n
    child -> host   {"command":"emit","anchors":["-6955786537413359385"],"tuple":["café"]}\\nend\\n
    host  -> child  [7]\\nend\\n

Used by the host (``shell.py``, one decoder per subprocess, called from the task's thread)
and by the child runtime (``runtime.py``).
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from typing import Any

import msgpack

from sparkstorm.multilang.errors import MultilangError

JSON_SERIALIZERS = frozenset({
    "json", "org.apache.storm.multilang.JsonSerializer",
    "backtype.storm.multilang.JsonSerializer",
})
MSGPACK_SERIALIZERS = frozenset({
    "msgpack", "com.yelp.pyleus.serializer.MessagePackSerializer",
})


class DecodeError(ValueError):
    """Bytes from the other side are not a valid message; ``data`` is the offending text."""

    def __init__(self, reason: str, data: bytes) -> None:
        super().__init__(reason)
        self.reason = reason
        self.data = data


class Decoder(ABC):
    """Incremental decoder: bytes in, whole messages out."""

    @abstractmethod
    def feed(self, data: bytes) -> list[Any]:
        """Add ``data`` and return the messages it completed, in order.

        Raises:
            DecodeError: the stream holds something that is not a message.
        """

    @property
    @abstractmethod
    def buffered(self) -> int:
        """Bytes of an incomplete message held back (0 between messages)."""


class Serializer(ABC):
    """Encodes messages to bytes and makes decoders for the reverse direction."""

    name: str

    @abstractmethod
    def encode(self, message: Any) -> bytes:
        """One whole message as bytes, ready to write.

        Raises:
            TypeError, ValueError, OverflowError: ``message`` holds a value the format
                cannot carry (bytes in JSON, an integer above 2**64 in msgpack, ...).
        """

    @abstractmethod
    def encode_lenient(self, message: Any) -> bytes:
        """Like :meth:`encode`, but values the format cannot carry become their text
        (used for the handshake's ``conf``, which may hold arbitrary Python objects)."""

    @abstractmethod
    def decoder(self) -> Decoder:
        """A fresh decoder for one byte stream."""


# An "end" line: at the start of the stream or after a line break, ended by \n, \r\n or
# \r, as Java's readLine (Storm's reader) accepts all three.
_END_LINE = re.compile(rb"(?:(?<=[\r\n])|\A)end(?:\r\n|\n|\r)")
_strict_encoder = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))
_lenient_encoder = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=str)
_json_decode = json.JSONDecoder().decode


class JsonDecoder(Decoder):
    """Collects text up to an ``end`` line and parses it as one JSON value.

    Tolerant on the way in, as Storm's reader: raw UTF-8 or ``\\u`` escapes, CRLF, leading
    blank lines, pretty-printed (multi-line) JSON, NaN and Infinity, lone surrogates.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete message held back."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[Any]:
        """See :meth:`Decoder.feed`."""
        buffer = self._buffer
        buffer += data
        messages: list[Any] = []
        start = 0
        for match in _END_LINE.finditer(buffer):
            messages.append(_parse(bytes(buffer[start:match.start()])))
            start = match.end()
        if start:
            del buffer[:start]
        return messages


def _parse(body: bytes) -> Any:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"invalid UTF-8 ({exc.reason} at byte {exc.start})", body) from None
    if not text.strip():
        # storm.py and pystorm die on an empty message; Storm's parser fails too
        raise DecodeError("empty message (an 'end' line with nothing before it)", body)
    try:
        return _json_decode(text.strip())
    except ValueError as exc:
        raise DecodeError(f"not JSON ({exc})", body) from None


class JsonSerializer(Serializer):
    """Storm's ``JsonSerializer``: single-line, ASCII-only JSON followed by ``\\nend\\n``.

    All non-ASCII text is escaped on the way out, so children that decode stdin with their
    locale's encoding (storm.py under a latin-1 locale) still read it right.

    Example:
        >>> JsonSerializer().encode({"tuple": ["café"]})
        b'{"tuple":["caf\\\\u00e9"]}\\nend\\n'
        >>> JsonSerializer().decoder().feed(b'{"command":"sync"}\\r\\nend\\r\\n[1')
        [{'command': 'sync'}]
    """

    name = "json"

    def encode(self, message: Any) -> bytes:
        """See :meth:`Serializer.encode`."""
        return _strict_encoder.encode(message).encode("ascii") + b"\nend\n"

    def encode_lenient(self, message: Any) -> bytes:
        """See :meth:`Serializer.encode_lenient`."""
        return _lenient_encoder.encode(message).encode("ascii") + b"\nend\n"

    def decoder(self) -> Decoder:
        """See :meth:`Serializer.decoder`."""
        return JsonDecoder()


class MsgpackDecoder(Decoder):
    """Concatenated msgpack values, as pystorm's ``MsgpackSerializer`` writes them."""

    def __init__(self) -> None:
        self._unpacker = msgpack.Unpacker(raw=False, strict_map_key=False,
                                          max_buffer_size=2**31 - 1)
        self._fed = 0

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete message held back (approximate: bytes fed, not used)."""
        return self._fed

    def feed(self, data: bytes) -> list[Any]:
        """See :meth:`Decoder.feed`."""
        try:
            self._unpacker.feed(data)
            messages = list(self._unpacker)
        except (ValueError, msgpack.UnpackException) as exc:
            raise DecodeError(f"not msgpack ({type(exc).__name__}: {exc})", data) from None
        self._fed = 0 if messages else self._fed + len(data)
        return messages


class MsgpackSerializer(Serializer):
    """pystorm's msgpack mode: no ``end`` lines, strings as msgpack str, bytes as bin.

    Example:
        >>> s = MsgpackSerializer()
        >>> s.decoder().feed(s.encode({"command": "sync"}) + s.encode([3]))
        [{'command': 'sync'}, [3]]
    """

    name = "msgpack"

    def encode(self, message: Any) -> bytes:
        """See :meth:`Serializer.encode`."""
        data: bytes = msgpack.packb(message, use_bin_type=True)
        return data

    def encode_lenient(self, message: Any) -> bytes:
        """See :meth:`Serializer.encode_lenient`."""
        data: bytes = msgpack.packb(message, use_bin_type=True, default=str)
        return data

    def decoder(self) -> Decoder:
        """See :meth:`Serializer.decoder`."""
        return MsgpackDecoder()


def serializer_for(name: str | None, *, where: str = "topology.multilang.serializer") -> Serializer:
    """The serializer called ``name`` (``json``, ``msgpack`` or a Storm class name).

    Raises:
        MultilangError: ``MULTILANG_INVALID_CONFIG`` for any other name.
    """
    if name is None or name in JSON_SERIALIZERS:
        return JsonSerializer()
    if name in MSGPACK_SERIALIZERS:
        return MsgpackSerializer()
    msg = (
        f"{where} is {name!r}, which is not a known multilang serializer; use 'json' "
        f"(or {sorted(JSON_SERIALIZERS - {'json'})}) or 'msgpack' "
        f"(or {sorted(MSGPACK_SERIALIZERS - {'msgpack'})})"
    )
    raise MultilangError(msg, code="MULTILANG_INVALID_CONFIG")
