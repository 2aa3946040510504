"""One shell subprocess: spawn, pipes, handshake, timeouts, stderr, transcript, kill.

Threads: stdin and stdout are driven by the task's own thread (the executor calls a task
from one thread at a time) with non-blocking pipes and ``select``, so a write that blocks
keeps reading the child's stdout and a silent child is noticed within the timeout. stderr
is drained by a daemon thread from spawn to exit, because a full stderr pipe blocks the
child and looks like a hang.

The child never outlives us: it runs in its own process group, gets SIGKILL when the
thread that started it dies (Linux ``PR_SET_PDEATHSIG``; start children from a long-lived
thread), and :meth:`ShellProcess.kill` runs from ``close()``, garbage collection and
interpreter exit. Kill covers the process group and every PID the child reported in the
handshake or wrote to its PID directory (they differ when the command is a wrapper).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import IO, Any, BinaryIO

from sparkstorm.child_process import die_with_parent
from sparkstorm.multilang.errors import MultilangError, excerpt
from sparkstorm.multilang.messages import handshake_message
from sparkstorm.multilang.serializer import DecodeError, Serializer

logger = logging.getLogger(__name__)

READ_SIZE = 1 << 20
STDERR_TAIL_LINES = 40
STDERR_LOG_LINES_PER_SEC = 50
STDERR_CHUNK = 65536
"""Bytes of stderr read at once, and the longest line logged whole (longer ones in pieces)."""


def now() -> float:
    """The clock of every subprocess timeout; tests replace it to skip idle time."""
    return time.monotonic()


def child_environment(overrides: dict[str, str] | None) -> dict[str, str]:
    """The worker's environment plus ``overrides``; a ``PATH`` override is appended, as Storm.

    Example:
        >>> child_environment({"PATH": "/opt/node/bin"})["PATH"].endswith(":/opt/node/bin")
        True
    """
    env = dict(os.environ)
    for key, value in (overrides or {}).items():
        if key == "PATH" and env.get("PATH"):
            env["PATH"] = f"{env['PATH']}{os.pathsep}{value}"
        else:
            env[key] = str(value)
    return env


class StderrDrain:
    """Reads a child's stderr until EOF: logs it by line (rate-limited), keeps a tail."""

    def __init__(self, stream: IO[bytes], log: logging.Logger) -> None:
        self.tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._log = log
        self._fd = stream.fileno()
        self._window_start = 0.0
        self._window_lines = 0
        self._suppressed = 0
        self.thread = threading.Thread(target=self._run, name="multilang-stderr", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        pending = b""
        while True:
            try:
                chunk = os.read(self._fd, STDERR_CHUNK)
            except OSError:
                break
            if not chunk:
                break
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            if len(pending) > STDERR_CHUNK:  # a huge line without newline: log it in pieces
                lines.append(pending)
                pending = b""
            for line in lines:
                self._line(line)
        if pending:
            self._line(pending)

    def _line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", errors="replace").rstrip("\r")
        self.tail.append(line[:2000])
        now = time.monotonic()
        if now - self._window_start >= 1.0:
            if self._suppressed:
                self._log.info("(%d more stderr lines not logged)", self._suppressed)
            self._window_start, self._window_lines, self._suppressed = now, 0, 0
        if self._window_lines < STDERR_LOG_LINES_PER_SEC:
            self._window_lines += 1
            self._log.info("%s", line)
        else:
            self._suppressed += 1

    def text(self, wait: float = 0.0) -> str:
        """The last lines of stderr (after waiting up to ``wait`` s for the child's EOF)."""
        if wait:
            self.thread.join(wait)
        return "\n".join(self.tail)


class ShellProcess:
    """A running shell component (see the module docstring).

    Args:
        command: argv of the child, e.g. ``["node", "split.js"]``.
        where: who this is for error messages, e.g. ``"bolt 'split' task 4"``.
        serializer: the wire format.
        cwd: working directory of the child (None: ours).
        env: environment overrides (see :func:`child_environment`).
        timeout: seconds of silence before the child is declared dead.
        transcript: path prefix; when set, every byte written to the child is appended to
            ``<prefix>-<pid>.to_child`` and every byte read from it to ``.from_child``.
        log_name: logger name for the child's stderr lines.
    """

    kill_grace: float = 1.0
    """Seconds :meth:`kill` waits between TERM and KILL."""

    def __init__(self, command: list[str], *, where: str, serializer: Serializer,
                 cwd: str | None = None, env: dict[str, str] | None = None,
                 timeout: float = 30.0, transcript: str | None = None,
                 log_name: str = "sparkstorm.multilang.stderr") -> None:
        self.command = command
        self.where = where
        self.serializer = serializer
        self.cwd = cwd
        self.env = env
        self.timeout = timeout
        self.transcript = transcript
        self.log_name = log_name
        self.inbox: collections.deque[Any] = collections.deque()
        self.reported_pid: int | None = None
        self.last_seen = now()
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid_dir = ""
        self._decoder = serializer.decoder()
        self._eof = False
        self._killed = False
        self._stderr: StderrDrain | None = None
        self._to_child: BinaryIO | None = None
        self._from_child: BinaryIO | None = None
        self._finalizer: Any = None

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Spawn the child with three pipes.

        Raises:
            MultilangError: ``MULTILANG_SPAWN_FAILED`` when the command cannot be run.
        """
        self.pid_dir = tempfile.mkdtemp(prefix="sparkstorm-pids-")
        try:
            self.proc = subprocess.Popen(  # the user's own component command
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=self.cwd, env=child_environment(self.env),
                start_new_session=True, preexec_fn=die_with_parent, bufsize=0,
            )
        except (OSError, ValueError) as exc:
            shutil.rmtree(self.pid_dir, ignore_errors=True)
            msg = (
                f"{self.where}: cannot start {self.command!r} in {self.cwd or os.getcwd()!r}: "
                f"{exc}; check the command (is it on PATH?), the component's cwd and "
                "topology.multilang.resources.dir"
            )
            raise MultilangError(msg, code="MULTILANG_SPAWN_FAILED") from exc
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        os.set_blocking(self.proc.stdin.fileno(), False)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._stderr = StderrDrain(self.proc.stderr, logging.getLogger(self.log_name))
        if self.transcript:
            Path(self.transcript).parent.mkdir(parents=True, exist_ok=True)
            prefix = f"{self.transcript}-{self.proc.pid}"
            self._to_child = open(f"{prefix}.to_child", "ab", buffering=0)  # noqa: SIM115
            self._from_child = open(f"{prefix}.from_child", "ab", buffering=0)  # noqa: SIM115
        self.last_seen = now()
        self._finalizer = weakref.finalize(self, _kill_quietly, self.proc, self.pid_dir)

    def handshake(self, conf: dict[str, Any], context: dict[str, Any]) -> list[Any]:
        """Send conf, context and pidDir; wait for ``{"pid": N}``.

        Returns:
            The commands the child sent before its PID (storm.js logs and emits from its
            ``initialize`` first); the caller handles them as if they came after.

        Raises:
            MultilangError: ``MULTILANG_HANDSHAKE_TIMEOUT`` (no PID within the timeout),
                ``MULTILANG_HANDSHAKE_FAILED`` (a reply that is not a PID),
                ``MULTILANG_SUBPROCESS_EXITED`` or ``MULTILANG_MALFORMED_MESSAGE``.
        """
        self.send(self.serializer.encode_lenient(handshake_message(conf, context, self.pid_dir)))
        deadline = now() + self.timeout  # absolute: chatter does not extend it
        early: list[Any] = []
        while True:
            message = self.next_message("its handshake reply {\"pid\": N}",
                                        "MULTILANG_HANDSHAKE_TIMEOUT", deadline=deadline)
            if isinstance(message, dict) and "pid" in message:
                return self._accept_pid(message["pid"], early)
            if isinstance(message, dict) and isinstance(message.get("command"), str):
                early.append(message)
                continue
            msg = (
                f"{self.where}: expected the handshake reply {{\"pid\": N}} from "
                f"{self.command!r}, got {excerpt(repr(message))}; the component must answer "
                f"the handshake with its PID (is it a multilang component?){self.diagnosis()}"
            )
            raise MultilangError(msg, code="MULTILANG_HANDSHAKE_FAILED")

    def _accept_pid(self, pid: Any, early: list[Any]) -> list[Any]:
        if type(pid) is not int:
            msg = (
                f"{self.where}: the handshake reply's pid is {pid!r}, not an integer; "
                f"the component must send {{\"pid\": <its process id>}}{self.diagnosis()}"
            )
            raise MultilangError(msg, code="MULTILANG_HANDSHAKE_FAILED")
        self.reported_pid = pid
        return early

    def kill(self) -> None:
        """Stop the child; safe to call repeatedly.

        TERM the process group, KILL after the grace period, KILL the reported PIDs; close pipes,
        remove the PID directory.
        """
        if self._killed or self.proc is None:
            return
        self._killed = True
        extra = set(_reported_pids(self.pid_dir))
        if self.reported_pid:
            extra.add(self.reported_pid)
        _terminate(self.proc, extra, self.kill_grace)
        for stream in (self.proc.stdin, self.proc.stdout, self._to_child, self._from_child):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        if self._stderr is not None:
            self._stderr.thread.join(0.5)
        shutil.rmtree(self.pid_dir, ignore_errors=True)
        if self._finalizer is not None:
            self._finalizer.detach()

    @property
    def alive(self) -> bool:
        """Started, not killed, not exited."""
        return self.proc is not None and not self._killed and self.proc.poll() is None

    # -- writing ---------------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        """Write ``data`` (whole messages) to the child's stdin.

        While the pipe is full, reads the child's stdout into :attr:`inbox` (so a child that
        is itself writing never blocks) and watches the timeout.

        Raises:
            MultilangError: ``MULTILANG_SUBPROCESS_EXITED`` (broken pipe),
                ``MULTILANG_HEARTBEAT_TIMEOUT`` (stdin full and the child silent too long),
                ``MULTILANG_MALFORMED_MESSAGE``.
        """
        assert self.proc is not None and self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        progress = now()
        while view:
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                written = 0
            except (BrokenPipeError, ConnectionResetError, ValueError, OSError) as exc:
                msg = f"writing to its stdin failed ({exc})"
                raise self.exited_error(msg) from None
            if written:
                if self._to_child is not None:
                    self._to_child.write(view[:written])
                view = view[written:]
                progress = now()
                continue
            self._wait_writable(fd, progress)

    def _wait_writable(self, fd: int, progress: float) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout.fileno()
        readable, _, _ = select.select([out], [fd], [], 0.5)
        if readable:
            self._read_available()
        if now() - max(progress, self.last_seen) > self.timeout:
            msg = (
                f"{self.where}: the child has neither read its stdin nor sent anything for "
                f"{self.timeout:.0f} s (it is stuck); raise topology.subprocess.timeout.secs "
                f"if it needs longer{self.diagnosis()}"
            )
            raise MultilangError(msg, code="MULTILANG_HEARTBEAT_TIMEOUT")
        if self.proc.poll() is not None:
            msg_0 = "it exited while we were writing to it"
            raise self.exited_error(msg_0)

    # -- reading ---------------------------------------------------------------------------
    def poll(self) -> list[Any]:
        """Every message the child has sent so far, without waiting."""
        if not self._eof:
            self._read_available()
        messages = list(self.inbox)
        self.inbox.clear()
        return messages

    def next_message(self, waiting_for: str, code: str, deadline: float | None = None, *,
                     since: float | None = None, wait: float | None = None) -> Any:
        """The next message, waiting while the child is alive and not silent too long.

        The child times out when it sends nothing for ``timeout`` seconds counted from
        ``since`` (default: this call) or from its last message, if later; its silence
        before that never counts. With ``wait``, gives up after that many seconds and
        returns None (the timeout still counts from ``since``): a shell spout waits for its
        ``sync`` in such slices so the executor's lock is not held for the whole timeout.

        Args:
            waiting_for: what we wait for, for the timeout message.
            code: the error code of a timeout.
            deadline: an absolute ``now()`` deadline instead of the silence rule.
            since: the ``now()`` at which the wait began (when the command was sent).
            wait: seconds to wait in this call before returning None (0: only what has
                already arrived).

        Raises:
            MultilangError: ``code`` on timeout, ``MULTILANG_SUBPROCESS_EXITED``,
                ``MULTILANG_MALFORMED_MESSAGE``.
        """
        inbox = self.inbox
        # The silence is counted from when we start waiting, not from the child's last
        # message: between windows (or while a spout is deactivated) we ask it nothing, so
        # a healthy idle child is quiet for as long as we are (Storm's spout timer likewise
        # runs only while it waits for a sync).
        started = now()
        since = started if since is None else since
        give_up = None if wait is None else started + wait
        while not inbox:
            limit = deadline if deadline is not None else max(self.last_seen,
                                                              since) + self.timeout
            remaining = limit - now()
            if remaining <= 0:
                if deadline is None and self._read_available():  # came while nobody read
                    continue
                raise self._timeout(waiting_for, code)
            step = min(remaining, 0.5)
            if give_up is not None:
                step = max(0.0, min(step, give_up - now()))
            if not self._read_available(step) and self.proc is not None \
                    and self.proc.poll() is not None and not self._read_available():
                msg_0 = f"while waiting for {waiting_for}"
                raise self.exited_error(msg_0)
            if give_up is not None and not inbox and now() >= give_up:
                return None
        return inbox.popleft()

    def _timeout(self, waiting_for: str, code: str) -> MultilangError:
        msg = (
            f"{self.where}: no answer from {self.command!r} within {self.timeout:.0f} s "
            f"while waiting for {waiting_for}; the child hangs (raise "
            f"topology.subprocess.timeout.secs if it needs longer){self.diagnosis()}"
        )
        return MultilangError(msg, code=code)

    def _read_available(self, timeout: float = 0.0) -> bool:
        """Read what the child sent (waiting up to ``timeout``); decode it into the inbox."""
        assert self.proc is not None and self.proc.stdout is not None
        if self._eof:
            msg = "its stdout is closed"
            raise self.exited_error(msg)
        fd = self.proc.stdout.fileno()
        if timeout:
            readable, _, _ = select.select([fd], [], [], timeout)
            if not readable:
                return False
        got = False
        while True:
            try:
                chunk = os.read(fd, READ_SIZE)
            except BlockingIOError:
                return got
            except OSError as exc:
                msg = f"reading its stdout failed ({exc})"
                raise self.exited_error(msg) from None
            if not chunk:
                self._eof = True
                if got:
                    return True
                msg = "its stdout closed"
                raise self.exited_error(msg)
            got = True
            self.last_seen = now()
            if self._from_child is not None:
                self._from_child.write(chunk)
            try:
                self.inbox.extend(self._decoder.feed(chunk))
            except DecodeError as exc:
                msg = (
                    f"{self.where}: malformed message from {self.command!r}: {exc.reason}; "
                    f"received {excerpt(exc.data)}; a component must write only protocol "
                    "messages to stdout (log through the protocol or to stderr, never "
                    f"print()){self.diagnosis()}"
                )
                raise MultilangError(msg, code="MULTILANG_MALFORMED_MESSAGE") from None
            if len(chunk) < READ_SIZE:
                return True

    # -- reporting -------------------------------------------------------------------------
    def exited_error(self, when: str) -> MultilangError:
        """The error for a child that went away (exit code and stderr tail included)."""
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(1.0)
            except subprocess.TimeoutExpired:
                code = None
        msg = (
            f"{self.where}: subprocess {self.command!r} (pid {self.proc and self.proc.pid}) "
            f"went away: {when}; exit code {code}; see its stderr below for the cause"
            f"{self.diagnosis(wait=0.5)}"
        )
        return MultilangError(msg, code="MULTILANG_SUBPROCESS_EXITED")

    def diagnosis(self, wait: float = 0.0) -> str:
        """PID, exit code and the stderr tail, appended to error messages."""
        if self.proc is None:
            return ""
        tail = self._stderr.text(wait) if self._stderr is not None else ""
        status = self.proc.poll()
        state = "running" if status is None else f"exit code {status}"
        stderr = f"; stderr tail:\n{tail}" if tail else "; stderr was empty"
        return f" [pid {self.proc.pid}, reported pid {self.reported_pid}, {state}]{stderr}"


def _reported_pids(pid_dir: str) -> list[int]:
    try:
        return [int(name) for name in os.listdir(pid_dir) if name.isdigit()]
    except OSError:
        return []


def _terminate(proc: subprocess.Popen[bytes], extra: set[int], grace: float) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        if sig == signal.SIGTERM:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace)
    if proc.poll() is None:
        proc.kill()
    try:
        proc.wait(5.0)
    except subprocess.TimeoutExpired:  # pragma: no cover - unkillable (D state)
        logger.warning("subprocess %d did not die after SIGKILL", proc.pid)
    for pid in extra - {proc.pid}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _kill_quietly(proc: subprocess.Popen[bytes], pid_dir: str) -> None:
    """Finalizer (garbage collection or interpreter exit): no logging, no waiting."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in _reported_pids(pid_dir):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    shutil.rmtree(pid_dir, ignore_errors=True)
