r"""Wire serializers of the multilang protocol: JSON (Storm's default) and msgpack (pystorm's).

JSON frames each message as ``<json>\nend\n``; msgpack concatenates bare msgpack values.
Both directions are byte streams: a decoder is fed whatever one read returned (a piece of a
message, or several messages) and hands back every message completed so far.

Wire examples (JSON)::

    host  -> child  {"id":"-6955786537413359385","comp":"split","stream":"default",
                     "task":4,"tuple":["caf\u00e9"]}\nend\n   (one line on the wire)
    child -> host   {"command":"emit","anchors":["-6955786537413359385"],"tuple":["café"]}\nend\n
    host  -> child  [7]\nend\n

Used by the host (``shell.py``, one decoder per subprocess, called from the task's thread)
and by the child runtime (``runtime.py``).
"""

from __future__ import annotations

import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
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


class NonFiniteNumberError(ValueError):
    """A message for the JSON serializer holds NaN or an infinity, which JSON does not have.

    Node's ``JSON.parse`` rejects them. ``value`` and ``path`` say which and where.
    """

    def __init__(self, value: float, path: str) -> None:
        super().__init__(f"{value!r} at {path} is not JSON")
        self.value = value
        self.path = path


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
        """Like :meth:`encode`, but values the format cannot carry become their text.

        Used for the handshake's ``conf``, which may hold arbitrary Python objects.
        """

    @abstractmethod
    def decoder(self) -> Decoder:
        """A fresh decoder for one byte stream."""


# An "end" line: at the start of the stream or after a line break, ended by \n, \r\n or
# \r, as Java's readLine (Storm's reader) accepts all three.
_END_LINE = re.compile(rb"(?:(?<=[\r\n])|\A)end(?:\r\n|\n|\r)")
_TERMINATOR = b"\nend\n"
_json_decoder = json.JSONDecoder()


def _json_decode(data: bytes | str) -> Any:
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return _json_decoder.decode(text)



def _make_encoder(default: Any, *, allow_nan: bool = False) -> Any:
    """A one-shot ASCII-only compact JSON encoder, built once.

    ``json.dumps`` rebuilds its C encoder on every call, a measurable share of a shell bolt's
    per-tuple cost. Without ``allow_nan`` a NaN or infinity raises ValueError instead of writing
    ``NaN``.
    """
    if c_make_encoder is None:  # pragma: no cover - CPython always has the C encoder
        encoder = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=default,
                                   allow_nan=allow_nan)
        return encoder.encode
    make = c_make_encoder(None, default, encode_basestring_ascii, None, ":", ",", False, False,
                          allow_nan)

    def encode(obj: Any) -> str:
        return "".join(make(obj, 0))

    return encode


def _refuse(value: Any) -> Any:
    msg = f"Object of type {type(value).__name__} is not JSON serializable"
    raise TypeError(msg)


encode_json: Callable[[Any], str] = _make_encoder(_refuse)
"""Strict: raises TypeError for values JSON lacks, ValueError for NaN and infinities."""
_encode_json_nan: Callable[[Any], str] = _make_encoder(_refuse, allow_nan=True)
_encode_lenient: Callable[[Any], str] = _make_encoder(str)


def find_non_finite(value: Any, path: str = "message") -> tuple[float, str] | None:
    """The first NaN or infinity in ``value`` and where it is, e.g. ``(nan, "message.tuple[1]")``.

    Example:
        >>> find_non_finite({"tuple": [1, float("inf")]})
        (inf, 'message.tuple[1]')
    """
    if isinstance(value, float):
        return None if math.isfinite(value) else (value, path)
    if isinstance(value, dict):
        items: Any = ((f"{path}.{key}", item) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{path}[{index}]", item) for index, item in enumerate(value))
    else:
        return None
    for where, item in items:
        found = find_non_finite(item, where)
        if found is not None:
            return found
    return None


def _finite(value: Any) -> Any:
    """``value`` with every NaN and infinity replaced by its text (``"nan"``, ``"inf"``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


class JsonDecoder(Decoder):
    r"""Collects text up to an ``end`` line and parses it as one JSON value.

    Tolerant on the way in, as Storm's reader: raw UTF-8 or ``\u`` escapes, CRLF, leading
    blank lines, pretty-printed (multi-line) JSON, NaN and Infinity, lone surrogates.
    """

    def __init__(self) -> None:
        self._pieces: list[bytes] = []
        self._size = 0
        self._tail = b""  # the last 4 bytes held back: a terminator may straddle pieces

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete message held back."""
        return self._size

    def feed(self, data: bytes) -> list[Any]:
        """See :meth:`Decoder.feed`."""
        pieces = self._pieces
        if pieces and _TERMINATOR not in data and b"\r" not in data \
                and _TERMINATOR not in self._tail + data[:4]:
            pieces.append(data)  # a piece of a big message: keep it, join once at the end
            self._size += len(data)
            self._tail = (self._tail + data)[-4:]
            return []
        text = b"".join(pieces) + data if pieces else data
        pieces.clear()
        parts = text.split(_TERMINATOR)
        rest = parts.pop()
        # Storm's plain framing. Anything unusual (CR line ends, an "end" line right after
        # another one, i.e. an empty message) goes the careful way.
        if b"\r" in text or rest.startswith(b"end") or any(p.startswith(b"end") for p in parts):
            return self._feed_slow(text)
        self._keep(rest)
        return _parse_many(parts)

    def _keep(self, rest: bytes) -> None:
        if rest:
            self._pieces.append(rest)
        self._size = len(rest)
        self._tail = rest[-4:]

    def _feed_slow(self, text: bytes) -> list[Any]:
        messages: list[Any] = []
        start = 0
        for match in _END_LINE.finditer(text):
            messages.append(_parse(text[start:match.start()]))
            start = match.end()
        self._keep(text[start:])
        return messages


_OPEN = (b"{", b"[")
_CLOSE = (b"}", b"]")


def _parse_many(parts: list[bytes]) -> list[Any]:
    """Parse messages, several at once as one JSON array when that is safe.

    That is when each is plainly one object or array (the count must match too); else they are
    parsed one by one for a precise error.
    """
    if len(parts) > 1 and all(p[:1] in _OPEN and p[-1:] in _CLOSE for p in parts):
        try:
            values = _json_decode(b"[" + b",".join(parts) + b"]")
        except ValueError:
            values = None
        if isinstance(values, list) and len(values) == len(parts):
            return values
    return [_parse(part) for part in parts]


def _parse(body: bytes) -> Any:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"invalid UTF-8 ({exc.reason} at byte {exc.start})"
        raise DecodeError(reason, body) from None
    try:
        return _json_decode(text)
    except ValueError as exc:
        if not text.strip():
            # storm.py and pystorm die on an empty message; Storm's parser fails too
            reason = "empty message (an 'end' line with nothing before it)"
            raise DecodeError(reason, body) from None
        reason = f"not JSON ({exc})"
        raise DecodeError(reason, body) from None


class JsonSerializer(Serializer):
    r"""Storm's ``JsonSerializer``: single-line, ASCII-only JSON followed by ``\nend\n``.

    All non-ASCII text is escaped on the way out, so children that decode stdin with their
    locale's encoding (storm.py under a latin-1 locale) still read it right. NaN and
    infinities are refused (:class:`NonFiniteNumberError`): they are not JSON, and node's
    ``JSON.parse`` rejects them; ``allow_nan=True`` writes them as ``NaN``/``Infinity`` as
    Python's encoder does (used by our child runtime: the host accepts them, as Storm does).

    Example:
        >>> JsonSerializer().encode({"tuple": ["café"]})
        b'{"tuple":["caf\\u00e9"]}\nend\n'
        >>> JsonSerializer().decoder().feed(b'{"command":"sync"}\r\nend\r\n[1')
        [{'command': 'sync'}]
        >>> JsonSerializer().encode({"tuple": [float("nan")]})
        Traceback (most recent call last):
        ...
        sparkstorm.multilang.serializer.NonFiniteNumberError: nan at message.tuple[0] is not JSON
    """

    name = "json"

    def __init__(self, *, allow_nan: bool = False) -> None:
        self.allow_nan = allow_nan
        self._encode = _encode_json_nan if allow_nan else encode_json

    def encode(self, message: Any) -> bytes:
        """See :meth:`Serializer.encode`.

        Raises:
            NonFiniteNumberError: ``message`` holds NaN or an infinity (unless ``allow_nan``).
        """
        try:
            return self._encode(message).encode("ascii") + b"\nend\n"
        except ValueError:
            found = find_non_finite(message)
            if found is None:
                raise
            raise NonFiniteNumberError(*found) from None

    def encode_lenient(self, message: Any) -> bytes:
        """See :meth:`Serializer.encode_lenient` (NaN and infinities become text too)."""
        try:
            text = _encode_lenient(message)
        except ValueError:
            text = _encode_lenient(_finite(message))
        return text.encode("ascii") + b"\nend\n"

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
            msg = f"not msgpack ({type(exc).__name__}: {exc})"
            raise DecodeError(msg, data) from None
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
        data = msgpack.packb(message, use_bin_type=True)
        return bytes(data)

    def encode_lenient(self, message: Any) -> bytes:
        """See :meth:`Serializer.encode_lenient`."""
        data = msgpack.packb(message, use_bin_type=True, default=str)
        return bytes(data)

    def decoder(self) -> Decoder:
        """See :meth:`Serializer.decoder`."""
        return MsgpackDecoder()


def serializer_for(name: str | None, *, where: str = "topology.multilang.serializer",
                   allow_nan: bool = False) -> Serializer:
    """The serializer called ``name`` (``json``, ``msgpack`` or a Storm class name).

    ``allow_nan`` as in :class:`JsonSerializer`.

    Raises:
        MultilangError: ``MULTILANG_INVALID_CONFIG`` for any other name.
    """
    if name is None or name in JSON_SERIALIZERS:
        return JsonSerializer(allow_nan=allow_nan)
    if name in MSGPACK_SERIALIZERS:
        return MsgpackSerializer()
    msg = (
        f"{where} is {name!r}, which is not a known multilang serializer; use 'json' "
        f"(or {sorted(JSON_SERIALIZERS - {'json'})}) or 'msgpack' "
        f"(or {sorted(MSGPACK_SERIALIZERS - {'msgpack'})})"
    )
    raise MultilangError(msg, code="MULTILANG_INVALID_CONFIG")
