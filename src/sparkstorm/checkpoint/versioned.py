"""The pickled form of a checkpoint part: a format number, then the part's fields.

Example:
    >>> blob = dump_versioned(3, {"a": 1}, [2])
    >>> load_versioned(blob, 3, 2, "a part")
    [{'a': 1}, [2]]
"""

from __future__ import annotations

import pickle
from typing import Any

from sparkstorm.checkpoint.errors import CheckpointError


def dump_versioned(version: int, *fields: Any) -> bytes:
    """Pickle ``fields`` after the format number ``version``."""
    return pickle.dumps([version, *fields], protocol=pickle.HIGHEST_PROTOCOL)


def load_versioned(blob: bytes, version: int, count: int, what: str) -> list[Any]:
    """The ``count`` fields :func:`dump_versioned` pickled with ``version``.

    Raises:
        CheckpointError: ``CHECKPOINT_CORRUPT`` naming ``what`` for bytes of another kind or
            format.
    """
    return load_any_version(blob, {version: count}, what)[1]


def load_any_version(blob: bytes, counts: dict[int, int], what: str) -> tuple[int, list[Any]]:
    """The format number and fields of ``blob``, pickled with one of ``counts``' formats.

    ``counts``: format number -> how many fields that format has (the newest and the
    older ones still read).

    Raises:
        CheckpointError: ``CHECKPOINT_CORRUPT`` naming ``what`` for bytes of another kind or
            format.
    """
    try:
        found, *fields = list(pickle.loads(blob))
    except Exception as exc:
        msg = f"{what} cannot be read ({type(exc).__name__}: {exc})"
        raise CheckpointError(msg, code="CHECKPOINT_CORRUPT") from exc
    if counts.get(found) != len(fields):
        known = " or ".join(str(v) for v in sorted(counts, reverse=True))
        msg = f"{what} has format {found!r} with {len(fields)} fields, not {known}"
        raise CheckpointError(msg, code="CHECKPOINT_CORRUPT")
    return found, list(fields)
