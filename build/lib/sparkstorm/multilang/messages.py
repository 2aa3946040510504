"""The messages of Storm's multilang protocol: building the host's, checking the child's.

Field names are exactly as on the wire (``need_task_ids``, ``pidDir``). Wire examples::

    handshake  {"conf":{...},"context":{"taskid":3,...},"pidDir":"/tmp/sparkstorm-pids-x"}
    reply      {"pid":4242}
    input      {"id":"-6955786537413359385","comp":"words","stream":"default","task":2,
                "tuple":["a"]}
    heartbeat  {"id":"8817393738374843811","comp":null,"stream":"__heartbeat","task":-1,
                "tuple":[]}
    tick       {"id":"1203947729920394882","comp":"__system","stream":"__tick","task":-1,
                "tuple":[5]}
    spout      {"command":"next","id":""}   {"command":"ack","id":18446744073709551621}
    child      {"command":"emit","tuple":[...],"stream":"s","anchors":["..."],"task":4,
                "need_task_ids":false}
               {"command":"ack","id":"..."}  {"command":"log","msg":"...","level":3}
               {"command":"sync"}

(each message is one line on the wire; wrapped here for reading)

Pure functions, no I/O: used by the host (``shell.py``) and the child runtime
(``runtime.py``) alike.
"""

from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass
from typing import Any

HEARTBEAT_STREAM = "__heartbeat"
TICK_STREAM = "__tick"
SYSTEM_COMPONENT = "__system"
DEFAULT_STREAM = "default"

#: multilang ``level`` -> Python logging level (0 trace, 1 debug, 2 info, 3 warn, 4 error).
LOG_LEVELS = {0: 5, 1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING, 4: logging.ERROR}

_rng = random.Random(random.SystemRandom().getrandbits(64))


class BadMessage(ValueError):
    """A decoded message does not have the shape the protocol requires."""


def new_tuple_id() -> str:
    """A fresh bolt input id: the decimal text of a random signed 64-bit number, as Storm.

    Strings, never numbers, so JavaScript children do not lose precision.
    """
    return str(_rng.getrandbits(64) - 2**63)


def handshake_message(conf: dict[str, Any], context: dict[str, Any],
                      pid_dir: str) -> dict[str, Any]:
    """The first message to every child."""
    return {"conf": conf, "context": context, "pidDir": pid_dir}


def input_message(tup_id: str, component: str | None, stream: str, task: int,
                  values: list[Any]) -> dict[str, Any]:
    """An input tuple for a bolt (ticks too: comp ``__system``, stream ``__tick``, task -1)."""
    return {"id": tup_id, "comp": component, "stream": stream, "task": task, "tuple": values}


def heartbeat_message() -> dict[str, Any]:
    """A heartbeat tuple; the child answers ``sync``. Never tracked, never acked."""
    return input_message(new_tuple_id(), None, HEARTBEAT_STREAM, -1, [])


def spout_command(command: str, msg_id: Any = "") -> dict[str, Any]:
    """``next``/``activate``/``deactivate`` (id ``""``, as Storm) or ``ack``/``fail``."""
    return {"command": command, "id": msg_id}


def canonical_id(value: Any) -> str:
    """A hashable key for a spout message id of any JSON type.

    ``1``, ``1.0``, ``"1"`` and ``true`` stay distinct; objects and arrays work too.

    Example:
        >>> [canonical_id(v) for v in (1, "1", 1.0, True, {"b": 1, "a": 2})]
        ['1', '"1"', '1.0', 'true', '{"a":2,"b":1}']
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)


@dataclass(frozen=True, slots=True)
class Emit:
    """A checked ``emit`` command (bolt or spout).

    Attributes:
        values: the tuple's values.
        stream: the stream id (``default`` when absent or null).
        anchors: ids of the bolt inputs it is anchored to (bolts only).
        task: the target task of a direct emit, else None (absent, null and 0).
        need_task_ids: whether the child waits for the task-id list (Storm's default: yes).
        msg_id: the spout message id (None: unreliable).
    """

    values: list[Any]
    stream: str
    anchors: tuple[str, ...]
    task: int | None
    need_task_ids: bool
    msg_id: Any

    @property
    def wants_task_ids(self) -> bool:
        """A task-id list must be written back: not direct and ``need_task_ids`` not false."""
        return self.task is None and self.need_task_ids


def command_of(message: Any) -> str:
    """The ``command`` of a message from a child.

    Raises:
        BadMessage: the message is not an object with a string ``command``.
    """
    if not isinstance(message, dict):
        msg = f"expected an object with a 'command', got {type(message).__name__}"
        raise BadMessage(msg)
    command = message.get("command")
    if not isinstance(command, str):
        msg = f"expected a string 'command', got {command!r}"
        raise BadMessage(msg)
    return command


def parse_emit(message: dict[str, Any], *, spout: bool) -> Emit:
    """Check an ``emit`` command and return its fields with the protocol's defaults.

    Raises:
        BadMessage: a field has the wrong type (Storm dies on these with a cast error).
    """
    values = message.get("tuple")
    if not isinstance(values, list):
        msg = f"'tuple' must be an array, got {values!r}"
        raise BadMessage(msg)
    stream = message.get("stream")
    if stream is None:
        stream = DEFAULT_STREAM
    elif not isinstance(stream, str):
        msg = f"'stream' must be a string, got {stream!r}"
        raise BadMessage(msg)
    task = message.get("task")
    if task is not None and (type(task) is not int):
        msg = f"'task' must be an integer task id, got {task!r}"
        raise BadMessage(msg)
    need = message.get("need_task_ids", True)
    if need is None:
        need = True
    elif not isinstance(need, bool):
        msg = f"'need_task_ids' must be true or false, got {need!r}"
        raise BadMessage(msg)
    anchors = () if spout else _anchors(message.get("anchors"))
    return Emit(values, stream, anchors, task or None, need,
                message.get("id") if spout else None)


def _anchors(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):  # Storm accepts a single id too
        return (raw,)
    if not isinstance(raw, list) or not all(isinstance(a, str) for a in raw):
        msg = f"'anchors' must be an array of tuple id strings, got {raw!r}"
        raise BadMessage(msg)
    return tuple(raw)


def id_of(message: dict[str, Any]) -> str:
    """The input id of a bolt's ``ack``/``fail``.

    Raises:
        BadMessage: the id is missing or not a string.
    """
    tup_id = message.get("id")
    if not isinstance(tup_id, str):
        msg = f"'id' must be the string id of an input tuple, got {tup_id!r}"
        raise BadMessage(msg)
    return tup_id


def log_level(message: dict[str, Any]) -> int:
    """The Python logging level of a ``log`` command (absent or unknown ``level``: info)."""
    level = message.get("level")
    return LOG_LEVELS.get(level, logging.INFO) if type(level) is int else logging.INFO


def text_of(message: dict[str, Any]) -> str:
    """The ``msg`` of a ``log`` or ``error`` command, coerced to text."""
    text = message.get("msg")
    return text if isinstance(text, str) else json.dumps(text, default=repr)
