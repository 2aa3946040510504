"""Reference word-count throughputs that sparkstorm benchmarks are compared against.

* ``plain_python_wordcount``: the single-core floor - if a topology is slower
  than a dict loop, distribution is not paying for itself.
* ``structured_streaming_wordcount``: what stock Spark Structured Streaming
  achieves with the same Python ``split`` work (Python UDF), i.e. the
  apples-to-apples competitor for Python bolts.
* ``structured_streaming_native_wordcount``: the same query with the JVM's
  ``split``, showing how much of Spark's cost is the Python UDF boundary.

Every function returns the same result dict (see ``WordcountResult``) and checks
that the sum of all counts equals the number of input words, so a fast-but-wrong
run can never be reported.

Try it: ``cd /work/main && .venv/bin/python benchmarks/_references.py``
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


class WordcountResult(TypedDict):
    """Common result shape so all benchmarks can be tabulated side by side."""

    sentences_per_sec: float
    words_per_sec: float
    seconds: float
    counts_checksum: int


def count_words(sentences: Sequence[str]) -> int:
    """Expected checksum: the number of whitespace-separated words in the input."""
    return sum(len(s.split()) for s in sentences)


def _result(n_sentences: int, n_words: int, seconds: float, checksum: int) -> WordcountResult:
    """Build the result dict; guards against division by zero on trivial inputs."""
    safe = seconds if seconds > 0 else float("nan")
    return WordcountResult(
        sentences_per_sec=n_sentences / safe,
        words_per_sec=n_words / safe,
        seconds=seconds,
        counts_checksum=checksum,
    )


def _verify(label: str, checksum: int, expected: int) -> None:
    """Fail loudly if the counts do not add up to the number of input words."""
    if checksum != expected:
        msg = f"{label}: counts sum to {checksum}, expected {expected} words"
        raise RuntimeError(msg)


# --------------------------------------------------------------------------- plain Python


def plain_python_wordcount(sentences: list[str]) -> WordcountResult:
    """Count words with a plain single-threaded dict loop (the one-core baseline).

    Deliberately an explicit ``split`` + ``dict.get`` loop rather than
    ``Counter.update`` (C-accelerated), because it mirrors the per-tuple work a
    Python bolt does.
    """
    expected = count_words(sentences)
    counts: dict[str, int] = {}
    get = counts.get
    start = time.perf_counter()
    for sentence in sentences:
        for word in sentence.split():
            counts[word] = get(word, 0) + 1
    seconds = time.perf_counter() - start
    checksum = sum(counts.values())
    _verify("plain_python_wordcount", checksum, expected)
    return _result(len(sentences), expected, seconds, checksum)


# --------------------------------------------------------------------------- Spark helpers


def make_local_spark(app_name: str = "sparkstorm-references") -> SparkSession:
    """Create the standard benchmark session (local[2], no UI, 2 shuffle partitions).

    PYSPARK_PYTHON/PYSPARK_DRIVER_PYTHON are pinned to this interpreter so that
    Python workers use the same venv (and pyspark version) as the driver.
    """
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    return spark


def write_batches(sentences: Sequence[str], directory: Path, rows_per_batch: int) -> int:
    """Write ``sentences`` as text files of ``rows_per_batch`` lines each; return file count.

    Zero-padded names keep lexical order == batch order for humans inspecting the dir.
    """
    if rows_per_batch <= 0:
        msg = f"rows_per_batch must be > 0, got {rows_per_batch}"
        raise ValueError(msg)
    directory.mkdir(parents=True, exist_ok=True)
    files = 0
    for offset in range(0, len(sentences), rows_per_batch):
        chunk = sentences[offset : offset + rows_per_batch]
        path = directory / f"part-{files:06d}.txt"
        path.write_text("\n".join(chunk) + "\n", encoding="utf-8")
        files += 1
    return files


def _python_split_column(value: Column) -> Column:
    """Split via a Python UDF: every row crosses the JVM <-> Python worker boundary.

    The UDF is defined here (a nested function) so cloudpickle ships it by value;
    workers then never need to import this benchmarks module. ``useArrow=False``
    pins the classic pickled row-at-a-time UDF: Spark 4 may otherwise try Arrow
    (session conf / type-hint inference), which changes what is being measured
    and needs pandas + pyarrow.
    """
    from pyspark.sql.functions import udf
    from pyspark.sql.types import ArrayType, StringType

    @udf(returnType=ArrayType(StringType()), useArrow=False)
    def split_words(s: str | None) -> list[str]:
        return s.split() if s else []

    return split_words(value)


def _native_split_column(value: Column) -> Column:
    """Split with the JVM's regex ``split``; drop empty tokens so it matches ``str.split``."""
    from pyspark.sql.functions import split, trim

    return split(trim(value), r"\s+")


def _run_streaming_wordcount(
    spark: SparkSession,
    sentences: list[str],
    rows_per_batch: int,
    splitter: Callable[[Column], Column],
    label: str,
) -> WordcountResult:
    """Shared driver: files -> readStream(text) -> split -> explode -> groupBy count -> memory.

    Timing covers ``start()`` through ``processAllAvailable()`` only; writing the
    input files and reading back the result table are excluded.
    """
    from pyspark.sql.functions import col, explode

    expected = count_words(sentences)
    query_name = f"wc_{label}_{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="sparkstorm-ref-") as tmp:
        input_dir = Path(tmp) / "input"
        write_batches(sentences, input_dir, rows_per_batch)
        lines: DataFrame = (
            spark.readStream.format("text").option("maxFilesPerTrigger", 1).load(str(input_dir))
        )
        words = lines.select(explode(splitter(col("value"))).alias("word")).where(col("word") != "")
        counts = words.groupBy("word").count()
        writer = (
            counts.writeStream.format("memory")
            .queryName(query_name)
            .outputMode("complete")
            .option("checkpointLocation", str(Path(tmp) / "checkpoint"))
        )
        start = time.perf_counter()
        query = writer.start()
        try:
            query.processAllAvailable()
            seconds = time.perf_counter() - start
        finally:
            query.stop()
        row = spark.sql(f"SELECT sum(`count`) AS total FROM {query_name}").first()
        spark.catalog.dropTempView(query_name)
    checksum = int(row["total"]) if row is not None and row["total"] is not None else 0
    _verify(label, checksum, expected)
    return _result(len(sentences), expected, seconds, checksum)


def structured_streaming_wordcount(
    spark: SparkSession, sentences: list[str], rows_per_batch: int = 100_000
) -> WordcountResult:
    """Structured Streaming word count with the split in a Python UDF (Python-bolt analogue)."""
    return _run_streaming_wordcount(
        spark, sentences, rows_per_batch, _python_split_column, "python_udf"
    )


def structured_streaming_native_wordcount(
    spark: SparkSession, sentences: list[str], rows_per_batch: int = 100_000
) -> WordcountResult:
    """Same query with the JVM ``split``: isolates the cost of the Python UDF boundary."""
    return _run_streaming_wordcount(
        spark, sentences, rows_per_batch, _native_split_column, "native"
    )


# --------------------------------------------------------------------------- CLI


def _format(label: str, r: WordcountResult) -> str:
    """One aligned line per benchmark."""
    return (
        f"{label:<34} {r['sentences_per_sec']:>12,.0f} sentences/s "
        f"{r['words_per_sec']:>13,.0f} words/s {r['seconds']:>8.2f} s "
        f"checksum={r['counts_checksum']:,}"
    )


def main(n_sentences: int = 200_000, rows_per_batch: int = 100_000) -> None:
    """Run all references once on ``n_sentences`` and print a table.

    A small warm-up run of each Spark variant precedes the measured runs so JVM
    start-up / JIT / first-query planning does not penalise whichever runs first.
    """
    here = Path(__file__).resolve().parent
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    from _memory import peak_rss_sampler
    from _sentences import make_sentences

    sentences = make_sentences(n_sentences)
    print(
        f"{n_sentences:,} sentences, {count_words(sentences):,} words, "
        f"rows_per_batch={rows_per_batch:,}"
    )
    print(_format("plain python (1 core, dict loop)", plain_python_wordcount(sentences)))

    with peak_rss_sampler() as mem:
        spark = make_local_spark()
        try:
            warm = sentences[:2_000]
            structured_streaming_wordcount(spark, warm, rows_per_batch=1_000)
            structured_streaming_native_wordcount(spark, warm, rows_per_batch=1_000)
            udf_result = structured_streaming_wordcount(spark, sentences, rows_per_batch)
            print(_format("structured streaming (Python UDF)", udf_result))
            native_result = structured_streaming_native_wordcount(spark, sentences, rows_per_batch)
            print(_format("structured streaming (JVM split)", native_result))
        finally:
            spark.stop()
    print(mem.report())


if __name__ == "__main__":
    main()
