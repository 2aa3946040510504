"""``FileSpout``: storm-hdfs's ``HdfsSpout`` on fsspec paths.

The spout's tasks read the files of ``source_dir`` in name order, one task per file (lock
files, :mod:`.locks`), one line a tuple (``text`` gives ``[line]``; ``json`` and ``csv`` the
values of ``fields``). Hidden files (a name starting with ``.`` or ``_``) and names ending
with an ``ignore_suffixes`` entry (files still being written) are skipped.

Each tuple's message id is ``(file name, byte offset of its line)``; a failed tuple is
emitted again from the values the spout keeps. The position up to which every line is acked
is written to the file's lock every ``commit_count`` acks or ``commit_interval_ms``, so a
task that died is followed, on its file, by a reader that resumes there (its successor at
once, another task after ``lock_timeout_ms``). A fully read file whose every line was acked
is moved to ``done_dir``; a line that cannot be parsed (not UTF-8, not a JSON object, a CSV
row with another number of columns) moves its file to ``bad_dir`` at once, reported as
``FILE_UNPARSABLE``, and the spout goes on with the next file. When the folders cannot be
listed or locked (their filesystem is down, the source folder is missing) the spout reports
``FILE_SOURCE_UNAVAILABLE``, emits nothing and tries again at the next scan.

With checkpoints on the position is part of the spout's checkpoint: a rollback reads again
from the checkpointed position, a finished file is moved to ``done_dir`` when the checkpoint
that saw it finished commits, and the lock's position is the last committed checkpoint's.

Usage::

    from sparkstorm.connectors.files import FileSpout

    lines = FileSpout.spec(source_dir="/data/in", done_dir="/data/done",
                           bad_dir="/data/bad", format="json", fields=["user", "event"])
"""

from __future__ import annotations

import time
from typing import Any

from sparkstorm.connectors.files import fs as files_fs
from sparkstorm.connectors.files import locks
from sparkstorm.connectors.files.errors import FileConnectorError
from sparkstorm.connectors.files.formats import parse_line
from sparkstorm.connectors.files.naming import join
from sparkstorm.connectors.files.options import SPOUT_KEY, SpoutOptions, checkpoints_on
from sparkstorm.topology.component import Spout
from sparkstorm.topology.spec import ComponentSpec
from sparkstorm.topology.spec_args import resolve_config, resolve_par

SCAN_INTERVAL_SECONDS = 0.5
"""How often an idle task lists ``source_dir`` for a file to read."""
ERROR_REPORT_SECONDS = 30.0
"""An unreachable source is reported as the component's error at most this often."""


class FileSpout(Spout):
    """Reads the files of a folder line by line; see the module docstring."""

    outputs = ["line"]
    transient = ("fs", "handle", "options", "needs_recovery", "next_scan", "last_commit",
                 "last_heartbeat")

    @classmethod
    def spec(  # type: ignore[override]
        cls, name: str | None = None, par: int | dict[str, int] | None = None,
        num_tasks: int | None = None, config: dict[str, Any] | None = None, *,
        source_dir: str, done_dir: str, bad_dir: str, **settings: Any,
    ) -> ComponentSpec:
        """Declare a file spout; ``settings`` are those of :class:`SpoutOptions`.

        Raises:
            TopologyError: ``FILE_CONFIG_INVALID`` for a setting it cannot use.
        """
        options = SpoutOptions.from_dict(
            {"source_dir": source_dir, "done_dir": done_dir, "bad_dir": bad_dir, **settings},
            f"FileSpout {name or ''}")
        merged = dict(resolve_config(cls, config, name) or {}) | {SPOUT_KEY: options.to_dict()}
        return ComponentSpec.declare(cls, "spout", name=name, inputs=None,
                                     par=resolve_par(cls, par, name), num_tasks=num_tasks,
                                     config=merged, outputs=options.outputs())

    @classmethod
    def flux_spec(cls, *, name: str, par: int, num_tasks: int | None,
                  config: dict[str, Any]) -> ComponentSpec:
        """Declared from a Flux file: the settings are the config's ``topology.connector``."""
        settings = dict(config.get(SPOUT_KEY) or {})
        rest = {k: v for k, v in config.items() if k != SPOUT_KEY}
        if not all(settings.get(k) for k in ("source_dir", "done_dir", "bad_dir")):
            SpoutOptions.from_dict(settings, f"FileSpout {name!r}")  # raises, naming the gap
        return cls.spec(name=name, par=par, num_tasks=num_tasks, config=rest, **settings)

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        """Read the settings and reach the folders; the first file is picked by next_tuple."""
        component = str(context.get("componentid") or "files")
        self.options = SpoutOptions.from_dict(storm_conf.get(SPOUT_KEY) or {},
                                              f"FileSpout {component!r} ({SPOUT_KEY})")
        self.fs, self.source = files_fs.filesystem(self.options.source_dir)
        self.done = files_fs.filesystem(self.options.done_dir)[1]
        self.bad = files_fs.filesystem(self.options.bad_dir)[1]
        self.lock_dir = files_fs.filesystem(self.options.lock_dir)[1]
        for folder in (self.source, self.done, self.bad, self.lock_dir):
            self.fs.makedirs(folder, exist_ok=True)
        self.component = component
        self.owner = (f"{storm_conf.get('topology.name') or ''}:{component}:"
                      f"{context.get('taskid')}")
        self.checkpointed = checkpoints_on(storm_conf)
        self.file: str | None = None  # the name of the file being read
        self.position = 0  # byte offset of its next line to read
        self.eof = False
        self.outstanding: dict[int, tuple[int, list[Any]]] = {}  # offset -> (end, values)
        self.replay: list[int] = []
        self.finished: list[tuple[int | None, str]] = []  # checkpoints: (txid, name) to move
        self.cut_positions: dict[int, tuple[str | None, int]] = {}
        self.acks_since_commit = 0
        self.files_done = 0
        self.files_bad = 0
        self.handle: Any = None
        self.needs_recovery = False
        self.next_scan = 0.0
        self.last_commit = time.monotonic()
        self.last_heartbeat = time.monotonic()

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restored from a checkpoint: reopen the file at its position before reading."""
        self.__dict__.update(state)
        self.handle = None
        self.needs_recovery = True

    # -- Storm's spout API -----------------------------------------------------------------------
    def next_tuple(self) -> None:
        """Emit a failed line again, else the next line of the file (picking one if none)."""
        self._recover()
        try:
            self._heartbeat()
        except OSError as exc:  # the locks' filesystem: reported, tried again later
            self._unavailable(exc)
            return
        if self.replay:
            offset = self.replay.pop(0)
            entry = self.outstanding.get(offset)
            if entry is not None and self.file is not None:
                self.emit(entry[1], tup_id=(self.file, offset))
            return
        if self.file is None:
            try:
                if not self._pick_file():
                    return
            except OSError as exc:  # listing or locking failed: the next scan tries again
                self._unavailable(exc)
                return
        if len(self.outstanding) >= self.options.max_outstanding or self.eof:
            self._finish_if_done()
            return
        self._emit_next_line()

    def ack(self, tup_id: Any) -> None:
        """A line's tree completed: advance the acked position; finish a read file."""
        name, offset = tup_id
        if name != self.file or self.outstanding.pop(offset, None) is None:
            return  # a line of a file given up (bad) or already finished
        self.acks_since_commit += 1
        if not self.checkpointed and (
                self.acks_since_commit >= self.options.commit_count
                or time.monotonic() - self.last_commit >= self.options.commit_interval_ms / 1000):
            self._commit_position()
        self._finish_if_done()

    def fail(self, tup_id: Any) -> None:
        """A line's tree failed: emit it again."""
        name, offset = tup_id
        if name == self.file and offset in self.outstanding:
            self.replay.append(offset)

    def close(self) -> None:
        """Stopping: record the acked position in the lock (without checkpoints)."""
        if getattr(self, "file", None) is not None and not self.checkpointed:
            self._commit_position()
        self._close_handle()

    # -- checkpoint hooks (Storm's IStatefulComponent) -------------------------------------------
    def pre_prepare(self, txid: int) -> None:
        """The cut: files finished since the last one move when ``txid`` commits."""
        self._recover()
        self.finished = [(txid if at is None else at, name) for at, name in self.finished]
        self.cut_positions[txid] = (self.file, self._acked_position())

    def pre_commit(self, txid: int) -> None:
        """Checkpoint ``txid`` committed: move its finished files, record its position."""
        self._recover()
        due = [name for at, name in self.finished if at is not None and at <= txid]
        self.finished = [(at, name) for at, name in self.finished
                         if at is None or at > txid]
        for name in due:
            self._move_finished(name)
        cut = self.cut_positions.pop(txid, None)
        self.cut_positions = {k: v for k, v in self.cut_positions.items() if k > txid}
        if cut is not None and cut[0] is not None and cut[0] == self.file:
            locks.write_lock(self.fs, self._lock(cut[0]), self.owner, cut[1])

    def pre_rollback(self) -> None:
        """A rollback: the restored task reopens its file at the checkpointed position."""
        self._close_handle()

    # -- internals -------------------------------------------------------------------------------
    def _lock(self, name: str) -> str:
        return join(self.lock_dir, f"{name}.lock")

    def _acked_position(self) -> int:
        """Every line before this offset is acked (the first outstanding line's offset)."""
        return next(iter(self.outstanding), self.position)

    def _commit_position(self) -> None:
        if self.file is None:
            return
        self.acks_since_commit = 0
        self.last_commit = time.monotonic()
        locks.write_lock(self.fs, self._lock(self.file), self.owner, self._acked_position())

    def _heartbeat(self) -> None:
        """Keep this task's locks fresh so that no other task takes them over."""
        now = time.monotonic()
        if now - self.last_heartbeat < self.options.lock_timeout_ms / 3000:
            return
        self.last_heartbeat = now
        held = [name for _, name in self.finished]
        if self.file is not None:
            held.append(self.file)
        for name in held:
            current = locks.read_lock(self.fs, self._lock(name))
            position = current.position if current is not None else 0
            locks.write_lock(self.fs, self._lock(name), self.owner, position)

    def _candidates(self) -> list[str]:
        """The source folder's files to read, in name order.

        Raises:
            FileNotFoundError: the source folder is missing (an unmounted share, a bucket
                not there): an outage to report, not an empty folder.
        """
        try:
            found = files_fs.names(self.fs, self.source, missing_ok=False)
        except FileNotFoundError:
            self.source_missing = True
            msg = f"source folder {self.source!r} does not exist"
            raise FileNotFoundError(msg) from None
        if self.__dict__.pop("source_missing", False):  # back: its sub-folders may be gone
            for folder in (self.lock_dir, self.done, self.bad):
                self.fs.makedirs(folder, exist_ok=True)
        taken = {name for _, name in self.finished}
        return [name for name in found
                if not name.startswith((".", "_")) and name not in taken
                and not name.endswith(tuple(self.options.ignore_suffixes or ()))]

    def _pick_file(self) -> bool:
        now = time.monotonic()
        if now < self.next_scan:
            return False
        self.next_scan = now + SCAN_INTERVAL_SECONDS
        timeout = self.options.lock_timeout_ms / 1000
        for name in self._candidates():
            position = locks.acquire(self.fs, self._lock(name), self.owner, timeout)
            if position is None:
                continue
            if self._open(name, position):
                return True
        return False

    def _open(self, name: str, position: int) -> bool:
        try:
            self.handle = self.fs.open(join(self.source, name), "rb")
            self.handle.seek(position)
        except FileNotFoundError:  # moved away by another task meanwhile
            locks.release(self.fs, self._lock(name))
            self.handle = None
            return False
        self.file, self.position, self.eof = name, position, False
        self.outstanding, self.replay = {}, []
        self.logger.info("FileSpout %r reads %s from byte %d", self.component, name, position)
        return True

    def _emit_next_line(self) -> None:
        assert self.file is not None
        start = self.position
        try:
            line = self.handle.readline()
        except OSError as exc:
            self._give_up(self.file, f"could not be read ({type(exc).__name__}: {exc})",
                          "FILE_READ_FAILED", None)
            return
        if not line:
            self.eof = True
            self._finish_if_done()
            return
        self.position = start + len(line)
        if start == 0 and self.options.format == "csv" and self.options.csv_header:
            return
        if not line.strip():
            return  # blank lines carry nothing
        try:
            values = parse_line(self.options.format_settings(), line)
        except ValueError as exc:
            self._give_up(self.file, f"has a line at byte {start} that cannot be parsed as "
                          f"{self.options.format} ({exc})", "FILE_UNPARSABLE", self.bad)
            return
        self.outstanding[start] = (self.position, values)
        self.emit(values, tup_id=(self.file, start))

    def _finish_if_done(self) -> None:
        if self.file is None or not self.eof or self.outstanding or self.replay:
            return
        name = self.file
        self._close_handle()
        self.file, self.position, self.eof = None, 0, False
        self.next_scan = 0.0
        if self.checkpointed:  # moved when the checkpoint that covers this commits
            self.finished.append((None, name))
        else:
            self._move_finished(name)

    def _move_finished(self, name: str) -> None:
        files_fs.move(self.fs, join(self.source, name), join(self.done, name))
        locks.release(self.fs, self._lock(name))
        self.files_done += 1

    def _give_up(self, name: str, problem: str, code: str, move_to: str | None) -> None:
        """Drop the file: move it to ``move_to`` (the bad folder), report, read the next."""
        self._close_handle()
        if move_to is not None:
            files_fs.move(self.fs, join(self.source, name), join(move_to, name))
            self.files_bad += 1
        locks.release(self.fs, self._lock(name))
        self.file, self.position, self.eof = None, 0, False
        self.outstanding, self.replay = {}, []
        self.next_scan = 0.0
        where = f"moved to {self.options.bad_dir!r}" if move_to is not None else "skipped"
        msg = (f"FileSpout {self.component!r}: file {name!r} {problem}; the file was {where} "
               "and the spout goes on with the next file; its lines emitted before stay "
               "emitted; fix the file and put it back in the source folder")
        self.raise_exception(FileConnectorError(msg, code=code))

    def _unavailable(self, exc: OSError) -> None:
        """The folders cannot be reached: log, and report at most every 30 s."""
        problem = f"{type(exc).__name__}: {exc}"
        self.logger.warning("FILE_SOURCE_UNAVAILABLE: %s", problem)
        now = time.monotonic()
        if now - self.__dict__.get("last_unavailable", -ERROR_REPORT_SECONDS) \
                < ERROR_REPORT_SECONDS:
            return
        self.last_unavailable = now
        msg = (f"FileSpout {self.component!r}: its folders (source {self.options.source_dir!r}"
               f", locks {self.options.lock_dir!r}) cannot be listed "
               f"or locked ({problem}); the spout emits nothing and tries again every "
               f"{SCAN_INTERVAL_SECONDS} s; check the filesystem")
        self.raise_exception(FileConnectorError(msg, code="FILE_SOURCE_UNAVAILABLE"))

    def _close_handle(self) -> None:
        handle, self.handle = getattr(self, "handle", None), None
        if handle is not None:
            try:
                handle.close()
            except OSError:
                self.logger.debug("closing %s failed", self.file, exc_info=True)

    def _recover(self) -> None:
        """Restored from a checkpoint: move what it finished, reopen its file."""
        if not self.needs_recovery:
            return
        self.needs_recovery = False
        for _, name in self.finished:  # every one of them was covered by the checkpoint
            self._move_finished(name)
        self.finished = []
        if self.file is not None and self.handle is None:
            name, position, outstanding, replay = (self.file, self.position,
                                                   self.outstanding, self.replay)
            eof = self.eof
            if self._open(name, position):
                self.outstanding, self.replay, self.eof = outstanding, replay, eof
            else:
                self.file = None
