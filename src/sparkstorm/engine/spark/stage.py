"""The Spark side of a window: the function each Spark task runs, and the executor client.

Runs inside PySpark's Python workers, so it must be importable there and cheap to pickle:
a :class:`StageInfo` carries only gids, levels, the executors' endpoints (Unix socket path,
TCP address: see ``engine.wire.endpoint``) and the topology's token. Records are
``(key, value)`` pairs: ``key`` is the target executor's gid, or :data:`DRIVER` for what
the driver collects at the end of the job (each executor's encoded
:class:`~sparkstorm.engine.wire.messages.WindowMeta` and its deliveries on edges closing a cycle).
The spout stage's partitions get their executor's control as its own argument, apart from
the records. The driver's record also says where the call went:
``(host_local, bytes, refreshed)``, whether the task reached its executor over its Unix
socket (same host), how many bytes crossed hosts otherwise (request and reply, over TCP),
and the address refreshes it went through (None: none; see below).

An executor of another worker that cannot be reached at the window's address (connection
refused, unknown host, token refused: its worker moved or restarted it) is looked up in
the driver's endpoint map (``engine.driver.endpoint_lookup``) and the window's request is resent
where it answers now: a new process there serves it from scratch, the same one from its
memory. The wait for a new address is bounded by ``topology.executor.answer.timeout.secs``.

An executor that answers neither its window nor a liveness check within
``topology.executor.answer.timeout.secs`` (stopped, hung) is given up on: the Spark task
reports it to the driver as a lost :class:`~sparkstorm.engine.wire.messages.WindowMeta` failing
the trees of the input it was sent, and the rest of the window goes on. The driver kills
and restarts it.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from sparkstorm.engine.driver.endpoint_lookup import look_up, refresh_decision
from sparkstorm.engine.spark.worker_heap import freeze_spark_worker_heap
from sparkstorm.engine.wire.endpoint import Endpoint
from sparkstorm.engine.wire.failures import FAIL_CRASH, Failure
from sparkstorm.engine.wire.frames import pack, recv_reply, send_frame
from sparkstorm.engine.wire.messages import WindowMeta
from sparkstorm.engine.wire.protocol import (
    CallRecord,
    PingRequest,
    Request,
    WindowFlags,
    WindowRequest,
)
from sparkstorm.engine.wire.secure import use
from sparkstorm.errors import EngineError
from sparkstorm.tls.material import TlsFiles

freeze_spark_worker_heap()  # in a Spark Python worker: its per-task GC skips the modules

DRIVER = -1
ANCHOR = None
"""The value of a placement anchor's record (``engine.spark.placement``): a stage skips it."""


@dataclass(frozen=True)
class StageInfo:
    """What a Spark task of one stage needs to know (picklable, small)."""

    level: int
    gids: tuple[int, ...]
    gid_levels: dict[int, int]
    endpoints: dict[int, Endpoint]
    token: str
    connect_timeout: float
    answer_timeout: float
    components: dict[int, str]
    lookup: tuple[str, int] | None = None
    """The driver's endpoint lookup (None: every executor is the driver's own)."""
    pids: dict[int, int] = field(default_factory=dict)
    """Process ids of the executors of other workers when the stage was built: those are
    looked up when they cannot be reached."""
    chained: dict[int, tuple[int, ...]] = field(default_factory=dict)
    """Executor gid -> the gids chained to it (``engine.plan.chaining``), called in its task."""
    roots: dict[int, int] = field(default_factory=dict)
    """A chained executor's gid -> the gid whose partition calls it."""
    tls: TlsFiles | None = None
    """The TCP calls' material (``engine.wire.secure``; None: plain): set by each task."""

    def partition_of(self, key: int) -> int:
        """Partition of a record in this stage: its executor's, or any for passing through.

        A chained executor's records go to the partition of the executor that calls it.
        """
        try:
            return self.gids.index(self.roots.get(key, key))
        except ValueError:
            return key % len(self.gids) if key >= 0 else 0


class ExecutorUnresponsive(EngineError):
    """An executor answered neither a request nor a liveness check in time."""


class ExecutorUnreachable(EngineError):
    """An executor of another worker could not be reached where the driver says it is."""


REFRESH_SLICE_SECONDS = 0.25
"""How long a task tries an address before it asks the driver's lookup again (so a new
address is used about this long after the driver learns it: ``benchmarks/RESULTS.md``)."""


def call_executor(endpoint: Endpoint, token: str, request: Request, timeout: float,
                  answer_timeout: float | None = None, sizes: list[int] | None = None
                  ) -> tuple[Any, bytes]:
    """Send ``request`` to the executor at ``endpoint``; return its reply's payload and body.

    Over its Unix socket when the caller shares its host, else over TCP with ``token``.

    Reconnects and resends while the executor is being restarted (its socket missing or
    refusing), up to ``timeout`` seconds; the executor answers a resent window from memory.
    With ``answer_timeout``, a reply may take as long as it needs while the executor answers
    liveness checks (pings on another connection) within ``answer_timeout`` seconds.
    With ``sizes``, the bytes of the request and of the reply's frames are appended to it.

    Raises:
        ConnectionError: the executor did not answer within ``timeout``.
        EngineError: ``EXECUTOR_REQUEST_FAILED`` when it answered that it could not;
            :class:`ExecutorUnresponsive` (``EXECUTOR_UNRESPONSIVE``) when it stopped
            answering pings.
    """
    body = pack(request.to_wire())
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        try:
            remaining = max(0.05, deadline - time.monotonic())
            with endpoint.connect(token, answer_timeout, min(remaining, answer_timeout or
                                                             remaining)) as sock:
                send_frame(sock, body)
                if answer_timeout is not None:
                    _await_answer(sock, endpoint, token, answer_timeout)
                reply = recv_reply(sock, sizes)
                if sizes is not None:
                    sizes.append(len(body) + 4)  # its length prefix too
                return reply
        except (ConnectionError, FileNotFoundError, OSError) as exc:
            if time.monotonic() > deadline:
                msg = f"executor at {endpoint} did not answer within {timeout:.0f} s: {exc}"
                raise ConnectionError(msg) from exc
            time.sleep(delay)  # waiting for the driver to restart the executor process
            delay = min(delay * 2, 0.5)


def _await_answer(sock: socket.socket, endpoint: Endpoint, token: str, bound: float) -> None:
    """Return once ``sock`` has a reply to read; check the executor's liveness meanwhile.

    Raises:
        ExecutorUnresponsive: a ping went unanswered for ``bound`` seconds.
    """
    interval = min(1.0, bound)
    while not select.select([sock], [], [], interval)[0]:
        # a ping refused may follow an answer: a component that raised answers, then its
        # executor exits (code 70), so the socket is looked at once more before giving up
        if not ping(endpoint, token, bound) and not select.select([sock], [], [], 0)[0]:
            msg = (
                f"executor at {endpoint} answered neither its request nor a ping within "
                f"{bound:g} s (topology.executor.answer.timeout.secs): stopped or hung"
            )
            raise ExecutorUnresponsive(msg, code="EXECUTOR_UNRESPONSIVE")


def ping(endpoint: Endpoint, token: str, bound: float) -> bool:
    """Whether the executor at ``endpoint`` answers a ping within ``bound`` seconds."""
    try:
        with endpoint.connect(token, bound) as sock:
            send_frame(sock, pack(PingRequest().to_wire()))
            recv_reply(sock)
    except (OSError, EngineError):
        return False
    return True


def run_spout_stage(stage: StageInfo, window: int, flags: WindowFlags, index: int,
                    partition: Iterable[tuple[list[Any], list[tuple[int, Any]]]]
                    ) -> Iterator[tuple[int, Any]]:
    """The spout stage's partition function.

    ``partition`` holds one item: the executor's control (``SpoutControl.to_wire()``) and the
    records injected this window (ticks and cycle deliveries, for later stages).
    """
    for control, records in partition:
        yield from call_stage(stage, window, flags, index, records, control)


def run_located_spout_stage(stage: StageInfo, window: int, flags: WindowFlags,
                            payloads: list[tuple[list[Any], list[tuple[int, Any]]]],
                            index: int, partition: Iterable[int]) -> Iterator[tuple[int, Any]]:
    """The spout stage's partition function over a placement's located RDD.

    The located RDD is built once per placement (``engine.spark.placement``), so this window's
    ``payloads`` (as :func:`run_spout_stage` gets them) come in the closure: every task
    gets all of them and uses its own.
    """
    for _ in partition:  # drained: else PySpark discards its Python worker after the task
        pass
    control, records = payloads[index]
    yield from call_stage(stage, window, flags, index, records, control)


def run_stage(stage: StageInfo, window: int, flags: WindowFlags, index: int,
              records: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    """A bolt stage's partition function: its executor gets the records keyed to it."""
    yield from call_stage(stage, window, flags, index, records, None)


def call_stage(stage: StageInfo, window: int, flags: WindowFlags, index: int,
                records: Iterable[tuple[int, Any]], control: list[Any] | None
                ) -> Iterator[tuple[int, Any]]:
    """Hand this partition's input to its executor, forward its output.

    The input is a spout's ``control``, or a bolt's records keyed to it.

    Called once per partition of each stage of window ``window``, in a Spark Python worker.
    Records for executors of later stages pass through unchanged. ``flags`` go into every
    executor's request of the window (``checkpoint``, ``committed``: see
    ``engine.executor.main``). The executors chained to the partition's executor
    (``engine.plan.chaining``) are called after it, with their records and what the executor
    before them emitted to them, which never leaves this task.
    """
    first = stage.gids[index]
    order = [first]
    inputs: dict[int, list[bytes]] = {first: []}
    for gid in order:  # breadth first: a chained executor after the one that feeds it
        for partner in stage.chained.get(gid, ()):
            inputs[partner] = []
            order.append(partner)
    for key, value in records:
        rows = inputs.get(key)
        if rows is None:
            yield key, value
        elif value is not ANCHOR:
            rows.append(value)
    for gid in order:
        yield from _call_and_route(stage, window, flags, gid, inputs,
                                 control if gid == first else None)


def call_refreshing(stage: StageInfo, gid: int, request: WindowRequest, sizes: list[int],
                    refreshed: list[str]) -> tuple[tuple[Any, bytes], Endpoint]:
    """Call executor ``gid`` with ``request``, following it if its worker moved it.

    The driver's own executors (and every executor when there is no lookup) are called as
    :func:`call_executor` does. An executor of another worker that does not answer at its
    address for :data:`REFRESH_SLICE_SECONDS`, or goes silent mid-call (its pings
    unanswered), is looked up; when the lookup names another
    address or a new process, the same request is resent there (a new process gets it
    without ``after``: it never saw the window before it, and must not wait for it). Each
    refresh is appended to ``refreshed`` as ``"moved|replaced host:port"``.

    Returns:
        The reply (payload, body) and the endpoint that gave it.

    Raises:
        ExecutorUnreachable: ``EXECUTOR_UNREACHABLE`` when no address answered and no new
            one was learnt within ``topology.executor.answer.timeout.secs``.
        ExecutorUnresponsive: as :func:`call_executor`, when the lookup has the silent
            executor where it was (hung, not moved).
    """
    use(stage.tls)  # a Spark task's process follows the stage it runs
    endpoint = stage.endpoints[gid]
    pid = stage.pids.get(gid)
    if stage.lookup is None or pid is None:
        reply = call_executor(endpoint, stage.token, request, stage.connect_timeout,
                              stage.answer_timeout, sizes)
        return reply, endpoint
    deadline = time.monotonic() + stage.answer_timeout
    while True:
        try:
            reply = call_executor(endpoint, stage.token, request,
                                  min(REFRESH_SLICE_SECONDS, stage.answer_timeout),
                                  stage.answer_timeout, sizes)
            return reply, endpoint
        except ExecutorUnresponsive:
            # silent where it was (its host gone without a word, or hung): resent only if
            # its worker runs it elsewhere now; a hung one is given up on, as before
            found = look_up(stage.lookup, stage.token, gid, stage.answer_timeout)
            if found is None or refresh_decision(endpoint, pid, found) == "wait":
                raise
        except ConnectionError as exc:
            now = time.monotonic()
            found = look_up(stage.lookup, stage.token, gid, stage.answer_timeout)
            if found is None or refresh_decision(endpoint, pid, found) == "wait":
                if now > deadline:
                    msg = (f"executor {gid} ({stage.components[gid]}) did not answer at "
                           f"{endpoint.host}:{endpoint.port} and the driver learnt no new "
                           f"address within {stage.answer_timeout:g} s "
                           "(topology.executor.answer.timeout.secs); see its worker's log "
                           f"and supervisor: {exc}")
                    raise ExecutorUnreachable(msg, code="EXECUTOR_UNREACHABLE") from exc
                continue
        decision = refresh_decision(endpoint, pid, found)
        if decision == "replaced":
            request = replace(request, flags=request.flags.without_after())
        # the new address gets the whole bound again
        endpoint, pid = found.endpoint, found.pid
        deadline = time.monotonic() + stage.answer_timeout
        refreshed.append(f"{decision} {endpoint.host}:{endpoint.port}")


def _call_and_route(stage: StageInfo, window: int, flags: WindowFlags, gid: int,
                  inputs: dict[int, list[bytes]], control: list[Any] | None
                  ) -> Iterator[tuple[int, Any]]:
    """Call executor ``gid`` with ``inputs[gid]``; feed the executors chained to it.

    Its output for the executors chained to it is appended to their ``inputs``; the rest
    goes to later stages or, on an edge closing a cycle, to the driver for the next window.
    An executor given up on feeds nothing: the trees of its input fail, and its partners
    are called with what else they have.
    """
    mine = inputs[gid]
    request = WindowRequest(window, flags, rows=mine if control is None else None,
                            control=control)
    sizes: list[int] = []
    refreshed: list[str] = []
    try:
        (outputs, meta), endpoint = call_refreshing(stage, gid, request, sizes, refreshed)
    except (ExecutorUnresponsive, ExecutorUnreachable) as exc:
        yield DRIVER, (_lost(stage, gid, window, mine, exc).encode(), {}, None)
        return
    # checked after the call: a restarted executor's socket may appear meanwhile
    local = endpoint.local()
    call = CallRecord(local, 0 if local else sum(sizes), refreshed or None)
    partners = stage.chained.get(gid, ())
    deliveries = {}
    for target, blob in outputs.items():
        if target in partners:
            inputs[target].append(blob)
        elif stage.gid_levels[target] > stage.level:
            yield target, blob
        else:  # an edge closing a cycle: delivered in the next window
            deliveries[target] = blob
    yield DRIVER, (meta, deliveries, call)


def _lost(stage: StageInfo, gid: int, window: int, rows: list[bytes],
          exc: EngineError) -> WindowMeta:
    """The meta of an executor given up on: the trees of its input fail (they replay)."""
    from sparkstorm.engine.columnar.arrow_batch import blob_roots  # here: only _lost reads anchors

    component = stage.components[gid]
    why = Failure.of(FAIL_CRASH, f"{component}: executor {gid} did not answer window "
                                 f"{window}; it is restarted ({exc})")
    failed = {root: why for blob in rows for root in blob_roots(blob)}
    return WindowMeta(gid, component, failed=failed, lost=True)
