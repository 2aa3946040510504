"""Root id -> 64-bit value maps as two packed arrays: an executor's acker traffic on the wire.

Each window an executor reports one XOR value per root it touched and, for its spout tasks,
the task that emitted each new root (``engine.wire.messages.WindowMeta``): tens of thousands of
entries a window. As msgpack maps the driver would build two Python ints per entry before
its acker could look at them; as two little-endian ``uint64`` arrays the executor packs
them with one C loop (``array.array``) and the driver's acker reads them as NumPy arrays
without a Python object per entry (``engine.driver.acker``). This module needs no NumPy, so
executors do not import it.

Example:
    >>> packed = RootValues.of({7: 2**64 - 1, 9: 3})
    >>> len(packed.root_bytes), packed[7] == 2**64 - 1, dict(packed) == {7: 2**64 - 1, 9: 3}
    (16, True, True)
    >>> RootValues.decode(packed.encode()) == {7: 2**64 - 1, 9: 3}
    True
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Mapping
from typing import Any

_BIG_ENDIAN = sys.byteorder == "big"


def _packed(numbers: Any) -> bytes:
    """``numbers`` (ints in [0, 2**64)) as little-endian uint64 bytes."""
    packed = array("Q", numbers)
    if _BIG_ENDIAN:
        packed.byteswap()
    return packed.tobytes()


def _unpacked(data: bytes) -> array[int]:
    numbers = array("Q", data)
    if _BIG_ENDIAN:
        numbers.byteswap()
    return numbers


class RootValues(Mapping[int, int]):
    """A read-only map of root ids to unsigned 64-bit values, kept as packed arrays.

    Made by an executor when it encodes its window's report (:meth:`of`), decoded by the
    driver (:meth:`decode`) whose acker reads :attr:`root_bytes` and :attr:`value_bytes`
    directly.
    Reading it as a map (tests, a lost executor's report) builds a dict once.

    Args:
        roots: the root ids, little-endian uint64.
        values: their values in the same order, little-endian uint64.
    """

    __slots__ = ("_map", "root_bytes", "value_bytes")

    def __init__(self, roots: bytes, values: bytes) -> None:
        self.root_bytes = roots
        self.value_bytes = values
        self._map: dict[int, int] | None = None

    @classmethod
    def of(cls, mapping: Mapping[int, int]) -> RootValues:
        """Pack ``mapping`` (already packed: itself).

        Raises:
            OverflowError: a key or value outside [0, 2**64).
        """
        if isinstance(mapping, RootValues):
            return mapping
        return cls(_packed(mapping.keys()), _packed(mapping.values()))

    def encode(self) -> list[bytes]:
        """The msgpack-ready wire form: ``[roots, values]``."""
        return [self.root_bytes, self.value_bytes]

    @classmethod
    def decode(cls, data: list[bytes]) -> RootValues:
        """Inverse of :meth:`encode`."""
        roots, values = data
        return cls(bytes(roots), bytes(values))

    def _as_dict(self) -> dict[int, int]:
        if self._map is None:
            self._map = dict(zip(_unpacked(self.root_bytes), _unpacked(self.value_bytes),
                                 strict=True))
        return self._map

    def __len__(self) -> int:
        return len(self.root_bytes) // 8

    def __getitem__(self, root: int) -> int:
        return self._as_dict()[root]

    def __iter__(self) -> Iterator[int]:
        return iter(self._as_dict())

    def __repr__(self) -> str:
        return f"RootValues({self._as_dict()!r})"
