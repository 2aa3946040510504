"""The typed executor protocol: the same bytes as the hand-built dicts it replaced."""

from __future__ import annotations

from typing import Any

import pytest

from sparkstorm.engine.wire.frames import pack
from sparkstorm.engine.wire.protocol import (
    CloseRequest,
    LogControlRequest,
    PingRequest,
    ReplanRequest,
    Request,
    RestoreRequest,
    SkipRequest,
    VerdictsRequest,
    WhereRequest,
    WindowFlags,
    WindowRequest,
    decode_request,
)

# each request and the dict that was sent before the protocol was typed, key order included
CASES: list[tuple[Request, dict[str, Any]]] = [
    (WindowRequest(7, rows=[b"a"]), {"cmd": "window", "w": 7, "rows": [b"a"]}),
    (WindowRequest(8, WindowFlags(checkpoint=False, committed=6, after=7), control=[[1], []]),
     {"cmd": "window", "w": 8, "checkpoint": False, "committed": 6, "after": 7,
      "control": [[1], []]}),
    (WindowRequest(9, WindowFlags(checkpoint=True), rows=[]),
     {"cmd": "window", "w": 9, "checkpoint": True, "rows": []}),
    (SkipRequest(4), {"cmd": "skip", "w": 4}),
    (RestoreRequest(None, 6), {"cmd": "restore", "window": None, "resume": 6}),
    (RestoreRequest(10, 12, ["part-1"]),
     {"cmd": "restore", "window": 10, "resume": 12, "parts": ["part-1"]}),
    (ReplanRequest({"components": []}, 3), {"cmd": "replan", "spec": {"components": []},
                                            "gid": 3}),
    (VerdictsRequest([[5], [], {}, [], True, False, None, None]),
     {"cmd": "verdicts", "control": [[5], [], {}, [], True, False, None, None]}),
    (LogControlRequest({"x": "DEBUG"}, 25.0),
     {"cmd": "log_control", "levels": {"x": "DEBUG"}, "sample_pct": 25.0}),
    (PingRequest(), {"cmd": "ping"}),
    (CloseRequest(), {"cmd": "close"}),
    (WhereRequest(2), {"cmd": "where", "gid": 2}),
]


@pytest.mark.parametrize(("request_", "legacy"), CASES)
def test_each_request_keeps_its_wire_bytes_and_decodes_back(request_: Request,
                                                            legacy: dict[str, Any]) -> None:
    assert pack(request_.to_wire()) == pack(legacy)
    assert decode_request(legacy) == request_


def test_a_replaced_executor_gets_the_window_without_after() -> None:
    flags = WindowFlags(checkpoint=True, committed=3, after=4)
    assert flags.without_after() == WindowFlags(checkpoint=True, committed=3)


@pytest.mark.parametrize("data", [{"cmd": "fly"}, {"cmd": "window"}, ["window"], None])
def test_what_is_not_a_request_is_refused_with_what_is_expected(data: Any) -> None:
    with pytest.raises(ValueError, match="unknown command|malformed 'window'"):
        decode_request(data)
