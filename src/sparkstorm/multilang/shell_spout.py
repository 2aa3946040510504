"""``ShellSpout``: a spout run as a subprocess speaking the multilang protocol."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, ClassVar

from sparkstorm.errors import TopologyError
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
)
from sparkstorm.topology.component import Spout
from sparkstorm.topology.spec import ComponentSpec

logger = logging.getLogger(__name__)


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
        self._acks_due: list[Any] = []
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
            self.emitted_in_last_call = 0
            self._round_trip(command)
            while self._acks_due:  # each after the sync, as its own command (never inside)
                msg_id = self._acks_due.pop(0)
                if self._forget(msg_id):
                    self._round_trip(spout_command("ack", msg_id))
        except BaseException as exc:
            self._dead = True
            self._kill()
            self.logger.error("%s: subprocess stopped (%s)", self._where,
                              getattr(exc, "code", type(exc).__name__))
            raise

    def _round_trip(self, command: dict[str, Any]) -> None:
        """Write ``command``, handle the child's messages until its ``sync``."""
        early, self._early = self._early, []
        for message in early:
            self._handle(message)
        self.subprocess.send(self._encode_value(command))
        waiting_for = f"sync after {command['command']!r}"
        while not self._handle(self.subprocess.next_message(waiting_for,
                                                         "MULTILANG_SYNC_TIMEOUT")):
            pass

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
            if emit.msg_id is not None:  # a tuple routed to no task is complete: Storm acks it
                self._acks_due.append(emit.msg_id)
            return  # a direct emit: no task-id list to send
        self._reply_task_ids(emit, tasks)
