"""What the Redis and SQL bolts share: one batch per streaming window, an error stream.

:class:`WindowBatchBolt` keeps each tuple that ``process`` maps in a pending list and hands the
whole list to :meth:`WindowBatchBolt.flush` when the window ends (the executor calls every
bolt's ``end_window()`` after the window's last input batch). So a window costs one round trip
to the outside system, not one per tuple. ``flush`` acks (or emits from and acks) each tuple
once its write or read succeeded; when it raises, every tuple of the batch it did not settle
is failed, so that its spout replays it, and the problem becomes the component's error (the UI
shows it) while the topology goes on. Under ``topology.reliability: checkpoint`` a failed tuple
is replayed only by a rollback, so there ``end_window`` raises instead: the topology rolls
back to its last committed checkpoint and the spouts replay from there.

A tuple that cannot be mapped (a missing field, a value of the wrong kind), or that the
outside system refuses on its own, never stalls anything: it is acked and emitted, anchored to
itself, on the bolt's ``errors`` stream as ``[code, error, values]`` (the stable error code,
the message, the input tuple's values), and the code is reported as the component's error.
Subscribe a bolt to ``errors`` to keep them; unsubscribed, they are only logged and reported.

Settings come from the component's config key ``topology.connector`` (a dict): the bolts'
``spec(...)`` writes it, and a Flux file sets it in the bolt's ``config``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from sparkstorm.config.reliability import CHECKPOINT, reliability_mode
from sparkstorm.errors import SparkstormError
from sparkstorm.topology.component import Bolt
from sparkstorm.topology.spec import ComponentSpec, input_spec_placeholder
from sparkstorm.topology.spec_args import resolve_config, resolve_par
from sparkstorm.topology.stream import DEFAULT_STREAM, Stream
from sparkstorm.topology.tuple import Tuple

SETTINGS_KEY = "topology.connector"
"""The component config key that holds a connector bolt's settings."""
ERROR_STREAM = "errors"
"""The stream a connector bolt emits the tuples it could not map or write on."""
ERROR_FIELDS = ["code", "error", "values"]
ERROR_REPORT_SECONDS = 30.0
"""The same error code is reported as the component's error at most this often (logged always)."""

Item = TypeVar("Item")


class ConnectorError(SparkstormError, RuntimeError):
    """A problem with one tuple or with the outside system that the bolt reports and survives."""


def error_stream() -> Stream:
    """The ``errors`` stream every connector bolt declares."""
    return Stream(ERROR_FIELDS, name=ERROR_STREAM)


def settings_from(conf: Mapping[str, Any], who: str, code: str) -> dict[str, Any]:
    """The connector settings in ``conf`` (a component's effective conf).

    Raises:
        ConnectorError: ``code`` when the key is missing or not a mapping.
    """
    settings = conf.get(SETTINGS_KEY)
    if not isinstance(settings, Mapping):
        msg = (f"{who}: the component config has no {SETTINGS_KEY!r} mapping (got "
               f"{settings!r}); declare the bolt with its spec(...) settings, or in a Flux "
               f"file set config: {{{SETTINGS_KEY}: {{...}}}} on the bolt")
        raise ConnectorError(msg, code=code)
    return dict(settings)


class WindowBatchBolt(Bolt, Generic[Item]):
    """A bolt that writes or reads its window's tuples in one batch (see the module docstring).

    Subclasses define :meth:`map_tuple` (a tuple to the item of the batch, or a
    :class:`ConnectorError` for one that cannot be mapped) and :meth:`flush` (do the batch;
    settle each tuple). ``pending`` holds the window's ``(tuple, item)`` pairs.
    """

    auto_ack: ClassVar[bool] = False
    unavailable_code: ClassVar[str] = "CONNECTOR_UNAVAILABLE"
    """The code of a batch that failed as a whole (the outside system is down)."""

    @classmethod
    def read_settings(cls, raw: dict[str, Any]) -> Any:
        """The connector's checked settings from ``raw`` (its ``*_CONFIG_INVALID`` if bad).

        The settings object has ``to_dict()`` and ``output_fields`` (None: only errors).
        """
        raise NotImplementedError

    @classmethod
    def spec(  # type: ignore[override]
        cls, name: str | None = None, inputs: Any = None,
        par: int | dict[str, int] | None = None, num_tasks: int | None = None,
        config: dict[str, Any] | None = None, **settings: Any,
    ) -> ComponentSpec:
        """Declare the bolt; ``settings`` are those of its section of docs/connectors.md.

        Without ``settings``, they are read from ``config['topology.connector']`` (what a
        Flux file gives). Checked here (:meth:`read_settings`), so a bad one fails at
        declaration with the connector's ``*_CONFIG_INVALID``.
        """
        config = resolve_config(cls, config, name)
        raw = settings or dict(config.get(SETTINGS_KEY) or {})
        checked = cls.read_settings(raw)
        config[SETTINGS_KEY] = checked.to_dict()
        outputs = [error_stream()]
        if checked.output_fields:
            outputs.insert(0, Stream(checked.output_fields, name=DEFAULT_STREAM))
        return ComponentSpec.declare(
            cls, "bolt", name=name, inputs=input_spec_placeholder(inputs),
            par=resolve_par(cls, par, name), num_tasks=num_tasks, config=config,
            outputs=outputs)

    @classmethod
    def flux_spec(cls, *, name: str, par: int, num_tasks: int | None,
                  config: dict[str, Any]) -> ComponentSpec:
        """The declaration a Flux file makes: ``spec`` with the settings in ``config``."""
        spec: ComponentSpec = cls.spec(name=name, par=par, num_tasks=num_tasks, config=config)
        return spec

    def init_batching(self, name: str) -> None:
        """Start with an empty batch; ``name`` is the bolt's kind for messages."""
        self.kind_name = name
        self.rolls_back = reliability_mode(self.storm_conf) == CHECKPOINT
        """``topology.reliability: checkpoint``: a failed batch raises (a rollback replays)."""
        self.pending: list[tuple[Tuple, Item]] = []
        self.last_reports: dict[str, float] = {}
        self.positions: dict[tuple[str, str], dict[str, int]] = {}
        """(source, stream) -> field name -> its position in the values."""
        self.fields: dict[tuple[str, str], list[str]] = {
            (source, stream): list(names)
            for source, streams in self.context.get("source->stream->fields", {}).items()
            for stream, names in streams.items()}

    @property
    def where(self) -> str:
        """The bolt as messages name it."""
        return f"{self.kind_name} {self.context.get('componentid', self.component_name)!r}"

    def map_tuple(self, tup: Tuple) -> Item:
        """The batch item of ``tup``.

        Raises:
            ConnectorError: the tuple cannot be mapped (it goes to the ``errors`` stream).
        """
        raise NotImplementedError

    def flush(self, batch: list[tuple[Tuple, Item]]) -> None:
        """Do one window's batch and ack (or reject) each of its tuples.

        Raises:
            Exception: the batch failed as a whole; its unsettled tuples are failed.
        """
        raise NotImplementedError

    def describe_failure(self, exc: Exception) -> str:
        """What to tell the operator about a batch that raised ``exc``."""
        return f"{type(exc).__name__}: {exc}"

    def failure_code(self, exc: Exception) -> str:
        """The error code of a batch that raised ``exc`` (default ``unavailable_code``)."""
        return self.unavailable_code

    def process(self, tup: Tuple) -> None:
        """Map ``tup`` into this window's batch; a tuple that cannot be mapped is rejected."""
        try:
            item = self.map_tuple(tup)
        except ConnectorError as exc:
            self.reject(tup, exc.code, exc.args[0])
            return
        self.pending.append((tup, item))

    def end_window(self) -> None:
        """Do the window's batch; fail its tuples when it raises (their spouts replay them).

        Raises:
            ConnectorError: the batch failed under ``topology.reliability: checkpoint``.
        """
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        try:
            self.flush(batch)
        except Exception as exc:  # any failure of the batch fails its tuples
            problem, code = self.describe_failure(exc), self.failure_code(exc)
            open_tuples = [tup for tup, _ in batch if not tup.done]
            reason = f"{code}: {problem}"
            for tup in open_tuples:
                self.fail(tup, reason=reason)
            self.logger.warning("%s: %d tuple(s) failed: %s", self.where, len(open_tuples),
                                problem)
            if self.rolls_back:
                msg = (f"{self.where}: {problem}; the topology rolls back to its last "
                       "committed checkpoint and replays from there")
                raise ConnectorError(msg, code=code) from exc
            self.report(code,
                        f"{self.where}: {problem}; {len(open_tuples)} tuple(s) of this window "
                        "were failed so that their spouts replay them; the bolt retries with "
                        "the next window")

    def reject(self, tup: Tuple, code: str, error: str) -> None:
        """Send ``tup`` to the ``errors`` stream with ``code`` and ack it."""
        self.emit([code, error, list(tup.values)], stream=ERROR_STREAM, anchors=[tup])
        self.ack(tup)
        self.logger.warning("%s", error)
        self.report(code, error)

    def report(self, code: str, text: str) -> None:
        """Make ``text`` the component's error, at most every ``ERROR_REPORT_SECONDS`` per code."""
        now = time.monotonic()
        if now - self.last_reports.get(code, -ERROR_REPORT_SECONDS) >= ERROR_REPORT_SECONDS:
            self.last_reports[code] = now
            self.raise_exception(ConnectorError(text, code=code))

    def field_reader(self, tup: Tuple, unmappable_code: str) -> Callable[[str], Any]:
        """A function giving ``tup``'s value of a field by name.

        It raises :class:`ConnectorError` (``unmappable_code``) for a field the stream lacks.
        """
        key = (tup.component, tup.stream)
        positions = self.positions.get(key)
        if positions is None:
            names = self.fields.get(key) or list(getattr(tup.values, "_fields", ()))
            positions = self.positions[key] = {name: i for i, name in enumerate(names)}
        values = tup.values

        def field(name: str) -> Any:
            try:
                return values[positions[name]]
            except (KeyError, IndexError):  # not a field, or the tuple is short of it
                msg = (f"{self.where}: stream {tup.component}:{tup.stream} has no field "
                       f"{name!r} (its fields: {list(positions)}; the tuple has "
                       f"{len(values)} values); the tuple went to the {ERROR_STREAM!r} "
                       "stream; name fields the stream declares in the bolt's settings")
                raise ConnectorError(msg, code=unmappable_code) from None

        return field

    def __getstate__(self) -> dict[str, Any]:
        """A checkpoint keeps nothing of the bolt: its batch is empty between windows."""
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Nothing to restore (see :meth:`__getstate__`)."""
        self.__dict__.update(state)
