"""``FileBolt``: storm-hdfs's ``HdfsBolt`` on fsspec, exactly once with checkpoints.

Each task writes its own files, ``{prefix}{component}-{task}-{rotation}-{timestamp_ms}
{extension}`` (:mod:`.naming`), in the format chosen (:mod:`.formats`), into the folder
``path`` (a local path or any fsspec URL). A file is closed when it reaches
``rotate_size_bytes`` or is ``rotate_interval_ms`` old, and then moved to ``move_to`` if set
(Storm's ``MoveFileAction``).

Without checkpoints (Storm's behaviour) the file is written under its own name, and a tuple is
acked once its record is synced: flushed and fsynced (where the filesystem has it), every
``sync_count`` tuples and at the latest ``sync_interval_ms`` after its record was written.
Parquet files are readable only once closed, so for Parquet a sync closes the file. A write
that fails fails the unsynced tuples (``FILE_WRITE_FAILED``), so their spout replays them: at
least once.

With checkpoints on (``topology.checkpoint.windows`` > 0, or ``topology.reliability:
checkpoint``) a file is written as a hidden pending file (``.{name}.pending``) and tuples are
acked as they are written: their trees are part of the checkpoints. At each checkpoint cut
(``pre_prepare``) the open file is synced and closed; when that checkpoint commits
(``pre_commit``) its files are renamed to their names and the rotation action applied. A
write that fails raises ``FILE_WRITE_FAILED`` so that the topology rolls back (the records
since the last cut are in the dropped file). A rollback (``pre_rollback``), or a task
restored after its executor died, deletes the pending files that no committed checkpoint
covers and publishes those a committed one does, so every record is in the output exactly
once. A file then holds at most one checkpoint interval of records.

Usage::

    from sparkstorm.connectors.files import FileBolt

    out = FileBolt.spec(inputs=[counts], path="s3://bucket/counts", format="parquet",
                        rotate_size_bytes=64 << 20)
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from sparkstorm.config.reliability import CHECKPOINT, reliability_mode
from sparkstorm.connectors.files import fs as files_fs
from sparkstorm.connectors.files.errors import FileConnectorError
from sparkstorm.connectors.files.formats import RecordWriter, open_writer
from sparkstorm.connectors.files.naming import (
    base_name,
    file_name,
    is_pending_of,
    join,
    pending_name,
)
from sparkstorm.connectors.files.options import BOLT_KEY, BoltOptions, checkpoints_on
from sparkstorm.topology.component import Bolt
from sparkstorm.topology.spec import ComponentSpec
from sparkstorm.topology.tuple import Tuple

ERROR_REPORT_SECONDS = 30.0
"""A failed write is reported as the component's error at most this often (logged always)."""


class FileBolt(Bolt):
    """Writes each tuple as a record to files; see the module docstring."""

    outputs: ClassVar[list[Any]] = []
    auto_ack: ClassVar[bool] = False
    transient = ("fs", "writer", "handle", "unsynced", "options", "needs_recovery")

    @classmethod
    def spec(  # type: ignore[override]
        cls, name: str | None = None, inputs: Any = None,
        par: int | dict[str, int] | None = None, num_tasks: int | None = None,
        config: dict[str, Any] | None = None, *, path: str, **settings: Any,
    ) -> ComponentSpec:
        """Declare a file sink; ``settings`` are those of :class:`BoltOptions`.

        Raises:
            TopologyError: ``FILE_CONFIG_INVALID`` for a setting it cannot use.
        """
        options = BoltOptions.from_dict({"path": path, **settings}, f"FileBolt {name or ''}")
        merged = dict(config or {}) | {BOLT_KEY: options.to_dict()}
        return super().spec(name=name, inputs=inputs, par=par, num_tasks=num_tasks,
                            config=merged, outputs=[])

    @classmethod
    def flux_spec(cls, *, name: str, par: int, num_tasks: int | None,
                  config: dict[str, Any]) -> ComponentSpec:
        """Declared from a Flux file: the settings are the config's ``topology.connector``."""
        settings = dict(config.get(BOLT_KEY) or {})
        rest = {k: v for k, v in config.items() if k != BOLT_KEY}
        if not settings.get("path"):
            BoltOptions.from_dict(settings, f"FileBolt {name!r}")  # raises, naming the gap
        return cls.spec(name=name, par=par, num_tasks=num_tasks, config=rest, **settings)

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Read the settings and reach the folder; files open with the first record."""
        component = str(context.get("componentid") or "files")
        self.options = BoltOptions.from_dict(storm_conf.get(BOLT_KEY) or {},
                                             f"FileBolt {component!r} ({BOLT_KEY})")
        self.fs, self.folder = files_fs.filesystem(self.options.path)
        self.fs.makedirs(self.folder, exist_ok=True)
        if self.options.move_to:
            self.fs.makedirs(files_fs.filesystem(self.options.move_to)[1], exist_ok=True)
        self.component = component
        self.task = int(context.get("taskid") or 0)
        self.checkpointed = checkpoints_on(storm_conf)
        self.drops_bad_tuples = reliability_mode(storm_conf) == CHECKPOINT
        """Under checkpoint reliability a failed tuple rolls the topology back, and a tuple
        whose data the bolt cannot write would roll it back every time: it is reported and
        dropped instead (acked)."""
        self.stream_fields: dict[tuple[str, str], list[str]] = {
            (source, stream): list(names)
            for source, streams in context.get("source->stream->fields", {}).items()
            for stream, names in streams.items()}
        self.rotation = 0
        self.current: str | None = None  # final path of the open file
        self.opened_at = 0.0
        # (checkpoint txid, final path) to publish; txid None: closed since the last cut
        self.sealed: list[tuple[int | None, str]] = []
        self.unflushed = 0
        self.files_written = 0
        self.last_report = 0.0
        self.writer: RecordWriter | None = None
        self.handle: Any = None
        self.unsynced: list[Tuple] = []
        self.oldest_unsynced = 0.0
        self.needs_recovery = self.checkpointed

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restored from a checkpoint: recover its files before the next record."""
        self.__dict__.update(state)
        self.needs_recovery = True
        self.current = None

    # -- tuples ----------------------------------------------------------------------------------
    def process(self, tup: Tuple) -> None:
        """Write ``tup``'s record; ack it now (checkpoints) or once synced."""
        self._recover()
        try:
            record = self._record(tup)
        except FileConnectorError as exc:
            self.raise_exception(exc, tup)
            if self.drops_bad_tuples:
                self.ack(tup)
            else:
                self.fail(tup, reason=str(exc))
            return
        try:
            self._open_if_needed()
            assert self.writer is not None
            self.writer.write(record)
        except Exception as exc:  # noqa: BLE001 - a filesystem's own errors: fail, go on
            if not self.checkpointed:
                self.fail(tup, reason=f"FILE_WRITE_FAILED: {exc}")
            self._write_failed(exc)
            return
        if self.checkpointed:
            self.ack(tup)
            self.unflushed += 1
        else:
            if not self.unsynced:
                self.oldest_unsynced = time.monotonic()
            self.unsynced.append(tup)
        self._sync_or_rotate()

    def end_window(self) -> None:
        """Sync what waited ``sync_interval_ms``; close a file that is due."""
        self._recover()
        self._sync_or_rotate(timed=True)

    # -- checkpoint hooks (Storm's IStatefulComponent) -------------------------------------------
    def pre_prepare(self, txid: int) -> None:
        """The checkpoint cut: close the open file; it is published when ``txid`` commits."""
        self._recover()
        if self.checkpointed and self.current is not None:
            self._close()
        self.sealed = [(txid if at is None else at, path) for at, path in self.sealed]

    def pre_commit(self, txid: int) -> None:
        """Checkpoint ``txid`` committed: publish the files it covers."""
        self._recover()
        due = [path for at, path in self.sealed if at is not None and at <= txid]
        self.sealed = [(at, path) for at, path in self.sealed
                       if at is None or at > txid]
        for path in due:
            self._publish(path)

    def pre_rollback(self) -> None:
        """A rollback: drop the open file; the restored task cleans the rest up."""
        self._drop_open_file()

    def cleanup(self) -> None:
        """Stopping: sync and close the open file (without checkpoints; else drop it)."""
        if self.checkpointed:
            self._drop_open_file()
        elif getattr(self, "current", None) is not None:
            self._close()

    close = cleanup

    # -- internals -------------------------------------------------------------------------------
    def _record(self, tup: Tuple) -> dict[str, Any]:
        names = self.stream_fields.get((tup.component, tup.stream))
        if names is None:
            names = list(getattr(tup.values, "_fields", ())) or [
                f"f{i}" for i in range(len(tup.values))]
        record = dict(zip(names, tup.values, strict=False))
        chosen = self.options.fields
        if chosen is None:
            return record
        missing = [name for name in chosen if name not in record]
        if missing:
            msg = (f"FileBolt {self.component!r}: stream {tup.component}:{tup.stream} has no "
                   f"field(s) {missing} (fields {names}); the tuple was failed; set 'fields' "
                   "to fields the stream declares")
            raise FileConnectorError(msg, code="FILE_TUPLE_UNMAPPABLE")
        return {name: record[name] for name in chosen}

    def _open_if_needed(self) -> None:
        if self.current is not None:
            return
        name = file_name(self.options.prefix, self.component, self.task, self.rotation,
                         int(time.time() * 1000), self.options.extension)
        self.rotation += 1
        self.current = join(self.folder, name)
        target = join(self.folder, pending_name(name)) if self.checkpointed else self.current
        self.handle = self.fs.open(target, "wb")
        self.writer = open_writer(self.options.format_settings(), self.handle)
        self.opened_at = time.monotonic()

    def _sync_or_rotate(self, timed: bool = False) -> None:
        """Close or sync what is due: counts and size after each tuple, times when ``timed``.

        Times are checked at the end of each window only, which keeps a clock read off
        the per-tuple path.
        """
        options, writer = self.options, self.writer
        try:
            if writer is not None and (
                    options.rotation_due(writer.size, time.monotonic() - self.opened_at)
                    if timed else options.rotate_size_bytes is not None
                    and writer.size >= options.rotate_size_bytes):
                self._close()
            elif len(self.unsynced) >= options.sync_count or (
                    timed and options.sync_due(len(self.unsynced),
                                               time.monotonic() - self.oldest_unsynced)):
                if options.format == "parquet" and not self.checkpointed:
                    self._close()  # a Parquet file's rows are readable once it is closed
                else:
                    self._sync()
            elif self.unflushed >= options.sync_count and writer is not None:
                writer.flush()  # bounds a Parquet file's buffered rows
                self.unflushed = 0
        except Exception as exc:  # noqa: BLE001 - a filesystem's own errors: fail, go on
            self._write_failed(exc)

    def _sync(self) -> None:
        self.unflushed = 0
        if self.writer is not None and self.handle is not None:
            self.writer.flush()
            files_fs.sync(self.handle)
        for tup in self.unsynced:
            self.ack(tup)
        self.unsynced = []

    def _close(self) -> None:
        """Sync, close and hand on the open file: rotate it now, or publish it on commit."""
        assert self.current is not None and self.writer is not None
        self.writer.close()
        self._sync()
        self.handle.close()
        path, self.current, self.writer, self.handle = self.current, None, None, None
        self.files_written += 1
        if self.checkpointed:  # published when the checkpoint of the next cut commits
            self.sealed.append((None, path))
        else:
            self._rotated(path)

    def _publish(self, path: str) -> None:
        """Rename ``path``'s pending file to ``path`` (done before if it is gone)."""
        name = base_name(path)
        if files_fs.move(self.fs, join(self.folder, pending_name(name)), path):
            self._rotated(path)

    def _rotated(self, path: str) -> None:
        """Storm's rotation action: move the closed file to ``move_to``."""
        if self.options.move_to:  # a folder of the same filesystem
            folder = files_fs.filesystem(self.options.move_to)[1]
            self.fs.mv(path, join(folder, base_name(path)))

    def _drop_open_file(self) -> None:
        handle, current = getattr(self, "handle", None), getattr(self, "current", None)
        self.writer, self.handle, self.current = None, None, None
        if handle is not None:
            try:
                handle.close()
            except Exception:
                self.logger.debug("closing a dropped file failed", exc_info=True)
        if current is not None and self.checkpointed:
            pending = join(self.folder, pending_name(base_name(current)))
            if self.fs.exists(pending):
                self.fs.rm(pending)

    def _recover(self) -> None:
        """After a start or a restore: publish what the checkpoint covers, drop the rest.

        Files sealed at a cut that the restored checkpoint includes were covered by a
        committed checkpoint; a pending file of this task that is not listed was written
        after the cut (or by a run that never committed) and is deleted.
        """
        if not self.needs_recovery:
            return
        self.needs_recovery = False
        keep = {pending_name(base_name(path)) for _, path in self.sealed}
        for _, path in self.sealed:
            self._publish(path)
        self.sealed = []
        for name in files_fs.names(self.fs, self.folder):
            if name not in keep and is_pending_of(name, self.options.prefix, self.component,
                                                  self.task):
                self.logger.info("FileBolt %r: deleting %s, which no committed checkpoint "
                                 "covers", self.component, name)
                self.fs.rm(join(self.folder, name))

    def _write_failed(self, exc: Exception) -> None:
        """Fail the unsynced tuples and drop the file; under checkpoints, roll back.

        With checkpoints the records since the last cut are in the dropped file, and under
        ``topology.reliability: checkpoint`` a failed tuple is replayed only by a rollback:
        raising makes the engine roll the topology back, and the spouts replay them.

        Raises:
            FileConnectorError: ``FILE_WRITE_FAILED`` under checkpoints.
        """
        reason = f"FILE_WRITE_FAILED: {exc}"
        for tup in self.unsynced:
            self.fail(tup, reason=reason)
        self.unsynced = []
        self._drop_open_file()
        msg = (f"FileBolt {self.component!r}: writing to {self.options.path!r} failed "
               f"({type(exc).__name__}: {exc}); "
               + ("the topology rolls back to its last checkpoint and replays"
                  if self.checkpointed else "the tuples not yet synced were failed so that "
                  "their spouts replay them")
               + "; check the folder and its filesystem")
        if self.checkpointed:
            raise FileConnectorError(msg, code="FILE_WRITE_FAILED") from exc
        self.logger.warning("%s", reason)
        now = time.monotonic()
        if now - self.last_report >= ERROR_REPORT_SECONDS:
            self.last_report = now
            self.raise_exception(FileConnectorError(msg, code="FILE_WRITE_FAILED"))
