"""Executor CPU per sentence of the word count under CPython and under another interpreter.

Runs ``profile_executor.py``'s in-process pipeline (the real spout, split and count
executors, the wire packing between them and the acker; no Spark, no sockets) in one child
process per interpreter, rounds interleaved, each phase timed in thread CPU time so that a
loaded machine stretches neither side. Each child first runs a warm-up pass (PyPy's JIT
compiles the hot loops during it; its CPU time, window by window, shows the warm-up),
then the measured pass, with the cyclic GC handled as ``engine.executor.main`` does (off, one
collection every 20 windows; ``--gc default`` leaves it on). Both interpreters run the
same code: a copy of ``src/`` rewritten for Python 3.9 (``_py39_tree.py``), since Debian
12's PyPy is 3.9.

Run (after ``scripts/install-pypy.sh``)::

    .venv/bin/python benchmarks/executor_interpreters.py --python .venv-pypy/bin/python
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
GC_EVERY_WINDOWS = 20  # as engine.executor.main.GC_EVERY_WINDOWS


def run_child(sentences: int, warmup: int, gc_regime: str) -> dict[str, Any]:
    """Warm-up pass, then the measured pass; the figures as one dict (in the child)."""
    import profile_executor

    class CpuTimedPipeline(profile_executor.Pipeline):  # type: ignore[misc]
        """The pipeline with phases in thread CPU time and the executors' GC regime."""

        def _phase(self, name: str, fn: Any, *args: Any) -> Any:
            started = time.thread_time()
            try:
                return fn(*args)
            finally:
                self.seconds[name] += time.thread_time() - started

        def window(self) -> None:
            super().window()
            if gc_regime == "executor" and self.windows % GC_EVERY_WINDOWS == 0:
                gc.collect()

    if gc_regime == "executor":
        gc.disable()
    started = time.thread_time()
    warm = CpuTimedPipeline(warmup, None, 7)
    per_window: list[float] = []  # CPU ms of each window (the last ones are partly empty)
    try:
        while warm.acked < warm.n:
            before = sum(warm.seconds.values())
            warm.window()
            per_window.append((sum(warm.seconds.values()) - before) * 1e3)
    finally:
        warm.close()
    warmup_cpu = time.thread_time() - started
    pipe = CpuTimedPipeline(sentences, None, 42)
    try:
        pipe.run()
    finally:
        pipe.close()
    return {"python": sys.version.split()[0], "implementation": sys.implementation.name,
            "sentences": sentences, "words": pipe.words, "windows": pipe.windows,
            "phases_us": {k: v * 1e6 / sentences for k, v in pipe.seconds.items()},
            "warmup_ms_per_window": per_window, "warmup_cpu_s": warmup_cpu,
            "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def measure(python: str, tree: Path, sentences: int, warmup: int,
            gc_regime: str) -> dict[str, Any]:
    """Run one child under ``python``; its figures."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), str(HERE)]),
               PYTHONHASHSEED="20140916")
    command = [python, str(Path(__file__)), "--child", "--sentences", str(sentences),
               "--warmup", str(warmup), "--gc", gc_regime]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False,
                          timeout=3600)
    if done.returncode != 0:
        msg = f"{python} failed (exit code {done.returncode}):\n{done.stderr[-3000:]}"
        raise RuntimeError(msg)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def report(runs: dict[str, list[dict[str, Any]]]) -> None:
    """Print the median of each phase per interpreter, the ratio, warm-up and memory."""
    names = list(runs)
    phases = list(runs[names[0]][0]["phases_us"])
    med = {n: {p: statistics.median(r["phases_us"][p] for r in runs[n]) for p in phases}
           for n in names}
    print(f"\n{'phase (us/sentence, CPU)':<26}" + "".join(f"{n:>16}" for n in names) + "   ratio")
    for phase in [*phases, "total"]:
        values = [sum(med[n].values()) if phase == "total" else med[n][phase] for n in names]
        ratio = values[0] / values[1] if values[1] else float("nan")
        print(f"{phase:<26}" + "".join(f"{v:16.2f}" for v in values) + f"   {ratio:5.2f}x")
    for n in names:
        first = runs[n][0]
        curve = ", ".join(f"{v:.0f}" for v in first["warmup_ms_per_window"][:12])
        print(f"\n{n} ({first['implementation']} {first['python']}): max RSS "
              f"{max(r['max_rss_mib'] for r in runs[n]):.0f} MiB; warm-up pass "
              f"{first['warmup_cpu_s']:.1f} s CPU; CPU ms of its windows (<= 20,000 "
              f"sentences each): {curve}")
        print("  totals per round (us/sentence): "
              + ", ".join(f"{sum(r['phases_us'].values()):.1f}" for r in runs[n]))


def main(argv: list[str] | None = None) -> int:
    """Measure both interpreters (or, with --child, this one) and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=str(HERE.parent / ".venv-pypy" / "bin" / "python"),
                        help="the other interpreter (default: scripts/install-pypy.sh's)")
    parser.add_argument("--sentences", type=int, default=200_000, help="measured pass")
    parser.add_argument("--warmup", type=int, default=100_000, help="warm-up pass")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--gc", choices=("executor", "default"), default="executor",
                        help="executor: the cyclic GC off, one collection every 20 windows, "
                             "as the executor processes; default: the interpreter's own GC")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_child(args.sentences, args.warmup, args.gc)))
        return 0
    sys.path.insert(0, str(HERE))
    from _py39_tree import make_py39_tree

    interpreters = {"cpython": sys.executable, "other": args.python}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in interpreters}
    with tempfile.TemporaryDirectory(prefix="sparkstorm-py39-") as folder:
        tree = make_py39_tree(Path(folder) / "src")
        for round_number in range(args.rounds):
            for name, python in interpreters.items():
                result = measure(python, tree, args.sentences, args.warmup, args.gc)
                runs[name].append(result)
                print(f"round {round_number + 1} {name}: "
                      f"{sum(result['phases_us'].values()):.1f} us/sentence", flush=True)
    print(f"\n{args.sentences:,} sentences measured after {args.warmup:,} of warm-up, "
          f"median of {args.rounds} interleaved rounds, GC regime {args.gc!r}; "
          f"other = {args.python}")
    report(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
