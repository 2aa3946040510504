"""Entry point of an executor process: ``python -m sparkstorm.engine.executor.main``.

The driver starts one per executor with the plan file, the executor's gid and a Unix socket
path. Spark tasks connect and send one request per window::

    {"cmd": "window", "w": 17, "rows": [<packed rows>, ...]}        # bolt executors
    {"cmd": "window", "w": 17, "control": SpoutControl.to_wire()}   # spout executors

with, when checkpoints are on, ``"checkpoint": true`` (take this executor's part of
checkpoint 17 at the window's cut) and ``"committed": 10`` (checkpoint 10 is committed:
stateful bolts commit their state first), and with overlapping windows ``"after": 16``: the
window the driver sent before (served first: ``engine.executor.window_turns``; ``{"cmd": "skip",
"w": 16}`` says its job failed, so nothing waits for it). ``{"cmd": "restore", "window":
10, "resume": 18}`` rebuilds the executor's tasks from its part of checkpoint 10
(``"window": null``: from scratch), as the driver asks on a rollback
(``engine.executor.checkpoint_part``); windows before 18 are refused from then on.
``{"cmd": "replan", "spec": {...}, "gid": 2}`` switches a staying executor to new executor
counts (``rebalance -e``, ``engine.plan.regroup``): it is executor 2 of the plan of that spec from
the next window on. ``{"cmd": "verdicts", "control": SpoutControl.to_wire()}`` gives a
spout executor the acker's acks and fails as soon as a window ended
(``engine.driver.verdict_push``), not with the next window.

Window requests get back ``{target gid: packed rows}`` with the encoded
:class:`~sparkstorm.engine.wire.messages.WindowMeta` as the reply's body
(``engine.wire.frames``), which the Spark task passes on to the driver undecoded. The replies of
the latest two windows are kept, so a retried Spark task is answered from memory instead of
running components twice. A component that raised makes the process exit (code 70) after
answering; the driver restarts it. A request the executor cannot answer (a bug, not a
component's error) gets an error reply and a restart, never a dropped connection: a dropped
connection makes the Spark task resend the same request forever.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import socket
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO

from sparkstorm.checkpoint import CheckpointStore, checkpoint_root
from sparkstorm.config import conf_float, conf_int, conf_optional_str
from sparkstorm.engine.executor.checkpoint_part import (
    ExecutorPart,
    PartWriter,
    RestorePoint,
    part_name,
)
from sparkstorm.engine.executor.collector import WindowOutput
from sparkstorm.engine.executor.factory import make_executor
from sparkstorm.engine.executor.host import (
    BoltExecutor,
    ExecutorHost,
    TaskStartFailed,
)
from sparkstorm.engine.executor.log_levels import LogLevels
from sparkstorm.engine.executor.spout import SpoutExecutor
from sparkstorm.engine.executor.stacks import dump_on_signal
from sparkstorm.engine.executor.window_turns import Reply, WindowTurns
from sparkstorm.engine.plan.execution import ExecutionPlan
from sparkstorm.engine.plan.regroup import replan_host
from sparkstorm.engine.wire.frames import recv_frame, send_error_reply, send_reply, unpack
from sparkstorm.engine.wire.gate import (
    HANDSHAKE_TIMEOUT_KEY,
    MAX_CONNECTIONS_KEY,
    AuthenticatedListener,
)
from sparkstorm.engine.wire.messages import ComponentError, SpoutControl, WindowMeta
from sparkstorm.engine.wire.protocol import (
    NOT_YET,
    OK,
    CloseRequest,
    LogControlRequest,
    PingRequest,
    ReplanRequest,
    Request,
    RestoreRequest,
    ServedRequest,
    SkipRequest,
    VerdictsRequest,
    WindowRequest,
    decode_request,
)
from sparkstorm.engine.wire.secure import listener_tls, use
from sparkstorm.periodic import PeriodicThread
from sparkstorm.project.layout import RESOURCES_DIR_KEY
from sparkstorm.tls.material import TlsFiles
from sparkstorm.topology.spec import TopologySpec

logger = logging.getLogger(__name__)
EXIT_COMPONENT_CRASHED = 70
EXIT_WORKER_GONE = 71
EXIT_STARTUP_FAILED = 72
# The cyclic garbage collector is off in executor processes and runs every this many
# windows instead: tuples and anchor maps hold no cycles (refcounting frees them), and
# automatic collections walking tens of thousands of live tuples cost half of an
# executor's CPU time (benchmarks/profile_executor.py: 130.8 -> 64.7 us per sentence).
GC_EVERY_WINDOWS = 20
ERROR_REPLY_WAIT_SECONDS = 10.0
"""How long a connection's thread that saw the exit requested waits for the window reply
carrying the error to go out before it shuts the process down anyway (its caller gone)."""
TCP_BACKLOG = 512
"""Connections the kernel queues for the TCP door (``engine.wire.gate``) to accept: under a
flood of connections a short queue delays every caller's connect by SYN retransmits."""


HostFactory = Callable[[RestorePoint | None], ExecutorHost]
"""Builds the executor's host, its tasks restored from a checkpoint when given one."""


class ExecutorServer:
    """Serves window requests for one executor over a Unix socket and over TCP.

    Args:
        host: the executor's tasks.
        path: the Unix socket to listen on (callers on this host).
        rebuild: makes a fresh host for a rollback (None: restore refused).
        writer: writes checkpoint parts (None: checkpoints are off).
        tcp: the address to listen on for callers on other hosts, and the token they must
            send first (None: Unix socket only).
        turns: orders the window requests (default: a first start, waiting up to 30 s).
        replan: switches the executor to a new spec where it has a new gid (None: refused).
        tcp_limits: the TCP handshake deadline in seconds and the most TCP connections
            held at once (``engine.wire.gate``; default 5 s and 256).
    """

    def __init__(self, host: ExecutorHost, path: str, rebuild: HostFactory | None = None,
                 writer: PartWriter | None = None,
                 tcp: tuple[tuple[str, int], str] | None = None,
                 turns: WindowTurns | None = None,
                 replan: Callable[[dict[str, Any], int], None] | None = None,
                 tcp_limits: tuple[float, int] | None = None) -> None:
        self.tls: TlsFiles | None = None
        """TCP callers come in mutual TLS with this material (``engine.wire.secure``;
        None: plain); set before :meth:`serve_forever`."""
        self.host = host
        self.replan = replan
        self.path = path
        self.rebuild = rebuild
        self.writer = writer
        self.turns = turns or WindowTurns()
        self.resume_from = 0
        """Windows before this one are refused: they began before the last rollback."""
        self.done = threading.Event()
        self.exit_requested = False
        self.error_reply_out = threading.Event()
        """Set once the window reply that carries a component's error is out (or there is
        none): only then may a connection's thread end the process (:meth:`_serve`)."""
        self.error_reply_out.set()
        self._error_window: int | None = None
        self.log_levels = LogLevels()
        if os.path.exists(path):
            os.unlink(path)
        self.tcp_listener: socket.socket | None = None
        self.tcp_door: AuthenticatedListener | None = None
        self.token = ""
        self.tcp_limits = tcp_limits or (5.0, 256)
        if tcp is not None:  # bound first: the Unix socket appearing means both accept
            (tcp_host, tcp_port), self.token = tcp
            self.tcp_listener = _tcp_listener(tcp_host, tcp_port)
            port = self.tcp_listener.getsockname()[1]
            with open(path + ".port.tmp", "w", encoding="utf-8") as handle:
                handle.write(str(port))
            os.replace(path + ".port.tmp", path + ".port")  # read once the socket exists
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path + ".tmp")
        self.listener.listen(16)
        os.rename(path + ".tmp", path)  # visible only once it accepts connections

    def serve_forever(self) -> int:
        """Accept connections until closed; returns the process exit code."""
        threading.Thread(target=self._accept_loop, args=(self.listener,),
                         daemon=True).start()
        if self.tcp_listener is not None:  # callers must send the token first: the door
            deadline, most = self.tcp_limits
            self.tcp_door = AuthenticatedListener(
                self.tcp_listener, self.token, self._serve, name=f"executor {self.host.info.gid}",
                handshake_timeout=deadline, max_connections=most, tls=listener_tls(self.tls))
        self.done.wait()
        return EXIT_COMPONENT_CRASHED if self.host.must_restart else 0

    def _accept_loop(self, listener: socket.socket) -> None:
        """Serve callers on this host (the Unix socket), a thread each.

        The socket's file mode lets only them in; TCP callers go through :attr:`tcp_door`.
        """
        while not self.done.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        """Answer one caller's requests until it closes (a TCP caller: authenticated)."""
        with conn:
            try:
                while True:
                    self._answer(conn, recv_frame(conn))
                    if self.exit_requested:  # only after the reply is out
                        # and the window's carrying the error: a served watch is answered
                        # as the window is served, before its reply goes out, and the
                        # error died with the process (the Spark task retried the window
                        # on the successor, which answered it without the error)
                        self.error_reply_out.wait(ERROR_REPLY_WAIT_SECONDS)
                        self._shutdown()
                        return
            except (ConnectionError, OSError):
                return

    def _answer(self, conn: socket.socket, frame: bytes) -> None:
        """Reply to the request in ``frame``.

        An unexpected error (an undecodable request included) gets an error reply and a
        restart.
        """
        request: Any = None
        try:
            request = unpack(frame)
            decoded = decode_request(request)
            payload, body = self._handle(decoded)
        except ConnectionAbortedError:
            raise  # no reply: see _window
        except Exception as exc:  # noqa: BLE001 - answered and restarted, never dropped
            logger.error("executor %d could not answer %s:\n%s", self.host.info.gid,
                         _describe(request), "".join(traceback.format_exception(exc)))
            self.host.must_restart = True
            self.exit_requested = True
            send_error_reply(conn, f"executor {self.host.info.gid} could not answer "
                                   f"{_describe(request)}: {exc!r} (its log has the traceback; "
                                   "it restarts)")
            return
        send_reply(conn, payload, body)
        if isinstance(decoded, WindowRequest) and decoded.window == self._error_window:
            self.error_reply_out.set()

    def _handle(self, request: Request) -> tuple[Any, bytes]:
        """Serve one request (``engine.wire.protocol``); every reply but a window's is OK."""
        match request:
            case WindowRequest():
                return self._window(request)
            case PingRequest():  # a liveness check while a long window runs: no window lock
                pass
            case LogControlRequest():  # dynamic log levels and debug sampling
                self.apply_log_control(request)
            case VerdictsRequest():  # the acker's verdicts as soon as a window ended
                self._verdicts(request)
            case RestoreRequest(window=window, resume=resume, parts=parts):
                self._restore(window, resume, parts)
            case ReplanRequest(spec=spec, gid=gid):
                self._replan(spec, gid)
            case SkipRequest(window=window):
                self.turns.skip(window)
            case ServedRequest(window=window, seconds=seconds):
                if not self.turns.wait_served(window, seconds):
                    return NOT_YET, b""
            case CloseRequest():
                if self.writer is not None:
                    self.writer.close()
                self.host.close()
                self.exit_requested = True
            case _:
                msg = f"executor {self.host.info.gid} does not answer {request.TAG!r} requests"
                raise ValueError(msg)
        return OK, b""

    def _verdicts(self, request: VerdictsRequest) -> None:
        """Apply a spout executor's verdicts between windows (``engine.driver.verdict_push``).

        Not under the window turns: a spout applies them under its own lock, before or
        after the window it may be serving, like a window's control.
        """
        host = self.host
        if not isinstance(host, SpoutExecutor):
            msg = f"executor {host.info.gid} runs no spout: it has no verdicts to apply"
            raise TypeError(msg)
        host.apply_verdicts(SpoutControl.from_wire(request.control))

    def _window(self, request: WindowRequest) -> Reply:
        window, flags = request.window, request.flags
        with self.turns as turns:
            turns.wait_turn(window, flags.after)
            remembered = turns.remembered(window)
            if remembered is not None:
                return remembered  # a retried Spark task: never run components twice
            if window < self.resume_from:
                # a window of a job cancelled for a rollback, whose request was already on
                # its way: run after the restore, it would apply its input twice
                msg = (f"executor {self.host.info.gid} was rolled back; window {window} "
                       f"began before it (windows from {self.resume_from} are served)")
                raise ConnectionAbortedError(msg)
            if self.exit_requested:
                # the window before failed a component, its reply is out and we are on our
                # way out (windows overlap): no reply, so the caller resends this one to our
                # restarted successor instead of us running it through a stopped component.
                # (A component that failed between windows, a spout's next_tuple, still gets
                # its window served: that reply carries the error and requests the exit.)
                msg = (f"executor {self.host.info.gid} restarts; window {window} goes to "
                       "its successor")
                raise ConnectionAbortedError(msg)
            if flags.committed is not None:
                self.host.commit_state(flags.committed)
            checkpoint = window if flags.checkpoint else None
            output = self._run(request, checkpoint)
            host = self.host
            rows = host.encode_rows(output)  # first: a value it refuses is this window's error
            meta = host.window_meta(output)
            if self.writer is not None:
                meta = self._with_parts(meta, window)
            reply = rows, meta.encode()
            turns.served(window, reply)
            if window % GC_EVERY_WINDOWS == 0:
                gc.collect()
            if host.must_restart:  # the reply carries the error: exit once it is out
                self._error_window = window
                self.error_reply_out.clear()
                self.exit_requested = True
            return reply

    def apply_log_control(self, control: LogControlRequest) -> None:
        """Apply log levels and this executor's debug sampling percentage."""
        self.log_levels.apply(control.levels)
        self.host.sample_pct = control.sample_pct

    def apply_saved_log_control(self) -> None:
        """Start with the log control the pool kept for this executor (``<socket>.control``).

        So a restarted executor samples and logs as its predecessor did from its first
        window, not only from the worker's next heartbeat.
        """
        try:
            with open(self.path + ".control", encoding="utf-8") as handle:
                control = json.load(handle)
        except (OSError, ValueError):
            return
        if isinstance(control, dict):
            self.apply_log_control(LogControlRequest.from_wire(control))

    def _with_parts(self, meta: WindowMeta, window: int) -> WindowMeta:
        """``meta`` with this window's checkpoint part queued and the parts written reported.

        The checkpoint part taken this window is queued for writing; the parts written since
        the last window are reported (and why others were not).
        """
        assert self.writer is not None
        host = self.host
        if host.taken_part is not None:
            self.writer.submit(window, host.taken_part)
            host.taken_part = None
        errors = [ComponentError.now(host.info.component, None, text)
                  for text in self.writer.take_errors()]
        parts = [(w, info.name, info.size, info.sha256) for w, info in self.writer.take_written()]
        return replace(meta, parts=parts, errors=[*meta.errors, *errors])

    def _restore(self, window: int | None, resume: int = 0,
                 parts: list[str] | None = None) -> None:
        """Roll back: the current tasks hear ``pre_rollback`` and close.

        New ones start from this executor's part of checkpoint ``window`` (from scratch when
        None), or from the ``parts`` that hold its tasks there (a replan regrouped them).
        Windows before ``resume`` (the driver's next window) are refused from now on.
        """
        if self.rebuild is None:
            msg = "this executor cannot restore: checkpoints are off"
            raise ValueError(msg)
        with self.turns:
            point = None
            if window is not None:
                assert self.writer is not None
                point = RestorePoint(window, self._read_parts(
                    window, parts if parts is not None else [part_name(self.host.info.gid)]))
            old = self.host
            old.rollback_state(window)
            old.close()
            self.host = self.rebuild(point)
            self.host.sample_pct = old.sample_pct
            self.resume_from = max(self.resume_from, resume)
            if resume:  # refused from now on: the window after them need not wait for them
                self.turns.skip(resume - 1)
            logger.info("executor %d restored from checkpoint %s", old.info.gid, window)

    def _read_parts(self, window: int, names: list[str]) -> ExecutorPart:
        """The parts ``names`` of checkpoint ``window`` merged (each holds other tasks)."""
        assert self.writer is not None
        merged = ExecutorPart()
        for name in names:
            part = ExecutorPart.decode(self.writer.store().read_part(window, name))
            merged.tasks.update(part.tasks)
            merged.pending.update(part.pending)
            merged.handed.update(part.handed)
        return merged

    def _replan(self, spec: dict[str, Any], gid: int) -> None:
        """Take the plan of ``spec``, where this executor is ``gid`` (between windows)."""
        if self.replan is None:
            msg = "this executor cannot take a new plan"
            raise ValueError(msg)
        with self.turns:  # no window runs meanwhile
            old = self.host.info.gid
            self.replan(spec, gid)
            logger.info("executor %d is executor %d of the new plan", old, gid)

    def _run(self, request: WindowRequest, checkpoint: int | None) -> WindowOutput:
        host = self.host
        if isinstance(host, SpoutExecutor):
            if request.control is None:
                msg = f"spout executor {host.info.gid} got window {request.window} without control"
                raise ValueError(msg)
            return host.run_window(SpoutControl.from_wire(request.control), checkpoint,
                                   request.window)
        assert isinstance(host, BoltExecutor)
        try:
            return host.run_window(request.rows or [], checkpoint)
        except Exception:  # noqa: BLE001 - ComponentFailure: answer what was done, then restart
            return host.output.take()

    def _shutdown(self) -> None:
        self.done.set()
        if self.tcp_door is not None:
            self.tcp_door.close()
        elif self.tcp_listener is not None:
            self.tcp_listener.close()
        try:
            self.listener.close()
            os.unlink(self.path)
        except OSError:
            pass


def _tcp_listener(host: str, port: int) -> socket.socket:
    """Listen on ``host:port``, or on any free port when that one is taken.

    A restarted executor asks for its predecessor's port, so that callers keep its address.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError:
        if not port:
            listener.close()
            raise
        logger.warning("TCP port %s:%d is taken; listening on another one", host, port)
        listener.bind((host, 0))
    listener.listen(TCP_BACKLOG)
    return listener


def _describe(request: Any) -> str:
    if request is None:
        return "a request it could not decode"
    if isinstance(request, dict):
        return f"request {request.get('cmd')!r} of window {request.get('w')}"
    return f"request of type {type(request).__name__}"


def watch_parent(parent_pid: int) -> PeriodicThread:
    """Exit when the driver that started us is gone, so no executor outlives it."""
    def check() -> None:
        if os.getppid() != parent_pid:
            os._exit(EXIT_WORKER_GONE)
    watcher = PeriodicThread("watch-parent", 1.0, check)
    watcher.start()
    return watcher


def report_startup_failure(socket_path: str, component: str, exc: BaseException) -> int:
    """Leave the traceback where the driver's pool finds it (``<socket>.error``), log it.

    A task's own error (:class:`TaskStartFailed`) is reported with its task and the
    component's traceback, not the engine's frames around it.
    """
    task = None
    if isinstance(exc, TaskStartFailed):
        task, exc = exc.task, exc.cause
    text = "".join(traceback.format_exception(exc))
    logger.error("component %s task %s failed to start:\n%s", component, task, text)
    with open(socket_path + ".error", "w", encoding="utf-8") as handle:
        json.dump(ComponentError.now(component, task, text).to_wire(), handle)
    return EXIT_STARTUP_FAILED


PATH_KEYS = ("storm.local.dir", "topology.checkpoint.dir", "topology.executor.log.dir",
             RESOURCES_DIR_KEY, "topology.multilang.transcript.dir")
"""Conf keys naming folders, which a relative value names relative to where we started."""


def with_absolute_paths(conf: dict[str, Any]) -> dict[str, Any]:
    """``conf`` with the relative folders of :data:`PATH_KEYS` made absolute (not URIs)."""
    fixed = dict(conf)
    for key in PATH_KEYS:
        value = fixed.get(key)
        if isinstance(value, str) and value and "://" not in value:
            fixed[key] = os.path.abspath(value)
    return fixed


def enter_resources_dir(conf: dict[str, Any]) -> None:
    """Work in ``topology.multilang.resources.dir``, where Storm runs shell components.

    Under Storm and streamparse every component runs in the topology's resources folder
    (streamparse packs ``src/`` there), so code opens ``data.txt`` relative to it; in-process
    components here run where shell commands do: the project's ``src/``, a Flux file's
    ``resources/`` (or its folder), the submitted code's ``resources/``. Unset (a plain
    topology file under ``run``), the folder ``run`` started in. Relative paths this
    process was given were made absolute before.
    """
    resources = conf_optional_str(conf, RESOURCES_DIR_KEY)
    if not resources:
        return
    if not os.path.isdir(resources):
        logger.warning("%s %r is not a folder; components run in %s", RESOURCES_DIR_KEY,
                       resources, os.getcwd())
        return
    os.chdir(resources)


def main(argv: list[str] | None = None, stdin: BinaryIO | None = None) -> int:
    """Start the executor ``--gid`` of the plan in ``--plan`` and serve ``--socket``."""
    parser = argparse.ArgumentParser(prog="sparkstorm-executor")
    parser.add_argument("--plan", required=True)
    parser.add_argument("--gid", type=int, required=True)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--tcp", default=None, help="HOST:PORT to serve other hosts on")
    parser.add_argument("--restarted", action="store_true",
                        help="this process replaces one that died (its windows are gone)")
    args = parser.parse_args(argv)
    args.plan, args.socket = os.path.abspath(args.plan), os.path.abspath(args.socket)
    with open(args.plan, encoding="utf-8") as handle:
        data = json.load(handle)
    sys.path[:0] = [os.path.abspath(p) for p in data.get("sys_path", []) if p not in sys.path]
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr,
        format=f"%(asctime)s %(levelname)s [{data['name']} executor {args.gid}] %(name)s: "
               "%(message)s",
    )
    watch_parent(os.getppid())
    dump_on_signal(args.socket)
    data["conf"] = with_absolute_paths(data["conf"])  # before components change folder
    plan = ExecutionPlan(TopologySpec.from_dict(data["spec"]), data["conf"])
    root = checkpoint_root(plan.conf)
    enter_resources_dir(plan.conf)
    current = {"plan": plan, "gid": args.gid}  # a replan changes both

    def rebuild(point: RestorePoint | None) -> ExecutorHost:
        return make_executor(current["plan"], current["gid"], data["name"], point)
    try:
        host = rebuild(None)
    except Exception as exc:  # noqa: BLE001 - reported to the driver, then restarted
        return report_startup_failure(args.socket, plan.executors[args.gid].component, exc)
    writer: PartWriter | None = None
    checkpoint_id = data.get("checkpoint_id")
    if checkpoint_id:  # checkpoints are on
        writer = PartWriter(lambda: CheckpointStore(root, checkpoint_id), args.gid)
    gc.freeze()  # what initialize() built lives long: keep it out of every collection
    gc.disable()
    tcp = None
    if args.tcp:
        tcp_host, _, tcp_port = args.tcp.rpartition(":")
        tcp = ((tcp_host, int(tcp_port)), str(data.get("token") or ""))
    turns = WindowTurns(args.restarted,
                        conf_float(plan.conf, "topology.executor.answer.timeout.secs"))

    def replan(spec: dict[str, Any], gid: int) -> None:
        new = ExecutionPlan(TopologySpec.from_dict(spec), data["conf"])
        replan_host(server.host, new, gid)
        current["plan"], current["gid"] = new, gid
        if writer is not None:
            writer.gid = gid
    limits = (conf_float(plan.conf, HANDSHAKE_TIMEOUT_KEY),
              conf_int(plan.conf, MAX_CONNECTIONS_KEY))
    tls = TlsFiles(*(Path(p) for p in data["tls"])) if data.get("tls") else None
    use(tls)  # its own TCP calls (none today) as its listener
    server = ExecutorServer(host, args.socket, rebuild, writer, tcp, turns, replan, limits)
    server.tls = tls
    server.apply_saved_log_control()
    return server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
