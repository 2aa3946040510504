"""``ShellSpout`` and ``ShellBolt``: spouts and bolts written in any language.

The executor creates one instance per task; ``initialize`` starts the task's subprocess
and does the multilang handshake. Settings come from the component spec's ``extra``
(written by ``.spec()``), falling back to class attributes and the conf:

=================  ==================================================================
``command``        argv list, e.g. ``["node", "split.js"]`` (required)
``cwd``            working directory; relative to ``topology.multilang.resources.dir``
``env``            environment overrides (``PATH`` is appended to, others replace)
``serializer``     ``json`` or ``msgpack`` (default ``topology.multilang.serializer``)
``transcript``     path prefix for a byte-exact transcript of stdin/stdout
                   (default ``topology.multilang.transcript.dir``/<component>-<task>)
``metrics``        shell metrics ``{name: "count" | "assignable"}``
``activate``       send ``activate``/``deactivate`` to spouts (default true)
=================  ==================================================================

Conf keys: ``topology.multilang.resources.dir`` (where commands run; unset: the worker's
current directory), ``topology.subprocess.timeout.secs`` (else
``supervisor.worker.timeout.secs``, 30), ``topology.shellbolt.max.pending`` (100).

Any protocol fault kills the child, fails the bolt's in-flight inputs, and raises a
:class:`MultilangError`; the executor reports it as the component's last error and
restarts the task with a fresh subprocess.

Example:
    >>> from sparkstorm import Topology
    >>> class Words(Topology):
    ...     sentences = ShellSpout.spec(command=["node", "sentences.js"], outputs=["sentence"])
    ...     split = ShellBolt.spec(command=["python3", "split.py"], outputs=["word"],
    ...                            inputs=[sentences], par=2)
    >>> Words.split.extra["command"]
    ['python3', 'split.py']
"""

from __future__ import annotations

import logging
import os
import shlex
import time
from dataclasses import replace
from typing import Any, ClassVar

from sparkstorm.errors import TopologyError
from sparkstorm.multilang.errors import MultilangError, excerpt
from sparkstorm.multilang.messages import (
    BadMessage,
    Emit,
    canonical_id,
    command_of,
    heartbeat_message,
    id_of,
    input_message,
    log_level,
    new_tuple_id,
    parse_emit,
    spout_command,
    text_of,
)
from sparkstorm.multilang.process import ShellProcess
from sparkstorm.multilang.serializer import Serializer, encode_json, serializer_for
from sparkstorm.topology.component import Bolt, Spout
from sparkstorm.topology.spec import ComponentSpec, input_spec_placeholder
from sparkstorm.topology.tuple import Tuple

logger = logging.getLogger(__name__)

RESOURCES_DIR_KEY = "topology.multilang.resources.dir"
TRANSCRIPT_DIR_KEY = "topology.multilang.transcript.dir"
HEARTBEAT_INTERVAL = 1.0  # seconds between heartbeats written among a bolt's inputs, as Storm
OUTBOX_BYTES = 1 << 20


def shell_extra(command: Any, *, cwd: str | None = None, env: dict[str, str] | None = None,
                serializer: str | None = None, transcript: str | None = None,
                metrics: dict[str, str] | None = None,
                activate: bool | None = None) -> dict[str, Any]:
    """The ``extra`` dict of a shell component spec (JSON-able; unset settings omitted)."""
    extra: dict[str, Any] = {"command": _argv(command) if command is not None else None}
    for key, value in (("cwd", cwd), ("env", env), ("serializer", serializer),
                       ("transcript", transcript), ("metrics", metrics),
                       ("activate", activate)):
        if value is not None:
            extra[key] = str(value) if key in ("cwd", "transcript") else value
    return extra


def _argv(command: Any) -> list[str]:
    if isinstance(command, str):
        return shlex.split(command)
    return [os.fspath(part) if not isinstance(part, str) else part for part in command]


class ShellComponent:
    """What shell spouts and bolts share: settings, start-up, log/error/metrics, death."""

    command: ClassVar[list[str] | None] = None
    kind: ClassVar[str]
    component_spec: ComponentSpec
    component_name: str
    storm_conf: dict[str, Any]
    context: dict[str, Any]
    logger: logging.Logger

    def _start(self, conf: dict[str, Any], context: dict[str, Any]) -> list[Any]:
        """Spawn the child and shake hands; returns the commands sent before the PID."""
        self.shell_metrics: dict[str, Any] = {}
        self._streams = set(context.get("streams") or [])
        self._where = f"{self.kind} {self.component_name!r} task {context.get('taskid')}"
        self._dead = False
        extra = dict(getattr(getattr(self, "component_spec", None), "extra", None) or {})
        self._extra = extra
        self._serializer: Serializer = serializer_for(
            extra.get("serializer") or conf.get("topology.multilang.serializer"),
            where=f"{self.kind} {self.component_name!r}: serializer")
        self._encode = self._serializer.encode
        self._shell_log = logging.getLogger(f"sparkstorm.multilang.shell.{self.component_name}")
        self.subprocess = ShellProcess(
            self._command(extra), where=self._where, serializer=self._serializer,
            cwd=_child_cwd(extra.get("cwd"), conf.get(RESOURCES_DIR_KEY)),
            env=extra.get("env"), timeout=subprocess_timeout(conf),
            transcript=self._transcript_prefix(extra, conf, context),
            log_name=f"sparkstorm.multilang.stderr.{self.component_name}",
        )
        self.subprocess.start()
        return self.subprocess.handshake(conf, context)

    def _command(self, extra: dict[str, Any]) -> list[str]:
        command = extra.get("command") or type(self).command
        if not command:
            msg = (
                f"{self._where}: no command to run; declare it with "
                f"{type(self).__name__}.spec(command=['node', 'my_component.js'], ...)"
            )
            raise MultilangError(msg, code="MULTILANG_INVALID_CONFIG")
        return _argv(command)

    def _transcript_prefix(self, extra: dict[str, Any], conf: dict[str, Any],
                           context: dict[str, Any]) -> str | None:
        if extra.get("transcript"):
            return f"{extra['transcript']}-{context.get('taskid')}"
        directory = conf.get(TRANSCRIPT_DIR_KEY)
        if directory:
            return os.path.join(str(directory), f"{self.component_name}-{context.get('taskid')}")
        return None

    def _initialize_shell(self, conf: dict[str, Any], context: dict[str, Any]) -> list[Any]:
        """Start; a failure is kept and raised from the first call the executor makes, so it
        is reported as this task's error and the executor restarts the task."""
        self._startup_error: BaseException | None = None
        self._where = f"{self.kind} {self.component_name!r} task {context.get('taskid')}"
        try:
            return self._start(conf, context)
        except MultilangError as exc:
            self._startup_error = exc
            self._kill()
            logger.error("%s", exc)
            return []

    def _check_started(self) -> None:
        if self._startup_error is not None:
            raise self._startup_error
        if self._dead:
            msg = f"{self._where}: the subprocess was stopped after an earlier error"
            raise MultilangError(msg, code="MULTILANG_SUBPROCESS_EXITED")

    def _kill(self) -> None:
        process = getattr(self, "subprocess", None)
        if process is not None:
            process.kill()

    # -- commands every component may send ------------------------------------------------
    def _common(self, command: str, message: dict[str, Any]) -> bool:
        """Handle log, error and metrics; False for any other command."""
        if command == "log":
            pid = self.subprocess.reported_pid
            self._shell_log.log(log_level(message), "ShellLog pid:%s, name:%s %s", pid,
                                self.component_name, text_of(message))
        elif command == "error":
            self._report_error(text_of(message))
        elif command == "metrics":
            self._metric(message)
        else:
            return False
        return True

    def _report_error(self, text: str) -> None:
        """The child's ``error`` command: logged, and kept as the component's last error when
        the engine offers ``report_error``; the component keeps running, as in Storm."""
        self._shell_log.error("%s reported an error: %s", self._where, text)
        report = getattr(getattr(self, "_collector", None), "report_error", None)
        if callable(report):
            report(text)

    def _metric(self, message: dict[str, Any]) -> None:
        name, params = message.get("name"), message.get("params")
        name = name if isinstance(name, str) else ""
        kind = (self._extra.get("metrics") or {}).get(name)
        if kind == "count" and (params is None or type(params) in (int, float)):
            self.shell_metrics[name] = self.shell_metrics.get(name, 0) + (
                1 if params is None else params)
        elif kind == "assignable":
            self.shell_metrics[name] = params
        else:
            self._report_error(
                f"metrics command for {name!r} with params {params!r} does not match a "
                f"registered shell metric ({self._extra.get('metrics') or {}}); declare it "
                "with .spec(metrics={name: 'count' | 'assignable'})")

    def _malformed(self, message: Any, reason: str) -> MultilangError:
        msg = (
            f"{self._where}: malformed command {excerpt(repr(message))}: {reason}; see the "
            f"multilang protocol{self.subprocess.diagnosis()}"
        )
        return MultilangError(msg, code="MULTILANG_MALFORMED_MESSAGE")

    def _check_stream(self, emit: Emit) -> None:
        if emit.stream not in self._streams:
            msg = (
                f"{self._where}: emit on stream {emit.stream!r}, which the component does not "
                f"declare (declared: {sorted(self._streams)}); add it to outputs=[...] of "
                f"its .spec() or fix the stream name in the component"
            )
            raise MultilangError(msg, code="MULTILANG_UNDECLARED_STREAM")

    def _reply_task_ids(self, emit: Emit, tasks: list[int] | None) -> None:
        if emit.wants_task_ids:
            self.subprocess.send(self._encode(tasks or []))

    def _encode_value(self, message: Any) -> bytes:
        try:
            return self._encode(message)
        except (TypeError, ValueError, OverflowError) as exc:
            msg = (
                f"{self._where}: cannot send {excerpt(repr(message))} with the "
                f"{self._serializer.name} serializer ({exc}); emit only values the "
                "serializer can carry (JSON: no bytes or sets; msgpack: integers < 2**64)"
            )
            raise MultilangError(msg, code="MULTILANG_UNENCODABLE_VALUE") from exc


def subprocess_timeout(conf: dict[str, Any]) -> float:
    """``topology.subprocess.timeout.secs``, else ``supervisor.worker.timeout.secs``, else 30."""
    value = conf.get("topology.subprocess.timeout.secs") or conf.get(
        "supervisor.worker.timeout.secs") or 30
    return float(value)


def _child_cwd(cwd: str | None, resources: Any) -> str | None:
    if cwd and resources and not os.path.isabs(cwd):
        return os.path.join(str(resources), cwd)
    return cwd or (str(resources) if resources else None)


class ShellBolt(ShellComponent, Bolt):
    """A bolt run as a subprocess speaking Storm's multilang protocol (asynchronous).

    ``process`` queues the input and writes queued inputs in batches of up to
    ``topology.shellbolt.max.pending``; ``end_window`` (called by the executor after each
    window) writes a heartbeat and handles what the child sends until it answers ``sync``.
    Acks and fails may come later (batching bolts): inputs stay pending, by id, across
    windows until the child acks or fails them.
    """

    auto_anchor: ClassVar[bool] = False
    auto_ack: ClassVar[bool] = False
    auto_fail: ClassVar[bool] = False
    kind: ClassVar[str] = "bolt"

    @classmethod
    def spec(
        cls, name: str | None = None, inputs: Any = None, par: int = 1,
        num_tasks: int | None = None, config: dict[str, Any] | None = None,
        outputs: list[Any] | None = None, *, command: Any = None, cwd: str | None = None,
        env: dict[str, str] | None = None, serializer: str | None = None,
        transcript: str | None = None, metrics: dict[str, str] | None = None,
    ) -> ComponentSpec:
        """Declare a shell bolt; see the module docstring for the shell settings."""
        base = ComponentSpec.declare(
            cls, "bolt", name=name, inputs=input_spec_placeholder(inputs), par=par,
            num_tasks=num_tasks, config=config,
            outputs=cls.outputs if outputs is None else outputs)
        return replace(base, extra=shell_extra(
            command, cwd=cwd, env=env, serializer=serializer, transcript=transcript,
            metrics=metrics))

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Start the subprocess (called once per task by the executor)."""
        self._pending: dict[str, Tuple] = {}
        self._input_prefixes: dict[tuple[Any, ...], bytes] = {}
        self._outbox: list[bytes] = []
        self._outbox_bytes = 0
        self._heartbeats = 0
        self._syncs = 0
        self._last_heartbeat = time.monotonic()
        self._max_pending = int(storm_conf.get("topology.shellbolt.max.pending") or 100)
        early = self._initialize_shell(storm_conf, context)
        try:
            self._guarded(self._handle_all, early)
        except Exception as exc:  # noqa: BLE001 - reported from the first call, as above
            self._startup_error = exc

    @property
    def pending_count(self) -> int:
        """Inputs sent to the child and not yet acked or failed by it."""
        return len(self._pending)

    def process(self, tup: Tuple) -> None:
        """Queue ``tup`` for the child (see the class docstring)."""
        self._check_started()
        self._guarded(self._queue, tup)

    process_tick = process

    def end_window(self) -> None:
        """Write everything queued plus a heartbeat; handle the child's messages until it
        answers the heartbeat, so this window's emits, acks and fails are in its output."""
        self._check_started()
        self._guarded(self._sync_window)

    def close(self) -> None:
        """Stop the subprocess (executor shutdown, tests)."""
        self._kill()

    cleanup = close

    # -- internals ---------------------------------------------------------------------------
    def _guarded(self, call: Any, *args: Any) -> None:
        try:
            call(*args)
        except BaseException as exc:
            self._die(exc)
            raise

    def _die(self, exc: BaseException) -> None:
        """Kill the child and fail what it holds, so those trees replay now."""
        self._dead = True
        self._kill()
        pending, self._pending = self._pending, {}
        reason = f"subprocess stopped ({getattr(exc, 'code', type(exc).__name__)})"
        for tup in pending.values():
            self._collector.fail(tup, reason, "crash")
        self.logger.error("%s: subprocess stopped (%s); failed %d in-flight tuples",
                          self._where, getattr(exc, "code", type(exc).__name__), len(pending))

    def _queue(self, tup: Tuple) -> None:
        tup_id = new_tuple_id()
        if self._serializer.name == "json":
            data = self._json_input(tup_id, tup)
        else:
            data = self._encode_value(input_message(
                tup_id, tup.component, tup.stream, tup.task, list(tup._raw)))
        self._pending[tup_id] = tup
        self._outbox.append(data)
        self._outbox_bytes += len(data)
        now = time.monotonic()
        if now - self._last_heartbeat >= HEARTBEAT_INTERVAL:
            self._queue_heartbeat(now)
        if len(self._outbox) >= self._max_pending or self._outbox_bytes >= OUTBOX_BYTES:
            self._flush()
            self._handle_all(self.subprocess.poll())

    def _json_input(self, tup_id: str, tup: Tuple) -> bytes:
        """The JSON input message, with the part shared by a source's tuples cached (the
        same bytes ``input_message`` would give, built for a fraction of the cost)."""
        key = (tup.component, tup.stream, tup.task)
        middle = self._input_prefixes.get(key)
        if middle is None:
            comp = encode_json(tup.component)
            middle = (f'","comp":{comp},"stream":{encode_json(tup.stream)},'
                      f'"task":{int(tup.task)},"tuple":').encode("ascii")
            self._input_prefixes[key] = middle
        try:
            values = encode_json(tup._raw)
        except (TypeError, ValueError, OverflowError):
            return self._encode_value(input_message(
                tup_id, tup.component, tup.stream, tup.task, list(tup._raw)))
        return b"".join((b'{"id":"', tup_id.encode("ascii"), middle,
                         values.encode("ascii"), b"}\nend\n"))

    def _queue_heartbeat(self, now: float) -> None:
        self._outbox.append(self._encode(heartbeat_message()))
        self._heartbeats += 1
        self._last_heartbeat = now

    def _flush(self) -> None:
        if self._outbox:
            data = b"".join(self._outbox)
            self._outbox.clear()
            self._outbox_bytes = 0
            self.subprocess.send(data)

    def _sync_window(self) -> None:
        self._queue_heartbeat(time.monotonic())
        self._flush()
        self._handle_all(self.subprocess.poll())
        while self._syncs < self._heartbeats:
            self._handle(self.subprocess.next_message(
                "the answer (sync) to a heartbeat", "MULTILANG_HEARTBEAT_TIMEOUT"))
        self._syncs = self._heartbeats  # extra syncs (pystorm sends one after errors)

    def _handle_all(self, messages: list[Any]) -> None:
        pending, collector = self._pending, self._collector
        for message in messages:
            # fast paths for the two messages of nearly every tuple; anything unusual,
            # including every error, goes through _handle's checks
            if type(message) is dict:
                command = message.get("command")
                if command == "ack":
                    tup_id = message.get("id")
                    tup = pending.pop(tup_id, None) if type(tup_id) is str else None
                    if tup is not None:
                        collector.ack(tup)
                        continue
                elif command == "emit" and self._fast_emit(message):
                    continue
            self._handle(message)

    def _fast_emit(self, message: dict[str, Any]) -> bool:
        """Emit a plain message (declared stream, string anchors of pending inputs, not
        direct); False, having done nothing, when it needs the full checks."""
        values, stream = message.get("tuple"), message.get("stream", "default")
        need = message.get("need_task_ids", True)
        if type(values) is not list or message.get("task") or type(need) is not bool \
                or stream not in self._streams:
            return False
        raw = message.get("anchors")
        pending = self._pending
        anchors: list[Tuple] = []
        if raw is not None:
            if type(raw) is not list:
                return False
            for tup_id in raw:
                tup = pending.get(tup_id) if type(tup_id) is str else None
                if tup is None:
                    return False
                anchors.append(tup)
        try:
            tasks = self._collector.emit(values, stream, anchors or None, None, True, None)
        except TopologyError as exc:
            msg = f"{self._where}: the child's emit was refused: {exc}"
            raise TopologyError(msg, code=exc.code) from exc
        if need:
            self.subprocess.send(self._encode(tasks or []))
        return True

    def _handle(self, message: Any) -> None:
        try:
            command = command_of(message)
            if command == "emit":
                self._emit(parse_emit(message, spout=False))
            elif command == "ack":
                self.ack(self._take(id_of(message), "ack"))
            elif command == "fail":
                self.fail(self._take(id_of(message), "fail"))
            elif command == "sync":
                self._syncs += 1
            elif not self._common(command, message):
                # Storm ignores unknown bolt commands; they still count as a sign of life
                self._shell_log.debug("%s: ignoring unknown command %r", self._where, command)
        except BadMessage as exc:
            raise self._malformed(message, str(exc)) from None

    def _emit(self, emit: Emit) -> None:
        self._check_stream(emit)
        anchors = [self._pending_input(a) for a in emit.anchors]
        try:
            tasks = self.emit(emit.values, stream=emit.stream, anchors=anchors or None,
                              direct_task=emit.task, need_task_ids=True)
        except TopologyError as exc:
            msg = f"{self._where}: the child's emit was refused: {exc}"
            raise TopologyError(msg, code=exc.code) from exc
        self._reply_task_ids(emit, tasks)

    def _pending_input(self, tup_id: str) -> Tuple:
        tup = self._pending.get(tup_id)
        if tup is None:
            raise self._unknown_id(tup_id, "anchor an emit to")
        return tup

    def _take(self, tup_id: str, what: str) -> Tuple:
        tup = self._pending.pop(tup_id, None)
        if tup is None:
            raise self._unknown_id(tup_id, what)
        return tup

    def _unknown_id(self, tup_id: str, what: str) -> MultilangError:
        msg = (
            f"{self._where}: the child tried to {what} input {tup_id!r}, which is not an "
            f"in-flight input of this task (unknown, heartbeat, or already acked/failed); "
            f"each input must be acked or failed exactly once{self.subprocess.diagnosis()}"
        )
        return MultilangError(msg, code="MULTILANG_UNKNOWN_TUPLE_ID")


class ShellSpout(ShellComponent, Spout):
    """A spout run as a subprocess speaking Storm's multilang protocol (synchronous).

    Every call writes one command (``next``, ``ack``, ``fail``, ``activate``,
    ``deactivate``) and handles the child's messages until its ``sync``. Message ids are
    given back exactly as the child emitted them (type and value, integers of any size).
    """

    kind: ClassVar[str] = "spout"

    @classmethod
    def spec(
        cls, name: str | None = None, par: int = 1, num_tasks: int | None = None,
        config: dict[str, Any] | None = None, outputs: list[Any] | None = None, *,
        command: Any = None, cwd: str | None = None, env: dict[str, str] | None = None,
        serializer: str | None = None, transcript: str | None = None,
        metrics: dict[str, str] | None = None, activate: bool | None = None,
    ) -> ComponentSpec:
        """Declare a shell spout; see the module docstring for the shell settings."""
        base = ComponentSpec.declare(
            cls, "spout", name=name, inputs=None, par=par, num_tasks=num_tasks,
            config=config, outputs=cls.outputs if outputs is None else outputs)
        return replace(base, extra=shell_extra(
            command, cwd=cwd, env=env, serializer=serializer, transcript=transcript,
            metrics=metrics, activate=activate))

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Start the subprocess (called once per task by the executor)."""
        self._pending: dict[str, int] = {}
        self._early = self._initialize_shell(storm_conf, context)
        self.emitted_in_last_call = 0

    def next_tuple(self) -> None:
        """``next``, then the child's emits until ``sync``."""
        self._exchange(spout_command("next"))

    def ack(self, tup_id: Any) -> None:
        """``ack`` with the message id exactly as the child emitted it."""
        if self._forget(tup_id):
            self._exchange(spout_command("ack", tup_id))

    def fail(self, tup_id: Any) -> None:
        """``fail`` with the message id exactly as the child emitted it."""
        if self._forget(tup_id):
            self._exchange(spout_command("fail", tup_id))

    def activate(self) -> None:
        """``activate`` (Storm ≥ 1.1), unless ``.spec(activate=False)``."""
        if self._extra.get("activate", True):
            self._exchange(spout_command("activate"))

    def deactivate(self) -> None:
        """``deactivate`` (Storm ≥ 1.1), unless ``.spec(activate=False)``."""
        if self._extra.get("activate", True):
            self._exchange(spout_command("deactivate"))

    def close(self) -> None:
        """Stop the subprocess."""
        self._kill()

    def _forget(self, tup_id: Any) -> bool:
        key = canonical_id(tup_id)
        count = self._pending.get(key)
        if count is None:
            logger.warning("%s: no in-flight message id %r; not sent to the child", self._where,
                           tup_id)
            return False
        if count > 1:
            self._pending[key] = count - 1
        else:
            del self._pending[key]
        return True

    def _exchange(self, command: dict[str, Any]) -> None:
        self._check_started()
        try:
            early, self._early = self._early, []
            self.emitted_in_last_call = 0
            for message in early:
                self._handle(message)
            self.subprocess.send(self._encode_value(command))
            waiting_for = f"sync after {command['command']!r}"
            while not self._handle(self.subprocess.next_message(waiting_for,
                                                             "MULTILANG_SYNC_TIMEOUT")):
                pass
        except BaseException as exc:
            self._dead = True
            self._kill()
            self.logger.error("%s: subprocess stopped (%s)", self._where,
                              getattr(exc, "code", type(exc).__name__))
            raise

    def _handle(self, message: Any) -> bool:
        """Handle one message; True when it was the ``sync`` that ends the exchange."""
        try:
            command = command_of(message)
            if command == "sync":
                return True
            if command == "emit":
                self._emit(parse_emit(message, spout=True))
            elif not self._common(command, message):
                msg = (
                    f"{self._where}: unexpected command {command!r} from a spout "
                    f"({excerpt(repr(message))}); a spout may only send emit, log, error, "
                    f"metrics and sync (Storm stops the worker too){self.subprocess.diagnosis()}"
                )
                raise MultilangError(msg, code="MULTILANG_UNEXPECTED_COMMAND")
        except BadMessage as exc:
            raise self._malformed(message, str(exc)) from None
        return False

    def _emit(self, emit: Emit) -> None:
        self._check_stream(emit)
        if emit.msg_id is not None:
            key = canonical_id(emit.msg_id)
            self._pending[key] = self._pending.get(key, 0) + 1
        tasks = self.emit(emit.values, tup_id=emit.msg_id, stream=emit.stream,
                          direct_task=emit.task, need_task_ids=True)
        self.emitted_in_last_call += 1
        self._reply_task_ids(emit, tasks)
