"""Multilang throughput: tuples/s through one shell bolt, against in-process and Storm's way.

Run: ``.venv/bin/python benchmarks/multilang.py [--tuples 100000] [--window 10000]``

Measured, each on one pass-through bolt (emit the input anchored, ack it), no Spark:

- in-process: our ``PassBolt`` called directly, as the executor does;
- shell JSON / msgpack: the same ``PassBolt`` as a subprocess (``python -m
  sparkstorm.multilang``) behind ``ShellBolt``, ``end_window`` every ``--window`` tuples;
- pystorm JSON / msgpack: a pystorm ``Bolt`` doing the same, behind ``ShellBolt``;
- Storm's rate: the pystorm bolt driven the way Storm's ShellBolt drives it: one JSON message
  and one flushed write per tuple from a writer thread, a reader thread parsing the reply
  stream line by line, at most ``topology.shellbolt.max.pending`` (100) tuples in flight.

Prints the figures and ratios and appends them to ``benchmarks/RESULTS.md`` under
``## multilang``. Also the child entry point: ``multilang.py --child pystorm [json|msgpack]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from sparkstorm import Bolt  # noqa: E402
from sparkstorm.multilang import ShellBolt, python_command  # noqa: E402
from sparkstorm.topology.tuple import Tuple  # noqa: E402

SENTENCE = "the cow jumped over the moon"


class PassBolt(Bolt):
    """Emits its input (anchored by auto_anchor) and is acked by auto_ack."""

    outputs = ["n", "sentence"]

    def process(self, tup: Any) -> None:
        """Emit the tuple's values unchanged."""
        self.emit(list(tup.values))


class CountingCollector:
    """The executor's collector reduced to counting (shared by every measurement)."""

    def __init__(self) -> None:
        self.emitted = 0
        self.acked = 0
        self.current: Any = None

    def emit(self, values: Any, stream: Any, anchors: Any, direct_task: Any,
             need_task_ids: bool, tup_id: Any) -> list[int] | None:
        """Count the emit; return task ids (``[2]``) only when asked for them."""
        self.emitted += 1
        return [2] if need_task_ids else None

    def ack(self, tup: Tuple) -> None:
        """Mark ``tup`` done and count the ack, once per tuple."""
        if not tup.done:
            tup.done = True
            self.acked += 1

    def fail(self, tup: Tuple) -> None:
        """Mark ``tup`` done, without counting it."""
        tup.done = True


def _context() -> dict[str, Any]:
    return {"taskid": 1, "componentid": "pass", "task->component": {"1": "pass", "2": "sink"},
            "streams": ["default"], "stream->outputfields": {"default": ["n", "sentence"]},
            "stream->target->grouping": {}, "source->stream->grouping": {},
            "source->stream->fields": {"src": {"default": ["n", "sentence"]}}}


def _tuples(count: int) -> list[Tuple]:
    return [Tuple(n, "src", "default", 3, [n, SENTENCE], ("n", "sentence")) for n in range(count)]


def in_process(count: int, window: int) -> float:
    """Tuples/s of PassBolt called in-process, as the executor calls it."""
    bolt, collector = PassBolt(), CountingCollector()
    bolt._collector = collector
    tuples = _tuples(count)
    started = time.perf_counter()
    for tup in tuples:
        collector.current = tup
        bolt.process(tup)
        collector.ack(tup)
    elapsed = time.perf_counter() - started
    assert collector.acked == count
    return count / elapsed


def through_shell(command: list[str], serializer: str, count: int, window: int) -> float:
    """Tuples/s through a ShellBolt running ``command``, end_window every ``window``."""
    bolt = ShellBolt()
    collector = CountingCollector()
    bolt._collector = collector
    bolt.component_name = "pass"
    bolt.component_spec = ShellBolt.spec(name="pass", command=command, serializer=serializer,
                                         outputs=["n", "sentence"])
    conf = {"topology.name": "bench", "pystorm.log.level": "warning"}
    bolt.storm_conf, bolt.context = conf, _context()
    bolt.initialize(conf, bolt.context)
    bolt.end_window()
    tuples = _tuples(count)
    started = time.perf_counter()
    for start in range(0, count, window):
        for tup in tuples[start:start + window]:
            bolt.process(tup)
        bolt.end_window()
    elapsed = time.perf_counter() - started
    bolt.close()
    assert collector.acked == count and collector.emitted == count, (collector.acked, count)
    return count / elapsed


def storm_style(command: list[str], count: int, max_pending: int = 100) -> float:
    """Tuples/s of a pystorm bolt driven as Storm's ShellBolt does (see module docstring)."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=HERE)
    assert proc.stdin is not None and proc.stdout is not None
    setup = {"conf": {"topology.name": "bench", "pystorm.log.level": "warning"},
             "context": _context(), "pidDir": "/tmp"}
    proc.stdin.write(json.dumps(setup).encode() + b"\nend\n")
    proc.stdin.flush()
    slots = threading.Semaphore(max_pending)
    acked = [0]
    done = threading.Event()

    def read_replies() -> None:
        lines: list[bytes] = []
        for line in proc.stdout:  # type: ignore[union-attr]
            if line != b"end\n":
                lines.append(line)
                continue
            message = json.loads(b"".join(lines))
            lines = []
            if isinstance(message, dict) and message.get("command") == "ack":
                acked[0] += 1
                slots.release()
                if acked[0] == count:
                    done.set()
                    return

    reader = threading.Thread(target=read_replies, daemon=True)
    reader.start()
    started = time.perf_counter()
    for n in range(count):
        slots.acquire()
        message = {"id": str(n), "comp": "src", "stream": "default", "task": 3,
                   "tuple": [n, SENTENCE]}
        proc.stdin.write(json.dumps(message).encode() + b"\nend\n")
        proc.stdin.flush()
    done.wait()
    elapsed = time.perf_counter() - started
    proc.kill()
    proc.wait()
    return count / elapsed


def run_child(kind: str, serializer: str) -> None:
    """Child entry point: a pystorm pass-through bolt."""
    from pystorm import Bolt as PystormBolt

    class PystormPass(PystormBolt):  # type: ignore[misc]
        def process(self, tup: Any) -> None:
            self.emit(list(tup.values))

    PystormPass(serializer=serializer).run()


def main() -> None:
    """Run the child, or measure every way, print the figures and ratios, record them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuples", type=int, default=100_000)
    parser.add_argument("--window", type=int, default=10_000)
    parser.add_argument("--child", nargs=2, metavar=("KIND", "SERIALIZER"))
    parser.add_argument("--no-record", action="store_true", help="do not append RESULTS.md")
    args = parser.parse_args()
    if args.child:
        run_child(*args.child)
        return
    n, w = args.tuples, args.window
    def ours(serializer: str) -> list[str]:
        return [*python_command("multilang:PassBolt", serializer=serializer), "--path", str(HERE)]

    pystorm = [sys.executable, str(HERE / "multilang.py"), "--child", "pystorm"]
    results = {
        "in-process PassBolt": in_process(n, w),
        "shell JSON (PassBolt via python -m sparkstorm.multilang)": through_shell(
            ours("json"), "json", n, w),
        "shell msgpack (PassBolt via python -m sparkstorm.multilang)": through_shell(
            ours("msgpack"), "msgpack", n, w),
        "shell JSON (pystorm Bolt)": through_shell([*pystorm, "json"], "json", n, w),
        "shell msgpack (pystorm Bolt)": through_shell([*pystorm, "msgpack"], "msgpack", n, w),
        "Storm's rate (pystorm Bolt, one message per write, reply stream)": storm_style(
            [*pystorm, "json"], n),
    }
    storm = results["Storm's rate (pystorm Bolt, one message per write, reply stream)"]
    lines = [f"| {name} | {rate:,.0f} |" for name, rate in results.items()]
    ratios = [
        ("shell JSON (PassBolt) / Storm's rate  [target ≥ 3×]",
         results["shell JSON (PassBolt via python -m sparkstorm.multilang)"] / storm),
        ("shell msgpack (PassBolt) / Storm's rate",
         results["shell msgpack (PassBolt via python -m sparkstorm.multilang)"] / storm),
        ("shell JSON (PassBolt) / in-process",
         results["shell JSON (PassBolt via python -m sparkstorm.multilang)"]
         / results["in-process PassBolt"]),
        ("shell JSON (pystorm) / Storm's rate", results["shell JSON (pystorm Bolt)"] / storm),
        ("shell msgpack (pystorm) / Storm's rate",
         results["shell msgpack (pystorm Bolt)"] / storm),
        ("shell msgpack / shell JSON (pystorm)",
         results["shell msgpack (pystorm Bolt)"] / results["shell JSON (pystorm Bolt)"]),
    ]
    report = [
        f"\n### {time.strftime('%Y-%m-%d %H:%M')} — `python benchmarks/multilang.py --tuples {n} "
        f"--window {w}` ({os.cpu_count()} cores)\n",
        "| measurement | tuples/s |", "| --- | ---: |", *lines, "",
        "| ratio | value |", "| --- | ---: |",
        *[f"| {name} | {value:.2f}× |" for name, value in ratios], "",
    ]
    print("\n".join(report))
    if not args.no_record:
        _record("\n".join(report))


def _record(text: str) -> None:
    path = HERE / "RESULTS.md"
    content = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    if "## multilang" not in content:
        content = content.rstrip("\n") + "\n\n## multilang\n"
    head, _, tail = content.partition("## multilang\n")
    # our entries go at the end of our section, before any later section
    rest = tail.split("\n## ", 1)
    ours = rest[0].rstrip("\n") + "\n" + text
    after = ("\n## " + rest[1]) if len(rest) > 1 else ""
    path.write_text(head + "## multilang\n" + ours + after, encoding="utf-8")


if __name__ == "__main__":
    main()
