"""The child side: run one of our Python ``Spout``/``Bolt`` classes as a multilang subprocess.

``python -m sparkstorm.multilang pkg.module:Class`` speaks Storm's protocol on stdin/stdout,
so the same component runs in-process in sparkstorm, as a ``ShellBolt`` here, and under
Apache Storm (``ShellBolt(["python3", "-m", "sparkstorm.multilang", "pkg.mod:Class"])``).

The component is set up and its tuples run by the engine's own code
(``sparkstorm.topology.task``: ``start_task`` and ``BoltLoop``), so ``auto_anchor``,
``auto_ack``, ``auto_fail`` and ``process_tick`` for tick tuples (comp ``__system``, stream
``__tick``) behave as in an executor; only the collector differs (:class:`ChildCollector`).
Emits with ``need_task_ids=True`` block until the host's task-id list arrives. stdout is the
protocol: ``print()`` and C-level writes to fd 1 are sent to stderr instead, and Python
logging goes to the host as ``log`` commands.

Exit codes: 0 after a clean close, 2 when the host went away (stdin EOF), 1 when the
component raised (after reporting the error and failing the tuple, as pystorm does).
"""

from __future__ import annotations

import collections
import logging
import os
import sys
from typing import Any, BinaryIO

from sparkstorm.multilang.messages import HEARTBEAT_STREAM, BadMessage, command_of
from sparkstorm.multilang.serializer import Serializer
from sparkstorm.topology.component import FAIL_EXPLICIT, Component
from sparkstorm.topology.task import BoltLoop, BoltRaised, start_task
from sparkstorm.topology.tuple import Tuple, is_tick

EXIT_CRASHED = 1
EXIT_PARENT_GONE = 2
READ_SIZE = 1 << 20
OUTBOX_BYTES = 1 << 16

_LEVELS = ((logging.ERROR, 4), (logging.WARNING, 3), (logging.INFO, 2), (logging.DEBUG, 1))


class ParentGone(Exception):
    """stdin reached EOF: the host is gone."""


class Channel:
    """Messages over the child's stdin/stdout, with pystorm's two queues.

    Commands read while waiting for task ids (and task ids read while waiting for a command) are
    kept.
    """

    def __init__(self, infile: BinaryIO, outfile: BinaryIO, serializer: Serializer) -> None:
        self.infile = infile
        self.outfile = outfile
        self.serializer = serializer
        self.decoder = serializer.decoder()
        self.messages: collections.deque[Any] = collections.deque()
        self.commands: collections.deque[Any] = collections.deque()
        self.task_ids: collections.deque[list[int]] = collections.deque()
        self.outbox: list[bytes] = []
        self.outbox_bytes = 0

    def send(self, message: Any) -> None:
        """Queue one whole message; written at the latest before we wait for input."""
        data = self.serializer.encode(message)
        self.outbox.append(data)
        self.outbox_bytes += len(data)
        if self.outbox_bytes >= OUTBOX_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write every queued message in one go."""
        if self.outbox:
            self.outfile.write(b"".join(self.outbox))
            self.outfile.flush()
            self.outbox.clear()
            self.outbox_bytes = 0

    def read(self) -> Any:
        """The next message of either kind.

        Flushes our output before waiting for input, so replies go out in batches yet never wait
        while we do.

        Raises:
            ParentGone: stdin closed.
        """
        read = getattr(self.infile, "read1", self.infile.read)
        while not self.messages:
            self.flush()
            chunk = read(READ_SIZE)
            if not chunk:
                raise ParentGone
            self.messages.extend(self.decoder.feed(chunk))
        return self.messages.popleft()

    def read_command(self) -> Any:
        """The next command or input tuple (task-id lists read meanwhile are kept)."""
        if self.commands:
            return self.commands.popleft()
        while isinstance(message := self.read(), list):
            self.task_ids.append(message)
        return message

    def read_task_ids(self) -> list[int]:
        """The task-id list answering our last emit (commands read meanwhile are kept)."""
        if self.task_ids:
            return self.task_ids.popleft()
        while not isinstance(message := self.read(), list):
            self.commands.append(message)
        return message


class ChildCollector:
    """The collector a component gets inside the child: its calls become commands.

    Storm's commands (``emit``, ``ack``, ``fail``, ``error``) plus two extensions our
    ``ShellBolt`` honours and Storm's ignores (it skips unknown commands and keys): a
    ``fail`` may carry a ``"reason"`` and a ``"cause"`` (``{"command": "fail", "id": "7",
    "reason": "ValueError: bad", "cause": "error"}``), and ``{"command": "reset_timeout",
    "id": "7"}`` restarts the tuple tree's message timeout.
    """

    def __init__(self, channel: Channel, auto_anchor: bool) -> None:
        self.channel = channel
        self.auto_anchor = auto_anchor
        self.current: Tuple | None = None

    def emit(self, values: Any, stream: str | None, anchors: Any, direct_task: int | None,
             need_task_ids: bool, tup_id: Any) -> list[int] | None:
        """Send an ``emit``; with ``need_task_ids`` wait for the host's task-id list."""
        message: dict[str, Any] = {"command": "emit", "tuple": list(values)}
        if stream is not None:
            message["stream"] = stream
        if tup_id is not None:
            message["id"] = tup_id
        ids = self._anchor_ids(anchors)
        if ids:
            message["anchors"] = ids
        if direct_task is not None:
            message["task"] = direct_task
        elif not need_task_ids:
            message["need_task_ids"] = False
        self.channel.send(message)
        if not need_task_ids:
            return None
        return [direct_task] if direct_task is not None else self.channel.read_task_ids()

    def _anchor_ids(self, anchors: Any) -> list[str]:
        if anchors is None:
            current = self.current
            return [current.id] if self.auto_anchor and current is not None else []
        items = [anchors] if isinstance(anchors, (Tuple, str)) else list(anchors)
        return [a.id if isinstance(a, Tuple) else str(a) for a in items]

    def ack(self, tup: Tuple) -> None:
        """``ack`` once per tuple."""
        if not tup.done:
            self.auto_ack(tup)

    def auto_ack(self, tup: Tuple) -> None:
        """The bolt loop's ack: the same ``ack`` command."""
        tup.done = True
        self.channel.send({"command": "ack", "id": tup.id})

    def fail(self, tup: Tuple, reason: str | None = None, cause: str = FAIL_EXPLICIT) -> None:
        """``fail`` once per tuple, with the ``reason`` if given and the ``cause`` unless explicit.

        The cause is ``error`` when ``process`` raised; the host shows both with the failure counts.
        """
        if not tup.done:
            tup.done = True
            message: dict[str, Any] = {"command": "fail", "id": tup.id}
            if reason is not None:
                message["reason"] = str(reason)
            if cause != FAIL_EXPLICIT:
                message["cause"] = cause
            self.channel.send(message)

    def reset_timeout(self, tup: Tuple) -> None:
        """Send ``reset_timeout`` for an open tuple."""
        if not tup.done:
            self.channel.send({"command": "reset_timeout", "id": tup.id})

    def report_error(self, text: str) -> None:
        """Send Storm's ``error`` command.

        The host shows it as the component's last error; the child keeps running.
        """
        self.channel.send({"command": "error", "msg": text})


class ProtocolLogHandler(logging.Handler):
    """Sends log records to the host as ``log`` commands with Storm's levels."""

    def __init__(self, channel: Channel) -> None:
        super().__init__()
        self.channel = channel

    def emit(self, record: logging.LogRecord) -> None:
        """Send one record (level 4 error ... 1 debug)."""
        level = next((lvl for threshold, lvl in _LEVELS if record.levelno >= threshold), 0)
        try:
            self.channel.send({"command": "log", "msg": self.format(record), "level": level})
        except Exception:  # noqa: BLE001 - logging must never raise into the component
            self.handleError(record)


class ComponentRunner:
    """Handshake, then the spout or bolt loop for one component instance."""

    def __init__(self, channel: Channel, cls: type[Component]) -> None:
        self.channel = channel
        self.cls = cls
        self.instance: Any = None
        self.fields: dict[tuple[str, str], tuple[str, ...]] = {}
        self.handler = ProtocolLogHandler(channel)
        self.handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def handshake(self) -> None:
        """Read conf/context/pidDir, write the PID file, answer ``{"pid": N}``, initialize."""
        setup = self.channel.read()
        conf, context, pid_dir = setup["conf"], setup["context"], setup["pidDir"]
        pid = os.getpid()
        with open(os.path.join(pid_dir, str(pid)), "w", encoding="utf-8"):
            pass
        self.channel.send({"pid": pid})
        logging.getLogger().addHandler(self.handler)
        if logging.getLogger().level > logging.INFO:
            logging.getLogger().setLevel(logging.INFO)
        for source, streams in (context.get("source->stream->fields") or {}).items():
            for stream, names in streams.items():
                self.fields[(source, stream)] = tuple(names)
        self.instance = self._instantiate(conf, context)

    def _instantiate(self, conf: dict[str, Any], context: dict[str, Any]) -> Any:
        name = context.get("componentid") or context.get("task->component", {}).get(
            str(context.get("taskid")), "")
        collector = ChildCollector(self.channel, bool(getattr(self.cls, "auto_anchor", True)))
        return start_task(self.cls, collector, name=name, conf=conf, context=context)

    def run_spout(self) -> None:
        """Answer commands until stdin closes; ``sync`` after each."""
        instance, channel = self.instance, self.channel
        calls = {"next": lambda m: instance.next_tuple(), "ack": lambda m: instance.ack(m["id"]),
                 "fail": lambda m: instance.fail(m["id"]),
                 "activate": lambda m: instance.activate(),
                 "deactivate": lambda m: instance.deactivate()}
        while True:
            message = channel.read_command()
            command = command_of(message)
            call = calls.get(command)
            if call is None:
                logging.getLogger(__name__).error("unknown spout command %r", command)
            else:
                call(message)
            channel.send({"command": "sync"})

    def run_bolt(self) -> None:
        """Process input tuples until stdin closes; heartbeats get ``sync``.

        Raises:
            BoltRaised: the component raised (the tuple was failed if ``auto_fail``).
        """
        channel = self.channel
        loop = BoltLoop(self.instance, self.instance._collector)
        while True:
            message = channel.read_command()
            if not isinstance(message, dict) or "tuple" not in message:
                msg = f"expected an input tuple, got {message!r}"
                raise BadMessage(msg)
            if message.get("stream") == HEARTBEAT_STREAM and message.get("task") == -1:
                channel.send({"command": "sync"})
                continue
            comp, stream = message.get("comp") or "", message.get("stream") or "default"
            tup = Tuple(message["id"], comp, stream, message.get("task", -1), message["tuple"],
                        self.fields.get((comp, stream), ()))
            loop.run((tup,), is_tick(comp, stream))


def run(cls: type[Component], infile: BinaryIO, outfile: BinaryIO, serializer: Serializer) -> int:
    """Run ``cls`` over ``infile``/``outfile``; returns the exit code (see module doc)."""
    channel = Channel(infile, outfile, serializer)
    runner = ComponentRunner(channel, cls)
    try:
        runner.handshake()
        if getattr(cls, "kind", "") == "spout":
            runner.run_spout()
        else:
            runner.run_bolt()
    except ParentGone:
        return EXIT_PARENT_GONE
    except BrokenPipeError:
        return EXIT_PARENT_GONE
    except Exception as raised:  # report, then exit: the host restarts us
        exc = raised.cause if isinstance(raised, BoltRaised) else raised
        logging.getLogger(__name__).error("component %s raised", cls.__name__, exc_info=exc)
        try:
            channel.send({"command": "error", "msg": f"{type(exc).__name__}: {exc}"})
            channel.flush()
        except OSError:
            return EXIT_PARENT_GONE
        return EXIT_CRASHED
    finally:
        logging.getLogger().removeHandler(runner.handler)
    return 0


def protect_stdout() -> BinaryIO:
    """Keep fd 1 for the protocol only.

    Return a private file on it and point fd 1 (and ``sys.stdout``) at stderr, so stray ``print()``
    output cannot corrupt the protocol.
    """
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol_fd, "wb", buffering=0)
