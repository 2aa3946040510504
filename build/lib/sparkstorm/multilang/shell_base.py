"""What shell bolts and spouts share.

Settings from the component spec, the subprocess and its handshake, encoding, logs, errors and
metrics (see :mod:`sparkstorm.multilang.shell`).
"""

from __future__ import annotations

import logging
import os
import shlex
from typing import Any, ClassVar

from sparkstorm.config import conf_int, conf_optional_int, conf_optional_str, conf_str
from sparkstorm.errors import TopologyError
from sparkstorm.multilang.errors import MultilangError, excerpt
from sparkstorm.multilang.log_handler import load_log_handler
from sparkstorm.multilang.messages import (
    Emit,
    log_level,
    text_of,
)
from sparkstorm.multilang.process import ShellProcess
from sparkstorm.multilang.serializer import NonFiniteNumberError, Serializer, serializer_for
from sparkstorm.topology.component import Collector
from sparkstorm.topology.spec import ComponentSpec

logger = logging.getLogger(__name__)

RESOURCES_DIR_KEY = "topology.multilang.resources.dir"
NON_SUBSCRIBER = "DIRECT_EMIT_TO_NON_SUBSCRIBER"  # the engine's code for such a direct emit
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


def with_script(command: Any, script: str | None) -> Any:
    """Join streamparse's ``command`` and ``script``: the script's arguments after the command's.

    The script is split as a shell would split it.

    Example:
        >>> with_script("node", "split.js --fast")
        ['node', 'split.js', '--fast']
        >>> with_script(["python3", "-u"], None)
        ['python3', '-u']
    """
    if script is None or command is None:
        return command
    return [*_argv(command), *shlex.split(script)]


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
    _collector: Collector

    def __getstate__(self) -> dict[str, Any]:
        """Nothing of a shell component goes into a checkpoint.

        Its state lives in its child process, whose memory is not ours (a rollback restarts
        the child).
        """
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restoring keeps the freshly started child (see :meth:`__getstate__`)."""

    def _start(self, conf: dict[str, Any], context: dict[str, Any]) -> list[Any]:
        """Spawn the child and shake hands; returns the commands sent before the PID."""
        self.shell_metrics: dict[str, Any] = {}
        self._drops_warned: set[tuple[str, int | None]] = set()
        self._streams = set(context.get("streams") or [])
        self._where = f"{self.kind} {self.component_name!r} task {context.get('taskid')}"
        self._dead = False
        extra = dict(getattr(getattr(self, "component_spec", None), "extra", None) or {})
        self._extra = extra
        self._serializer: Serializer = serializer_for(
            extra.get("serializer") or conf_str(conf, "topology.multilang.serializer"),
            where=f"{self.kind} {self.component_name!r}: serializer")
        self._encode = self._serializer.encode
        self._shell_log = logging.getLogger(f"sparkstorm.multilang.shell.{self.component_name}")
        self._log_handler = load_log_handler(conf, where=self._where)
        self.subprocess = ShellProcess(
            self._command(extra), where=self._where, serializer=self._serializer,
            cwd=_child_cwd(extra.get("cwd"), conf_optional_str(conf, RESOURCES_DIR_KEY)),
            env=extra.get("env"), timeout=subprocess_timeout(conf),
            transcript=self._transcript_prefix(extra, conf, context),
            log_name=f"sparkstorm.multilang.stderr.{self.component_name}",
        )
        self.subprocess.start()
        early = self.subprocess.handshake(conf, context)
        self._log_handler.setup(self.component_name, self.subprocess.reported_pid, conf,
                                context)
        return early

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
        directory = conf_optional_str(conf, TRANSCRIPT_DIR_KEY)
        if directory:
            return os.path.join(str(directory), f"{self.component_name}-{context.get('taskid')}")
        return None

    def _initialize_shell(self, conf: dict[str, Any], context: dict[str, Any]) -> list[Any]:
        """Start; a failure is kept and raised from the first call the executor makes.

        So it is reported as this task's error and the executor restarts the task.
        """
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
            self._log_handler.log(log_level(message), text_of(message))
        elif command == "error":
            self._report_error(text_of(message))
        elif command == "metrics":
            self._metric(message)
        else:
            return False
        return True

    def _report_error(self, text: str) -> None:
        """The child's ``error`` command: logged, and kept as the component's last error.

        Kept with ``report_error``; the component keeps running, as in Storm.
        """
        self._shell_log.error("%s reported an error: %s", self._where, text)
        self._collector.report_error(text)

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

    def _dropped(self, emit: Emit, exc: TopologyError) -> bool:
        """Whether a refused emit is a direct emit to a task that does not subscribe.

        Storm drops such an emit (routed to no task) instead of stopping the component; warned about
        once per stream and task.
        """
        if exc.code != NON_SUBSCRIBER:
            return False
        if (emit.stream, emit.task) not in self._drops_warned:
            self._drops_warned.add((emit.stream, emit.task))
            self._shell_log.warning(
                "%s: direct emits on stream %r to task %s are dropped: that task does not "
                "subscribe to the stream with a direct grouping (as in Storm; %s)",
                self._where, emit.stream, emit.task, exc)
        return True

    def _reply_task_ids(self, emit: Emit, tasks: list[int] | None) -> None:
        if emit.wants_task_ids:
            self.subprocess.send(self._encode(tasks or []))

    def _encode_value(self, message: Any) -> bytes:
        try:
            return self._encode(message)
        except NonFiniteNumberError as exc:
            msg = (
                f"{self._where}: cannot send {exc.value!r} ({exc.path}) in "
                f"{excerpt(repr(message))}: NaN and Infinity are not JSON and JSON.parse in "
                "node rejects them; emit None or a string instead, or use the msgpack "
                "serializer (.spec(serializer='msgpack'), topology.multilang.serializer)"
            )
            raise MultilangError(msg, code="MULTILANG_NON_FINITE_NUMBER") from None
        except (TypeError, ValueError, OverflowError) as exc:
            msg = (
                f"{self._where}: cannot send {excerpt(repr(message))} with the "
                f"{self._serializer.name} serializer ({exc}); emit only values the "
                "serializer can carry (JSON: no bytes or sets; msgpack: integers < 2**64)"
            )
            raise MultilangError(msg, code="MULTILANG_UNENCODABLE_VALUE") from exc


def subprocess_timeout(conf: dict[str, Any]) -> float:
    """``topology.subprocess.timeout.secs``, else ``supervisor.worker.timeout.secs``."""
    value = conf_optional_int(conf, "topology.subprocess.timeout.secs")
    return float(conf_int(conf, "supervisor.worker.timeout.secs") if value is None else value)


def with_code_resources(conf: dict[str, Any], code_dir: str | os.PathLike[str]
                        ) -> dict[str, Any]:
    """``conf`` with ``topology.multilang.resources.dir`` defaulting to ``<code_dir>/resources``.

    Called once by the cluster worker before it starts the topology, with the folder the
    submitted code was extracted to: shell commands then run in the uploaded
    ``resources/`` folder, as Storm runs them in its code dir. A relative value of the key
    is taken relative to ``code_dir`` (``sparkstorm submit`` sets ``src`` for a streamparse
    project, whose jar streamparse builds with ``src/`` as its resources). ``conf`` is
    returned unchanged when the key is set to an absolute path or the folder does not
    exist; local runs never call this (their commands run in the current directory).

    Example:
        >>> with_code_resources({RESOURCES_DIR_KEY: "/srv/js"}, "/nonexistent")
        {'topology.multilang.resources.dir': '/srv/js'}
    """
    configured = conf_optional_str(conf, RESOURCES_DIR_KEY)
    if configured and not os.path.isabs(str(configured)):  # e.g. a project's "src"
        return {**conf, RESOURCES_DIR_KEY: os.path.abspath(
            os.path.join(os.fspath(code_dir), str(configured)))}
    if configured:
        return conf
    resources = os.path.abspath(os.path.join(os.fspath(code_dir), "resources"))
    if not os.path.isdir(resources):
        return conf
    return {**conf, RESOURCES_DIR_KEY: resources}


def _child_cwd(cwd: str | None, resources: str | None) -> str | None:
    if cwd and resources and not os.path.isabs(cwd):
        return os.path.join(resources, cwd)
    return cwd or resources or None
