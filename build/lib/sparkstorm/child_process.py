"""Child processes that must not outlive their parent.

Multilang children and the dev-zookeeper server: Linux's ``PR_SET_PDEATHSIG`` kills them when the
parent dies, even by SIGKILL, when nothing is left to clean up after it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import signal
import sys
from typing import Any

_PR_SET_PDEATHSIG = 1

_libc: Any = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:  # pragma: no cover - exotic libc
        _libc = None


def die_with_parent() -> None:
    """``preexec_fn`` of such a child; runs between fork and exec, so it takes no locks."""
    if _libc is not None:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
