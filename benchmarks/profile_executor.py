"""Profile the executor side of the word-count topology in-process (no Spark, no sockets).

Builds the benchmark topology's ``ExecutionPlan`` and drives the real ``SpoutExecutor`` and
``BoltExecutor`` objects window by window, the way ``engine.executor.main`` and the worker do:

    spout: next_tuple loop until the buffer bound (as ``SpoutExecutor._produce_loop``)
    spout: run_window(control with last window's acks)  -> rows per split executor
    wire:  msgpack rows per target, as ``engine.executor.main`` replies and the next stage unpacks
    split: BoltExecutor.run_window                      -> rows per count executor
    count: BoltExecutor.run_window
    meta:  every executor's ``WindowMeta``, encoded and decoded
    acker: ``Acker.process_window`` -> verdicts -> next window's spout control
    commit acks: with ``--checkpoint`` (``topology.reliability: checkpoint``) instead of the
           acker: every window's checkpoint commits, and the spout hears its tuples' acks

First a timed pass (perf_counter per phase, no profiler: cProfile roughly doubles the cost
of call-heavy code), the same with the cyclic GC off, then the same under cProfile, one
profiler per phase, with the GC off as the executor processes run it. Each phase's CPU
time (``time.thread_time``) is printed next to its wall time: on a shared machine only the
CPU figures compare across runs (``--timed-only`` skips the cProfile pass).

Run: ``cd /work/main && .venv/bin/python benchmarks/profile_executor.py --sentences 100000``
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import sys
import time
from collections import defaultdict
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _wordcount_topology import BATCH_TOPOLOGY, COUNT, SPLIT, SPOUT, TOPOLOGY  # noqa: E402

from sparkstorm.config import load_config  # noqa: E402
from sparkstorm.engine.columnar.arrow_batch import decode_blob  # noqa: E402
from sparkstorm.engine.driver.acker import Acker  # noqa: E402
from sparkstorm.engine.executor.factory import make_executor  # noqa: E402
from sparkstorm.engine.executor.spout import SpoutExecutor  # noqa: E402
from sparkstorm.engine.plan.execution import ExecutionPlan  # noqa: E402
from sparkstorm.engine.wire.frames import pack, unpack  # noqa: E402
from sparkstorm.engine.wire.messages import SpoutControl, WindowMeta  # noqa: E402

PHASES = ("spout emit", "spout window", "wire spout->split", "split", "wire split->count",
          "count", "meta", "acker", "commit acks")


class Pipeline:
    """One topology's executors in this process, plus the worker's acker."""

    def __init__(self, sentences: int, buffer: int | None, seed: int,
                 batch_api: bool = False, checkpoint: bool = False) -> None:
        topo: dict[str, Any] = {"bench.sentences": sentences, "bench.seed": seed,
                                "topology.name": "profile"}
        if checkpoint:  # no edges, no acker: a commit after each window acks its tuples
            topo["topology.reliability"] = "checkpoint"
        self.checkpoint = checkpoint
        if buffer is not None:
            topo["topology.spout.buffer.size"] = buffer
        self.conf = load_config(topology=topo)
        topology = BATCH_TOPOLOGY if batch_api else TOPOLOGY
        self.plan = ExecutionPlan(topology.topology_spec, self.conf)
        by_component: dict[str, list[int]] = defaultdict(list)
        for info in self.plan.executors:
            by_component[info.component].append(info.gid)
        (spout_gid,) = by_component[SPOUT]
        self.spout = SpoutExecutor(self.plan, spout_gid, "profile")  # inactive: thread idles
        self.splits = {g: make_executor(self.plan, g, "profile") for g in by_component[SPLIT]}
        self.counts = {g: make_executor(self.plan, g, "profile") for g in by_component[COUNT]}
        self.acker = Acker(self.plan.acker_tasks, 30.0)
        self.control = SpoutControl()
        self.n = sentences
        self.acked = 0
        self.words = 0
        self.seconds: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.cpu_seconds: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.profiles: dict[str, cProfile.Profile] | None = None
        self.windows = 0

    def _phase(self, name: str, fn: Any, *args: Any) -> Any:
        prof = self.profiles[name] if self.profiles is not None else None
        started, cpu_started = time.perf_counter(), time.thread_time()
        if prof is not None:
            prof.enable()
        try:
            return fn(*args)
        finally:
            if prof is not None:
                prof.disable()
            self.seconds[name] += time.perf_counter() - started
            self.cpu_seconds[name] += time.thread_time() - cpu_started

    def _produce(self) -> None:
        """The body of ``SpoutExecutor._produce_loop``.

        Calls each spout task's ``next_tuple`` until the buffer is full or the spout emits
        nothing.
        """
        spout = self.spout
        for task, instance in spout.instances.items():
            collector = spout.collectors[task]
            while spout._can_produce(collector):
                with spout.calls:  # a burst, then its move into the window's buffer
                    emitted = spout._produce_burst(task, instance)
                    with spout.lock:
                        spout._move_staging()
                if not emitted:
                    break

    @staticmethod
    def _reply(host: Any, output: Any) -> tuple[dict[int, bytes], bytes]:
        """What ``ExecutorServer._window`` sends back, and what ``run_stage`` unpacks."""
        blobs = unpack(pack(["ok", host.encode_rows(output)]))[1]
        return blobs, host.window_meta(output).encode()

    @staticmethod
    def _request(blobs: list[bytes]) -> list[Any]:
        """``run_stage``'s request and the executor's unpacking of it."""
        request = unpack(pack({"cmd": "window", "w": 0, "rows": blobs}))
        return list(request["rows"])

    def window(self) -> None:
        """Run one window through spout, splits, counts and acker, timing each phase."""
        self._phase("spout emit", self._produce)
        out = self._phase("spout window", self.spout.run_window, self.control, None,
                          self.windows)
        spout_blobs, spout_meta = self._phase("wire spout->split", self._reply, self.spout, out)
        metas = [spout_meta]
        to_count: dict[int, list[bytes]] = defaultdict(list)
        for gid, host in self.splits.items():
            rows = self._phase("wire spout->split", self._request,
                               [spout_blobs[gid]] if gid in spout_blobs else [])
            split_out = self._phase("split", host.run_window, rows)
            blobs, meta = self._phase("wire split->count", self._reply, host, split_out)
            metas.append(meta)
            for target, blob in blobs.items():
                to_count[target].append(blob)
        for gid, host in self.counts.items():
            rows = self._phase("wire split->count", self._request, to_count.get(gid, []))
            for blob in rows:
                batches, pieces = decode_blob(blob)
                self.words += sum(len(b[3]) for b in batches)
                self.words += sum(piece.values.num_rows for piece in pieces)
            count_out = self._phase("count", host.run_window, rows)
            _, meta = self._phase("meta", self._reply, host, count_out)
            metas.append(meta)
        decoded = self._phase("meta", lambda ms: [WindowMeta.decode(m) for m in ms], metas)
        self.acked += sum(decoded[0].stats.acked.values())
        if self.checkpoint:  # the window's checkpoint commits: the spout hears its acks
            self._phase("commit acks", self.spout.commit_state, self.windows)
            self.windows += 1
            return
        verdicts = self._phase("acker", self.acker.process_window, decoded)
        tasks = self.spout.info.tasks
        control = SpoutControl(ack=[r for t in tasks for r in verdicts.ack.get(t, ())],
                               fail=[r for t in tasks for r in verdicts.fail.get(t, ())],
                               reset=[r for t in tasks for r in verdicts.reset.get(t, ())])
        self.control = SpoutControl.from_wire(unpack(pack(control.to_wire())))
        self.windows += 1

    def run(self) -> None:
        """Run windows until every sentence is acked; raise if that takes far too many."""
        while self.acked < self.n:
            self.window()
            if self.windows > 10 * (self.n // self.spout.buffer_bound + 5):
                msg = f"not all acked: {self.acked} of {self.n}"
                raise RuntimeError(msg)

    def close(self) -> None:
        """Close the spout executor."""
        self.spout.close()


def _per_tuple(seconds: float, n: int) -> str:
    return f"{seconds * 1e6 / n:8.2f} us" if n else "n/a"


def print_timings(label: str, pipe: Pipeline) -> None:
    """Print the per-phase wall and CPU timings of one pass."""
    n, words = pipe.n, pipe.words
    total = sum(pipe.seconds.values())
    print(f"\n--- {label}: {n:,} sentences, {words:,} words, {pipe.windows} windows of "
          f"<= {pipe.spout.buffer_bound:,} sentences, {total:.2f} s in the phases")
    cpu_total = sum(pipe.cpu_seconds.values())
    print(f"{'phase':<20} {'seconds':>8} {'per sentence':>13} {'per word':>12} {'share':>6} "
          f"{'CPU/sentence':>13}")
    for name in PHASES:
        s, cpu = pipe.seconds[name], pipe.cpu_seconds[name]
        print(f"{name:<20} {s:8.3f} {_per_tuple(s, n):>13} {_per_tuple(s, words):>12} "
              f"{100 * s / total:5.1f}% {_per_tuple(cpu, n):>13}")
    print(f"{'total':<20} {total:8.3f} {_per_tuple(total, n):>13} {_per_tuple(total, words):>12}"
          f" {'':>6} {_per_tuple(cpu_total, n):>13}")
    print(f"=> one core could do ~{n / total:,.0f} sentences/s ({words / total:,.0f} words/s) "
          "through the executors alone, without Spark/sockets")


def main(argv: list[str] | None = None) -> int:
    """Run the timed passes (GC on, then off) and, unless ``--timed-only``, the profiled one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--buffer", type=int, default=None,
                        help="topology.spout.buffer.size (default: the engine's)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--batch-api", action="store_true",
                        help="the BatchBolt word count (_wordcount_topology.BATCH_TOPOLOGY)")
    parser.add_argument("--checkpoint", action="store_true",
                        help="topology.reliability: checkpoint (no acker; a commit a window)")
    parser.add_argument("--timed-only", action="store_true",
                        help="skip the cProfile pass (the two timed passes only)")
    args = parser.parse_args(argv)

    pipe = Pipeline(args.sentences, args.buffer, args.seed, args.batch_api, args.checkpoint)
    try:
        pipe.run()
    finally:
        pipe.close()
    print_timings("timed pass (no profiler)", pipe)
    del pipe

    # What-if: the same with the cyclic GC off. msgpack.unpackb and the per-tuple lists,
    # dicts and Tuple objects trigger many generation-0/1/2 collections.
    pipe = Pipeline(args.sentences, args.buffer, args.seed, args.batch_api, args.checkpoint)
    gc.collect()
    gc.disable()
    try:
        pipe.run()
    finally:
        gc.enable()
        pipe.close()
    print_timings("timed pass, what-if gc.disable() (no profiler)", pipe)
    del pipe
    if args.timed_only:
        return 0

    pipe = Pipeline(args.sentences, args.buffer, args.seed, args.batch_api, args.checkpoint)
    pipe.profiles = {name: cProfile.Profile() for name in PHASES}
    gc.collect()
    gc.disable()  # as the executors run (engine.executor.main): the profile is of their code
    try:
        pipe.run()
    finally:
        gc.enable()
        pipe.close()
    print_timings("profiled pass (cProfile overhead included)", pipe)
    print_profiles(pipe, args.top)
    return 0


def print_profiles(pipe: Pipeline, top: int) -> None:
    """The ``top`` functions by own time over every phase, then each main phase's eight."""
    assert pipe.profiles is not None
    ran = [name for name in PHASES if pipe.profiles[name].getstats()]  # acker or commits
    combined = pstats.Stats(pipe.profiles[ran[0]], stream=io.StringIO())
    for name in ran[1:]:
        combined.add(pipe.profiles[name])
    buf = io.StringIO()
    combined.stream = buf  # type: ignore[attr-defined]
    combined.sort_stats("tottime").print_stats(top)
    print(f"\n--- top {top} functions by tottime (all phases)")
    print(_trim(buf.getvalue()))
    for name in ("spout emit", "spout window", "split", "count", "acker", "commit acks"):
        if name not in ran:
            continue
        buf = io.StringIO()
        stats = pstats.Stats(pipe.profiles[name], stream=buf)
        stats.sort_stats("tottime").print_stats(8)
        print(f"\n--- phase {name!r}: top 8 by tottime")
        print(_trim(buf.getvalue()))


def _trim(text: str) -> str:
    """Pstats output without its preamble and with shortened paths."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    out = "\n".join(line for line in lines[start:] if line.strip())
    for prefix in (os.path.join(os.getcwd(), "src") + os.sep, os.getcwd() + os.sep,
                   os.path.dirname(os.__file__) + os.sep):
        out = out.replace(prefix, "")
    return out


if __name__ == "__main__":
    sys.exit(main())
