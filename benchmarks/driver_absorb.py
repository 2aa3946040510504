"""The driver's CPU per window without Spark: absorb synthetic metas, build the spout controls.

Feeds ``TopologyDriver._absorb`` (decoding each executor's ``WindowMeta``, the acker's XOR
ledger, the window's counters and statistics) and ``_spout_payloads`` (the verdicts turned
into the spout executors' ``SpoutControl``) the encoded metas of a word-count window of
``--sentences`` sentences, as the word count's five executors send them: the spout (one
init and one XOR per root, a latency sample of up to 2,000), two split executors (one XOR
per root) and two count executors (one XOR per root they saw: a sentence's ~8.5 words go to
both). Every tree completes in its window, as in the benchmark. No Spark, no executors:
the driver object is built and never started.

In the same run, a plain-Python reference does the least work any dict-based ledger must
do on the same metas (unpack them, XOR the contributions per root, list the complete roots
per spout task): the ratio to it survives a loaded machine better than the times do.

Run: ``PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/driver_absorb.py``
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _wordcount_topology import TOPOLOGY  # noqa: E402

from sparkstorm.config.loader import load_config  # noqa: E402
from sparkstorm.engine.driver.loop import TopologyDriver  # noqa: E402
from sparkstorm.engine.spark.stage import DRIVER  # noqa: E402
from sparkstorm.engine.wire.frames import pack, unpack  # noqa: E402
from sparkstorm.engine.wire.messages import WindowMeta  # noqa: E402
from sparkstorm.engine.wire.stats import ComponentCounters  # noqa: E402
from sparkstorm.testing.local_cluster import topology_spec_of  # noqa: E402

WORDS_PER_SENTENCE = 8.5


def window_metas(driver: TopologyDriver, sentences: int, rng: random.Random
                 ) -> tuple[list[bytes], list[bytes]]:
    """One window's encoded metas, every tree complete (see the module docstring).

    Also the reference's input: each meta's XOR and init maps as msgpack maps (the same
    every version of the engine, whatever its wire form).
    """
    executors = {e.component: [] for e in driver.plan.executors}
    for e in driver.plan.executors:
        executors[e.component].append(e)
    spout, = executors["sentences"]
    splits, counts = executors["split"], executors["count"]
    task = spout.tasks[0]
    spout_xor: dict[int, int] = {}
    inits: dict[int, int] = {}
    split_xor: list[dict[int, int]] = [{} for _ in splits]
    count_xor: list[dict[int, int]] = [{} for _ in counts]
    for _ in range(sentences):
        root = rng.getrandbits(64)
        edge = rng.getrandbits(64)
        inits[root] = task
        spout_xor[root] = edge
        words = [rng.getrandbits(64) for _ in range(int(WORDS_PER_SENTENCE + rng.random()))]
        split_val = edge
        by_count = [0] * len(counts)
        seen = [False] * len(counts)
        for word in words:
            split_val ^= word
            c = rng.randrange(len(counts))
            by_count[c] ^= word
            seen[c] = True
        split_xor[rng.randrange(len(splits))][root] = split_val
        for c, val in enumerate(by_count):
            if seen[c]:
                count_xor[c][root] = val
    latencies = [rng.uniform(200, 900) for _ in range(min(2000, sentences))]
    metas = [WindowMeta(spout.gid, "sentences", spout_xor, inits, stats=ComponentCounters(
        emitted={"default": sentences}, transferred={"default": sentences},
        acked={"default": sentences}, complete_count=sentences,
        complete_total_ms=500.0 * sentences, complete_values=latencies,
        complete_ms={"default": 500.0 * sentences}, busy_ms=100.0))]
    words = int(sentences * WORDS_PER_SENTENCE)
    for e, xor in zip(splits, split_xor, strict=True):
        metas.append(WindowMeta(e.gid, "split", xor, stats=ComponentCounters(
            emitted={"default": words // 2}, transferred={"default": words // 2},
            executed={"sentences:default": len(xor)}, acked={"sentences:default": len(xor)},
            execute_ms={"sentences:default": 50.0}, process_ms={"sentences:default": 60.0},
            busy_ms=200.0)))
    for e, xor in zip(counts, count_xor, strict=True):
        metas.append(WindowMeta(e.gid, "count", xor, stats=ComponentCounters(
            executed={"split:default": words // 2}, acked={"split:default": words // 2},
            execute_ms={"split:default": 50.0}, process_ms={"split:default": 60.0},
            busy_ms=200.0)))
    return ([meta.encode() for meta in metas],
            [pack([dict(meta.xor), dict(meta.inits)]) for meta in metas])


def reference(blobs: list[bytes]) -> int:
    """The least work of a dict ledger: unpack, XOR per root, list complete roots by task."""
    xor: dict[int, int] = {}
    owner: dict[int, int] = {}
    for blob in blobs:
        fields = unpack(blob)
        owner.update(fields[1])
        get = xor.get
        for root, value in fields[0].items():
            xor[root] = get(root, 0) ^ value
    acked: dict[int, list[int]] = {}
    for root, value in xor.items():
        if value == 0 and root in owner:
            acked.setdefault(owner[root], []).append(root)
    return sum(len(v) for v in acked.values())


def driver_window(driver: TopologyDriver, window: int, blobs: list[bytes]) -> int:
    """The driver's per-window Python work on these metas; returns the acked roots."""
    results = [(DRIVER, (blob, {}, (True, 0))) for blob in blobs]
    driver._absorb(window, time.time(), results, [window], None)
    payloads = driver._spout_payloads(driver._stages[0])
    return sum(len(control[0]) for control, _ in payloads)


def main(argv: list[str] | None = None) -> int:
    """Time the driver's window work against the reference, interleaved; print both."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=25_000)
    parser.add_argument("--windows", type=int, default=20)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    name = "driver-absorb"
    spec = topology_spec_of(TOPOLOGY)
    conf = load_config(topology={**spec.config, "topology.name": name})
    driver = TopologyDriver(name, spec, conf)
    rng = random.Random(args.seed)
    windows = [window_metas(driver, args.sentences, rng) for _ in range(args.windows)]
    ours: list[float] = []
    ref: list[float] = []
    gc.collect()
    try:
        for window, (blobs, ref_blobs) in enumerate(windows):  # interleaved: the same load
            began = time.process_time()
            acked = driver_window(driver, window, blobs)
            ours.append(time.process_time() - began)
            began = time.process_time()
            ref_acked = reference(ref_blobs)
            ref.append(time.process_time() - began)
            if acked != args.sentences or ref_acked != args.sentences:
                print(f"window {window}: acked {acked}, reference {ref_acked}, "
                      f"expected {args.sentences}")
                return 1
    finally:
        driver._close()
    mean_ours, mean_ref = statistics.median(ours), statistics.median(ref)
    print(f"{args.windows} windows of {args.sentences:,} sentences, CPU time per window "
          f"(median), load average {os.getloadavg()[0]:.1f}:")
    print(f"  driver (_absorb + _spout_payloads) {1000 * mean_ours:7.2f} ms  "
          f"= {1e6 * mean_ours / args.sentences:5.2f} us/sentence")
    print(f"  plain-Python reference             {1000 * mean_ref:7.2f} ms  "
          f"= {1e6 * mean_ref / args.sentences:5.2f} us/sentence")
    print(f"  ratio driver / reference           {mean_ours / mean_ref:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
