"""Pure twin of ``_kernels``: where Parquet PLAIN byte-array values start."""

from __future__ import annotations

import struct

__all__ = ["byte_array_starts"]


def byte_array_starts(data: bytes | memoryview, count: int) -> bytes:
    """``count + 1`` little-endian int64 positions: where each of the first ``count``
    PLAIN BYTE_ARRAY values (4-byte length, bytes) starts, then where the last ends.

    Raises:
        ValueError: the values run past ``data``.
    """
    size = len(data)
    position = 0
    starts = []
    unpack = struct.Struct("<I").unpack_from
    for _ in range(count):
        if position + 4 > size:
            raise ValueError("PLAIN byte-array values run past their page")
        starts.append(position)
        position += 4 + unpack(data, position)[0]
        if position > size:
            raise ValueError("PLAIN byte-array values run past their page")
    starts.append(position)
    return struct.pack(f"<{count + 1}q", *starts)
