"""Serializers: framing, tolerance on the way in, escaping on the way out; error codes."""

from __future__ import annotations

import math

import pytest

from sparkstorm.multilang import errors
from sparkstorm.multilang.messages import BadMessage, canonical_id, parse_emit
from sparkstorm.multilang.serializer import (
    DecodeError,
    JsonSerializer,
    MsgpackSerializer,
    NonFiniteNumberError,
    serializer_for,
)

STREAM = (b'{"command":"emit","tuple":["caf\xc3\xa9"]}\nend\n'
          b'\n\n{"command":"log",\r\n "msg": "caf\\u00e9"}\r\nend\r\n'
          b'[1,2]\rend\r'
          b'{"command":"sync"}\nend\n')
EXPECTED = [{"command": "emit", "tuple": ["café"]}, {"command": "log", "msg": "café"}, [1, 2],
            {"command": "sync"}]


@pytest.mark.parametrize("piece", [1, 2, 3, 7, 1000])
def test_json_reassembles_messages_from_any_split(piece: int) -> None:
    decoder = JsonSerializer().decoder()
    out = []
    for i in range(0, len(STREAM), piece):
        out.extend(decoder.feed(STREAM[i:i + piece]))
    assert out == EXPECTED
    assert decoder.buffered == 0


def test_json_accepts_non_finite_floats_lone_surrogates_and_big_integers() -> None:
    decoded = JsonSerializer().decoder().feed(
        b'[NaN, Infinity, -Infinity, "\\ud800", 18446744073709551621, 1.0]\nend\n')[0]
    assert math.isnan(decoded[0]) and decoded[1:3] == [math.inf, -math.inf]
    assert decoded[3] == "\ud800" and decoded[4] == 2**64 + 5 and type(decoded[5]) is float


@pytest.mark.parametrize(("data", "reason"), [
    (b"end\n", "empty message"),
    (b"\n\nend\n", "empty message"),
    (b"hello\nend\n", "not JSON"),
    (b'{"a": "\xff"}\nend\n', "invalid UTF-8"),
])
def test_json_rejects_what_is_not_a_message(data: bytes, reason: str) -> None:
    with pytest.raises(DecodeError) as info:
        JsonSerializer().decoder().feed(data)
    assert reason in info.value.reason


def test_json_out_is_one_ascii_line() -> None:
    data = JsonSerializer().encode({"tuple": ["é\n𝄞\u2028", 2**70]})
    assert data == (b'{"tuple":["\\u00e9\\n\\ud834\\udd1e\\u2028",'
                    b'1180591620717411303424]}\nend\n')


def test_json_refuses_bytes_but_lenient_mode_stringifies() -> None:
    with pytest.raises(TypeError):
        JsonSerializer().encode([b"x"])
    assert JsonSerializer().encode_lenient({"k": {1, 2}}).startswith(b'{"k":"{1, 2}"}')


def test_msgpack_concatenated_values_split_anywhere() -> None:
    serializer = MsgpackSerializer()
    data = b"".join(serializer.encode(m) for m in EXPECTED)
    for piece in (1, 5, len(data)):
        decoder = serializer.decoder()
        out = []
        for i in range(0, len(data), piece):
            out.extend(decoder.feed(data[i:i + piece]))
        assert out == EXPECTED


def test_msgpack_rejects_garbage() -> None:
    with pytest.raises(DecodeError):
        MsgpackSerializer().decoder().feed(b"\xc1")  # never used in msgpack


@pytest.mark.parametrize("name", ["json", "org.apache.storm.multilang.JsonSerializer",
                                  "backtype.storm.multilang.JsonSerializer", None])
def test_json_serializer_names(name: str | None) -> None:
    assert serializer_for(name).name == "json"


def test_unknown_serializer_name() -> None:
    assert serializer_for("com.yelp.pyleus.serializer.MessagePackSerializer").name == "msgpack"
    with pytest.raises(errors.MultilangError) as info:
        serializer_for("protobuf")
    assert info.value.code == "MULTILANG_INVALID_CONFIG"


def test_error_codes_are_sorted_and_unique() -> None:
    assert list(errors.CODES) == sorted(set(errors.CODES))
    with pytest.raises(ValueError):
        errors.MultilangError("x", code="NOT_A_CODE")


def test_emit_defaults_and_checks() -> None:
    emit = parse_emit({"command": "emit", "tuple": [1], "task": 0, "anchors": "7"}, spout=False)
    assert (emit.stream, emit.task, emit.anchors, emit.need_task_ids) == ("default", None,
                                                                           ("7",), True)
    assert emit.wants_task_ids
    assert not parse_emit({"tuple": [], "task": 4}, spout=False).wants_task_ids
    assert parse_emit({"tuple": [], "id": 0}, spout=True).msg_id == 0
    for bad in ({"tuple": "x"}, {"tuple": [], "stream": 3}, {"tuple": [], "task": "4"},
                {"tuple": [], "task": True}, {"tuple": [], "anchors": [1]},
                {"tuple": [], "need_task_ids": 1}):
        with pytest.raises(BadMessage):
            parse_emit(bad, spout=False)


def test_canonical_ids_keep_types_apart() -> None:
    keys = [canonical_id(v) for v in (1, "1", 1.0, True, 2**64 + 5, None, [1], {"a": 1})]
    assert len(set(keys)) == len(keys)
    assert canonical_id({"b": 1, "a": 2}) == canonical_id({"a": 2, "b": 1})


def test_json_refuses_non_finite_numbers_unless_allowed() -> None:
    with pytest.raises(NonFiniteNumberError) as info:
        JsonSerializer().encode({"tuple": [1, {"x": math.inf}]})
    assert info.value.path == "message.tuple[1].x" and info.value.value == math.inf
    with pytest.raises(TypeError):  # other unencodable values keep their error
        JsonSerializer().encode([b"x"])
    # the child runtime (python -m sparkstorm.multilang) may send them, as Python clients do
    assert serializer_for("json", allow_nan=True).encode([math.nan, -math.inf]) == \
        b"[NaN,-Infinity]\nend\n"
