"""Stack traces of a running topology, for Apex's stack trace request.

The driver's threads and every executor process's threads, so a hung component can be seen without a
debugger.

Executors dump their threads with :mod:`faulthandler` on ``SIGUSR1`` into
``<socket>.stacks`` (registered at start by :func:`dump_on_signal`); the driver signals them
and reads the files back.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import IO

SIGNAL = signal.SIGUSR1
_dump_file: IO[str] | None = None


def dump_on_signal(socket_path: str) -> None:
    """In an executor process: dump every thread's stack to ``<socket>.stacks`` on SIGUSR1."""
    global _dump_file  # the file must stay open for faulthandler
    # append mode: the driver truncates the file before each request, and O_APPEND makes
    # the next dump start at its new end instead of at this descriptor's old offset
    _dump_file = open(socket_path + ".stacks", "a", encoding="utf-8")  # noqa: SIM115
    _dump_file.truncate(0)
    faulthandler.register(SIGNAL, file=_dump_file, all_threads=True, chain=False)


def own_stacks() -> str:
    """This process's threads, each with its name and stack."""
    names = {t.ident: t.name for t in threading.enumerate()}
    parts = []
    for ident, frame in sys._current_frames().items():
        parts.append(f'Thread "{names.get(ident, "?")}" ({ident}):\n'
                     + "".join(traceback.format_stack(frame)))
    return "\n".join(parts)


def executor_stacks(pids: dict[int, int], sockets: dict[int, str],
                    timeout: float = 2.0) -> dict[int, str]:
    """Signal each executor and collect its dump (``"(no answer)"`` if none came in time)."""
    files = {gid: Path(sockets[gid] + ".stacks") for gid in pids}
    for gid, pid in pids.items():
        try:
            files[gid].write_text("")
            os.kill(pid, SIGNAL)
        except OSError:
            continue
    deadline = time.monotonic() + timeout
    seen: dict[int, str] = {}
    dumps: dict[int, str] = {}
    while time.monotonic() < deadline and len(dumps) < len(files):
        time.sleep(0.05)  # faulthandler writes from a signal handler: nothing to wait on
        for gid, path in files.items():
            if gid in dumps:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except OSError:
                continue
            if "File " in text and seen.get(gid) == text:  # written, and no longer growing
                dumps[gid] = text
            seen[gid] = text
    return {gid: dumps.get(gid, seen.get(gid) or "(no answer)") for gid in files}
