r"""Record formats: how the file sink writes a tuple and how the file spout reads a line.

``text`` is Storm's ``DelimitedRecordFormat`` (the fields' values joined by
``field_delimiter``, one record a line), ``json`` one JSON object a line, ``csv`` RFC 4180
rows (with a header line by default), ``parquet`` columns through pyarrow (rows are buffered
and written as a row group at each sync; a Parquet file is readable only once closed).

Example:
    >>> import io
    >>> out = io.BytesIO()
    >>> writer = open_writer(FormatSettings("csv", ["n", "word"]), out)
    >>> writer.write({"n": 1, "word": "a,b"})
    >>> writer.close()
    >>> out.getvalue()
    b'n,word\r\n1,"a,b"\r\n'
    >>> parse_line(FormatSettings("csv", ["n", "word"]), b'1,"a,b"\r\n')
    ['1', 'a,b']
    >>> parse_line(FormatSettings("json", ["n"]), b'{"n": 2, "x": 0}\n')
    [2]
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Protocol

FORMATS = ("text", "json", "csv", "parquet")
EXTENSIONS = {"text": ".txt", "json": ".jsonl", "csv": ".csv", "parquet": ".parquet"}


@dataclass(frozen=True)
class FormatSettings:
    """A format and its options.

    Attributes:
        name: one of :data:`FORMATS`.
        fields: the fields to write (None: every field of the tuple's stream), or the fields
            the spout emits for ``json`` and ``csv``.
        field_delimiter: ``text`` only: between two fields' values.
        csv_header: ``csv``: the sink writes a header line, the spout skips one.
        parquet_compression: ``parquet``: pyarrow's codec name.
    """

    name: str
    fields: list[str] | None = None
    field_delimiter: str = ","
    csv_header: bool = True
    parquet_compression: str = "snappy"
    extra: dict[str, Any] = field(default_factory=dict)


class RecordWriter(Protocol):
    """Writes records to one open file."""

    def write(self, record: dict[str, Any]) -> None:
        """Add one record."""

    def flush(self) -> None:
        """Hand what is buffered to the file (Parquet: write a row group)."""

    def close(self) -> None:
        """Write what is left (Parquet: the footer); the stream stays open."""

    @property
    def size(self) -> int:
        """Bytes written to the file so far (Parquet: plus an estimate of buffered rows)."""


class _LineWriter:
    def __init__(self, settings: FormatSettings, stream: BinaryIO) -> None:
        self.stream = stream
        self.written = 0
        self.delimiter = settings.field_delimiter
        self.header_due = settings.name == "csv" and settings.csv_header
        self.text = io.StringIO()  # csv: one buffer and writer per file, reused per row
        self.rows = csv.writer(self.text)
        self.encode = {"json": self._json, "text": self._text, "csv": self._csv}[settings.name]
        # one encoder per file: json.dumps with options builds a new one per call
        self.json = json.JSONEncoder(ensure_ascii=False, default=str).encode

    def write(self, record: dict[str, Any]) -> None:
        data = self.encode(record).encode("utf-8")
        self.stream.write(data)
        self.written += len(data)

    def _json(self, record: dict[str, Any]) -> str:
        return self.json(record) + "\n"

    def _text(self, record: dict[str, Any]) -> str:
        return self.delimiter.join("" if v is None else str(v) for v in record.values()) + "\n"

    def _csv(self, record: dict[str, Any]) -> str:
        self.text.seek(0)
        self.text.truncate()
        if self.header_due:
            self.rows.writerow(list(record))
            self.header_due = False
        self.rows.writerow(["" if v is None else v for v in record.values()])
        return self.text.getvalue()

    def flush(self) -> None:
        """Lines go to the stream as they are written."""

    def close(self) -> None:
        """Nothing is buffered here."""

    @property
    def size(self) -> int:
        return self.written


class _ParquetWriter:
    def __init__(self, settings: FormatSettings, stream: BinaryIO) -> None:
        self.settings = settings
        self.stream = stream
        self.rows: list[dict[str, Any]] = []
        self.writer: Any = None
        self.flushed = 0
        self.buffered_estimate = 0

    def write(self, record: dict[str, Any]) -> None:
        self.rows.append(record)
        self.buffered_estimate += sum(len(str(v)) for v in record.values()) + 8

    def flush(self) -> None:
        if not self.rows:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = None if self.writer is None else self.writer.schema
        table = pa.Table.from_pylist(self.rows, schema=schema)
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.stream, table.schema,
                                           compression=self.settings.parquet_compression)
        self.writer.write_table(table)
        self.rows = []
        self.buffered_estimate = 0
        self.flushed = int(self.stream.tell())

    def close(self) -> None:
        self.flush()
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    @property
    def size(self) -> int:
        return self.flushed + self.buffered_estimate


def open_writer(settings: FormatSettings, stream: BinaryIO) -> RecordWriter:
    """A writer of ``settings``' format onto the open binary ``stream``."""
    if settings.name == "parquet":
        return _ParquetWriter(settings, stream)
    return _LineWriter(settings, stream)


def parse_line(settings: FormatSettings, line: bytes) -> list[Any]:
    """The values one line of a ``text``, ``json`` or ``csv`` file holds.

    ``text`` gives ``[line]`` (its end of line removed); ``json`` and ``csv`` the values of
    ``settings.fields`` (a JSON object's missing keys as None).

    Raises:
        ValueError: the line is not UTF-8, not a JSON object, or a CSV row with another
            number of columns than ``fields``.
    """
    text = line.decode("utf-8").rstrip("\r\n")
    names = settings.fields or []
    if settings.name == "text":
        return [text]
    if settings.name == "json":
        value = json.loads(text)
        if not isinstance(value, dict):
            msg = f"a JSON line must hold an object, got {type(value).__name__}"
            raise ValueError(msg)
        return [value.get(name) for name in names]
    rows = list(csv.reader([text]))
    row = rows[0] if rows else []
    if len(row) != len(names):
        msg = f"a CSV row of {len(row)} columns where {len(names)} fields are read ({names})"
        raise ValueError(msg)
    return row
