"""``ShellSpout``: a spout run as a subprocess speaking the multilang protocol."""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import replace
from typing import Any, ClassVar

from sparkstorm.errors import TopologyError
from sparkstorm.multilang import process
from sparkstorm.multilang.errors import MultilangError, excerpt
from sparkstorm.multilang.messages import (
    BadMessage,
    Emit,
    canonical_id,
    command_of,
    parse_emit,
    spout_command,
)
from sparkstorm.multilang.shell_base import (
    ShellComponent,
    shell_extra,
    with_script,
)
from sparkstorm.topology.component import Spout
from sparkstorm.topology.spec import ComponentSpec
from sparkstorm.topology.spec_args import resolve_config, resolve_par

logger = logging.getLogger(__name__)


SYNC_SLICE = 0.025
"""Seconds one call waits for the child's ``sync`` before giving the executor back its lock."""
CLOSE_FLUSH_SECONDS = 5.0
"""How long ``close`` spends sending the commands still queued (acks) to the child."""


class ShellSpout(ShellComponent, Spout):
    """A spout run as a subprocess speaking Storm's multilang protocol (synchronous).

    Commands (``next``, ``ack``, ``fail``, ``activate``, ``deactivate``) go out one at a
    time, each only after the child's ``sync`` for the previous one, as Storm's protocol
    requires; commands asked for meanwhile wait in a queue, in order. A call waits at most
    :data:`SYNC_SLICE` for the ``sync`` and then returns, so a child that hangs does not
    hold the executor's lock (and with it every window of the topology) for the whole
    ``topology.subprocess.timeout.secs``: the next call goes on reading where this one
    stopped, and no second ``next`` is sent while one is outstanding. The timeout counts
    from when the command was sent (or the child's last message); when it runs out the
    child is killed and the call raises ``MULTILANG_SYNC_TIMEOUT``. Message ids are given
    back exactly as the child emitted them (type and value, integers of any size).
    """

    kind: ClassVar[str] = "spout"

    @classmethod
    def spec(
        cls, name: str | None = None, par: Any = None, num_tasks: int | None = None,
        config: dict[str, Any] | None = None, outputs: list[Any] | None = None, *,
        command: Any = None, script: str | None = None, cwd: str | None = None,
        env: dict[str, str] | None = None,
        serializer: str | None = None, transcript: str | None = None,
        metrics: dict[str, str] | None = None, activate: bool | None = None,
    ) -> ComponentSpec:
        """Declare a shell spout; see the module docstring for the shell settings.

        ``script`` is streamparse's: arguments appended to ``command``.
        """
        base = ComponentSpec.declare(
            cls, "spout", name=name, inputs=None, par=resolve_par(cls, par, name),
            num_tasks=num_tasks, config=resolve_config(cls, config, name),
            outputs=cls.outputs if outputs is None else outputs)
        return replace(base, extra=shell_extra(
            with_script(command, script), cwd=cwd, env=env, serializer=serializer,
            transcript=transcript,
            metrics=metrics, activate=activate))

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Start the subprocess (called once per task by the executor)."""
        self._pending: dict[str, int] = {}
        self._queued: deque[dict[str, Any]] = deque()
        self._outstanding: dict[str, Any] | None = None
        self._sent_at = 0.0
        self._early = self._initialize_shell(storm_conf, context)
        self.emitted_in_last_call = 0

    @property
    def waiting_for_sync(self) -> bool:
        """A command was sent and its ``sync`` has not arrived yet."""
        return self._outstanding is not None

    def next_tuple(self) -> None:
        """``next`` (unless a command is outstanding or queued), then the child's emits.

        The emits are handled until the child's ``sync`` or the end of the slice, whichever comes
        first.
        """
        idle = self._outstanding is None and not self._queued
        self._call(spout_command("next") if idle else None, SYNC_SLICE)

    def ack(self, tup_id: Any) -> None:
        """``ack`` with the message id exactly as the child emitted it."""
        if self._forget(tup_id):
            self._queue_command(spout_command("ack", tup_id))

    def fail(self, tup_id: Any) -> None:
        """``fail`` with the message id exactly as the child emitted it."""
        if self._forget(tup_id):
            self._queue_command(spout_command("fail", tup_id))

    def activate(self) -> None:
        """``activate`` (Storm ≥ 1.1), unless ``.spec(activate=False)``."""
        if self._extra.get("activate", True):
            self._queue_command(spout_command("activate"))

    def deactivate(self) -> None:
        """``deactivate`` (Storm ≥ 1.1), unless ``.spec(activate=False)``."""
        if self._extra.get("activate", True):
            self._queue_command(spout_command("deactivate"))

    def close(self) -> None:
        """Send the commands still queued (the last acks), then stop the subprocess.

        An ack queued behind a ``next`` whose ``sync`` had not come yet goes out only when
        the spout is called again, which a drained topology never does: without this the
        child missed its last acks (Flux's multilang.yaml: 139 processed, 138 heard).
        Bounded by :data:`CLOSE_FLUSH_SECONDS`; a child that fails meanwhile is stopped.
        """
        if not self._dead and (self._queued or self._outstanding is not None):
            try:
                self._pump(process.now() + CLOSE_FLUSH_SECONDS)
            except Exception as exc:  # noqa: BLE001 - closing anyway: say why acks were lost
                logger.warning("%s: the last commands did not reach the child: %s",
                               self._where, exc)
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

    def _queue_command(self, command: dict[str, Any]) -> None:
        """Queue ``command``; wait a slice for its ``sync`` only when it goes out at once.

        Behind an outstanding command it must not cost the executor a slice per call.
        """
        idle = self._outstanding is None and not self._queued
        self._call(command, SYNC_SLICE if idle else 0.0)

    def _call(self, command: dict[str, Any] | None, wait: float) -> None:
        self._check_started()
        try:
            self.emitted_in_last_call = 0
            if command is not None:
                self._queued.append(command)
            self._pump(process.now() + wait)
        except BaseException as exc:
            self._die(exc)
            raise

    def _pump(self, until: float) -> None:
        """Send queued commands one by one, each after the previous ``sync``.

        Handle the child's messages until the queue is empty or ``until`` (a ``now()``) has passed.
        """
        while True:
            if self._outstanding is None:
                if not self._queued:
                    return
                self._send(self._queued.popleft())
            if not self._await_sync(until):
                return

    def _send(self, command: dict[str, Any]) -> None:
        early, self._early = self._early, []
        for message in early:
            self._handle(message)
        self._outstanding = command
        self._sent_at = process.now()
        self.subprocess.send(self._encode_value(command))

    def _await_sync(self, until: float) -> bool:
        """Handle messages until the outstanding command's ``sync`` (True) or ``until``."""
        assert self._outstanding is not None
        waiting_for = f"sync after {self._outstanding['command']!r}"
        while True:
            message = self.subprocess.next_message(
                waiting_for, "MULTILANG_SYNC_TIMEOUT", since=self._sent_at,
                wait=max(0.0, until - process.now()))
            if message is None:
                return False
            if self._handle(message):
                self._outstanding = None
                return True

    def _die(self, exc: BaseException) -> None:
        """Kill the child; its pending message ids and queued commands die with it.

        Storm loses them with the worker; a replacement child never saw those ids.
        """
        self._dead = True
        self._kill()
        lost = sum(self._pending.values())
        self._pending.clear()
        self._queued.clear()
        self._outstanding = None
        self.logger.error("%s: subprocess stopped (%s); %d pending message ids dropped",
                          self._where, getattr(exc, "code", type(exc).__name__), lost)

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
        self.emitted_in_last_call += 1
        try:
            tasks = self.emit(emit.values, tup_id=emit.msg_id, stream=emit.stream,
                              direct_task=emit.task, need_task_ids=True)
        except TopologyError as exc:
            if not self._dropped(emit, exc):
                raise
            if emit.msg_id is not None and self._forget(emit.msg_id):
                # routed to no task, the tuple is complete: Storm acks it, after the sync
                self._queued.append(spout_command("ack", emit.msg_id))
            return  # a direct emit: no task-id list to send
        self._reply_task_ids(emit, tasks)
