"""The file sink's parts without Spark: names, settings and policies, record formats.

The sink itself runs on Spark in tests/integration/spark/test_file_sink.py.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sparkstorm.connectors.files.formats import FormatSettings, open_writer, parse_line
from sparkstorm.connectors.files.naming import file_name, is_pending_of, pending_name
from sparkstorm.connectors.files.options import BoltOptions, SpoutOptions, checkpoints_on
from sparkstorm.errors import TopologyError

RECORDS = [{"n": 1, "word": "a,b", "none": None}, {"n": 2, "word": 'say "hi"', "none": None}]


def test_file_names_carry_component_task_rotation_and_time() -> None:
    name = file_name("p-", "sink", 4, 12, 1234, ".csv")
    assert name == "p-sink-4-12-1234.csv"
    assert pending_name(name) == ".p-sink-4-12-1234.csv.pending"
    assert is_pending_of(pending_name(name), "p-", "sink", 4)
    assert not is_pending_of(name, "p-", "sink", 4)  # published: not pending
    assert not is_pending_of(pending_name(name), "p-", "sink", 1)  # another task's
    assert not is_pending_of(pending_name(file_name("", "sink2", 4, 0, 1, ".csv")), "",
                             "sink", 4)


def test_rotation_by_size_and_by_time() -> None:
    both = BoltOptions.from_dict({"path": "/o", "rotate_size_bytes": 100,
                                  "rotate_interval_ms": 500})
    assert both.rotation_due(size=100, age_s=0) and both.rotation_due(size=1, age_s=0.5)
    assert not both.rotation_due(size=99, age_s=0.49)
    never = BoltOptions.from_dict({"path": "/o"})
    assert not never.rotation_due(size=10**12, age_s=10**6)


def test_sync_every_n_tuples_or_after_the_interval() -> None:
    options = BoltOptions.from_dict({"path": "/o", "sync_count": 3, "sync_interval_ms": 200})
    assert options.sync_due(3, 0) and options.sync_due(1, 0.2)
    assert not options.sync_due(2, 0.1) and not options.sync_due(0, 10)


@pytest.mark.parametrize(("raw", "words"), [
    ({"format": "xml"}, "format"),
    ({"sync_count": 0}, "sync_count"),
    ({"rotate_size_bytes": True}, "rotate_size_bytes"),
    ({"fields": []}, "fields"),
    ({"rotation": 1}, "unknown"),
    ({"path": ""}, "path"),
])
def test_bad_bolt_settings_are_refused_by_name(raw: dict[str, object], words: str) -> None:
    with pytest.raises(TopologyError) as caught:
        BoltOptions.from_dict({"path": "/o"} | raw)
    assert caught.value.code == "FILE_CONFIG_INVALID"
    assert words in str(caught.value)


def test_bad_spout_settings_are_refused_by_name() -> None:
    base = {"source_dir": "/in", "done_dir": "/done", "bad_dir": "/bad"}
    assert SpoutOptions.from_dict(base).lock_dir == "/in/.lock"
    assert SpoutOptions.from_dict(base).outputs() == ["line"]
    for raw in ({"format": "json"}, {"format": "parquet"}, {"done_dir": None},
                {"ignore_suffixes": ".x"}):
        with pytest.raises(TopologyError) as caught:
            SpoutOptions.from_dict(base | raw)
        assert caught.value.code == "FILE_CONFIG_INVALID"


def _written(settings: FormatSettings) -> bytes:
    out = io.BytesIO()
    writer = open_writer(settings, out)
    for record in RECORDS:
        writer.write(record)
    writer.close()
    assert writer.size == len(out.getvalue()) or settings.name == "parquet"
    return out.getvalue()


def test_text_json_and_csv_lines_read_back_as_written() -> None:
    assert _written(FormatSettings("text", field_delimiter="|")).decode() == \
        '1|a,b|\n2|say "hi"|\n'
    lines = _written(FormatSettings("json")).splitlines()
    assert [json.loads(line) for line in lines] == RECORDS
    csv_settings = FormatSettings("csv", ["n", "word", "none"])
    header, *rows = _written(csv_settings).splitlines(keepends=True)
    assert header == b"n,word,none\r\n"
    assert [parse_line(csv_settings, row) for row in rows] == [
        ["1", "a,b", ""], ["2", 'say "hi"', ""]]
    assert parse_line(FormatSettings("json", ["word", "missing"]), lines[0]) == ["a,b", None]
    assert parse_line(FormatSettings("text"), b"as is\r\n") == ["as is"]


@pytest.mark.parametrize(("name", "line"), [
    ("json", b"{not json\n"), ("json", b"[1, 2]\n"), ("csv", b"1,2,3\n"), ("text", b"\xff\n")])
def test_a_line_that_does_not_parse_raises_value_error(name: str, line: bytes) -> None:
    with pytest.raises(ValueError):
        parse_line(FormatSettings(name, ["a", "b"]), line)


def test_parquet_rows_written_in_row_groups_read_back(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    with path.open("wb") as handle:
        writer = open_writer(FormatSettings("parquet"), handle)
        writer.write(RECORDS[0])
        writer.flush()  # a row group
        assert writer.size > 0
        writer.write(RECORDS[1])
        writer.close()
    table = pq.read_table(path)
    assert table.to_pylist() == RECORDS
    assert pq.ParquetFile(path).num_row_groups == 2


def test_checkpoints_are_on_with_windows_or_the_checkpoint_reliability() -> None:
    assert not checkpoints_on({}) and not checkpoints_on({"topology.checkpoint.windows": 0})
    assert checkpoints_on({"topology.checkpoint.windows": 2})
    assert checkpoints_on({"topology.reliability": "checkpoint"})
    assert not checkpoints_on({"topology.reliability": "acking"})
