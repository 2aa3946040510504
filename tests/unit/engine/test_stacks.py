"""Stack dumps of executor processes on request, repeatedly (each dump starts afresh)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sparkstorm.engine.executor.stacks import executor_stacks, own_stacks

CHILD = """
import sys, threading, time
from sparkstorm.engine.executor.stacks import dump_on_signal
dump_on_signal(sys.argv[1])
def sleeper_in_a_named_function():
    time.sleep(60)
threading.Thread(target=sleeper_in_a_named_function, daemon=True).start()
print("ready", flush=True)
time.sleep(60)
"""


def test_an_executor_dumps_its_threads_each_time_it_is_asked(tmp_path: Path) -> None:
    socket = str(tmp_path / "e0.sock")
    child = subprocess.Popen([sys.executable, "-c", CHILD, socket], stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for _ in range(2):
            dump = executor_stacks({0: child.pid}, {0: socket})[0]
            assert "sleeper_in_a_named_function" in dump, dump
            assert "\x00" not in dump and dump.startswith("Thread"), dump[:200]
    finally:
        child.kill()
        child.wait()
    gone = executor_stacks({1: child.pid}, {1: str(tmp_path / "e1.sock")}, timeout=0.3)
    assert gone == {1: "(no answer)"}


def test_own_stacks_name_the_threads() -> None:
    assert 'Thread "MainThread"' in own_stacks()
