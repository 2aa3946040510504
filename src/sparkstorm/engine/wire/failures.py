"""Why a tuple tree failed.

The causes the UI counts, and the :class:`Failure` that carries one from the failing executor
through the acker to the spout.
"""

from __future__ import annotations

from typing import NamedTuple

from sparkstorm.engine.wire.frames import encodable_text

# The causes are declared once, with the Collector protocol components call (a bolt calls
# ``fail``; a component raised or emitted a value the wire cannot carry; the message timed
# out; an executor or a whole window's job was lost); the engine re-exports them from here.
from sparkstorm.topology.component import FAIL_CAUSES as FAIL_CAUSES
from sparkstorm.topology.component import FAIL_CRASH as FAIL_CRASH
from sparkstorm.topology.component import FAIL_ERROR as FAIL_ERROR
from sparkstorm.topology.component import FAIL_EXPLICIT as FAIL_EXPLICIT
from sparkstorm.topology.component import FAIL_TIMEOUT as FAIL_TIMEOUT

REASON_LIMIT = 300
"""Reasons are cut to this many characters: they travel with every failed root."""


class Failure(NamedTuple):
    """Why one tree failed: ``cause`` (one of :data:`FAIL_CAUSES`) and a readable reason.

    A named tuple, so it travels as a two-item msgpack array without conversion.
    """

    cause: str
    reason: str

    @classmethod
    def of(cls, cause: str, reason: str) -> Failure:
        r"""A failure whose reason is cut to :data:`REASON_LIMIT` characters and made encodable.

        A lone surrogate, say from a value in an exception message, becomes ``\udcff`` text instead
        of breaking the window's report.
        """
        return cls(cause, encodable_text(reason[:REASON_LIMIT]))
