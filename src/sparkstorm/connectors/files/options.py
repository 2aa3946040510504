"""The settings of ``FileBolt`` and ``FileSpout``, as plain data checked once.

They travel in the component's config (``topology.connector``), so ``.spec()``
keywords and a Flux file's ``config:`` give the same thing.

Example:
    >>> options = BoltOptions.from_dict({"path": "/data/out", "format": "csv",
    ...                                  "rotate_size_bytes": 1024})
    >>> options.extension, options.sync_count
    ('.csv', 1000)
    >>> options.rotation_due(size=2048, age_s=0.0), options.rotation_due(size=10, age_s=9e9)
    (True, False)
    >>> BoltOptions.from_dict({"path": "/x", "format": "xml"})
    Traceback (most recent call last):
    ...
    sparkstorm.errors.TopologyError: [FILE_CONFIG_INVALID] ...
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from sparkstorm.config.reliability import checkpoint_every
from sparkstorm.connectors.files.formats import EXTENSIONS, FORMATS, FormatSettings
from sparkstorm.errors import TopologyError

BOLT_KEY = "topology.connector"
SPOUT_KEY = "topology.connector"
READABLE_FORMATS = ("text", "json", "csv")


@dataclass(frozen=True)
class BoltOptions:
    """``FileBolt``'s settings (docs/connectors.md, "FileBolt")."""

    path: str
    format: str = "json"
    fields: list[str] | None = None
    field_delimiter: str = ","
    csv_header: bool = True
    parquet_compression: str = "snappy"
    prefix: str = ""
    extension: str = ""
    sync_count: int = 1000
    sync_interval_ms: int = 1000
    rotate_size_bytes: int | None = None
    rotate_interval_ms: int | None = None
    move_to: str | None = None

    @classmethod
    def from_dict(cls, raw: dict[str, Any], where: str = "FileBolt") -> BoltOptions:
        """Checked settings from ``raw``.

        Raises:
            TopologyError: ``FILE_CONFIG_INVALID`` naming the setting and what it takes.
        """
        values = _known(raw, cls, where)
        if not isinstance(values.get("path"), str) or not values["path"]:
            _invalid(where, "'path' (the output folder, a path or fsspec URL) is required")
        if values.get("format", "json") not in FORMATS:
            _invalid(where, f"format must be one of {list(FORMATS)}, got {values['format']!r}")
        _fields(values, where)
        for name in ("sync_count", "sync_interval_ms"):
            _positive(values, name, where, optional=False)
        for name in ("rotate_size_bytes", "rotate_interval_ms"):
            _positive(values, name, where, optional=True)
        options = cls(**values)
        if not options.extension:
            options = cls(**(values | {"extension": EXTENSIONS[options.format]}))
        return options

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the component's config."""
        return asdict(self)

    def format_settings(self) -> FormatSettings:
        """What the record writer needs."""
        return FormatSettings(self.format, self.fields, self.field_delimiter,
                              self.csv_header, self.parquet_compression)

    def rotation_due(self, size: int, age_s: float) -> bool:
        """Whether a file of ``size`` bytes opened ``age_s`` ago is to be closed."""
        return ((self.rotate_size_bytes is not None and size >= self.rotate_size_bytes)
                or (self.rotate_interval_ms is not None
                    and age_s * 1000 >= self.rotate_interval_ms))

    def sync_due(self, unsynced: int, age_s: float) -> bool:
        """Whether ``unsynced`` records, the oldest written ``age_s`` ago, are to be synced."""
        return unsynced >= self.sync_count or (
            unsynced > 0 and age_s * 1000 >= self.sync_interval_ms)


@dataclass(frozen=True)
class SpoutOptions:
    """``FileSpout``'s settings (docs/connectors.md, "FileSpout"; Storm's ``hdfsspout.*``)."""

    source_dir: str
    done_dir: str
    bad_dir: str
    lock_dir: str = ""
    format: str = "text"
    fields: list[str] | None = None
    csv_header: bool = False
    ignore_suffixes: list[str] | None = None
    commit_count: int = 100
    commit_interval_ms: int = 1000
    lock_timeout_ms: int = 30_000
    max_outstanding: int = 10_000

    @classmethod
    def from_dict(cls, raw: dict[str, Any], where: str = "FileSpout") -> SpoutOptions:
        """Checked settings from ``raw``.

        Raises:
            TopologyError: ``FILE_CONFIG_INVALID`` naming the setting and what it takes.
        """
        values = _known(raw, cls, where)
        for name in ("source_dir", "done_dir", "bad_dir"):
            if not isinstance(values.get(name), str) or not values[name]:
                _invalid(where, f"{name!r} (a folder path or fsspec URL) is required")
        fmt = values.get("format", "text")
        if fmt not in READABLE_FORMATS:
            _invalid(where, f"format must be one of {list(READABLE_FORMATS)}, got {fmt!r}")
        _fields(values, where)
        if fmt in ("json", "csv") and not values.get("fields"):
            _invalid(where, f"format {fmt!r} needs 'fields': the names of the values to emit")
        for name in ("commit_count", "commit_interval_ms", "lock_timeout_ms",
                     "max_outstanding"):
            _positive(values, name, where, optional=False)
        suffixes = values.get("ignore_suffixes")
        if suffixes is None:
            values["ignore_suffixes"] = [".ignore", ".inprogress", ".tmp"]
        elif not isinstance(suffixes, list) or not all(isinstance(s, str) for s in suffixes):
            _invalid(where, f"ignore_suffixes must be a list of strings, got {suffixes!r}")
        if not values.get("lock_dir"):
            values["lock_dir"] = values["source_dir"].rstrip("/") + "/.lock"
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the component's config."""
        return asdict(self)

    def format_settings(self) -> FormatSettings:
        """What the line parser needs."""
        return FormatSettings(self.format, self.fields, csv_header=self.csv_header)

    def outputs(self) -> list[str]:
        """The fields of the spout's tuples."""
        return ["line"] if self.format == "text" else list(self.fields or [])


def checkpoints_on(conf: dict[str, Any]) -> bool:
    """Whether the topology takes checkpoints, so output waits for their commits.

    ``topology.checkpoint.windows`` > 0, or ``topology.reliability: checkpoint`` (which takes
    one every window when the former is 0).
    """
    return checkpoint_every(conf) > 0


def _known(raw: Any, cls: type, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        _invalid(where, f"the settings must be a mapping, got {type(raw).__name__}")
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - names)
    if unknown:
        _invalid(where, f"unknown setting(s) {unknown}; known: {sorted(names)}")
    return dict(raw)


def _fields(values: dict[str, Any], where: str) -> None:
    chosen = values.get("fields")
    if chosen is not None and (not isinstance(chosen, list) or not chosen
                               or not all(isinstance(f, str) for f in chosen)):
        _invalid(where, f"fields must be a non-empty list of field names, got {chosen!r}")


def _positive(values: dict[str, Any], name: str, where: str, *, optional: bool) -> None:
    value = values.get(name)
    if value is None and (optional or name not in values):
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        _invalid(where, f"{name} must be an integer >= 1{' or None' if optional else ''}, "
                        f"got {value!r}")


def _invalid(where: str, problem: str) -> None:
    msg = f"{where}: {problem}"
    raise TopologyError(msg, code="FILE_CONFIG_INVALID")
