"""The link between a hosting task and its driver: one TCP connection, authenticated.

A hosting task (:mod:`sparkstorm.spark_app.share`) connects to the driver's hosting
listener (:mod:`sparkstorm.spark_app.hosting`), in mutual TLS when executor TCP is
(``topology.tcp.tls``: the cluster's material, so a capture holds no token and replays
nothing), sends the topology's token as its first frame (as every TCP caller of a
topology's processes does), then JSON frames, each a
length-prefixed UTF-8 object with its ``type``:

- ``{"type": "report", "share": 0, "run": "3f2a...", "host": "10.77.0.2", "executors":
  {"0": ["/tmp/sparkstorm-81-x/e0.sock", "10.77.0.2", 41234, 812]}, "python":
  "/.../sparkstorm-env/bin/python", "sparkstorm": "/.../site-packages/sparkstorm", "job": 0}``:
  where the share's executors answer and their process ids, first when they all started,
  again whenever one changed (a restarted executor has a new pid, perhaps a new port);
- ``{"type": "beat", "share": 0, "run": "3f2a...", "restarts": 0, "job": 0}``: a heartbeat,
  every ``topology.executor.hosting.heartbeat.secs``.

The driver answers every frame with ``{"type": "answer", "stop": false, "plan": {...}}``
(``plan``: the executor counts it runs, which a share follows after a ``rebalance -e``);
``"stop": true``
asks the share to stop its executor processes and end its task (the application is
draining, or a newer run of the same share reported). A share that hears nothing for
``topology.executor.hosting.timeout.secs``, or whose connection closes, stops its executors:
no second copy of a task runs after a network partition heals. ``run`` tells two runs of
one share apart (Spark reruns a hosting task whose executor was lost).

Example:
    >>> beat = ShareBeat(share=1, run="r1", restarts=2)
    >>> decode(encode(beat)) == beat
    True
    >>> encode(DriverAnswer(stop=True))
    b'{"type": "answer", "stop": true}'
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from typing import Any

from sparkstorm.engine import recv_frame, send_frame
from sparkstorm.errors import EngineError

ExecutorAddress = tuple[str, str, int, int]
"""Where one executor answers and its pid: (Unix socket path, TCP host, TCP port, pid)."""


@dataclass(frozen=True)
class ShareReport:
    """A share's executors: where each answers and its pid (see the module docs)."""

    share: int
    run: str
    host: str
    executors: dict[int, ExecutorAddress]
    python: str = ""
    sparkstorm: str = ""
    job: int = 0
    plan_tag: str = ""
    """The plan the executors run (their executor counts): the driver takes endpoints of
    the plan it runs only (``rebalance -e``)."""
    type: str = field(default="report", init=False)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object sent."""
        return {"type": self.type, "share": self.share, "run": self.run, "host": self.host,
                "executors": {str(g): list(a) for g, a in self.executors.items()},
                "python": self.python, "sparkstorm": self.sparkstorm, "job": self.job,
                "plan_tag": self.plan_tag}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> ShareReport:
        """The report a JSON object holds."""
        executors = {int(gid): (str(path), str(host), int(port), int(pid))
                     for gid, (path, host, port, pid) in data["executors"].items()}
        return cls(int(data["share"]), str(data["run"]), str(data["host"]), executors,
                   str(data.get("python", "")), str(data.get("sparkstorm", "")),
                   int(data.get("job", 0)), str(data.get("plan_tag", "")))


@dataclass(frozen=True)
class ShareBeat:
    """A share's heartbeat: it runs, and how many executor restarts it has seen."""

    share: int
    run: str
    restarts: int = 0
    job: int = 0
    type: str = field(default="beat", init=False)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object sent."""
        return {"type": self.type, "share": self.share, "run": self.run,
                "restarts": self.restarts, "job": self.job}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> ShareBeat:
        """The beat a JSON object holds."""
        return cls(int(data["share"]), str(data["run"]), int(data.get("restarts", 0)),
                   int(data.get("job", 0)))


@dataclass(frozen=True)
class DriverAnswer:
    """The driver's answer to every frame of a share: go on, or stop; and its plan.

    ``plan`` is what the driver runs (``{"executor_counts": {...}, "plan_tag": ...}``): a
    share whose executors run other counts regroups them as the driver did
    (``rebalance -e``, ``engine.plan.regroup``) and reports them under the new tag.
    """

    stop: bool = False
    plan: dict[str, Any] | None = None
    type: str = field(default="answer", init=False)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object sent."""
        wire: dict[str, Any] = {"type": self.type, "stop": self.stop}
        if self.plan is not None:
            wire["plan"] = self.plan
        return wire

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> DriverAnswer:
        """The answer a JSON object holds."""
        plan = data.get("plan")
        return cls(bool(data["stop"]), plan if isinstance(plan, dict) else None)


Message = ShareReport | ShareBeat | DriverAnswer
_TYPES: dict[str, type[ShareReport] | type[ShareBeat] | type[DriverAnswer]] = {
    "report": ShareReport, "beat": ShareBeat, "answer": DriverAnswer}


def encode(message: Message) -> bytes:
    """A message's frame body."""
    return json.dumps(message.to_wire()).encode()


def decode(body: bytes) -> Message:
    """The message of a frame body.

    Raises:
        EngineError: ``HOSTING_LINK_BAD_MESSAGE`` when it is not one of the link's messages.
    """
    try:
        data = json.loads(body)
        return _TYPES[data["type"]].from_wire(data)
    except (ValueError, KeyError, TypeError) as exc:
        msg = (f"the hosting link got a frame that is none of its messages ({exc!r}): "
               f"{body[:200]!r}; both ends must run the same sparkstorm version")
        raise EngineError(msg, code="HOSTING_LINK_BAD_MESSAGE") from exc


def send(sock: socket.socket, message: Message) -> None:
    """Write one message."""
    send_frame(sock, encode(message))


def receive(sock: socket.socket) -> Message:
    """Read one message.

    Raises:
        ConnectionError: the peer closed the connection.
        TimeoutError: nothing came within the socket's timeout.
        EngineError: ``HOSTING_LINK_BAD_MESSAGE`` (see :func:`decode`).
    """
    return decode(recv_frame(sock))


__all__ = ["DriverAnswer", "ExecutorAddress", "Message", "ShareBeat", "ShareReport",
           "decode", "encode", "receive", "send"]
