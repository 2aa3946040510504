"""The test helper that reads JSON-lines files other processes append to."""

from __future__ import annotations

from pathlib import Path

from tests.jsonl import whole_records


def test_a_last_line_still_being_written_is_left_for_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "acks.jsonl"
    path.write_text('{"id": 1}\n\n{"id": 2}\n{"id": 291, "pid": 3246, "ti')
    assert whole_records(path) == [{"id": 1}, {"id": 2}]
    with path.open("a") as out:
        out.write('me": 1.5}\n')
    assert whole_records(path)[-1] == {"id": 291, "pid": 3246, "time": 1.5}
