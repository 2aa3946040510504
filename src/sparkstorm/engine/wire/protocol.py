"""The requests executor processes answer, typed: one frozen dataclass per command.

Everything that asks an executor process for something (the Spark tasks of a window, the
driver, its pool, a rollback) builds one of these and sends :meth:`to_wire`, a msgpack-ready
dict whose bytes are those of the dicts built by hand before this module; the executor
decodes it with :func:`decode_request` and dispatches with ``match``
(``engine.executor.main``). The replies are the types of ``engine.wire.messages``
(:class:`~sparkstorm.engine.wire.messages.WindowMeta` with a window's outputs) and :data:`OK`.

=============  =======================================================  ==============
command        asks                                                     reply
=============  =======================================================  ==============
``window``     run window ``w`` (a spout's control or a bolt's rows)    outputs, meta
``skip``       window ``w`` will never come (its job failed)            ``"ok"``
``served``     answer once window ``w`` was served (or ``secs`` passed)  ``"ok"``/``"wait"``
``restore``    rebuild from checkpoint ``window``, serve from ``resume``  ``"ok"``
``replan``     take the plan of ``spec`` as executor ``gid``            ``"ok"``
``verdicts``   apply the acker's verdicts now (a spout, between windows)  ``"ok"``
``log_control``  set log levels and the debug sampling percentage       ``"ok"``
``ping``       are you alive (while a long window runs)                 ``"ok"``
``close``      close the tasks and exit after answering                 ``"ok"``
``where``      (the driver's endpoint lookup) where executor ``gid`` is   located or None
=============  =======================================================  ==============

Example:
    >>> request = WindowRequest(17, WindowFlags(checkpoint=True, after=16), rows=[b"x"])
    >>> request.to_wire()
    {'cmd': 'window', 'w': 17, 'checkpoint': True, 'after': 16, 'rows': [b'x']}
    >>> decode_request(request.to_wire()) == request
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, NamedTuple

OK = "ok"
"""The reply of every command but ``window`` and ``where`` (and a ``served`` in vain)."""
NOT_YET = "wait"
"""The reply of a ``served`` request whose window was not served within its seconds."""


@dataclass(frozen=True, slots=True)
class WindowFlags:
    """What every executor's request of one window carries besides its input.

    Attributes:
        checkpoint: take this executor's part of a checkpoint at the window's cut (None:
            checkpoints are off, and the key is not sent).
        committed: this checkpoint was committed: stateful bolts commit it first.
        after: serve this window once window ``after`` is done or skipped (overlapping
            windows).
    """

    checkpoint: bool | None = None
    committed: int | None = None
    after: int | None = None

    def without_after(self) -> WindowFlags:
        """These flags for a replaced executor process, which waits for no earlier window."""
        return replace(self, after=None)

    def to_wire(self) -> dict[str, Any]:
        """The keys set, in the order the executors always received them."""
        wire: dict[str, Any] = {}
        if self.checkpoint is not None:
            wire["checkpoint"] = self.checkpoint
        if self.committed is not None:
            wire["committed"] = self.committed
        if self.after is not None:
            wire["after"] = self.after
        return wire

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> WindowFlags:
        """Inverse of :meth:`to_wire` (extra keys ignored)."""
        checkpoint, committed, after = (data.get(k) for k in ("checkpoint", "committed",
                                                               "after"))
        return cls(None if checkpoint is None else bool(checkpoint),
                   None if committed is None else int(committed),
                   None if after is None else int(after))


@dataclass(frozen=True, slots=True)
class WindowRequest:
    """Run window ``window``: a bolt executor gets ``rows``, a spout executor ``control``.

    ``rows`` are the blobs the senders packed for it; ``control`` is a
    :class:`~sparkstorm.engine.wire.messages.SpoutControl` in its wire form.
    """

    TAG: ClassVar[str] = "window"
    window: int
    flags: WindowFlags = field(default_factory=WindowFlags)
    rows: list[bytes] | None = None
    control: list[Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        """``{"cmd": "window", "w": ..., <flags>, "rows" | "control": ...}``."""
        wire: dict[str, Any] = {"cmd": self.TAG, "w": self.window, **self.flags.to_wire()}
        if self.control is None:
            wire["rows"] = self.rows if self.rows is not None else []
        else:
            wire["control"] = self.control
        return wire

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> WindowRequest:
        """Inverse of :meth:`to_wire`."""
        control = data.get("control")
        return cls(int(data["w"]), WindowFlags.from_wire(data),
                   None if control is not None else list(data.get("rows") or []), control)


@dataclass(frozen=True, slots=True)
class SkipRequest:
    """Window ``window`` will not come (its job failed): later windows need not wait."""

    TAG: ClassVar[str] = "skip"
    window: int

    def to_wire(self) -> dict[str, Any]:
        """``{"cmd": "skip", "w": ...}``."""
        return {"cmd": self.TAG, "w": self.window}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> SkipRequest:
        """Inverse of :meth:`to_wire`."""
        return cls(int(data["w"]))


@dataclass(frozen=True, slots=True)
class ServedRequest:
    """Answer once window ``window`` was served here (or skipped), or after ``seconds``.

    The driver asks a chained stage's root executors (``engine.driver.hand_over_wait``): their
    part of the window is done before the Spark task that called them ends.
    """

    TAG: ClassVar[str] = "served"
    window: int
    seconds: float

    def to_wire(self) -> dict[str, Any]:
        """``{"cmd": "served", "w": ..., "secs": ...}``."""
        return {"cmd": self.TAG, "w": self.window, "secs": self.seconds}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> ServedRequest:
        """Inverse of :meth:`to_wire`."""
        return cls(int(data["w"]), float(data["secs"]))


@dataclass(frozen=True, slots=True)
class RestoreRequest:
    """Rebuild the tasks from checkpoint ``window`` (None: from scratch).

    Windows from ``resume`` on are served; ``parts`` names the checkpoint parts to merge
    when a replan regrouped the tasks since (None: this executor's own part).
    """

    TAG: ClassVar[str] = "restore"
    window: int | None
    resume: int
    parts: list[str] | None = None

    def to_wire(self) -> dict[str, Any]:
        """``{"cmd": "restore", "window": ..., "resume": ...[, "parts": ...]}``."""
        wire: dict[str, Any] = {"cmd": self.TAG, "window": self.window, "resume": self.resume}
        if self.parts is not None:
            wire["parts"] = self.parts
        return wire

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> RestoreRequest:
        """Inverse of :meth:`to_wire`."""
        window, parts = data.get("window"), data.get("parts")
        return cls(None if window is None else int(window), int(data.get("resume") or 0),
                   None if parts is None else [str(p) for p in parts])


@dataclass(frozen=True, slots=True)
class ReplanRequest:
    """Take the plan of topology spec ``spec`` (its dict form), as executor ``gid``."""

    TAG: ClassVar[str] = "replan"
    spec: dict[str, Any]
    gid: int

    def to_wire(self) -> dict[str, Any]:
        """``{"cmd": "replan", "spec": ..., "gid": ...}``."""
        return {"cmd": self.TAG, "spec": self.spec, "gid": self.gid}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> ReplanRequest:
        """Inverse of :meth:`to_wire`."""
        return cls(dict(data["spec"]), int(data["gid"]))


@dataclass(frozen=True, slots=True)
class VerdictsRequest:
    """A spout executor applies these verdicts now, between two windows.

    ``control`` is a ``SpoutControl``'s wire form (``engine.driver.verdict_push``).
    """

    TAG: ClassVar[str] = "verdicts"
    control: list[Any]

    def to_wire(self) -> dict[str, Any]:
        """``{"cmd": "verdicts", "control": ...}``."""
        return {"cmd": self.TAG, "control": self.control}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> VerdictsRequest:
        """Inverse of :meth:`to_wire`."""
        return cls(list(data["control"]))


@dataclass(frozen=True, slots=True)
class LogControlRequest:
    """Log levels by logger name, and the percentage of tuples logged (debug sampling)."""

    TAG: ClassVar[str] = "log_control"
    levels: dict[str, str]
    sample_pct: float = 0.0

    def to_wire(self) -> dict[str, Any]:
        """``{"cmd": "log_control", "levels": ..., "sample_pct": ...}``."""
        return {"cmd": self.TAG, "levels": self.levels, "sample_pct": self.sample_pct}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> LogControlRequest:
        """Inverse of :meth:`to_wire` (the form the pool also keeps in a file)."""
        return cls({str(k): str(v) for k, v in dict(data.get("levels") or {}).items()},
                   float(data.get("sample_pct") or 0.0))


@dataclass(frozen=True, slots=True)
class PingRequest:
    """Are you alive? Answered even while a long window runs."""

    TAG: ClassVar[str] = "ping"

    def to_wire(self) -> dict[str, Any]:
        """``{"cmd": "ping"}``."""
        return {"cmd": self.TAG}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> PingRequest:
        """Inverse of :meth:`to_wire`."""
        return cls()


@dataclass(frozen=True, slots=True)
class CloseRequest:
    """Close the tasks (``close()`` of each) and exit once the answer is out."""

    TAG: ClassVar[str] = "close"

    def to_wire(self) -> dict[str, Any]:
        """``{"cmd": "close"}``."""
        return {"cmd": self.TAG}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> CloseRequest:
        """Inverse of :meth:`to_wire`."""
        return cls()


@dataclass(frozen=True, slots=True)
class WhereRequest:
    """(To the driver's endpoint lookup, not an executor.) Where does ``gid`` answer now?"""

    TAG: ClassVar[str] = "where"
    gid: int

    def to_wire(self) -> dict[str, Any]:
        """``{"cmd": "where", "gid": ...}``."""
        return {"cmd": self.TAG, "gid": self.gid}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> WhereRequest:
        """Inverse of :meth:`to_wire`."""
        return cls(int(data["gid"]))


Request = (WindowRequest | SkipRequest | ServedRequest | RestoreRequest | ReplanRequest
           | VerdictsRequest | LogControlRequest | PingRequest | CloseRequest | WhereRequest)
"""Any request of this protocol."""

_BY_TAG: dict[str, Any] = {cls.TAG: cls for cls in (
    WindowRequest, SkipRequest, ServedRequest, RestoreRequest, ReplanRequest, VerdictsRequest,
    LogControlRequest, PingRequest, CloseRequest, WhereRequest)}


def decode_request(data: Any) -> Request:
    """The request ``data`` (a decoded frame) is.

    Raises:
        ValueError: not a request of this protocol (its command named, when it has one).
    """
    cls = _BY_TAG.get(str(data.get("cmd"))) if isinstance(data, dict) else None
    if cls is None:
        what = repr(data.get("cmd")) if isinstance(data, dict) else type(data).__name__
        msg = f"unknown command {what}; expected one of {sorted(_BY_TAG)}"
        raise ValueError(msg)
    try:
        request: Request = cls.from_wire(data)
    except (KeyError, TypeError, ValueError) as exc:
        msg = f"malformed {cls.TAG!r} request ({type(exc).__name__}: {exc})"
        raise ValueError(msg) from exc
    return request


class CallRecord(NamedTuple):
    """How one Spark task's executor call went, as the task reports it to the driver.

    Attributes:
        host_local: over the executor's Unix socket on the caller's host.
        crossed_bytes: the request's and reply's bytes across hosts (0 when host-local).
        refreshed: the addresses it followed the executor to (``engine.driver.endpoint_lookup``),
            each ``"<decision> host:port"``; None when the first address answered.
    """

    host_local: bool
    crossed_bytes: int
    refreshed: list[str] | None = None


__all__ = ["NOT_YET", "OK", "CallRecord", "CloseRequest", "LogControlRequest", "PingRequest",
           "ReplanRequest", "Request", "RestoreRequest", "ServedRequest", "SkipRequest",
           "VerdictsRequest", "WhereRequest", "WindowFlags", "WindowRequest", "decode_request"]
