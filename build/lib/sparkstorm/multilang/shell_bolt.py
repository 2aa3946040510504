"""``ShellBolt``: a bolt run as a subprocess speaking the multilang protocol."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any, ClassVar

from sparkstorm.config import conf_int
from sparkstorm.errors import TopologyError
from sparkstorm.multilang.errors import MultilangError
from sparkstorm.multilang.messages import (
    BadMessage,
    Emit,
    command_of,
    heartbeat_message,
    id_of,
    input_message,
    new_tuple_id,
    parse_emit,
)
from sparkstorm.multilang.serializer import encode_json
from sparkstorm.multilang.shell_base import (
    HEARTBEAT_INTERVAL,
    OUTBOX_BYTES,
    ShellComponent,
    shell_extra,
    with_script,
)
from sparkstorm.topology.component import FAIL_CAUSES, FAIL_EXPLICIT, Bolt
from sparkstorm.topology.spec import ComponentSpec, input_spec_placeholder
from sparkstorm.topology.spec_args import resolve_config, resolve_par
from sparkstorm.topology.tuple import Tuple

logger = logging.getLogger(__name__)

TICKS_KEPT = 1000
"""Tick tuples remembered for a late ack, fail or anchor; older ones are forgotten."""


class ShellBolt(ShellComponent, Bolt):
    """A bolt run as a subprocess speaking Storm's multilang protocol (asynchronous).

    ``process`` queues the input and writes queued inputs in batches of up to
    ``topology.shellbolt.max.pending``; ``end_window`` (called by the executor after each
    window) writes a heartbeat and handles what the child sends until it answers ``sync``.
    Acks and fails may come later (batching bolts): inputs stay pending, by id, across
    windows until the child acks or fails them. Tick tuples are not pending: many clients
    never ack them (storm.py's Bolt, storm.rb), and they have no anchors, so there is
    nothing to fail; the last :data:`TICKS_KEPT` are remembered so an ack, fail or anchor
    that names one is still accepted.
    """

    auto_anchor: ClassVar[bool] = False
    auto_ack: ClassVar[bool] = False
    auto_fail: ClassVar[bool] = False
    kind: ClassVar[str] = "bolt"

    @classmethod
    def spec(
        cls, name: str | None = None, inputs: Any = None, par: Any = None,
        num_tasks: int | None = None, config: dict[str, Any] | None = None,
        outputs: list[Any] | None = None, *, command: Any = None, script: str | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None, serializer: str | None = None,
        transcript: str | None = None, metrics: dict[str, str] | None = None,
    ) -> ComponentSpec:
        """Declare a shell bolt; see the module docstring for the shell settings.

        ``script`` is streamparse's: arguments appended to ``command``
        (``command="node", script="split.js"`` runs ``node split.js``).
        """
        base = ComponentSpec.declare(
            cls, "bolt", name=name, inputs=input_spec_placeholder(inputs),
            par=resolve_par(cls, par, name), num_tasks=num_tasks,
            config=resolve_config(cls, config, name),
            outputs=cls.outputs if outputs is None else outputs)
        return replace(base, extra=shell_extra(
            with_script(command, script), cwd=cwd, env=env, serializer=serializer,
            transcript=transcript,
            metrics=metrics))

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Start the subprocess (called once per task by the executor)."""
        self._pending: dict[str, Tuple] = {}
        self._ticks: dict[str, Tuple] = {}
        self._input_prefixes: dict[tuple[Any, ...], bytes] = {}
        self._outbox: list[bytes] = []
        self._outbox_bytes = 0
        self._heartbeats = 0
        self._syncs = 0
        self._last_heartbeat = time.monotonic()
        self._max_pending = conf_int(storm_conf, "topology.shellbolt.max.pending")
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
        """Queue ``tup`` for the child (see the class docstring).

        Raises:
            MultilangError: the child could not be started, or died; ``tup`` is failed
                (cause ``crash``) so its tree replays now instead of timing out.
        """
        try:
            self._check_started()
            self._guarded(self._queue, tup)
        except BaseException as exc:
            reason = f"subprocess stopped ({getattr(exc, 'code', type(exc).__name__)})"
            self._collector.fail(tup, reason, "crash")
            raise

    def process_tick(self, tup: Tuple) -> None:
        """Queue the tick tuple ``tup`` for the child, untracked (see the class docstring)."""
        self._check_started()
        self._guarded(self._queue, tup, True)

    def end_window(self) -> None:
        """Write everything queued plus a heartbeat, and wait for the heartbeat's answer.

        The child's messages are handled until it answers the heartbeat, so this window's emits,
        acks and fails are in its output.
        """
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

    def _queue(self, tup: Tuple, tick: bool = False) -> None:
        tup_id = new_tuple_id()
        if self._serializer.name == "json":
            data = self._json_input(tup_id, tup)
        else:
            data = self._encode_value(input_message(
                tup_id, tup.component, tup.stream, tup.task, list(tup.values)))
        if tick:
            self._remember_tick(tup_id, tup)
        else:
            self._pending[tup_id] = tup
        self._outbox.append(data)
        self._outbox_bytes += len(data)
        now = time.monotonic()
        if now - self._last_heartbeat >= HEARTBEAT_INTERVAL:
            self._queue_heartbeat(now)
        if len(self._outbox) >= self._max_pending or self._outbox_bytes >= OUTBOX_BYTES:
            self._flush()
            self._handle_all(self.subprocess.poll())

    def _remember_tick(self, tup_id: str, tup: Tuple) -> None:
        ticks = self._ticks
        ticks[tup_id] = tup
        if len(ticks) > TICKS_KEPT:  # never acked: forget the oldest (dicts keep order)
            del ticks[next(iter(ticks))]

    def _json_input(self, tup_id: str, tup: Tuple) -> bytes:
        """The JSON input message, with the part shared by a source's tuples cached.

        The same bytes ``input_message`` would give, built for a fraction of the cost.
        """
        key = (tup.component, tup.stream, tup.task)
        middle = self._input_prefixes.get(key)
        if middle is None:
            comp = encode_json(tup.component)
            middle = (f'","comp":{comp},"stream":{encode_json(tup.stream)},'
                      f'"task":{int(tup.task)},"tuple":').encode("ascii")
            self._input_prefixes[key] = middle
        try:
            values = encode_json(tup.values)
        except (TypeError, ValueError, OverflowError):
            return self._encode_value(input_message(
                tup_id, tup.component, tup.stream, tup.task, list(tup.values)))
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
        """Emit a plain message (declared stream, string anchors of pending inputs, not direct).

        Return False, having done nothing, when it needs the full checks.
        """
        values, stream = message.get("tuple"), message.get("stream", "default")
        need, task = message.get("need_task_ids", True), message.get("task")
        # only absent/null or the integer 0 ("not direct") here: a direct emit, and every
        # task parse_emit refuses (false, 0.0, ""), take the full checks
        if type(values) is not list or (task is not None and (type(task) is not int or task)) \
                or type(need) is not bool or stream not in self._streams:
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
                self._fail_command(message)
            elif command == "reset_timeout":  # our extension (Storm's multilang has none)
                self.reset_timeout(self._pending_input(id_of(message)))
            elif command == "sync":
                self._syncs += 1
            elif not self._common(command, message):
                # Storm ignores unknown bolt commands; they still count as a sign of life
                self._shell_log.debug("%s: ignoring unknown command %r", self._where, command)
        except BadMessage as exc:
            raise self._malformed(message, str(exc)) from None

    def _fail_command(self, message: dict[str, Any]) -> None:
        """``fail``, with our sparkstorm children's ``reason`` and ``cause`` when sent.

        Storm's children send neither: an explicit failure without a reason.
        """
        tup = self._take(id_of(message), "fail")
        reason, cause = message.get("reason"), message.get("cause")
        self._collector.fail(tup, None if reason is None else str(reason),
                             cause if cause in FAIL_CAUSES else FAIL_EXPLICIT)

    def _emit(self, emit: Emit) -> None:
        self._check_stream(emit)
        anchors = [self._pending_input(a) for a in emit.anchors]
        try:
            tasks = self.emit(emit.values, stream=emit.stream, anchors=anchors or None,
                              direct_task=emit.task, need_task_ids=True)
        except TopologyError as exc:
            if self._dropped(emit, exc):
                return  # a direct emit: no task-id list to send
            msg = f"{self._where}: the child's emit was refused: {exc}"
            raise TopologyError(msg, code=exc.code) from exc
        self._reply_task_ids(emit, tasks)

    def _pending_input(self, tup_id: str) -> Tuple:
        tup = self._pending.get(tup_id)
        if tup is None:
            tup = self._ticks.get(tup_id)  # storm.py's BasicBolt anchors to ticks too
        if tup is None:
            raise self._unknown_id(tup_id, "anchor an emit to")
        return tup

    def _take(self, tup_id: str, what: str) -> Tuple:
        tup = self._pending.pop(tup_id, None)
        if tup is None:
            tup = self._ticks.pop(tup_id, None)
        if tup is None:
            raise self._unknown_id(tup_id, what)
        return tup

    def _unknown_id(self, tup_id: str, what: str) -> MultilangError:
        msg = (
            f"{self._where}: the child tried to {what} input {tup_id!r}, which is not an "
            f"in-flight input of this task (unknown, heartbeat, a tick tuple older than the "
            f"last {TICKS_KEPT}, or already acked/failed); "
            f"each input must be acked or failed exactly once{self.subprocess.diagnosis()}"
        )
        return MultilangError(msg, code="MULTILANG_UNKNOWN_TUPLE_ID")
