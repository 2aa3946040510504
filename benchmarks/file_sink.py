"""FileBolt's own cost per record against a hand-written file sink, in one process.

For each format (JSON lines, CSV, text, Parquet) the same records are written twice into
a temporary folder on the local disk:

- ``FileBolt``: the real bolt (``initialize``, ``process`` per tuple, ``end_window`` every
  1,000 tuples as a window would, ``cleanup``), with a collector that only counts acks;
  without checkpoints (a sync, flush + fsync, every ``sync_count`` tuples, acks then) and
  with checkpoints (pending file, ``pre_prepare`` + ``pre_commit`` every 10,000 tuples);
- the reference: a plain loop that encodes the same records the same way (``json.dumps``,
  ``csv.writer``, ``str.join``; pyarrow tables of ``sync_count`` rows) into one open file,
  with flush + fsync every ``sync_count`` records.

Printed: records per second of each and the ratio bolt / reference, measured in the same run
(best of ``--rounds``), so it survives a noisy machine.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/file_sink.py --records 100000``
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from sparkstorm.connectors.files import FileBolt
from sparkstorm.topology.tuple import Tuple

FIELDS = ["n", "word", "count"]
WINDOW = 1000
CHECKPOINT_EVERY = 10_000


class CountingCollector:
    """Stands in for the engine's collector: counts acks and fails."""

    def __init__(self) -> None:
        self.acked = 0
        self.failed = 0

    def ack(self, _tup: Any) -> None:
        """Count an ack."""
        self.acked += 1

    def fail(self, _tup: Any, _reason: Any = None) -> None:
        """Count a fail."""
        self.failed += 1

    def report_error(self, text: str) -> None:
        """No error is expected in a benchmark."""
        raise RuntimeError(text)


def _tuples(records: int) -> list[Tuple]:
    return [Tuple(n, "words", "default", 1, [n, f"word{n % 5000}", n % 97], tuple(FIELDS),
                  {n: n}) for n in range(records)]


def bolt_run(folder: Path, fmt: str, tuples: list[Tuple], sync_count: int,
             checkpoints: bool) -> float:
    """Seconds FileBolt takes to write ``tuples``."""
    spec = FileBolt.spec(name="sink", path=str(folder), format=fmt, sync_count=sync_count,
                         sync_interval_ms=60_000)
    bolt = FileBolt()
    collector = CountingCollector()
    bolt._collector = collector  # as the engine sets it
    conf = dict(spec.config) | {"topology.checkpoint.windows": 2 if checkpoints else 0}
    context = {"componentid": "sink", "taskid": 1,
               "source->stream->fields": {"words": {"default": FIELDS}}}
    start = time.perf_counter()
    bolt.initialize(conf, context)
    for i, tup in enumerate(tuples, 1):
        bolt.process(tup)
        if i % WINDOW == 0:
            bolt.end_window()
        if checkpoints and i % CHECKPOINT_EVERY == 0:
            bolt.pre_prepare(i)
            bolt.pre_commit(i)
    if checkpoints:
        bolt.pre_prepare(len(tuples) + 1)
        bolt.pre_commit(len(tuples) + 1)
    bolt.cleanup()
    elapsed = time.perf_counter() - start
    assert collector.acked == len(tuples) and not collector.failed, (collector.acked,
                                                                     collector.failed)
    return elapsed


def reference_run(folder: Path, fmt: str, tuples: list[Tuple], sync_count: int) -> float:
    """Seconds a plain loop takes to write the same records the same way."""
    start = time.perf_counter()
    path = folder / f"reference.{fmt}"
    with path.open("wb") as handle:
        if fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            writer = None
            for first in range(0, len(tuples), sync_count):
                rows = [dict(zip(FIELDS, t.values, strict=True))
                        for t in tuples[first:first + sync_count]]
                table = pa.Table.from_pylist(rows)
                if writer is None:
                    writer = pq.ParquetWriter(handle, table.schema, compression="snappy")
                writer.write_table(table)
                handle.flush()
                os.fsync(handle.fileno())
            assert writer is not None
            writer.close()
        else:
            text = io.StringIO()  # csv: one buffer and writer, reused per row
            rows = csv.writer(text)
            for i, tup in enumerate(tuples, 1):
                if fmt == "json":
                    line = json.dumps(dict(zip(FIELDS, tup.values, strict=True))) + "\n"
                elif fmt == "text":
                    line = ",".join(str(v) for v in tup.values) + "\n"
                else:
                    text.seek(0)
                    text.truncate()
                    rows.writerow(tup.values)
                    line = text.getvalue()
                handle.write(line.encode("utf-8"))
                if i % sync_count == 0:
                    handle.flush()
                    os.fsync(handle.fileno())
    return time.perf_counter() - start


def main() -> None:
    """Run every format in both modes and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sync-count", type=int, default=1000)
    args = parser.parse_args()
    tuples = _tuples(args.records)
    print(f"{args.records:,} records, sync every {args.sync_count}, best of {args.rounds}")
    print(f"{'format':8} {'mode':12} {'bolt rec/s':>12} {'reference rec/s':>16} {'ratio':>6}")
    for fmt in ("json", "csv", "text", "parquet"):
        for checkpoints in (False, True):
            bolt_best, reference_best = float("inf"), float("inf")
            for _ in range(args.rounds):  # interleaved, so both see the same machine
                with tempfile.TemporaryDirectory() as scratch:
                    folder = Path(scratch)
                    bolt_best = min(bolt_best, bolt_run(folder / "bolt", fmt, tuples,
                                                        args.sync_count, checkpoints))
                    reference_best = min(reference_best, reference_run(
                        folder, fmt, tuples, args.sync_count))
            mode = "checkpoints" if checkpoints else "acks"
            print(f"{fmt:8} {mode:12} {args.records / bolt_best:12,.0f} "
                  f"{args.records / reference_best:16,.0f} {reference_best / bolt_best:6.2f}")


if __name__ == "__main__":
    main()
